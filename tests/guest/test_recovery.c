// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * Hangs, timeouts, resets, faults and teardown with jobs in flight, on a
 * simulated device of its own (id 51: 2 cores, one hardware queue each, so
 * that every queue of a core shares the hung ring) created with trn's
 * job_timeout_ms set to TIMEOUT_MS (the parameter is read when a device is
 * added; it is restored right after).
 *
 * A job hangs either on a device semaphore that nobody signals or through
 * the simulator's debugfs knob hang_next. The driver must time it out and
 * reset: its fences fail with -ETIMEDOUT, its queue is marked guilty and
 * counts the reset, its context is banned (its later jobs fail with
 * -ECANCELED, its queues refuse more, a new queue works), and an innocent
 * context that submitted alongside on the same core completes all its
 * jobs with the right data. Killing or
 * closing a context with jobs in flight (hung ones included) must bring
 * the device's job and memory counters back to where they were.
 *
 * With TRN_TEST_DEVICE=part (the pci lanes) the tests run on the part
 * under test instead, bound with trn's default job timeout and four rings
 * per core: the innocent context puts its queue on the hung one's ring
 * (next_queue_on_same_ring()), and what needs the simulator's knobs
 * (hang_next, reset_fail_next, late_next) skips and says so.
 */
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "trn_test.h"

#define DEV		(dut_is_part() ? DUT_ID : 51u)
#define TIMEOUT_MS	500
#define WAIT_MS		60000	/* for anything that must end */
#define HANG_SEM	200	/* never signalled */
#define INNOCENT_JOBS	64

/* A file of the device under test; fd or -errno. */
static int dev_open(void)
{
	return dut_is_part() ? dut_open() : sim_open(DEV);
}

FIXTURE(rec)
{
	int fd;
	struct sim_counters mem0;
	struct host_bo cmd, data;
	uint32_t bos[2];
	struct cmds cs;
};

FIXTURE_SETUP(rec)
{
	int ret;

	self->fd = -1;
	SKIP_UNLESS_DUT();
	if (!dut_is_part()) {
		if (sim_exists(DEV))
			sim_del(DEV);
		ASSERT_EQ(0, debugfs_ready());
		ret = sim_new_timeout(DEV, 2, 64, 1, TIMEOUT_MS);
		ASSERT_EQ(0, ret) TH_LOG("device %u: %s", DEV, strerror(-ret));
	}
	ASSERT_EQ(0, sim_counters(DEV, &self->mem0));
	self->fd = dev_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, host_bo_new(self->fd, 256 * 1024, &self->cmd));
	ASSERT_EQ(0, host_bo_new(self->fd, 64 * 1024, &self->data));
	self->bos[0] = self->cmd.handle;
	self->bos[1] = self->data.handle;
	cmds_init(&self->cs, self->cmd.map, self->cmd.va, self->cmd.size);
}

FIXTURE_TEARDOWN(rec)
{
	if (self->fd >= 0)
		close(self->fd);
	if (!dut_is_part() && sim_available() && sim_exists(DEV))
		sim_del(DEV);
}

static uint32_t *d32(FIXTURE_DATA(rec) *self)
{
	return self->data.map;
}

/* Append a job's commands with @rec(cs) and submit it to @queue. */
static int submit_cs(FIXTURE_DATA(rec) *self, uint32_t queue, size_t from,
		     uint32_t out_binary, uint64_t *seqno)
{
	struct drm_trn_sync out = { .handle = out_binary };
	struct drm_trn_job j;
	int ret;

	job_init(&j, self->cs.va + from, (uint32_t)(self->cs.len - from));
	j.bo_handles = (uintptr_t)self->bos;
	j.bo_count = 2;
	if (out_binary) {
		j.out_syncs = (uintptr_t)&out;
		j.out_count = 1;
	}
	ret = submit_jobs(self->fd, queue, &j, 1);
	if (!ret && seqno)
		*seqno = j.seqno;
	return ret;
}

/*
 * The innocent context: a child process with its own open of the device,
 * its queue on @core on the ring of the queue the parent made there last
 * (it says so on @ready), waiting for a byte on @go, then submitting
 * INNOCENT_JOBS WRITEs to it, some single, some in batches; it checks
 * every value and that its queue has no failure, no guilt and no reset.
 * Exit status 0 if all is well.
 */
