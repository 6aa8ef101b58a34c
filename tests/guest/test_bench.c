// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * A smoke run of tools/trn-bench (Documentation/benchmarks.md): the
 * benchmark binary of the same build tree runs with --quick --machine on
 * simulated device 0, exits 0, and prints every figure, each once, as
 * "name value unit" with a finite positive value. Nothing about time is
 * asserted: the figures depend on the machine.
 *
 * The binary is $TRN_BENCH if set, else tools/trn-bench next to this
 * test's own build directory (<build>/tests/guest/../../tools/trn-bench),
 * else build/tools/trn-bench from the working directory (the repository
 * root when run by run-suite).
 */
#include <libgen.h>
#include <math.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "trn_test.h"

#define DEV	0

/* Figures that every full run prints (benchmarks.md, "Figures"). */
static const char *const required[] = {
	"ioctl_roundtrip_ns",
	"wakeup_pingpong_ns",
	"memcpy_gbps",
	"vgem_create_destroy_ns",
	"bo_create_free_ns",
	"bo_create_free_host_ns",
	"submit_noop_latency_ns",
	"submit_noop_latency_ratio",
	"submit_pipelined_ns_per_job",
	"submit_pipelined_ratio",
	"submit_batch64_ns_per_job",
	"submit_batch64_ratio",
	"submit_batch256_ns_per_job",
	"submit_batch256_ratio",
	"submit_1queue_ns_per_job",
	"submit_2queues_ns_per_job",
	"submit_4queues_ns_per_job",
	"submit_8queues_ns_per_job",
	"submit_8queues_ratio",
	"submit_queue_scaling",
	"submit_usermode_ns_per_job",
	"submit_usermode_ratio",
	"submit_usermode_latency_ns",
	"submit_usermode_latency_ratio",
	"submit_usermode_8queues_ns_per_job",
	"submit_usermode_queue_scaling",
	"copy_h2d_gbps",
	"copy_d2h_gbps",
	"copy_d2d_gbps",
	"copy_ratio",
	"bo_create_ratio",
	"bo_create_host_ratio",
	"eager_mlp_ops_per_s",
	/* Profiling figures. */
	"prof_noop_submit_ns",
	"prof_noop_poll_latency_ns",
	"prof_noop_device_ns",
	"prof_pipelined_submit_ns_per_job",
	"prof_usermode_submit_ns_per_job",
	"prof_bo_raw_hbm_ns",
	"prof_bo_raw_host_ns",
};

/* Figures that may legitimately be 0 (counts of events). */
static const char *const may_be_zero[] = {
	"prof_noop_sleeps_per_job",
};

static void bench_path(char *buf, size_t size)
{
	char self[PATH_MAX];
	const char *env = getenv("TRN_BENCH");
	ssize_t n;

	if (env && *env) {
		snprintf(buf, size, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		snprintf(buf, size, "%s/../../tools/trn-bench", dirname(self));
		if (access(buf, X_OK) == 0)
			return;
	}
	snprintf(buf, size, "build/tools/trn-bench");
}

static bool listed(const char *name, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

TEST(quick_run_prints_every_figure)
{
	char path[PATH_MAX + 64], cmd[PATH_MAX + 128], line[512];
	unsigned int minor, seen[ARRAY_SIZE(required)] = { 0 };
	size_t i, lines = 0;
	int status;
	FILE *p;

	if (!sim_available())
		SKIP(return, "trn_sim is not loaded");
	ASSERT_EQ(0, sim_minor(DEV, &minor));
	bench_path(path, sizeof(path));
	ASSERT_EQ(0, access(path, X_OK)) TH_LOG("no benchmark binary at %s", path);

	snprintf(cmd, sizeof(cmd), "'%s' --quick --machine --minor %u", path,
		 minor);
	p = popen(cmd, "r");
	ASSERT_NE(NULL, p);
	while (fgets(line, sizeof(line), p)) {
		char name[128], unit[32], extra[8];
		double value;
		int k;

		if (line[0] == '#')
			continue;
		lines++;
		k = sscanf(line, "%127s %lf %31s %7s", name, &value, unit,
			   extra);
		EXPECT_EQ(3, k) TH_LOG("malformed line: %s", line);
		if (k < 2)
			continue;
		EXPECT_TRUE(isfinite(value)) TH_LOG("%s", line);
		if (listed(name, may_be_zero, ARRAY_SIZE(may_be_zero))) {
			EXPECT_LE(0, value) TH_LOG("%s", line);
		} else {
			EXPECT_LT(0, value) TH_LOG("%s", line);
		}
		for (i = 0; i < ARRAY_SIZE(required); i++)
			if (!strcmp(name, required[i]))
				seen[i]++;
		TH_LOG("%s", strtok(line, "\n"));
	}
	status = pclose(p);
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("trn-bench: status %#x", status);
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_LT(0, lines);
	for (i = 0; i < ARRAY_SIZE(required); i++)
		EXPECT_EQ(1, seen[i]) TH_LOG("figure %s", required[i]);
}

TEST(bad_usage)
{
	char path[PATH_MAX + 64], cmd[PATH_MAX + 128];
	int status;

	bench_path(path, sizeof(path));
	if (access(path, X_OK)) {
		TH_LOG("no benchmark binary at %s", path);
		SKIP(return, "no benchmark binary");
	}
	snprintf(cmd, sizeof(cmd), "'%s' --no-such-option >/dev/null 2>&1",
		 path);
	status = system(cmd);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(2, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
