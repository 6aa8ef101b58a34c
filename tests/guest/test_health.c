// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * What an operator sees of a device (Documentation/ABI/testing/
 * sysfs-driver-trn, execution.md "Health and events"): sysfs health and
 * health_reason, mmu_faults and jobs_failed_by_status/, and the
 * KOBJ_CHANGE uevents of the accel node, TRN_EVENT=fault|reset|ban|health
 * with TRN_HEALTH, the per-core figures in cores/<N>/, and the post-mortem
 * dumps in devcoredump (execution.md "Post-mortem dumps"). Each test makes
 * one thing happen on simulated device 57 (its own, job timeout 1 s)
 * through the simulator's knobs, and checks the counters and the uevent,
 * read from a kobject-uevent netlink socket opened before.
 *
 * With TRN_TEST_DEVICE=part (the pci lanes) the tests run on the part
 * under test instead, which other tests used before and whose job timeout
 * is trn's default: every counter is read as what it gained since the
 * test began (on a new simulated device that is what it reads), and what
 * needs the simulator's knobs or a device of its own skips and says so.
 */
#include <dirent.h>
#include <libgen.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <linux/netlink.h>

#include "kselftest_harness.h"
#include "trn-top-data.h"
#include "trn_test.h"

#define ID		(dut_is_part() ? DUT_ID : 57u)
#define TIMEOUT_MS	1000
#define MAX_BASE	32	/* counters remembered at the start */
#define WAIT_MS		30000
#define HANG_SEM	200	/* never signalled */
#define DEVCD_CLASS	"/sys/class/devcoredump"

/* A counter's value when the test began. */
struct counter_base {
	char attr[48];
	uint64_t value;
};

FIXTURE(health)
{
	int fd, sk;
	unsigned int minor;
	uint64_t old_timeout, old_window;
	bool window_saved;	/* @old_window was read: put it back */
	struct host_bo cmd, data;
	uint32_t bos[2];
	struct drm_trn_device_info info;
	struct counter_base base[MAX_BASE];
	unsigned int nbase;
};

static int find_dump(FIXTURE_DATA(health) *self, char *dir, size_t size);
static int dismiss_dump(const char *dir);

/* The device's counters the tests read, device-wide and per core. */
static const char *const device_counters[] = {
	"mmu_faults", "jobs_failed", "resets", "bans", "device_resets",
	"coredumps", "coredumps_dropped",
	"jobs_failed_by_status/bad_opcode", "jobs_failed_by_status/bad_size",
	"jobs_failed_by_status/bad_align", "jobs_failed_by_status/bad_arg",
	"jobs_failed_by_status/call_depth", "jobs_failed_by_status/mmu_fault",
	"jobs_failed_by_status/timeout", "jobs_failed_by_status/aborted",
	"jobs_failed_by_status/unsupported",
	"jobs_failed_by_status/device_error",
};

static const char *const core_counters[] = {
	"jobs_completed", "jobs_failed", "jobs_timed_out", "busy_ns",
};

static void remember(FIXTURE_DATA(health) *self, const char *attr)
{
	struct counter_base *b;

	if (self->nbase == MAX_BASE)
		return;
	b = &self->base[self->nbase];
	snprintf(b->attr, sizeof(b->attr), "%s", attr);
	if (!sim_accel_u64(ID, attr, &b->value))
		self->nbase++;
}

/* Every counter the tests read, as it is now: they count from here. */
static void remember_counters(FIXTURE_DATA(health) *self)
{
	char attr[48];
	unsigned int core, i;

	for (i = 0; i < ARRAY_SIZE(device_counters); i++)
		remember(self, device_counters[i]);
	/* Cores 0 and 1: the tests' jobs run on core 1. */
	for (core = 0; core < 2; core++)
		for (i = 0; i < ARRAY_SIZE(core_counters); i++) {
			snprintf(attr, sizeof(attr), "cores/%u/%s", core,
				 core_counters[i]);
			remember(self, attr);
		}
}