static int innocent(int go, int ready, unsigned int core)
{
	struct drm_trn_queue_create q;
	struct drm_trn_queue_status st;
	struct drm_trn_job jobs[8];
	struct host_bo cmd, data;
	struct cmds c;
	uint32_t bos[2], *d;
	unsigned int i, k;
	char b;
	int fd = dev_open();

	if (fd < 0 || next_queue_on_same_ring(fd, core) ||
	    queue_create(fd, core, DRM_TRN_PRIORITY_NORMAL, &q) ||
	    write(ready, "r", 1) != 1 ||
	    host_bo_new(fd, INNOCENT_JOBS * 24, &cmd) ||
	    host_bo_new(fd, INNOCENT_JOBS * 4, &data))
		return 30;
	bos[0] = cmd.handle;
	bos[1] = data.handle;
	d = data.map;
	cmds_init(&c, cmd.map, cmd.va, cmd.size);
	for (i = 0; i < INNOCENT_JOBS; i++)
		cmds_write32(&c, data.va + 4 * i, 0x1000 + i);
	if (read(go, &b, 1) != 1)
		return 31;
	for (i = 0; i < INNOCENT_JOBS; i += 8) {
		for (k = 0; k < 8; k++) {
			job_init(&jobs[k], cmd.va + 24ull * (i + k), 24);
			jobs[k].bo_handles = (uintptr_t)bos;
			jobs[k].bo_count = 2;
		}
		/* Half of them one by one. */
		if (i % 16 == 0) {
			for (k = 0; k < 8; k++)
				if (submit_jobs(fd, q.queue_id, &jobs[k], 1))
					return 32;
		} else if (submit_jobs(fd, q.queue_id, jobs, 8)) {
			return 33;
		}
	}
	if (syncobj_wait_point(fd, q.syncobj, INNOCENT_JOBS, WAIT_MS))
		return 34;
	for (i = 0; i < INNOCENT_JOBS; i++)
		if (d[i] != 0x1000 + i) {
			fprintf(stderr, "# innocent: slot %u is %#x\n", i, d[i]);
			return 35;
		}
	if (queue_status(fd, q.queue_id, &st))
		return 36;
	if (st.jobs_failed || st.state || st.resets ||
	    st.completed_seqno != INNOCENT_JOBS) {
		fprintf(stderr, "# innocent: failed %llu state %#x resets %u completed %llu\n",
			(unsigned long long)st.jobs_failed, st.state, st.resets,
			(unsigned long long)st.completed_seqno);
		return 37;
	}
	for (i = 1; i <= INNOCENT_JOBS; i++)
		if (timeline_fence_status(fd, q.syncobj, i) != 1)
			return 38;
	close(fd);
	return 0;
}

/* The innocent child, once its queue exists; -1 if it could not start. */
static pid_t start_innocent(int *go, unsigned int core)
{
	int p[2], r[2];
	pid_t pid;
	char b;

	if (pipe(p))
		return -1;
	if (pipe(r)) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		close(r[0]);
		_exit(innocent(p[0], r[1], core));
	}
	close(p[0]);
	close(r[1]);
	if (pid < 0 || read(r[0], &b, 1) != 1) {
		close(p[1]);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(r[0]);
	*go = p[1];
	return pid;
}

static int child_status(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + status;
}

/*
 * The queue's state after job @seqno hung and was reset: the context is
 * banned, so the queue is guilty and banned, its @cancelled later jobs
 * failed with -ECANCELED, it refuses more, and a new queue of the same
 * file works.
 */
static void check_guilty(struct __test_metadata *_metadata,
			 FIXTURE_DATA(rec) *self, uint32_t queue,
			 uint32_t status_handle, uint64_t seqno,
			 unsigned int cancelled)
{
	const volatile struct drm_trn_queue_status_page *sp;
	struct drm_trn_queue_create fresh;
	struct drm_trn_queue_status st;
	unsigned int i;
	size_t from;

	ASSERT_EQ(0, queue_status(self->fd, queue, &st));
	EXPECT_TRUE(st.state & DRM_TRN_QUEUE_GUILTY) TH_LOG("state %#x", st.state);
	EXPECT_TRUE(st.state & DRM_TRN_QUEUE_BANNED) TH_LOG("state %#x", st.state);
	EXPECT_FALSE(st.state & DRM_TRN_QUEUE_FAULTED);
	EXPECT_LE(1, st.resets);
	EXPECT_EQ(1 + cancelled, st.jobs_failed);
	EXPECT_EQ(seqno + cancelled, st.failed_seqno);
	EXPECT_EQ(cancelled ? ECANCELED : ETIMEDOUT, st.error);
	EXPECT_EQ(cancelled ? DRM_TRN_STATUS_ABORTED : DRM_TRN_STATUS_TIMEOUT,
		  st.status);
	sp = status_page_map(self->fd, status_handle);
	ASSERT_NE(NULL, sp);
	EXPECT_EQ(1 + cancelled, sp->failed_count);
	EXPECT_EQ(seqno, sp->failures[0].seqno);
	EXPECT_EQ(ETIMEDOUT, sp->failures[0].error);
	EXPECT_EQ(DRM_TRN_STATUS_TIMEOUT, sp->failures[0].status);
	for (i = 1; i <= cancelled; i++) {
		EXPECT_EQ(seqno + i, sp->failures[i].seqno);
		EXPECT_EQ(ECANCELED, sp->failures[i].error);
		EXPECT_EQ(DRM_TRN_STATUS_ABORTED, sp->failures[i].status);
	}
	EXPECT_LE(seqno + cancelled, sp->completed_seqno);
	munmap((void *)sp, TEST_PAGE);

	/* Banned: refused, with nothing queued. */
	from = self->cs.len;
	cmds_nop(&self->cs);
	EXPECT_EQ(-ECANCELED, submit_cs(self, queue, from, 0, NULL));
	EXPECT_EQ(st.submitted_seqno, queue_submitted(self->fd, queue));
	/* A queue made after the ban works. */
	ASSERT_EQ(0, queue_create(self->fd, 0, DRM_TRN_PRIORITY_NORMAL,
				  &fresh));
	from = self->cs.len;
	cmds_write32(&self->cs, self->data.va + 60, 0x600d);
	ASSERT_EQ(0, submit_cs(self, fresh.queue_id, from, 0, NULL));
	ASSERT_EQ(0, syncobj_wait_point(self->fd, fresh.syncobj, 1, WAIT_MS));
	EXPECT_EQ(1, timeline_fence_status(self->fd, fresh.syncobj, 1));
	EXPECT_EQ(0x600d, d32(self)[15]);
	ASSERT_EQ(0, queue_status(self->fd, fresh.queue_id, &st));
	EXPECT_EQ(0, st.state);
}

