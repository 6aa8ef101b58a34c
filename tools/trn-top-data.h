/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The trn authors
 *
 * What trn-top shows, gathered without privileges: each trn device's
 * figures from sysfs (/sys/class/accel/accelN/), each client's from the
 * fdinfo of the accel nodes it holds open (/proc/<pid>/fdinfo/<fd>: the
 * drm-usage-stats keys and trn's own). Two samples give rates and
 * utilisations. Kept apart from the terminal code so that the host tests
 * can run it over a made-up /proc and /sys.
 */
#ifndef TRN_TOP_DATA_H
#define TRN_TOP_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Job statuses sysfs counts failures by (jobs_failed_by_status/). */
#define TOP_STATUSES		10
extern const char *const top_status_names[TOP_STATUSES];

/* Per-core figures of a device (sysfs cores/<N>/). */
struct top_core {
	uint64_t busy_ns;
	uint64_t jobs_completed;
	uint64_t jobs_failed;
	uint64_t jobs_timed_out;
};

/* HBM stacks a device has at most (the driver's limit). */
#define TOP_MAX_STACKS	64

struct top_device {
	unsigned int minor;
	char bus_id[64];	/* the backend's device: trn_sim0, 0000:00:04.0 */
	char driver[32];	/* its driver: trn_sim, trn_pci */
	char health[16];
	char health_reason[128];
	uint64_t hbm_total, hbm_used, host_pinned;
	/* hbm_stack_used: bytes of each HBM stack; none from older drivers. */
	unsigned int nstacks;
	uint64_t stack_used[TOP_MAX_STACKS];
	uint64_t submitted, completed, failed;
	uint64_t failed_by[TOP_STATUSES];
	uint64_t resets, device_resets, bans, mmu_faults, coredumps;
	unsigned int ncores;
	struct top_core *cores;
};

/* Memory of one region of a client (drm-{total,shared,resident,active}-). */
struct top_mem {
	uint64_t total, shared, resident, active;
};

struct top_client {
	int pid;
	char comm[32];
	unsigned int minor;
	uint64_t client_id;
	uint64_t context;
	uint64_t queues, buffers;
	uint64_t jobs_completed, jobs_failed;
	uint64_t mmu_faults, bans;
	struct top_mem hbm, host;
	unsigned int ncores;
	uint64_t *engine_ns;	/* per core, drm-engine-core<N> */
};

/* One look at everything, at @time_ns (CLOCK_MONOTONIC). */
struct top_sample {
	uint64_t time_ns;
	size_t ndevices;
	struct top_device *devices;
	size_t nclients;
	struct top_client *clients;
	/* Processes whose fdinfo could not be read (another user's). */
	size_t hidden;
};

/*
 * Take a sample under @proc_root and @sys_root ("/proc", "/sys" normally).
 * A process that ends while it is read simply is not in it. 0 or -errno.
 */
int top_sample_take(struct top_sample *s, const char *proc_root,
		    const char *sys_root, uint64_t time_ns);
void top_sample_free(struct top_sample *s);

/* Keep only device @minor and its clients (--device). */
void top_sample_only(struct top_sample *s, unsigned int minor);

/*
 * Parse one fdinfo text; true if it is a trn client (drm-driver: trn),
 * with @c filled in but for pid, comm and minor. @c->engine_ns is
 * allocated (free it).
 */
bool top_parse_fdinfo(const char *text, struct top_client *c);

/* The same client (pid and drm-client-id) in @prev, or NULL. */
const struct top_client *top_find_client(const struct top_sample *prev,
					 const struct top_client *c);
const struct top_device *top_find_device(const struct top_sample *prev,
					 unsigned int minor);

/* Share of @period_ns that a counter moving from @before to @now covers. */
double top_ratio(uint64_t before, uint64_t now, uint64_t period_ns);

/* A client's utilisation over all cores of its device, 0..ncores. */
double top_client_busy(const struct top_client *c,
		       const struct top_client *before, uint64_t period_ns);

/*
 * The report of --json: @now against @prev (NULL: no rates), one line,
 * the schema of Documentation/operators.md, "trn-top --json".
 */
void top_print_json(FILE *f, const struct top_sample *now,
		    const struct top_sample *prev);

#endif /* TRN_TOP_DATA_H */
