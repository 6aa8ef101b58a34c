// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * trn-fuzz: the trn ioctl fuzzer as a standalone tool, for soaks and for
 * replaying what test_fuzz found. Run it as root in a guest with trn and
 * trn_sim loaded (tools/trn-vm -- build/tests/fuzz/trn-fuzz ...), or with
 * --part on the pci lane, where trn_pci claim=1 bound the modelled parts.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "trn_fuzz.h"

static void usage(FILE *out, const char *prog)
{
	fprintf(out,
		"Usage: %s [OPTIONS]\n"
		"\n"
		"Fuzz the ioctls of the trn driver on simulated device 0 (or a\n"
		"part bound to trn_pci) and check that every call returns success\n"
		"or an expected errno.\n"
		"\n"
		"  -s, --seed S          PRNG seed (default: $TRN_FUZZ_SEED or time-based)\n"
		"  -n, --iterations N    iterations over all threads (default:\n"
		"                        $TRN_FUZZ_ITERATIONS or %u; unbounded with --soak)\n"
		"  -t, --threads T       worker threads, one PRNG stream each (default %u)\n"
		"  -S, --soak SECONDS    run for this long (and at most N iterations if given)\n"
		"  -c, --device-churn    create and delete devices %u..%u underneath\n"
		"  -a, --actions LIST    comma-separated: trn, driver, core, files, all\n"
		"  -r, --stream K        with --threads 1: replay stream K of a multi-thread run\n"
		"  -d, --device ID       the simulated device to fuzz (default 0)\n"
		"  -p, --part N          fuzz the Nth (from 0) trn device on PCI, a part\n"
		"                        bound to trn_pci, instead (not with --device or\n"
		"                        --device-churn)\n"
		"  -T, --trace I         print every call from iteration I of each stream on\n"
		"  -m, --slow-ms MS      report every iteration that takes MS ms or more\n"
		"  -K, --known-bugs      also make calls that hit known kernel bugs (they may\n"
		"                        oops or hang the kernel: Documentation/fuzzing.md)\n"
		"  -h, --help            this text\n"
		"\n"
		"Exit status: 0 when nothing unexpected happened, 1 otherwise, 2 for\n"
		"bad usage. A failure prints the command that replays it.\n",
		prog, TRN_FUZZ_DEFAULT_ITERATIONS, TRN_FUZZ_DEFAULT_THREADS,
		TRN_FUZZ_CHURN_FIRST, TRN_FUZZ_CHURN_LAST);
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end || *s == '-' ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "threads", required_argument, NULL, 't' },
		{ "soak", required_argument, NULL, 'S' },
		{ "device-churn", no_argument, NULL, 'c' },
		{ "actions", required_argument, NULL, 'a' },
		{ "stream", required_argument, NULL, 'r' },
		{ "device", required_argument, NULL, 'd' },
		{ "part", required_argument, NULL, 'p' },
		{ "trace", required_argument, NULL, 'T' },
		{ "slow-ms", required_argument, NULL, 'm' },
		{ "known-bugs", no_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct trn_fuzz_stats *stats;
	struct trn_fuzz_opts opts;
	bool iterations_set = false, device_set = false;
	uint64_t v;
	int c, ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	trn_fuzz_default_opts(&opts);
	iterations_set = getenv("TRN_FUZZ_ITERATIONS") != NULL;

	while ((c = getopt_long(argc, argv, "s:n:t:S:ca:r:d:p:T:m:Kh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_u64(optarg, &opts.seed))
				goto bad;
			break;
		case 'n':
			if (parse_u64(optarg, &opts.iterations))
				goto bad;
			iterations_set = true;
			break;
		case 't':
			if (parse_u64(optarg, &v) || !v ||
			    v > TRN_FUZZ_MAX_THREADS)
				goto bad;
			opts.threads = (unsigned int)v;
			break;
		case 'S':
			if (parse_u64(optarg, &v) || !v || v > 7 * 86400)
				goto bad;
			opts.soak_seconds = (unsigned int)v;
			break;
		case 'c':
			opts.device_churn = true;
			break;
		case 'a':
			if (trn_fuzz_parse_actions(optarg, &opts.actions))
				goto bad;
			break;
		case 'r':
			if (parse_u64(optarg, &v) || v >= TRN_FUZZ_MAX_THREADS)
				goto bad;
			opts.stream = (int)v;
			break;
		case 'd':
			if (parse_u64(optarg, &v) || v > 1023)
				goto bad;
			opts.device_id = (unsigned int)v;
			device_set = true;
			break;
		case 'p':
			if (parse_u64(optarg, &v) || v > 63)
				goto bad;
			opts.part = (int)v;
			break;
		case 'T':
			if (parse_u64(optarg, &opts.trace_from))
				goto bad;
			break;
		case 'm':
			if (parse_u64(optarg, &v) || v > 3600000)
				goto bad;
			opts.slow_ms = (unsigned int)v;
			break;
		case 'K':
			opts.known_bugs = true;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			goto bad_usage;
		}
	}
	if (optind != argc)
		goto bad_usage;
	if (opts.stream >= 0 && opts.threads != 1) {
		fprintf(stderr, "%s: --stream needs --threads 1\n", argv[0]);
		return 2;
	}
	if (opts.part >= 0 && opts.device_churn) {
		fprintf(stderr, "%s: --device-churn needs simulated devices, not --part\n",
			argv[0]);
		return 2;
	}
	if (opts.part >= 0 && device_set) {
		fprintf(stderr, "%s: --device names a simulated device, --part a part: not both\n",
			argv[0]);
		return 2;
	}
	if (opts.soak_seconds && !iterations_set)
		opts.iterations = 0;
	if (!opts.soak_seconds && !opts.iterations) {
		fprintf(stderr, "%s: nothing to do: no iterations\n", argv[0]);
		return 2;
	}

	stats = calloc(1, sizeof(*stats));
	if (!stats) {
		perror("calloc");
		return 1;
	}
	ret = trn_fuzz_run(&opts, stats);
	free(stats);
	return ret ? 1 : 0;

bad:
	fprintf(stderr, "%s: bad value for -%c: %s\n", argv[0], c, optarg);
bad_usage:
	usage(stderr, argv[0]);
	return 2;
}