FIXTURE_SETUP(health)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	struct timeval tv = { .tv_usec = 200 * 1000 };
	int ret;

	self->fd = -1;
	self->sk = -1;
	self->nbase = 0;
	self->window_saved = false;
	SKIP_UNLESS_DUT();
	if (dut_is_part()) {
		ASSERT_EQ(0, trn_param_get("health_window_s",
					   &self->old_window));
		self->window_saved = true;
		ASSERT_EQ(0, dut_minor(&self->minor));
		self->fd = dut_open();
	} else {
		ASSERT_EQ(0, debugfs_ready());
		if (sim_exists(ID))
			sim_del(ID);
		ASSERT_EQ(0, trn_param_get("job_timeout_ms",
					   &self->old_timeout));
		ASSERT_EQ(0, trn_param_get("health_window_s",
					   &self->old_window));
		self->window_saved = true;
		ASSERT_EQ(0, trn_param_set("job_timeout_ms", TIMEOUT_MS));
		ret = sim_new(ID, 2, 16, 1);
		trn_param_set("job_timeout_ms", self->old_timeout);
		ASSERT_EQ(0, ret);
		ASSERT_EQ(0, sim_minor(ID, &self->minor));
		self->fd = sim_open(ID);
	}
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, query_info(self->fd, &self->info));
	ASSERT_EQ(0, host_bo_new(self->fd, 64 * 1024, &self->cmd));
	ASSERT_EQ(0, host_bo_new(self->fd, 4096, &self->data));
	self->bos[0] = self->cmd.handle;
	self->bos[1] = self->data.handle;
	self->sk = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
			  NETLINK_KOBJECT_UEVENT);
	ASSERT_LE(0, self->sk);
	ASSERT_EQ(0, bind(self->sk, (struct sockaddr *)&sa, sizeof(sa)));
	ASSERT_EQ(0, setsockopt(self->sk, SOL_SOCKET, SO_RCVTIMEO, &tv,
				sizeof(tv)));
	/*
	 * A part's dump of an earlier test's hang may still be held (a new
	 * simulated device has none): dismissed, as an operator would.
	 */
	if (dut_is_part()) {
		char dir[PATH_MAX];

		if (!find_dump(self, dir, sizeof(dir)))
			ASSERT_EQ(0, dismiss_dump(dir));
	}
	remember_counters(self);
}

FIXTURE_TEARDOWN(health)
{
	if (self->sk >= 0)
		close(self->sk);
	if (self->fd >= 0)
		close(self->fd);
	if (self->window_saved)
		trn_param_set("health_window_s", self->old_window);
	if (!dut_is_part() && sim_available() && sim_exists(ID))
		sim_del(ID);
}

/* The accel node's attribute @attr, a word or line, into @buf. */
static int attr_str(FIXTURE_DATA(health) *self, const char *attr, char *buf,
		    size_t size)
{
	char path[128];
	int ret;

	snprintf(path, sizeof(path), ACCEL_CLASS "/accel%u/%s", self->minor,
		 attr);
	ret = read_file(path, buf, size);
	if (ret < 0)
		return ret;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* What counter @attr read when the test began; 0 if it is not one. */
static uint64_t base_of(FIXTURE_DATA(health) *self, const char *attr)
{
	unsigned int i;

	for (i = 0; i < self->nbase; i++)
		if (!strcmp(self->base[i].attr, attr))
			return self->base[i].value;
	return 0;
}

/*
 * The device attribute @attr, a counter as what it gained since the test
 * began (remember_counters()); ~0 if there is no such attribute.
 */
static uint64_t attr_u64(FIXTURE_DATA(health) *self, const char *attr)
{
	uint64_t v = ~0ULL;

	if (sim_accel_u64(ID, attr, &v))
		return ~0ULL;
	return v - base_of(self, attr);
}

/*
 * Wait up to WAIT_MS for the device attribute @attr to read @want (the
 * dump counters move when the report's work is done, just after the
 * report shows). 0, or -ETIMEDOUT.
 */
static int wait_attr(FIXTURE_DATA(health) *self, const char *attr,
		     uint64_t want)
{
	int64_t end = mono_ns() + (int64_t)WAIT_MS * 1000000;

	while (attr_u64(self, attr) != want) {
		if (mono_ns() > end)
			return -ETIMEDOUT;
		usleep(10 * 1000);
	}
	return 0;
}

/*
 * Wait up to WAIT_MS for change uevents of our accel node with
 * TRN_EVENT=@events[i], for each of the @n, in any order (events noticed
 * in one go are sent as the work finds them), each with
 * TRN_HEALTH=@health. 0, or -ETIMEDOUT.
 */
static int wait_uevents(FIXTURE_DATA(health) *self,
			const char *const *events, unsigned int n,
			const char *health)
{
	char buf[8192], node[32], want_he[48];
	int64_t end = mono_ns() + (int64_t)WAIT_MS * 1000000;
	unsigned int seen = 0, i;

	snprintf(node, sizeof(node), "/accel/accel%u", self->minor);
	snprintf(want_he, sizeof(want_he), "TRN_HEALTH=%s", health);
	while (mono_ns() < end && seen != (1u << n) - 1) {
		ssize_t len = recv(self->sk, buf, sizeof(buf) - 1, 0);
		const char *ev = NULL;
		bool he = false;
		size_t off;

		if (len <= 0)
			continue;
		buf[len] = '\0';
		if (strncmp(buf, "change@", 7) || !strstr(buf, node))
			continue;
		/* The header, then KEY=value strings, each NUL-terminated. */
		for (off = strlen(buf) + 1; off < (size_t)len;
		     off += strlen(buf + off) + 1) {
			if (!strncmp(buf + off, "TRN_EVENT=", 10))
				ev = buf + off + 10;
			he |= !strcmp(buf + off, want_he);
		}
		for (i = 0; ev && he && i < n; i++)
			if (!strcmp(ev, events[i]))
				seen |= 1u << i;
	}
	return seen == (1u << n) - 1 ? 0 : -ETIMEDOUT;
}

static int wait_uevent(FIXTURE_DATA(health) *self, const char *event,
		       const char *health)
{
	return wait_uevents(self, &event, 1, health);
}

/* Run @c's commands as one job on a new queue of core 1; the job's error. */
static int run_job(FIXTURE_DATA(health) *self, struct cmds *c)
{
	struct drm_trn_queue_create q;
	struct drm_trn_job j;
	int ret, st;

	ret = queue_create(self->fd, 1, DRM_TRN_PRIORITY_NORMAL, &q);
	if (ret)
		return ret;
	job_init(&j, c->va, (uint32_t)c->len);
	j.bo_handles = (uintptr_t)self->bos;
	j.bo_count = 2;
	ret = submit_jobs(self->fd, q.queue_id, &j, 1);
	if (!ret)
		ret = syncobj_wait_point(self->fd, q.syncobj, j.seqno, WAIT_MS);
	if (!ret) {
		st = timeline_fence_status(self->fd, q.syncobj, j.seqno);
		ret = st == 1 ? 0 : st;
	}
	queue_destroy(self->fd, q.queue_id);
	syncobj_destroy(self->fd, q.syncobj);
	return ret;
}

/* A job that waits for a semaphore nobody signals; its error (-ETIMEDOUT). */
static int run_hang(FIXTURE_DATA(health) *self)
{
	struct cmds c;
	int ret;

	cmds_init(&c, self->cmd.map, self->cmd.va, self->cmd.size);
	ret = cmds_sem(&c, true, HANG_SEM, 1);
	return ret ? ret : run_job(self, &c);
}

/* tools/@name next to this test's build directory, else build/tools/@name. */
static void tool_path(const char *name, char *path, size_t size)
{
	char self_exe[PATH_MAX], alt[PATH_MAX + 64];
	ssize_t n;

	snprintf(path, size, "build/tools/%s", name);
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n > 0) {
		self_exe[n] = '\0';
		snprintf(alt, sizeof(alt), "%s/../../tools/%s",
			 dirname(self_exe), name);
		if (access(alt, X_OK) == 0)
			snprintf(path, size, "%s", alt);
	}
}

