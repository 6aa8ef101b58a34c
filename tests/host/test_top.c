// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * trn-top's data over a made-up /proc and /sys: fdinfo parsing (sizes
 * with units, per-core engine time, other drivers' nodes), one client per
 * drm-client-id however many fds a process holds, devices and cores from
 * sysfs, and the rates and utilisations of the JSON report.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "trn-top-data.h"

static char root[PATH_MAX];

static void path_of(char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t n = strlen(root);

	if (n + 2 > size)
		abort();
	memcpy(buf, root, n);
	buf[n] = '/';
	vsnprintf(buf + n + 1, size - n - 1, fmt, ap);
}

/* mkdir -p of root/@fmt. */
static void mkdirs(const char *fmt, ...)
{
	char path[PATH_MAX], *p;
	va_list ap;

	va_start(ap, fmt);
	path_of(path, sizeof(path), fmt, ap);
	va_end(ap);
	for (p = path + strlen(root) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	mkdir(path, 0755);
}

static void put(const char *text, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	path_of(path, sizeof(path), fmt, ap);
	va_end(ap);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static void link_to(const char *target, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	path_of(path, sizeof(path), fmt, ap);
	va_end(ap);
	unlink(path);
	if (symlink(target, path)) {
		perror(path);
		exit(1);
	}
}

static void put_u64(unsigned long long v, const char *dir, const char *attr)
{
	char text[32];

	snprintf(text, sizeof(text), "%llu\n", v);
	put(text, "%s/%s", dir, attr);
}

/* Device accel0 (two cores) and accel1, at a moment @k of 0 or 1. */
static void make_sys(int k)
{
	const char *d0 = "sys/class/accel/accel0";
	const char *d1 = "sys/class/accel/accel1";

	mkdirs("sys/devices/platform/trn_sim0");
	mkdirs("sys/devices/platform/trn_sim1");
	mkdirs("sys/bus/platform/drivers/trn_sim");
	link_to("../../../bus/platform/drivers/trn_sim",
		"sys/devices/platform/trn_sim0/driver");
	link_to("../../../bus/platform/drivers/trn_sim",
		"sys/devices/platform/trn_sim1/driver");
	mkdirs("%s/jobs_failed_by_status", d0);
	mkdirs("%s/cores/0", d0);
	mkdirs("%s/cores/1", d0);
	mkdirs("%s/jobs_failed_by_status", d1);
	/* A node of another accel driver: no jobs_submitted, not listed. */
	mkdirs("sys/class/accel/accel2");
	put("0\n", "sys/class/accel/accel2/dev_whatever");
	link_to("../../../devices/platform/trn_sim0", "%s/device", d0);
	link_to("../../../devices/platform/trn_sim1", "%s/device", d1);

	put("degraded\n", "%s/health", d0);
	put("1 device reset\n", "%s/health_reason", d0);
	put_u64(1ULL << 30, d0, "hbm_total");
	put_u64(8192, d0, "hbm_used");
	put("4096 0 4096 0\n", "%s/hbm_stack_used", d0);
	put_u64(4096, d0, "host_pinned");
	put_u64(k ? 400 : 150, d0, "jobs_submitted");
	put_u64(k ? 300 : 100, d0, "jobs_completed");
	put_u64(k ? 7 : 5, d0, "jobs_failed");
	put_u64(k ? 3 : 2, d0, "jobs_failed_by_status/mmu_fault");
	put_u64(4, d0, "jobs_failed_by_status/timeout");
	put_u64(2, d0, "resets");
	put_u64(1, d0, "device_resets");
	put_u64(1, d0, "bans");
	put_u64(k ? 3 : 2, d0, "mmu_faults");
	put_u64(1, d0, "coredumps");
	put_u64(k ? 500000000ULL : 0, d0, "cores/0/busy_ns");
	put_u64(k ? 90 : 40, d0, "cores/0/jobs_completed");
	put_u64(1, d0, "cores/0/jobs_failed");
	put_u64(0, d0, "cores/0/jobs_timed_out");
	put_u64(k ? 1000000000ULL : 750000000ULL, d0, "cores/1/busy_ns");
	put_u64(3, d0, "cores/1/jobs_completed");
	put_u64(0, d0, "cores/1/jobs_failed");
	put_u64(4, d0, "cores/1/jobs_timed_out");

	put("ok\n", "%s/health", d1);
	put("\n", "%s/health_reason", d1);
	put_u64(0, d1, "jobs_submitted");
}

static const char *fdinfo(int k)
{
	return k ?
	       "pos:\t0\nflags:\t02100002\nmnt_id:\t26\nino:\t5\n"
	       "drm-driver:\ttrn\ndrm-client-id:\t7\ndrm-pdev:\ttrn_sim0\n"
	       "drm-engine-core0:\t0 ns\ndrm-engine-core1:\t750000000 ns\n"
	       "trn-queues:\t3\ntrn-jobs-completed:\t260\n"
	       "trn-jobs-failed:\t2\ntrn-context:\t4\ntrn-buffers:\t5\n"
	       "trn-mmu-faults:\t1\ntrn-last-fault-va:\t0x1000\n"
	       "trn-bans:\t0\n"
	       "drm-total-hbm:\t8 KiB\ndrm-shared-hbm:\t0\n"
	       "drm-resident-hbm:\t8 KiB\ndrm-active-hbm:\t4 KiB\n"
	       "drm-total-host:\t2 MiB\ndrm-shared-host:\t1 MiB\n"
	       "drm-resident-host:\t2 MiB\ndrm-active-host:\t0\n" :
	       "drm-driver:\ttrn\ndrm-client-id:\t7\n"
	       "drm-engine-core0:\t0 ns\ndrm-engine-core1:\t500000000 ns\n"
	       "trn-queues:\t3\ntrn-jobs-completed:\t60\n"
	       "trn-jobs-failed:\t2\ntrn-context:\t4\ntrn-buffers:\t5\n"
	       "drm-total-hbm:\t8 KiB\ndrm-resident-hbm:\t8 KiB\n";
}

/*
 * Process 100 holds client 7 of accel0 through fds 3 and 4 (dup) and
 * /dev/null as fd 5; process 200 holds a node of another driver;
 * "self" and non-numeric entries are not processes.
 */
static void make_proc(int k)
{
	mkdirs("proc/100/fd");
	mkdirs("proc/100/fdinfo");
	put("trainer\n", "proc/100/comm");
	link_to("/dev/accel/accel0", "proc/100/fd/3");
	link_to("/dev/accel/accel0", "proc/100/fd/4");
	link_to("/dev/null", "proc/100/fd/5");
	put(fdinfo(k), "proc/100/fdinfo/3");
	put(fdinfo(k), "proc/100/fdinfo/4");
	put("pos:\t0\n", "proc/100/fdinfo/5");

	mkdirs("proc/200/fd");
	mkdirs("proc/200/fdinfo");
	put("other\n", "proc/200/comm");
	link_to("/dev/accel/accel2", "proc/200/fd/3");
	put("drm-driver:\tivpu\ndrm-client-id:\t1\n", "proc/200/fdinfo/3");

	mkdirs("proc/sys");
	link_to("100", "proc/self");
}

static char *report(const struct top_sample *now,
		    const struct top_sample *prev)
{
	static char *buf;
	size_t len;
	FILE *f;

	free(buf);
	f = open_memstream(&buf, &len);
	if (!f)
		abort();
	top_print_json(f, now, prev);
	fclose(f);
	return buf;
}

#define CHECK_HAS(text, part)						\
	do {								\
		if (!strstr((text), (part))) {				\
			fprintf(stderr, "%s:%d: no '%s' in %s\n",	\
				__FILE__, __LINE__, (part), (text));	\
			check_failures++;				\
		}							\
	} while (0)

static void check_parse(void)
{
	struct top_client c;

	CHECK(top_parse_fdinfo(fdinfo(1), &c));
	CHECK_INT(c.client_id, 7);
	CHECK_INT(c.context, 4);
	CHECK_INT(c.queues, 3);
	CHECK_INT(c.buffers, 5);
	CHECK_INT(c.jobs_completed, 260);
	CHECK_INT(c.jobs_failed, 2);
	CHECK_INT(c.mmu_faults, 1);
	CHECK_INT(c.hbm.total, 8192);
	CHECK_INT(c.hbm.active, 4096);
	CHECK_INT(c.host.total, 2 << 20);
	CHECK_INT(c.host.shared, 1 << 20);
	CHECK_INT(c.ncores, 2);
	CHECK_INT(c.engine_ns[1], 750000000);
	free(c.engine_ns);

	/* Another driver's client, or no driver key at all: not ours. */
	CHECK(!top_parse_fdinfo("drm-driver:\tivpu\ndrm-engine-core0:\t5 ns\n",
				&c));
	CHECK(!c.engine_ns);
	CHECK(!top_parse_fdinfo("pos:\t0\n", &c));
	CHECK(!top_parse_fdinfo("", &c));
	/* Engines given out of order and an absurd index. */
	CHECK(top_parse_fdinfo("drm-driver:\ttrn\ndrm-engine-core3:\t9 ns\n"
			       "drm-engine-core1:\t1 ns\n"
			       "drm-engine-core99999:\t1 ns\n", &c));
	CHECK_INT(c.ncores, 4);
	CHECK_INT(c.engine_ns[0], 0);
	CHECK_INT(c.engine_ns[1], 1);
	CHECK_INT(c.engine_ns[3], 9);
	free(c.engine_ns);
	/* A line without a newline at the end, and one without a colon. */
	CHECK(top_parse_fdinfo("garbage\ndrm-driver:\ttrn\ntrn-queues:\t2", &c));
	CHECK_INT(c.queues, 2);
	free(c.engine_ns);
}

int main(void)
{
	struct top_sample a, b;
	char proc[PATH_MAX + 8], sys[PATH_MAX + 8];
	const char *tmp = getenv("TMPDIR");
	char *r;

	check_parse();

	snprintf(root, sizeof(root), "%s/trn-top-XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(sys, sizeof(sys), "%s/sys", root);

	/* Nothing there at all: an empty sample, not an error. */
	mkdirs("proc");
	CHECK_INT(top_sample_take(&a, proc, sys, 1), 0);
	CHECK_INT(a.ndevices, 0);
	CHECK_INT(a.nclients, 0);
	CHECK_STR(report(&a, NULL),
		  "{\"trn_top\":1,\"time_ns\":1,\"period_ns\":0,"
		  "\"hidden_processes\":0,\"devices\":[],\"clients\":[]}\n");
	top_sample_free(&a);
	/* No /proc: an error. */
	CHECK_INT(top_sample_take(&a, "/nonexistent/proc", sys, 1), -ENOENT);

	make_sys(0);
	make_proc(0);
	CHECK_INT(top_sample_take(&a, proc, sys, 1000000000ULL), 0);
	make_sys(1);
	make_proc(1);
	CHECK_INT(top_sample_take(&b, proc, sys, 2000000000ULL), 0);

	CHECK_INT(b.ndevices, 2);
	CHECK_INT(b.devices[0].minor, 0);
	CHECK_INT(b.devices[1].minor, 1);
	CHECK_STR(b.devices[0].bus_id, "trn_sim0");
	CHECK_STR(b.devices[0].driver, "trn_sim");
	CHECK_STR(b.devices[0].health, "degraded");
	CHECK_STR(b.devices[0].health_reason, "1 device reset");
	CHECK_INT(b.devices[0].ncores, 2);
	CHECK_INT(b.devices[1].ncores, 0);
	/* Each stack's use; none from a driver without the attribute. */
	CHECK_INT(b.devices[0].nstacks, 4);
	CHECK_INT(b.devices[0].stack_used[0], 4096);
	CHECK_INT(b.devices[0].stack_used[1], 0);
	CHECK_INT(b.devices[0].stack_used[2], 4096);
	CHECK_INT(b.devices[1].nstacks, 0);
	CHECK_INT(b.devices[0].failed_by[5], 3);	/* mmu_fault */
	CHECK_INT(b.devices[0].failed_by[6], 4);	/* timeout */
	CHECK_INT(b.devices[0].failed_by[0], 0);	/* absent file */

	/* One client however many fds, and not the other driver's. */
	CHECK_INT(b.nclients, 1);
	CHECK_INT(b.clients[0].pid, 100);
	CHECK_STR(b.clients[0].comm, "trainer");
	CHECK_INT(b.clients[0].minor, 0);
	CHECK_INT(b.hidden, 0);

	CHECK(top_find_client(&a, &b.clients[0]) == &a.clients[0]);
	CHECK(top_find_device(&a, 1) == &a.devices[1]);
	CHECK(!top_find_device(&a, 5));
	CHECK(!top_find_client(NULL, &b.clients[0]));

	/* Utilisation: 0.25 s of engine time in a 1 s period. */
	CHECK(top_client_busy(&b.clients[0], &a.clients[0], 1000000000ULL) >
	      0.2499);
	CHECK(top_client_busy(&b.clients[0], &a.clients[0], 1000000000ULL) <
	      0.2501);
	CHECK(top_client_busy(&b.clients[0], NULL, 1000000000ULL) == 0.0);
	/* A counter that went backwards (a new client) is no rate. */
	CHECK(top_ratio(10, 5, 100) == 0.0);
	CHECK(top_ratio(0, 5, 0) == 0.0);

	r = report(&b, &a);
	CHECK_HAS(r, "{\"trn_top\":1,\"time_ns\":2000000000,"
		  "\"period_ns\":1000000000,\"hidden_processes\":0,");
	CHECK_HAS(r, "\"devices\":[{\"minor\":0,\"node\":\"/dev/accel/accel0\","
		  "\"bus_id\":\"trn_sim0\",\"driver\":\"trn_sim\","
		  "\"health\":\"degraded\",\"health_reason\":\"1 device reset\","
		  "\"memory\":{\"hbm_total\":1073741824,\"hbm_used\":8192,"
		  "\"host_pinned\":4096,\"hbm_stack_used\":[4096,0,4096,0]},");
	CHECK_HAS(r, "\"execution\":{\"submitted\":400,\"completed\":300,"
		  "\"failed\":7,\"failed_by_status\":{\"bad_opcode\":0,");
	CHECK_HAS(r, "\"mmu_fault\":3,\"timeout\":4,");
	CHECK_HAS(r, "\"resets\":2,\"device_resets\":1,\"bans\":1,"
		  "\"mmu_faults\":3,\"coredumps\":1,"
		  "\"completed_per_s\":200.0,\"failed_per_s\":2.0}");
	CHECK_HAS(r, "\"cores\":[{\"core\":0,\"busy_ns\":500000000,"
		  "\"jobs_completed\":90,\"jobs_failed\":1,"
		  "\"jobs_timed_out\":0,\"utilization\":0.5000},"
		  "{\"core\":1,\"busy_ns\":1000000000,\"jobs_completed\":3,"
		  "\"jobs_failed\":0,\"jobs_timed_out\":4,"
		  "\"utilization\":0.2500}]}");
	CHECK_HAS(r, "{\"minor\":1,\"node\":\"/dev/accel/accel1\"");
	CHECK_HAS(r, "\"host_pinned\":0,\"hbm_stack_used\":[]}");
	CHECK_HAS(r, "\"clients\":[{\"pid\":100,\"comm\":\"trainer\","
		  "\"minor\":0,\"client_id\":7,\"context\":4,\"queues\":3,"
		  "\"buffers\":5,\"memory\":{\"hbm\":{\"total\":8192,"
		  "\"shared\":0,\"resident\":8192,\"active\":4096},"
		  "\"host\":{\"total\":2097152,\"shared\":1048576,"
		  "\"resident\":2097152,\"active\":0}},"
		  "\"jobs\":{\"completed\":260,\"failed\":2,"
		  "\"completed_per_s\":200.0},"
		  "\"errors\":{\"mmu_faults\":1,\"bans\":0},"
		  "\"utilization\":0.2500,"
		  "\"cores\":[{\"core\":0,\"engine_ns\":0,\"utilization\":0.0000},"
		  "{\"core\":1,\"engine_ns\":750000000,"
		  "\"utilization\":0.2500}]}]}\n");
	/* Without a previous sample: no rates at all. */
	r = report(&b, NULL);
	CHECK(!strstr(r, "per_s"));
	CHECK(!strstr(r, "utilization"));

	/* --device 1: accel1 alone, and no client (ours use accel0). */
	top_sample_only(&b, 1);
	CHECK_INT(b.ndevices, 1);
	CHECK_INT(b.devices[0].minor, 1);
	CHECK_INT(b.nclients, 0);
	top_sample_only(&a, 0);
	CHECK_INT(a.ndevices, 1);
	CHECK_INT(a.devices[0].minor, 0);
	CHECK_INT(a.nclients, 1);

	top_sample_free(&a);
	top_sample_free(&b);
	CHECK_INT(a.nclients, 0);

	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd))
			fprintf(stderr, "test_top: could not remove %s\n", root);
	}
	return check_exit("test_top");
}