/*
 * Job 2 of three waits on a semaphore nobody signals: it times out, the
 * ring is reset, the context is banned and job 3 is cancelled, and a
 * child submitting to the same core (the same ring) meanwhile is not hurt.
 */
TEST_F(rec, semaphore_hang)
{
	struct drm_trn_queue_create q;
	struct exec_counters c0, c;
	uint32_t out;
	uint64_t s2, s3;
	size_t from;
	int go, fst;
	pid_t pid;

	ASSERT_EQ(0, exec_counters(DEV, &c0));
	ASSERT_EQ(0, queue_create(self->fd, 0, DRM_TRN_PRIORITY_NORMAL, &q));
	ASSERT_EQ(0, syncobj_create(self->fd, 0, &out));
	pid = start_innocent(&go, 0);
	ASSERT_LT(0, pid);

	from = self->cs.len;
	cmds_write32(&self->cs, self->data.va, 1);
	ASSERT_EQ(0, submit_cs(self, q.queue_id, from, 0, NULL));
	from = self->cs.len;
	cmds_sem(&self->cs, true, HANG_SEM, 1);
	cmds_write32(&self->cs, self->data.va + 4, 2);
	ASSERT_EQ(0, submit_cs(self, q.queue_id, from, out, &s2));
	from = self->cs.len;
	cmds_write32(&self->cs, self->data.va + 8, 3);
	ASSERT_EQ(0, submit_cs(self, q.queue_id, from, 0, &s3));
	ASSERT_EQ(1, write(go, "g", 1));
	close(go);

	ASSERT_EQ(0, syncobj_wait_point(self->fd, out, 0, WAIT_MS));
	fst = syncobj_fence_status(self->fd, out);
	EXPECT_EQ(-ETIMEDOUT, fst);
	ASSERT_EQ(0, syncobj_wait_point(self->fd, q.syncobj, s3, WAIT_MS));
	EXPECT_EQ(1, d32(self)[0]);
	EXPECT_EQ(0, d32(self)[1]);
	EXPECT_EQ(0, d32(self)[2]);
	EXPECT_EQ(-ECANCELED, timeline_fence_status(self->fd, q.syncobj, s3));
	check_guilty(_metadata, self, q.queue_id, q.status_handle, s2, 1);

	EXPECT_EQ(0, child_status(pid));
	ASSERT_EQ(0, exec_counters_idle(DEV, WAIT_MS, &c));
	EXPECT_LE(c0.resets + 1, c.resets);
	EXPECT_EQ(c0.failed + 2, c.failed);
	EXPECT_EQ(c0.submitted + 4 + INNOCENT_JOBS, c.submitted);
}