/*
 * Run tool @name with @args; its exit status, and in @out everything it
 * printed or, given @only, the last line containing @only; or -1.
 */
static int run_tool(const char *name, const char *args, const char *only,
		    char *out, size_t size)
{
	char path[PATH_MAX + 64], cmd[PATH_MAX + 256], line[4096];
	FILE *p;
	int st;

	tool_path(name, path, sizeof(path));
	snprintf(cmd, sizeof(cmd), "%s %s", path, args);
	out[0] = '\0';
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		if (!only)
			strncat(out, line, size - strlen(out) - 1);
		else if (strstr(line, only))
			snprintf(out, size, "%s", line);
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * Run trn-ls with @args; its exit status, and in @out the line of our
 * device (or, with --json, everything), or -1.
 */
static int trn_ls(FIXTURE_DATA(health) *self, const char *args, char *out,
		  size_t size)
{
	char node[40];

	snprintf(node, sizeof(node), "/dev/accel/accel%u ", self->minor);
	return run_tool("trn-ls", args, strstr(args, "--json") ? NULL : node,
			out, size);
}

/*
 * The devcoredump directory (DEVCD_CLASS/devcdN) of a dump of our
 * device, into @dir; 0 or -ENOENT.
 */
static int find_dump(FIXTURE_DATA(health) *self, char *dir, size_t size)
{
	char link[PATH_MAX], want[PATH_MAX], got[PATH_MAX];
	struct dirent *e;
	int ret = -ENOENT;
	DIR *d;

	snprintf(link, sizeof(link), ACCEL_CLASS "/accel%u/device",
		 self->minor);
	if (!realpath(link, want))
		return -errno;
	d = opendir(DEVCD_CLASS);
	if (!d)
		return -ENOENT;
	while (ret && (e = readdir(d))) {
		if (strncmp(e->d_name, "devcd", 5))
			continue;
		snprintf(link, sizeof(link), DEVCD_CLASS "/%s/failing_device",
			 e->d_name);
		if (realpath(link, got) && !strcmp(got, want)) {
			snprintf(dir, size, DEVCD_CLASS "/%s", e->d_name);
			ret = 0;
		}
	}
	closedir(d);
	return ret;
}

/* Wait up to WAIT_MS for a dump of our device (written by a work item). */
static int wait_dump(FIXTURE_DATA(health) *self, char *dir, size_t size)
{
	int64_t end = mono_ns() + (int64_t)WAIT_MS * 1000000;

	while (find_dump(self, dir, size)) {
		if (mono_ns() > end)
			return -ETIMEDOUT;
		usleep(10 * 1000);
	}
	return 0;
}

/* The whole report of the dump in @dir into @buf; its length or -errno. */
static ssize_t read_dump(const char *dir, char *buf, size_t size)
{
	char path[PATH_MAX + 8];
	size_t len = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/data", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < size - 1 && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

/* The value of the report's line "@key: value", or "" if it has none. */
static const char *dump_field(const char *text, const char *key, char *val,
			      size_t size)
{
	char want[64];
	const char *p;

	snprintf(want, sizeof(want), "\n%s: ", key);
	val[0] = '\0';
	p = strstr(text, want);
	if (p) {
		p += strlen(want);
		snprintf(val, size, "%.*s", (int)strcspn(p, "\n"), p);
	}
	return val;
}

/* Whether a line of @text holds both @a and @b. */
static bool line_with(const char *text, const char *a, const char *b)
{
	const char *line, *end, *at;

	for (line = text; *line; line = *end ? end + 1 : end) {
		end = strchrnul(line, '\n');
		at = strstr(line, a);
		if (at && at < end && (at = strstr(line, b)) && at < end)
			return true;
	}
	return false;
}

/*
 * Whether the dump's count @key of what the hung job's ring ran before it
 * is right: exactly "1" (the fill) on a new simulated device; on a part,
 * whose rings ran earlier tests' jobs too, at least 1.
 */
static bool ran_before(const char *text, const char *key)
{
	char val[64];

	dump_field(text, key, val, sizeof(val));
	if (dut_is_part())
		return strtoull(val, NULL, 10) >= 1;
	return !strcmp(val, "1");
}

/*
 * Dismiss the dump in @dir (any write to its data frees it) and wait up to
 * WAIT_MS for it to be gone: devcoredump deletes it from a work item.
 * 0, -errno of the write, or -ETIMEDOUT.
 */
static int dismiss_dump(const char *dir)
{
	int64_t end = mono_ns() + (int64_t)WAIT_MS * 1000000;
	char path[PATH_MAX + 8];
	int ret;

	snprintf(path, sizeof(path), "%s/data", dir);
	ret = sysfs_write(path, "1");
	if (ret)
		return ret;
	while (!access(dir, F_OK)) {
		if (mono_ns() > end)
			return -ETIMEDOUT;
		usleep(10 * 1000);
	}
	return 0;
}

static uint64_t core_u64(FIXTURE_DATA(health) *self, unsigned int core,
			 const char *attr)
{
	char name[64];

	snprintf(name, sizeof(name), "cores/%u/%s", core, attr);
	return attr_u64(self, name);
}

static int knob(const char *name, const char *value)
{
	char path[128];

	sim_debugfs_path(ID, name, path, sizeof(path));
	return sysfs_write(path, value);
}

TEST_F(health, ok_and_zero_at_start)
{
	static const char *const statuses[] = {
		"bad_opcode", "bad_size", "bad_align", "bad_arg", "call_depth",
		"mmu_fault", "timeout", "aborted", "unsupported",
		"device_error",
	};
	char buf[128], attr[64];
	size_t i;

	ASSERT_EQ(0, attr_str(self, "health", buf, sizeof(buf)));
	EXPECT_STREQ("ok", buf);
	ASSERT_EQ(0, attr_str(self, "health_reason", buf, sizeof(buf)));
	EXPECT_STREQ("", buf);
	EXPECT_EQ(0, attr_u64(self, "mmu_faults"));
	for (i = 0; i < ARRAY_SIZE(statuses); i++) {
		snprintf(attr, sizeof(attr), "jobs_failed_by_status/%s",
			 statuses[i]);
		EXPECT_EQ(0, attr_u64(self, attr)) TH_LOG("%s", attr);
	}
	/* Read-only, like every figure. */
	snprintf(attr, sizeof(attr), ACCEL_CLASS "/accel%u/health",
		 self->minor);
	EXPECT_EQ(-EACCES, sysfs_write(attr, "ok"));
}

/*
 * A fault is counted and told, and is no trouble of the device's: one of
 * the simulator's dma_copy hook (outside jobs; a part has none), then a
 * job's.
 */
TEST_F(health, fault)
{
	uint64_t faults = 0;
	struct cmds c;
	char buf[64];

	if (!dut_is_part()) {
		ASSERT_EQ(-EFAULT, sim_dma_copy(ID, fd_context(self->fd),
						self->data.va, 0x1000, 8));
		EXPECT_EQ(++faults, attr_u64(self, "mmu_faults"));
		EXPECT_EQ(0, wait_uevent(self, "fault", "ok"));
	}
	/* A job's fault: by status too. */
	cmds_init(&c, self->cmd.map, self->cmd.va, self->cmd.size);
	ASSERT_EQ(0, cmds_copy(&c, self->data.va, 0x2000, 8));
	EXPECT_EQ(-EFAULT, run_job(self, &c));
	EXPECT_EQ(++faults, attr_u64(self, "mmu_faults"));
	if (dut_is_part())
		EXPECT_EQ(0, wait_uevent(self, "fault", "ok"));
	EXPECT_EQ(1, attr_u64(self, "jobs_failed_by_status/mmu_fault"));
	EXPECT_EQ(1, attr_u64(self, "jobs_failed"));
	ASSERT_EQ(0, attr_str(self, "health", buf, sizeof(buf)));
	EXPECT_STREQ("ok", buf);
}

/* A malformed job is counted by its status. */
TEST_F(health, bad_opcode_counted)
{
	uint64_t *w = self->cmd.map;
	struct cmds c;

	cmds_init(&c, self->cmd.map, self->cmd.va, self->cmd.size);
	ASSERT_EQ(0, cmds_nop(&c));
	w[0] = TRN_CMD_HEADER(0x3f, 0, 1);	/* no such opcode */
	EXPECT_EQ(-EILSEQ, run_job(self, &c));
	EXPECT_EQ(1, attr_u64(self, "jobs_failed_by_status/bad_opcode"));
}

/*
 * A hung job: its ring is reset and its context banned, both told; a
 * tenant's hang is not the device's trouble, so health stays ok.
 */
TEST_F(health, hang_reset_and_ban)
{
	char buf[64];

	EXPECT_EQ(-ETIMEDOUT, run_hang(self));
	EXPECT_EQ(1, attr_u64(self, "jobs_failed_by_status/timeout"));
	EXPECT_EQ(1, attr_u64(self, "resets"));
	EXPECT_EQ(1, attr_u64(self, "bans"));
	/* The ban comes first in the handler, the reset at its end. */
	EXPECT_EQ(0, wait_uevents(self, (const char *const[]){ "reset", "ban" },
				  2, "ok"));
	ASSERT_EQ(0, attr_str(self, "health", buf, sizeof(buf)));
	EXPECT_STREQ("ok", buf);
}

/*
 * A hang leaves a post-mortem dump: the ring, the hung job with its
 * process, descriptor and commands, what else was on the ring and what
 * ran before. Each core's figures count what ran on it.
 */
TEST_F(health, hang_dumps_the_ring)
{
	char dir[PATH_MAX], val[256], want[128], *text;
	size_t text_size = 64 * 1024;
	struct cmds c;
	uint64_t first;

	if (access(DEVCD_CLASS, F_OK))
		SKIP(return, "kernel without devcoredump (CONFIG_DEV_COREDUMP)");
	ASSERT_EQ(-ENOENT, find_dump(self, dir, sizeof(dir)));
	EXPECT_EQ(0, core_u64(self, 1, "jobs_completed"));
	EXPECT_EQ(0, core_u64(self, 1, "busy_ns"));
	/* One job that does work, then the hang after it on the same ring. */
	cmds_init(&c, self->cmd.map, self->cmd.va, 1024);
	ASSERT_EQ(0, cmds_fill(&c, self->data.va, 0x5a5a5a5a, 4096));
	ASSERT_EQ(0, run_job(self, &c));
	EXPECT_EQ(1, core_u64(self, 1, "jobs_completed"));
	EXPECT_LT(0, core_u64(self, 1, "busy_ns"));
	cmds_init(&c, (char *)self->cmd.map + 1024, self->cmd.va + 1024,
		  1024);
	ASSERT_EQ(0, cmds_nop(&c));
	ASSERT_EQ(0, cmds_sem(&c, true, HANG_SEM, 1));
	memcpy(&first, c.map, sizeof(first));
	ASSERT_EQ(0, next_queue_on_same_ring(self->fd, 1));
	EXPECT_EQ(-ETIMEDOUT, run_job(self, &c));

	ASSERT_EQ(0, wait_dump(self, dir, sizeof(dir)));
	text = malloc(text_size);
	ASSERT_NE(NULL, text);
	ASSERT_LT(0, read_dump(dir, text, text_size));
	EXPECT_EQ(0, strncmp(text, "trn devcoredump 1\n", 18)) TH_LOG("%s", text);
	snprintf(want, sizeof(want), "accel%u", self->minor);
	EXPECT_STREQ(want, dump_field(text, "device", val, sizeof(val)));
	snprintf(want, sizeof(want), "%u", self->info.device_id);
	EXPECT_STREQ(want, dump_field(text, "device_id", val, sizeof(val)));
	EXPECT_STREQ("job timeout", dump_field(text, "reason", val, sizeof(val)));
	EXPECT_STREQ("ring reset", dump_field(text, "outcome", val, sizeof(val)));
	EXPECT_STREQ("ok", dump_field(text, "health", val, sizeof(val)));
	EXPECT_STREQ("1", dump_field(text, "ring.core", val, sizeof(val)));
	EXPECT_TRUE(ran_before(text, "ring.retired")) TH_LOG("%s", text);
	snprintf(want, sizeof(want), "%u", fd_context(self->fd));
	EXPECT_STREQ(want, dump_field(text, "job.context", val, sizeof(val)));
	snprintf(want, sizeof(want), "%d", getpid());
	EXPECT_STREQ(want, dump_field(text, "job.pid", val, sizeof(val)));
	EXPECT_STREQ("test_health", dump_field(text, "job.comm", val, sizeof(val)));
	snprintf(want, sizeof(want), "0x%llx", (unsigned long long)c.va);
	EXPECT_STREQ(want, dump_field(text, "job.cmd_va", val, sizeof(val)));
	snprintf(want, sizeof(want), "%zu", c.len);
	EXPECT_STREQ(want, dump_field(text, "job.cmd_size", val, sizeof(val)));
	EXPECT_STREQ("2", dump_field(text, "job.bos", val, sizeof(val)));
	/* The commands as the job's buffer holds them, first word first. */
	snprintf(want, sizeof(want), "%zu of %zu bytes", c.len, c.len);
	EXPECT_STREQ(want, dump_field(text, "commands", val, sizeof(val)));
	snprintf(want, sizeof(want), "\n  0000: %016llx ",
		 (unsigned long long)first);
	EXPECT_NE(NULL, strstr(text, want)) TH_LOG("%s", text);
	/* The hung job was still on the ring, the fill had run before it. */
	EXPECT_STREQ("1", dump_field(text, "pending", val, sizeof(val)));
	snprintf(want, sizeof(want), "context=%u queue=", fd_context(self->fd));
	EXPECT_NE(NULL, strstr(text, want)) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, " status=pending ")) TH_LOG("%s", text);
	EXPECT_TRUE(ran_before(text, "history")) TH_LOG("%s", text);
	/* The fill, ours (@want still names our context), among what ran. */
	EXPECT_TRUE(line_with(text, want, " status=ok run_ns="))
		TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "\nend\n")) TH_LOG("%s", text);
	free(text);

	EXPECT_EQ(0, wait_attr(self, "coredumps", 1));
	EXPECT_EQ(0, attr_u64(self, "coredumps_dropped"));
	EXPECT_EQ(1, core_u64(self, 1, "jobs_timed_out"));
	EXPECT_EQ(1, core_u64(self, 1, "jobs_failed"));
	EXPECT_EQ(1, core_u64(self, 1, "jobs_completed"));
	EXPECT_EQ(0, core_u64(self, 0, "jobs_completed"));
	EXPECT_EQ(0, core_u64(self, 0, "jobs_timed_out"));
	/* Only the device's cores, and the figures are read-only. */
	EXPECT_EQ(~0ULL, core_u64(self, self->info.num_cores,
				  "jobs_completed"));
	snprintf(val, sizeof(val), ACCEL_CLASS "/accel%u/cores/1/busy_ns",
		 self->minor);
	EXPECT_EQ(-EACCES, sysfs_write(val, "0"));

	/* Dismissed, it is gone. */
	ASSERT_EQ(0, dismiss_dump(dir));
	EXPECT_EQ(-ENOENT, find_dump(self, dir, sizeof(dir)));
}

