/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The trn authors
 *
 * trn_fuzz.h - a structure-aware ioctl fuzzer for the trn DRM accel driver.
 *
 * The engine is shared by the standalone tool build/tests/fuzz/trn-fuzz and
 * by the kselftest binary build/tests/guest/test_fuzz. It runs a number of
 * threads, each with its own PRNG stream derived from (seed, stream index),
 * so that one stream can be replayed alone with the same seed. See
 * Documentation/fuzzing.md.
 */
#ifndef TRN_FUZZ_H
#define TRN_FUZZ_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The families of actions an iteration picks from. */
enum trn_fuzz_action {
	TRN_FUZZ_TRN,		/* trn's ioctls, structure-aware, mutated */
	TRN_FUZZ_DRIVER,	/* random ioctl numbers in the driver range */
	TRN_FUZZ_CORE,		/* a safe subset of the core DRM ioctls */
	TRN_FUZZ_FILES,		/* open, close, dup, fdinfo, poll, mmap */
	TRN_FUZZ_NR_ACTIONS
};

#define TRN_FUZZ_ALL_ACTIONS	((1u << TRN_FUZZ_NR_ACTIONS) - 1)

/* Ids of the devices --device-churn creates and deletes. */
#define TRN_FUZZ_CHURN_FIRST	900
#define TRN_FUZZ_CHURN_LAST	909

#define TRN_FUZZ_MAX_THREADS	64
#define TRN_FUZZ_MAX_FAILURES	16
#define TRN_FUZZ_MAX_ERRNO	160
#define TRN_FUZZ_CALL_LEN	200

/* Iterations when TRN_FUZZ_ITERATIONS is not set. */
#define TRN_FUZZ_DEFAULT_ITERATIONS	2000
#define TRN_FUZZ_DEFAULT_THREADS	4

struct trn_fuzz_opts {
	/* Seed of every PRNG stream. */
	uint64_t seed;
	/* Iterations over all threads; 0 means none, or unbounded in soak. */
	uint64_t iterations;
	/* Worker threads (each one PRNG stream). */
	unsigned int threads;
	/* > 0: run for this many seconds (and stop early at iterations). */
	unsigned int soak_seconds;
	/* Mask of 1 << enum trn_fuzz_action. */
	unsigned int actions;
	/* Create and delete devices 900..909 underneath. */
	bool device_churn;
	/* >= 0: one thread that replays stream @stream (needs threads == 1). */
	int stream;
	/* The simulated device that is fuzzed and checked at the end. */
	unsigned int device_id;
	/*
	 * >= 0: fuzz the @part-th (from 0) trn device on PCI, a part bound to
	 * trn_pci, instead of a simulated device (no churn then).
	 */
	int part;
	/* Print every call from this iteration of each stream on. */
	uint64_t trace_from;
	/* Also make the calls that hit known kernel bugs (fuzzing.md). */
	bool known_bugs;
	/* > 0: report every iteration that takes this many ms or more. */
	unsigned int slow_ms;
	/* Progress and reports, "# "-prefixed lines. */
	FILE *out;
};

/* One call that returned something outside what is allowed. */
struct trn_fuzz_failure {
	unsigned int stream;
	uint64_t iteration;
	int err;		/* errno, or 0 for a wrong answer */
	char call[TRN_FUZZ_CALL_LEN];
	char why[96];
};

struct trn_fuzz_stats {
	uint64_t iterations;
	uint64_t calls;
	uint64_t ok;
	uint64_t errnos[TRN_FUZZ_MAX_ERRNO];
	uint64_t per_action[TRN_FUZZ_NR_ACTIONS];
	uint64_t opens;
	uint64_t churn_cycles;
	uint64_t unexpected;
	unsigned int nr_failures;
	struct trn_fuzz_failure failures[TRN_FUZZ_MAX_FAILURES];
	double seconds;
	double slowest_ms;
	char slowest_call[TRN_FUZZ_CALL_LEN + 48];
	/* Setup failed (no device, no memory): nothing was fuzzed. */
	int setup_error;
	char setup_msg[160];
	/* The churn thread saw an error it should not have. */
	int churn_error;
	char churn_msg[160];
	/* The end checks: the device still answers, churned ids are gone. */
	int final_error;
	char final_msg[160];
};

/* Defaults, then TRN_FUZZ_SEED, TRN_FUZZ_ITERATIONS, TRN_FUZZ_THREADS. */
void trn_fuzz_default_opts(struct trn_fuzz_opts *opts);

/* "trn,driver,core,files" or "all" into a mask; -1 if malformed. */
int trn_fuzz_parse_actions(const char *list, unsigned int *mask);
/* The list form of @mask, for replay commands. */
const char *trn_fuzz_actions_str(unsigned int mask, char *buf, size_t size);

/* Whether @err may come out of a fuzzed call at all. */
bool trn_fuzz_errno_expected(int err);

/*
 * Run the fuzzer. Prints "# trn-fuzz: seed=S iterations=N threads=T" first,
 * failures as they are found (with the command that replays them) and a
 * summary at the end.
 *
 * Return: 0 if nothing unexpected happened, -1 otherwise (details in
 * @stats).
 */
int trn_fuzz_run(const struct trn_fuzz_opts *opts,
		 struct trn_fuzz_stats *stats);

/* The summary trn_fuzz_run() prints, again. */
void trn_fuzz_print_summary(FILE *out, const struct trn_fuzz_opts *opts,
			    const struct trn_fuzz_stats *stats);

#endif /* TRN_FUZZ_H */