/* The simulator's hang_next: the next job fetched never finishes. */
TEST_F(rec, hang_next)
{
	struct drm_trn_queue_create q;
	struct exec_counters c0, c;
	char path[128];
	uint64_t left, s1, s2;
	uint32_t out;
	size_t from;
	int go, i;
	pid_t pid;

	SIMULATOR_ONLY("the hang is trn_sim's hang_next");
	sim_debugfs_path(DEV, "hang_next", path, sizeof(path));
	if (access(path, W_OK))
		SKIP(return, "no %s", path);
	ASSERT_EQ(0, exec_counters(DEV, &c0));
	ASSERT_EQ(0, queue_create(self->fd, 1, DRM_TRN_PRIORITY_NORMAL, &q));
	ASSERT_EQ(0, syncobj_create(self->fd, 0, &out));
	pid = start_innocent(&go, 1);
	ASSERT_LT(0, pid);

	/* Nothing runs on the device: the hang is ours. */
	ASSERT_EQ(0, sysfs_write(path, "1"));
	from = self->cs.len;
	cmds_write32(&self->cs, self->data.va + 20, 5);
	ASSERT_EQ(0, submit_cs(self, q.queue_id, from, out, &s1));
	/* Wait until the device took it, so that the child's jobs do not. */
	for (i = 0; i < 6000; i++) {
		ASSERT_EQ(0, read_u64(path, &left));
		if (!left)
			break;
		usleep(10000);
	}
	ASSERT_EQ(0, left);
	from = self->cs.len;
	cmds_write32(&self->cs, self->data.va + 24, 6);
	ASSERT_EQ(0, submit_cs(self, q.queue_id, from, 0, &s2));
	ASSERT_EQ(1, write(go, "g", 1));
	close(go);

	ASSERT_EQ(0, syncobj_wait_point(self->fd, out, 0, WAIT_MS));
	EXPECT_EQ(-ETIMEDOUT, syncobj_fence_status(self->fd, out));
	ASSERT_EQ(0, syncobj_wait_point(self->fd, q.syncobj, s2, WAIT_MS));
	/* The hung job never ran its commands; the next one was cancelled. */
	EXPECT_EQ(0, d32(self)[5]);
	EXPECT_EQ(0, d32(self)[6]);
	check_guilty(_metadata, self, q.queue_id, q.status_handle, s1, 1);

	EXPECT_EQ(0, child_status(pid));
	ASSERT_EQ(0, exec_counters_idle(DEV, WAIT_MS, &c));
	EXPECT_LE(c0.resets + 1, c.resets);
	EXPECT_EQ(c0.failed + 2, c.failed);
}

/* Wait up to WAIT_MS for the 32-bit word at @p to read @v. */
static bool word_becomes(const volatile uint32_t *p, uint32_t v)
{
	int i;

	for (i = 0; i < WAIT_MS / 10 && *p != v; i++)
		usleep(10000);
	return *p == v;
}

/*
 * A ring that cannot be reset (the simulator's reset_fail_next, as an
 * engine that stops answering) takes the device with it: the core resets
 * the whole device. The hung job fails -ETIMEDOUT and its queue is guilty
 * and banned; a job of another context that the device was running on the
 * other core at the time (waiting on a semaphore, its first command done)
 * is abandoned without blame, -ECANCELED, and the job queued behind it
 * runs after the reset; device_resets counts one.
 *
 * The order of the two timeouts is what makes this deterministic: on a
 * device of its own with a 3 s timeout, the other context's job starts
 * 400 ms after the hung one, more than the kernel timer's slack at 3 s
 * (256 ms), so the hung job's timeout always fires first, while the other
 * job is already waiting.
 */