/*
 * devcoredump holds one report per device: a hang while the first is
 * unread makes none, and is counted as dropped, not as a dump; once the
 * first is dismissed, the next hang dumps again.
 */
TEST_F(health, dump_refused_while_one_is_held)
{
	char dir[PATH_MAX], again[PATH_MAX];
	int i;

	if (access(DEVCD_CLASS, F_OK))
		SKIP(return, "kernel without devcoredump (CONFIG_DEV_COREDUMP)");
	EXPECT_EQ(-ETIMEDOUT, run_hang(self));
	ASSERT_EQ(0, wait_dump(self, dir, sizeof(dir)));
	ASSERT_EQ(0, wait_attr(self, "coredumps", 1));

	for (i = 1; i <= 2; i++) {
		EXPECT_EQ(-ETIMEDOUT, run_hang(self));
		ASSERT_EQ(0, wait_attr(self, "coredumps_dropped", i));
		EXPECT_EQ(1, attr_u64(self, "coredumps"));
		/* The first report is the one still there. */
		ASSERT_EQ(0, find_dump(self, again, sizeof(again)));
		EXPECT_STREQ(dir, again);
	}

	ASSERT_EQ(0, dismiss_dump(dir));
	EXPECT_EQ(-ETIMEDOUT, run_hang(self));
	ASSERT_EQ(0, wait_attr(self, "coredumps", 2));
	EXPECT_EQ(2, attr_u64(self, "coredumps_dropped"));
	ASSERT_EQ(0, wait_dump(self, again, sizeof(again)));
	EXPECT_STRNE(dir, again);
	EXPECT_EQ(0, dismiss_dump(again));
}

/* A device's dumps go with it: nothing holds the device past removal. */
TEST_F(health, dump_goes_with_the_device)
{
	char dir[PATH_MAX];

	if (access(DEVCD_CLASS, F_OK))
		SKIP(return, "kernel without devcoredump (CONFIG_DEV_COREDUMP)");
	SIMULATOR_ONLY("it deletes its device (a part's removal: tests/pci-lane/test_pci_exec)");
	EXPECT_EQ(-ETIMEDOUT, run_hang(self));
	ASSERT_EQ(0, wait_dump(self, dir, sizeof(dir)));
	host_bo_free(self->fd, &self->cmd);
	host_bo_free(self->fd, &self->data);
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, sim_del(ID));
	EXPECT_NE(0, access(dir, F_OK)) TH_LOG("%s outlived its device", dir);
}

/*
 * A ring that cannot be reset takes the device through a device reset:
 * degraded, with the reason, told; health_window_s later ok again, told.
 */
TEST_F(health, device_reset_degrades_for_a_window)
{
	struct cmds c;
	char buf[128];

	SIMULATOR_ONLY("a ring reset that fails needs trn_sim's reset_fail_next (a part's: test_pci_exec's wedged_engine_device_reset)");
	ASSERT_EQ(0, trn_param_set("health_window_s", 3));
	ASSERT_EQ(0, knob("hang_next", "1"));
	ASSERT_EQ(0, knob("reset_fail_next", "1"));
	cmds_init(&c, self->cmd.map, self->cmd.va, self->cmd.size);
	ASSERT_EQ(0, cmds_nop(&c));
	EXPECT_EQ(-ETIMEDOUT, run_job(self, &c));
	EXPECT_EQ(1, attr_u64(self, "device_resets"));
	EXPECT_EQ(0, wait_uevent(self, "health", "degraded"));
	/* The dump says how the hang ended. */
	if (!access(DEVCD_CLASS, F_OK)) {
		char dir[PATH_MAX], text[16384], val[64];

		ASSERT_EQ(0, wait_dump(self, dir, sizeof(dir)));
		ASSERT_LT(0, read_dump(dir, text, sizeof(text)));
		EXPECT_STREQ("device reset",
			     dump_field(text, "outcome", val, sizeof(val)));
		EXPECT_STREQ("degraded",
			     dump_field(text, "health", val, sizeof(val)));
		EXPECT_EQ(0, dismiss_dump(dir));
	}
	ASSERT_EQ(0, attr_str(self, "health", buf, sizeof(buf)));
	EXPECT_STREQ("degraded", buf);
	ASSERT_EQ(0, attr_str(self, "health_reason", buf, sizeof(buf)));
	EXPECT_EQ(0, strncmp(buf, "device reset ", 13)) TH_LOG("%s", buf);
	/* trn-ls --health shows it and says so in its exit status. */
	{
		char out[16384];

		EXPECT_EQ(3, trn_ls(self, "--health", out, sizeof(out)));
		EXPECT_NE(NULL, strstr(out, " degraded ")) TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, "device reset ")) TH_LOG("%s", out);
		EXPECT_EQ(3, trn_ls(self, "--json --health", out, sizeof(out)));
		EXPECT_NE(NULL, strstr(out, "\"health\": {\"state\": \"degraded\""))
			TH_LOG("%s", out);
		/* Without --health, health does not decide the status. */
		EXPECT_EQ(0, trn_ls(self, "", out, sizeof(out)));
	}
	/* The window closes by itself. */
	EXPECT_EQ(0, wait_uevent(self, "health", "ok"));
	ASSERT_EQ(0, attr_str(self, "health", buf, sizeof(buf)));
	EXPECT_STREQ("ok", buf);
	ASSERT_EQ(0, attr_str(self, "health_reason", buf, sizeof(buf)));
	EXPECT_STREQ("", buf);
	{
		char out[16384];

		EXPECT_EQ(0, trn_ls(self, "--health", out, sizeof(out)));
		EXPECT_NE(NULL, strstr(out, " ok ")) TH_LOG("%s", out);
	}
}