TEST_F(rec, device_reset)
{
	enum { ID = 52, TIMEOUT = 3000 };
	struct drm_trn_queue_create qa, qb;
	struct drm_trn_queue_status st;
	struct host_bo cmd_b, data_b;
	uint64_t resets0, resets, s_hung, s_wait, s_after;
	char hang[128], fail[128];
	uint32_t bos_b[2], out;
	struct drm_trn_job j;
	struct cmds cs_b;
	int64_t t0;
	int fd_a, fd_b, ret;
	volatile uint32_t *wb;

	SIMULATOR_ONLY("a ring reset that fails is trn_sim's reset_fail_next (a part's: test_pci_exec's wedged_engine_device_reset)");
	sim_debugfs_path(DEV, "reset_fail_next", fail, sizeof(fail));
	if (access(fail, W_OK))
		SKIP(return, "no %s", fail);
	ret = sim_new_timeout(ID, 2, 16, 1, TIMEOUT);
	ASSERT_EQ(0, ret);
	sim_debugfs_path(ID, "hang_next", hang, sizeof(hang));
	sim_debugfs_path(ID, "reset_fail_next", fail, sizeof(fail));
	ASSERT_EQ(0, sim_accel_u64(ID, "device_resets", &resets0));

	/* Context A: a job on core 1 that hangs, whose ring reset fails. */
	fd_a = sim_open(ID);
	ASSERT_LE(0, fd_a);
	ASSERT_EQ(0, queue_create(fd_a, 1, DRM_TRN_PRIORITY_NORMAL, &qa));
	ASSERT_EQ(0, syncobj_create(fd_a, 0, &out));
	ASSERT_EQ(0, sysfs_write(hang, "1"));
	ASSERT_EQ(0, sysfs_write(fail, "1"));
	{
		struct drm_trn_sync o = { .handle = out };
		struct host_bo cmd_a;
		struct cmds cs_a;

		ASSERT_EQ(0, host_bo_new(fd_a, 4096, &cmd_a));
		cmds_init(&cs_a, cmd_a.map, cmd_a.va, cmd_a.size);
		ASSERT_EQ(0, cmds_nop(&cs_a));
		job_init(&j, cs_a.va, (uint32_t)cs_a.len);
		j.bo_handles = (uintptr_t)&cmd_a.handle;
		j.bo_count = 1;
		j.out_syncs = (uintptr_t)&o;
		j.out_count = 1;
		t0 = mono_ns();
		ASSERT_EQ(0, submit_jobs(fd_a, qa.queue_id, &j, 1));
		s_hung = j.seqno;
	}

	/* The device took it: B's job cannot be the one that hangs. */
	{
		uint64_t left = 1;
		int i;

		for (i = 0; i < WAIT_MS / 10 && left; i++) {
			ASSERT_EQ(0, read_u64(hang, &left));
			if (left)
				usleep(10000);
		}
		ASSERT_EQ(0, left);
	}

	/* Context B on core 0, 400 ms later: write, then wait for good. */
	fd_b = sim_open(ID);
	ASSERT_LE(0, fd_b);
	ASSERT_EQ(0, queue_create(fd_b, 0, DRM_TRN_PRIORITY_NORMAL, &qb));
	ASSERT_EQ(0, host_bo_new(fd_b, 4096, &cmd_b));
	ASSERT_EQ(0, host_bo_new(fd_b, 4096, &data_b));
	bos_b[0] = cmd_b.handle;
	bos_b[1] = data_b.handle;
	wb = data_b.map;
	cmds_init(&cs_b, cmd_b.map, cmd_b.va, cmd_b.size);
	ASSERT_EQ(0, cmds_write32(&cs_b, data_b.va, 1));
	ASSERT_EQ(0, cmds_sem(&cs_b, true, HANG_SEM, 1));
	while (mono_ns() - t0 < 400 * 1000000LL)
		usleep(10000);
	job_init(&j, cs_b.va, (uint32_t)cs_b.len);
	j.bo_handles = (uintptr_t)bos_b;
	j.bo_count = 2;
	ASSERT_EQ(0, submit_jobs(fd_b, qb.queue_id, &j, 1));
	s_wait = j.seqno;
	{
		size_t from = cs_b.len;

		ASSERT_EQ(0, cmds_write32(&cs_b, data_b.va + 4, 2));
		job_init(&j, cs_b.va + from, (uint32_t)(cs_b.len - from));
		j.bo_handles = (uintptr_t)bos_b;
		j.bo_count = 2;
		ASSERT_EQ(0, submit_jobs(fd_b, qb.queue_id, &j, 1));
		s_after = j.seqno;
	}
	/* B's first job runs, and waits, before A's timeout. */
	ASSERT_TRUE(word_becomes(wb, 1));
	ASSERT_GT((int64_t)TIMEOUT * 1000000, mono_ns() - t0)
		TH_LOG("B's job started after A's timeout: too slow a machine");

	ASSERT_EQ(0, syncobj_wait_point(fd_a, out, 0, WAIT_MS));
	EXPECT_EQ(-ETIMEDOUT, syncobj_fence_status(fd_a, out));
	ASSERT_EQ(0, queue_status(fd_a, qa.queue_id, &st));
	EXPECT_TRUE(st.state & DRM_TRN_QUEUE_GUILTY);
	EXPECT_TRUE(st.state & DRM_TRN_QUEUE_BANNED);
	EXPECT_EQ(s_hung, st.failed_seqno);

	ASSERT_EQ(0, syncobj_wait_point(fd_b, qb.syncobj, s_after, WAIT_MS));
	/* 1: signalled without error (a timeline's older points are gone). */
	EXPECT_EQ(1, timeline_fence_status(fd_b, qb.syncobj, s_after));
	EXPECT_EQ(2, wb[1]);
	ASSERT_EQ(0, queue_status(fd_b, qb.queue_id, &st));
	EXPECT_FALSE(st.state & (DRM_TRN_QUEUE_GUILTY | DRM_TRN_QUEUE_BANNED))
		TH_LOG("state %#x", st.state);
	EXPECT_EQ(1, st.jobs_failed);
	EXPECT_EQ(s_wait, st.failed_seqno);
	EXPECT_EQ(ECANCELED, st.error);
	EXPECT_EQ(DRM_TRN_STATUS_ABORTED, st.status);

	ASSERT_EQ(0, sim_accel_u64(ID, "device_resets", &resets));
	EXPECT_EQ(resets0 + 1, resets);
	ASSERT_EQ(0, sim_accel_u64(ID, "wedged", &resets));
	EXPECT_EQ(0, resets);

	host_bo_free(fd_b, &cmd_b);
	host_bo_free(fd_b, &data_b);
	close(fd_b);
	close(fd_a);
	ASSERT_EQ(0, sim_del(ID));
}

/*
 * The race a timeout can meet: the job finishes just as its timeout is
 * handled, and the ring's next job has already started. The simulator's
 * late_next makes it certain: the job stalls until its ring is reset, then
 * finishes, and the next job runs its first command before the reset looks.
 * Nothing may be abandoned or run twice: the late job succeeds, the next
 * one's accumulating MATMUL (1 + 2 * 3) is applied once, and no queue is
 * guilty.
 */
TEST_F(rec, finish_at_timeout)
{
	const float one = 1.0f, two = 2.0f, three = 3.0f;
	struct drm_trn_queue_status st;
	struct drm_trn_queue_create q;
	struct trn_cmd_matmul mm = {
		.header = TRN_CMD_HEADER(TRN_OP_MATMUL, TRN_MATMUL_ACCUMULATE,
					 sizeof(struct trn_cmd_matmul) / 8),
		.m = 1, .n = 1, .k = 1,
		.a = self->data.va + 64, .b = self->data.va + 68,
		.c = self->data.va + 72, .lda = 4, .ldb = 4, .ldc = 4,
	};
	struct exec_counters c0, c;
	struct drm_trn_job jobs[2];
	uint64_t left;
	char path[128];
	uint32_t out;
	float got;
	size_t a;
	int i;

	SIMULATOR_ONLY("a job finishing at its timeout is trn_sim's late_next");
	sim_debugfs_path(DEV, "late_next", path, sizeof(path));
	if (access(path, W_OK))
		SKIP(return, "no %s", path);
	ASSERT_EQ(0, exec_counters(DEV, &c0));
	ASSERT_EQ(0, queue_create(self->fd, 1, DRM_TRN_PRIORITY_NORMAL, &q));
	ASSERT_EQ(0, syncobj_create(self->fd, 0, &out));
	memcpy(d32(self) + 16, &two, 4);
	memcpy(d32(self) + 17, &three, 4);
	memcpy(d32(self) + 18, &one, 4);

	/* A count the knob cannot hold is refused and changes nothing. */
	EXPECT_EQ(-EINVAL, sysfs_write(path, "2147483648"));
	ASSERT_EQ(0, read_u64(path, &left));
	EXPECT_EQ(0, left);
	/* Both jobs in one call: the second is on the ring behind the first. */
	ASSERT_EQ(0, sysfs_write(path, "1"));
	a = self->cs.len;
	cmds_write32(&self->cs, self->data.va + 20, 5);
	job_init(&jobs[0], self->cs.va + a, (uint32_t)(self->cs.len - a));
	a = self->cs.len;
	ASSERT_EQ(0, cmds_raw(&self->cs, &mm, sizeof(mm)));
	cmds_write32(&self->cs, self->data.va + 24, 6);
	job_init(&jobs[1], self->cs.va + a, (uint32_t)(self->cs.len - a));
	for (i = 0; i < 2; i++) {
		jobs[i].bo_handles = (uintptr_t)self->bos;
		jobs[i].bo_count = 2;
	}
	jobs[0].out_syncs = (uintptr_t)&(struct drm_trn_sync){ .handle = out };
	jobs[0].out_count = 1;
	ASSERT_EQ(0, submit_jobs(self->fd, q.queue_id, jobs, 2));

	ASSERT_EQ(0, syncobj_wait_point(self->fd, q.syncobj, jobs[1].seqno,
					WAIT_MS));
	/* The device took the late job (it was not lost before the reset). */
	ASSERT_EQ(0, read_u64(path, &left));
	EXPECT_EQ(0, left);
	EXPECT_EQ(1, syncobj_fence_status(self->fd, out));
	EXPECT_EQ(1, timeline_fence_status(self->fd, q.syncobj, jobs[1].seqno));
	EXPECT_EQ(5, d32(self)[5]);
	EXPECT_EQ(6, d32(self)[6]);
	memcpy(&got, d32(self) + 18, 4);
	EXPECT_EQ(7.0f, got) TH_LOG("the MATMUL ran %s", got == 13.0f ?
				    "twice" : "wrong");

	ASSERT_EQ(0, queue_status(self->fd, q.queue_id, &st));
	EXPECT_EQ(0, st.state) TH_LOG("state %#x", st.state);
	EXPECT_EQ(0, st.jobs_failed);
	EXPECT_EQ(0, st.resets);
	EXPECT_EQ(jobs[1].seqno, st.completed_seqno);
	ASSERT_EQ(0, exec_counters_idle(DEV, WAIT_MS, &c));
	EXPECT_EQ(c0.resets, c.resets);
	EXPECT_EQ(c0.failed, c.failed);
	EXPECT_EQ(c0.submitted + 2, c.submitted);
}