/*
 * The number after "@key": in @json, looked for from @from on and before
 * @end (NULL: the end); 0 or -ENOENT.
 */
static int json_u64(const char *from, const char *end, const char *key,
		    uint64_t *val)
{
	char want[64];
	const char *at;

	snprintf(want, sizeof(want), "\"%s\":", key);
	at = strstr(from, want);
	if (!at || (end && at >= end))
		return -ENOENT;
	*val = strtoull(at + strlen(want), NULL, 10);
	return 0;
}

/*
 * trn-top --json sees this process: its queue, its buffers by region, its
 * jobs and their engine time on core 1, and the device with both cores;
 * --batch shows it as a row; --device of another node leaves it out.
 */
TEST_F(health, top_shows_this_process)
{
	char out[16384], want[128], args[96];
	struct drm_trn_queue_create q;
	const char *me, *next, *cores;
	uint64_t seqno = 0, v;
	uint32_t hbm;
	struct cmds c;
	int i;

	ASSERT_EQ(0, bo_create(self->fd, 256 * 1024, DRM_TRN_PLACEMENT_HBM, 0,
			       0, &hbm, NULL));
	ASSERT_EQ(0, queue_create(self->fd, 1, DRM_TRN_PRIORITY_NORMAL, &q));
	cmds_init(&c, self->cmd.map, self->cmd.va, 1024);
	ASSERT_EQ(0, cmds_fill(&c, self->data.va, 0x5a5a5a5a, 4096));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, submit_one(self->fd, q.queue_id, c.va,
					(uint32_t)c.len, self->cmd.handle,
					&seqno));
	ASSERT_EQ(0, syncobj_wait_point(self->fd, q.syncobj, seqno, WAIT_MS));

	snprintf(args, sizeof(args), "--json --interval 0.2 --count 1 --device %u",
		 self->minor);
	ASSERT_EQ(0, run_tool("trn-top", args, NULL, out, sizeof(out)));
	EXPECT_EQ(0, strncmp(out, "{\"trn_top\":1,\"time_ns\":", 23))
		TH_LOG("%s", out);
	/* The device asked for, and it alone. */
	snprintf(want, sizeof(want), "\"devices\":[{\"minor\":%u,", self->minor);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "\"driver\":\"%s\"",
		 dut_is_part() ? "trn_pci" : "trn_sim");
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"health\":\"ok\"")) TH_LOG("%s", out);
	/* Each HBM stack's use (sysfs hbm_stack_used), the device's in sum. */
	{
		const char *s = strstr(out, "\"hbm_stack_used\":[");
		uint64_t sum = 0, used;
		unsigned int k = 0;
		char *end;

		ASSERT_NE(NULL, s) TH_LOG("%s", out);
		s += strlen("\"hbm_stack_used\":[");
		while (*s != ']' && k < 64) {
			sum += strtoull(s, &end, 10);
			ASSERT_NE(s, end) TH_LOG("%s", out);
			k++;
			s = *end == ',' ? end + 1 : end;
		}
		EXPECT_EQ(self->info.hbm_stacks, k);
		ASSERT_EQ(0, json_u64(out, NULL, "hbm_used", &used));
		EXPECT_EQ(used, sum);
		EXPECT_LE(256 * 1024, sum);
	}
	cores = strstr(out, "\"cores\":[{\"core\":0,");
	ASSERT_NE(NULL, cores) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(cores, "{\"core\":1,\"busy_ns\":"));
	snprintf(want, sizeof(want), "{\"core\":%u,", self->info.num_cores);
	EXPECT_EQ(NULL, strstr(cores, want)) TH_LOG("%s", out);
	ASSERT_EQ(0, json_u64(strstr(cores, "{\"core\":1,"), NULL,
			      "jobs_completed", &v));
	/* trn-top shows the counter itself: what it had, and the three. */
	EXPECT_EQ(base_of(self, "cores/1/jobs_completed") + 3, v);
	/* This process, once, with what it holds. */
	snprintf(want, sizeof(want), "{\"pid\":%d,\"comm\":\"test_health\",\"minor\":%u,",
		 getpid(), self->minor);
	me = strstr(out, want);
	ASSERT_NE(NULL, me) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(me + 1, want)) TH_LOG("%s", out);
	next = strstr(me + 1, "{\"pid\":");
	ASSERT_EQ(0, json_u64(me, next, "context", &v));
	EXPECT_EQ(fd_context(self->fd), v);
	ASSERT_EQ(0, json_u64(me, next, "queues", &v));
	EXPECT_EQ(1, v);
	/* Its three buffers and the queue's status buffer (a host page). */
	ASSERT_EQ(0, json_u64(me, next, "buffers", &v));
	EXPECT_EQ(4, v);
	ASSERT_EQ(0, json_u64(strstr(me, "\"hbm\":{"), next, "resident", &v));
	EXPECT_EQ(256 * 1024, v);
	ASSERT_EQ(0, json_u64(strstr(me, "\"host\":{"), next, "total", &v));
	EXPECT_EQ(self->cmd.size + self->data.size + 4096, v);
	ASSERT_EQ(0, json_u64(strstr(me, "\"jobs\":{"), next, "completed", &v));
	EXPECT_EQ(3, v);
	ASSERT_EQ(0, json_u64(strstr(me, "{\"core\":1,"), next, "engine_ns", &v));
	EXPECT_LT(0, v);
	EXPECT_NE(NULL, strstr(me, "\"utilization\":")) TH_LOG("%s", out);

	/* The plain-text screen: a row with pid, name and node. */
	snprintf(args, sizeof(args), "--batch --interval 0.2 --count 1 --device %u",
		 self->minor);
	snprintf(want, sizeof(want), "%7d test_health", getpid());
	ASSERT_EQ(0, run_tool("trn-top", args, want, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);

	/* Another node: neither the device nor this process. */
	snprintf(args, sizeof(args), "--json --interval 0.1 --count 1 --device %u",
		 self->minor + 100);
	ASSERT_EQ(0, run_tool("trn-top", args, NULL, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "\"devices\":[],\"clients\":[]"))
		TH_LOG("%s", out);

	EXPECT_EQ(0, queue_destroy(self->fd, q.queue_id));
	syncobj_destroy(self->fd, q.syncobj);
	EXPECT_EQ(0, gem_close(self->fd, hbm));
}

/*
 * Unprivileged, trn-top's sampling sees every device but not another
 * user's processes: those are counted as hidden, not shown or guessed.
 */
TEST_F(health, top_hides_other_users)
{
	pid_t pid;
	int st;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct top_sample s;
		size_t i;
		int code = 0;

		if (setgid(65534) || setuid(65534))
			_exit(10);
		if (top_sample_take(&s, "/proc", "/sys", 0))
			_exit(11);
		if (!top_find_device(&s, self->minor))
			code = 12;
		for (i = 0; i < s.nclients; i++)
			if (s.clients[i].pid == getppid())
				code = 13;
		if (!s.hidden)
			code = 14;
		top_sample_free(&s);
		_exit(code);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

TEST_HARNESS_MAIN