/* An MMU fault fails the job with -EFAULT; the queue is faulted, not guilty. */
TEST_F(rec, mmu_fault)
{
	struct drm_trn_queue_create q;
	struct drm_trn_queue_status st;
	struct exec_counters c0, c;
	uint64_t faults0 = 0, faults = 0, s1, s2;
	uint32_t out;
	size_t from;

	ASSERT_EQ(0, exec_counters(DEV, &c0));
	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-mmu-faults", &faults0));
	ASSERT_EQ(0, queue_create(self->fd, 0, DRM_TRN_PRIORITY_NORMAL, &q));
	ASSERT_EQ(0, syncobj_create(self->fd, 0, &out));
	from = self->cs.len;
	cmds_write32(&self->cs, self->data.va, 1);
	cmds_write32(&self->cs, 0x3000, 2);
	ASSERT_EQ(0, submit_cs(self, q.queue_id, from, out, &s1));
	from = self->cs.len;
	cmds_write32(&self->cs, self->data.va + 4, 7);
	ASSERT_EQ(0, submit_cs(self, q.queue_id, from, 0, &s2));
	ASSERT_EQ(0, syncobj_wait_point(self->fd, q.syncobj, s2, WAIT_MS));

	EXPECT_EQ(-EFAULT, syncobj_fence_status(self->fd, out));
	EXPECT_EQ(1, d32(self)[0]);
	EXPECT_EQ(7, d32(self)[1]);
	ASSERT_EQ(0, queue_status(self->fd, q.queue_id, &st));
	EXPECT_TRUE(st.state & DRM_TRN_QUEUE_FAULTED);
	EXPECT_FALSE(st.state & DRM_TRN_QUEUE_GUILTY);
	EXPECT_EQ(0, st.resets);
	EXPECT_EQ(s1, st.failed_seqno);
	EXPECT_EQ(EFAULT, st.error);
	EXPECT_EQ(DRM_TRN_STATUS_MMU_FAULT, st.status);
	EXPECT_EQ(0x3000, st.fault_va);
	EXPECT_EQ(24, st.error_offset);
	EXPECT_EQ(self->cs.va + from - 48 + 24, st.error_cmd_va);
	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-mmu-faults", &faults));
	EXPECT_EQ(faults0 + 1, faults);
	ASSERT_EQ(0, exec_counters_idle(DEV, WAIT_MS, &c));
	EXPECT_EQ(c0.resets, c.resets);
	EXPECT_EQ(c0.failed + 1, c.failed);
	EXPECT_EQ(c0.completed + 1, c.completed);
}

/*
 * A child with jobs in flight on both cores, one of them hung (and jobs
 * queued behind it), either closes its file or is killed. Afterwards the
 * device is idle, every job is counted as completed or failed, the memory
 * it held is released, and a new open runs jobs.
 */
static int busy_child(int ready, bool do_close)
{
	struct drm_trn_queue_create q0, q1;
	struct drm_trn_job jobs[DRM_TRN_SUBMIT_MAX_JOBS];
	struct host_bo cmd, data;
	uint32_t bos[2], hbm;
	struct cmds c;
	unsigned int i, r;
	int fd = dev_open();

	if (fd < 0 || queue_create(fd, 0, DRM_TRN_PRIORITY_NORMAL, &q0) ||
	    queue_create(fd, 1, DRM_TRN_PRIORITY_LOW, &q1) ||
	    host_bo_new(fd, 64 * 1024, &cmd) ||
	    host_bo_new(fd, 64 * 1024, &data) ||
	    bo_create(fd, 1 << 20, DRM_TRN_PLACEMENT_HBM, 0, 0, &hbm, NULL))
		return 40;
	bos[0] = cmd.handle;
	bos[1] = data.handle;
	cmds_init(&c, cmd.map, cmd.va, cmd.size);
	/* Core 0: a hang (SEM_WAIT, then a FILL), then FILLs behind it. */
	cmds_sem(&c, true, HANG_SEM, 1);
	cmds_fill(&c, data.va, 0x11111111, 4096);
	for (i = 0; i < DRM_TRN_SUBMIT_MAX_JOBS; i++) {
		job_init(&jobs[i], cmd.va + 16, 24);
		jobs[i].bo_handles = (uintptr_t)bos;
		jobs[i].bo_count = 2;
	}
	/*
	 * Core 1: a long train of FILLs, first: once the hang below times
	 * out, the context is banned and would refuse the rest.
	 */
	for (r = 0; r < 8; r++)
		if (submit_jobs(fd, q1.queue_id, jobs, DRM_TRN_SUBMIT_MAX_JOBS))
			return 42;
	jobs[0].cmd_va = cmd.va;
	jobs[0].cmd_size = (uint32_t)c.len;
	if (submit_jobs(fd, q0.queue_id, jobs, 1))
		return 41;
	jobs[0].cmd_va = cmd.va + 16;
	jobs[0].cmd_size = 24;
	if (submit_jobs(fd, q0.queue_id, jobs, 16))
		return 41;
	if (write(ready, "r", 1) != 1)
		return 43;
	if (do_close) {
		/* Returns at once; the jobs are cancelled and freed later. */
		close(fd);
		return 0;
	}
	for (;;)
		pause();
}

static void teardown_in_flight(struct __test_metadata *_metadata,
			       FIXTURE_DATA(rec) *self, bool kill_it)
{
	struct exec_counters c0, c;
	struct sim_counters mem;
	int p[2], i;
	char b;
	pid_t pid;

	ASSERT_EQ(0, exec_counters(DEV, &c0));
	ASSERT_EQ(0, pipe(p));
	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(p[0]);
		_exit(busy_child(p[1], !kill_it));
	}
	close(p[1]);
	ASSERT_EQ(1, read(p[0], &b, 1));
	close(p[0]);
	if (kill_it) {
		ASSERT_EQ(0, kill(pid, SIGKILL));
		EXPECT_EQ(1000 + SIGKILL, child_status(pid));
	} else {
		EXPECT_EQ(0, child_status(pid));
	}

	ASSERT_EQ(0, exec_counters_idle(DEV, WAIT_MS, &c))
		TH_LOG("submitted %llu completed %llu failed %llu",
		       (unsigned long long)c.submitted,
		       (unsigned long long)c.completed,
		       (unsigned long long)c.failed);
	EXPECT_EQ(c0.submitted + 17 + 8 * DRM_TRN_SUBMIT_MAX_JOBS, c.submitted);
	/* At least the hung job failed, unless it was cancelled before. */
	EXPECT_LE(c0.failed + 1, c.failed);
	/*
	 * Memory: nothing of the child's (its 1 MiB of HBM, its two host
	 * buffers), only what there was before it, which on a part may
	 * shrink meanwhile: an earlier test's last jobs, freed a little after
	 * they finished, may still have held buffers when the fixture counted
	 * (a simulated device is the fixture's own and holds ours only). The
	 * child's go with its last job too.
	 */
	for (i = 0; i < 3000; i++) {
		ASSERT_EQ(0, sim_counters(DEV, &mem));
		if (mem.hbm_used <= self->mem0.hbm_used &&
		    mem.host_pinned <= self->mem0.host_pinned +
				       self->cmd.size + self->data.size)
			break;
		usleep(10000);
	}
	if (dut_is_part()) {
		EXPECT_GE(self->mem0.hbm_used, mem.hbm_used);
		EXPECT_GE(self->mem0.host_pinned + self->cmd.size +
			  self->data.size, mem.host_pinned);
	} else {
		EXPECT_EQ(self->mem0.hbm_used, mem.hbm_used);
		EXPECT_EQ(self->mem0.host_pinned + self->cmd.size +
			  self->data.size, mem.host_pinned);
	}

	/* A new open works, and so does the device. */
	{
		struct drm_trn_queue_create q;
		uint64_t s;
		size_t from;
		int fd2 = dev_open();

		ASSERT_LE(0, fd2);
		close(fd2);
		ASSERT_EQ(0, queue_create(self->fd, 0, DRM_TRN_PRIORITY_NORMAL,
					  &q));
		from = self->cs.len;
		cmds_write32(&self->cs, self->data.va + 64, 0x77);
		ASSERT_EQ(0, submit_cs(self, q.queue_id, from, 0, &s));
		ASSERT_EQ(0, syncobj_wait_point(self->fd, q.syncobj, s,
						WAIT_MS));
		EXPECT_EQ(0x77, d32(self)[16]);
	}
}

TEST_F(rec, close_with_jobs_in_flight)
{
	teardown_in_flight(_metadata, self, false);
}

TEST_F(rec, sigkill_with_jobs_in_flight)
{
	teardown_in_flight(_metadata, self, true);
}

/* fdinfo: device time per core, growing as jobs run there. */
TEST_F(rec, fdinfo_engine_time)
{
	struct drm_trn_queue_create q;
	uint64_t ns0 = 1, ns1 = 0, ns2 = 0, other = 1, s;
	size_t from;

	ASSERT_EQ(0, fdinfo_u64(self->fd, "drm-engine-core1", &ns0));
	EXPECT_EQ(0, ns0);
	ASSERT_EQ(0, queue_create(self->fd, 1, DRM_TRN_PRIORITY_NORMAL, &q));
	from = self->cs.len;
	cmds_fill(&self->cs, self->data.va, 0x5a5a5a5a, 64 * 1024);
	cmds_copy(&self->cs, self->cmd.va + 128 * 1024, self->data.va,
		  64 * 1024);
	ASSERT_EQ(0, submit_cs(self, q.queue_id, from, 0, &s));
	ASSERT_EQ(0, syncobj_wait_point(self->fd, q.syncobj, s, WAIT_MS));
	ASSERT_EQ(0, fdinfo_u64(self->fd, "drm-engine-core1", &ns1));
	EXPECT_LT(0, ns1);
	ASSERT_EQ(0, submit_cs(self, q.queue_id, from, 0, &s));
	ASSERT_EQ(0, syncobj_wait_point(self->fd, q.syncobj, s, WAIT_MS));
	ASSERT_EQ(0, fdinfo_u64(self->fd, "drm-engine-core1", &ns2));
	EXPECT_LT(ns1, ns2);
	/* Core 0 did nothing for this file. */
	ASSERT_EQ(0, fdinfo_u64(self->fd, "drm-engine-core0", &other));
	EXPECT_EQ(0, other);
	/* The unit is ns, as drm-usage-stats wants. */
	{
		char path[64], buf[4096];

		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", self->fd);
		ASSERT_LT(0, read_file(path, buf, sizeof(buf)));
		EXPECT_NE(NULL, strstr(buf, "drm-engine-core1:\t"));
		EXPECT_NE(NULL, strstr(strstr(buf, "drm-engine-core1:"), " ns\n"));
	}
}

TEST_HARNESS_MAIN
