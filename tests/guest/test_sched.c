// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * Ordering and concurrency of execution on the device under test,
 * simulated device 0 (and a second simulated device, id 50, for
 * cross-device fences) or with TRN_TEST_DEVICE=part a part bound to
 * trn_pci (and the next part, the pci lanes' Trn3): device semaphores
 * between queues of one core, chains of
 * syncobjs across queues and across devices, 10,000 pipelined jobs,
 * submission from many threads and several processes at once, batches,
 * priorities.
 *
 * Every check is on data the jobs wrote; where a test needs work that has
 * not run yet, that work waits on a device semaphore that the test
 * releases after it looked, never on time. Those tests skip on a device
 * without semaphores (TRN_CAP_SEMAPHORES clear).
 */
#include <pthread.h>
#include <sys/wait.h>

#include <linux/capability.h>

#include "kselftest_harness.h"
#include "trn_test.h"
#include "trnhal.h"

#define DEV2		50	/* the second device of the cross-device tests */
#define WAIT_MS		60000
#define CMD_SIZE	(1u << 20)
#define DATA_SIZE	(256u << 10)
#define WRITE_SIZE	24	/* one WRITE32 command */

FIXTURE(sched)
{
	int fd;
	struct drm_trn_device_info info;
	struct host_bo cmd, data;
	uint32_t bos[2];
	size_t cmd_used;
};

FIXTURE_SETUP(sched)
{
	self->fd = -1;
	if (!dut_available())
		SKIP(return, "no device under test (trn_sim not loaded, or no part)");
	if (sim_available() && sim_exists(DEV2))
		sim_del(DEV2);
	self->fd = dut_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, query_info(self->fd, &self->info));
	ASSERT_LE(4, self->info.num_cores);
	ASSERT_EQ(0, host_bo_new(self->fd, CMD_SIZE, &self->cmd));
	ASSERT_EQ(0, host_bo_new(self->fd, DATA_SIZE, &self->data));
	self->bos[0] = self->cmd.handle;
	self->bos[1] = self->data.handle;
	self->cmd_used = 0;
}

FIXTURE_TEARDOWN(sched)
{
	if (self->fd >= 0)
		close(self->fd);
	if (sim_available() && sim_exists(DEV2))
		sim_del(DEV2);
}

static uint32_t *d32(FIXTURE_DATA(sched) *self)
{
	return self->data.map;
}

static uint64_t dva(FIXTURE_DATA(sched) *self, unsigned int idx)
{
	return self->data.va + 4ull * idx;
}

/* A fresh command stream of up to @cap bytes in the command buffer. */
static struct cmds stream(FIXTURE_DATA(sched) *self, size_t cap)
{
	struct cmds c;

	cap = (cap + 7) & ~(size_t)7;
	if (self->cmd_used + cap > CMD_SIZE)
		abort();	/* a test asks for too much: fix the test */
	cmds_init(&c, (unsigned char *)self->cmd.map + self->cmd_used,
		  self->cmd.va + self->cmd_used, cap);
	self->cmd_used += cap;
	return c;
}

/* A job running all of @c, listing the command and data buffers. */
static struct drm_trn_job job_of(FIXTURE_DATA(sched) *self,
				 const struct cmds *c)
{
	struct drm_trn_job j;

	job_init(&j, c->va, (uint32_t)c->len);
	j.bo_handles = (uintptr_t)self->bos;
	j.bo_count = 2;
	return j;
}

static int submit(FIXTURE_DATA(sched) *self, uint32_t queue,
		  const struct cmds *c, const struct drm_trn_sync *in,
		  uint32_t in_count, const struct drm_trn_sync *out,
		  uint32_t out_count, uint64_t *seqno)
{
	struct drm_trn_job j = job_of(self, c);
	int ret;

	j.in_syncs = (uintptr_t)in;
	j.in_count = in_count;
	j.out_syncs = (uintptr_t)out;
	j.out_count = out_count;
	ret = submit_jobs(self->fd, queue, &j, 1);
	if (!ret && seqno)
		*seqno = j.seqno;
	return ret;
}

/* A job on @queue that signals semaphore @sem by one. */
static int release(FIXTURE_DATA(sched) *self, uint32_t queue, uint32_t sem)
{
	struct cmds c = stream(self, 16);

	cmds_sem(&c, false, sem, 1);
	return submit(self, queue, &c, NULL, 0, NULL, 0, NULL);
}

/*
 * Queues A and B on core 2 play ping-pong through semaphores 5 and 6:
 * A waits for 5, writes, signals 6; B signals 5, waits for 6, copies what
 * A wrote. A is submitted first and cannot start before B runs. Then a
 * second round with the counters at 2 (semaphores accumulate).
 */
TEST_F(sched, semaphores_across_queues)
{
	struct drm_trn_queue_create a, b;
	unsigned int round;

	/* The work that must wait waits on a device semaphore. */
	if (!(self->info.capabilities & DRM_TRN_CAP_SEMAPHORES))
		SKIP(return, "the device has no semaphores (TRN_CAP_SEMAPHORES clear)");
	ASSERT_EQ(0, queue_create(self->fd, 2, DRM_TRN_PRIORITY_NORMAL, &a));
	ASSERT_EQ(0, queue_create(self->fd, 2, DRM_TRN_PRIORITY_NORMAL, &b));
	for (round = 1; round <= 2; round++) {
		struct cmds ca = stream(self, 128), cb = stream(self, 128);
		uint64_t sa, sb;

		cmds_sem(&ca, true, 5, round);
		cmds_write32(&ca, dva(self, 2 * round), 100 + round);
		cmds_sem(&ca, false, 6, 1);
		ASSERT_EQ(0, submit(self, a.queue_id, &ca, NULL, 0, NULL, 0,
				    &sa));
		EXPECT_EQ(round, sa);
		EXPECT_EQ(-ETIME, syncobj_wait_point(self->fd, a.syncobj, sa,
						     0));

		cmds_sem(&cb, false, 5, 1);
		cmds_sem(&cb, true, 6, round);
		cmds_copy(&cb, dva(self, 2 * round + 1), dva(self, 2 * round),
			  4);
		ASSERT_EQ(0, submit(self, b.queue_id, &cb, NULL, 0, NULL, 0,
				    &sb));
		ASSERT_EQ(0, syncobj_wait_point(self->fd, a.syncobj, sa,
						WAIT_MS));
		ASSERT_EQ(0, syncobj_wait_point(self->fd, b.syncobj, sb,
						WAIT_MS));
		EXPECT_EQ(100 + round, d32(self)[2 * round]);
		EXPECT_EQ(100 + round, d32(self)[2 * round + 1]);
	}
}

/*
 * q0 -> q1 -> q2 -> q3 on four cores, linked by the queue's own timeline,
 * a timeline syncobj point and a binary syncobj; each job copies its
 * predecessor's value one slot further. Nothing can run before the test
 * releases q0's semaphore.
 */
TEST_F(sched, syncobj_chain_across_queues)
{
	struct drm_trn_queue_create q[4], rel;
	struct drm_trn_sync in, out;
	uint32_t tl, bin;
	uint64_t s[4];
	unsigned int i;

	/* The work that must wait waits on a device semaphore. */
	if (!(self->info.capabilities & DRM_TRN_CAP_SEMAPHORES))
		SKIP(return, "the device has no semaphores (TRN_CAP_SEMAPHORES clear)");
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, queue_create(self->fd, i, DRM_TRN_PRIORITY_NORMAL,
					  &q[i]));
	ASSERT_EQ(0, queue_create(self->fd, 0, DRM_TRN_PRIORITY_NORMAL, &rel));
	ASSERT_EQ(0, syncobj_create(self->fd, 0, &tl));
	ASSERT_EQ(0, syncobj_create(self->fd, 0, &bin));

	{
		struct cmds c = stream(self, 64);

		cmds_sem(&c, true, 1, 1);
		cmds_write32(&c, dva(self, 0), 0x5eed);
		ASSERT_EQ(0, submit(self, q[0].queue_id, &c, NULL, 0, NULL, 0,
				    &s[0]));
	}
	for (i = 1; i < 4; i++) {
		struct cmds c = stream(self, 64);

		cmds_copy(&c, dva(self, i), dva(self, i - 1), 4);
		memset(&in, 0, sizeof(in));
		memset(&out, 0, sizeof(out));
		if (i == 1) {
			in.handle = q[0].syncobj;
			in.point = s[0];
			out.handle = tl;
			out.point = 3;
		} else if (i == 2) {
			in.handle = tl;
			in.point = 3;
			out.handle = bin;
		} else {
			in.handle = bin;
		}
		ASSERT_EQ(0, submit(self, q[i].queue_id, &c, &in, 1,
				    i < 3 ? &out : NULL, i < 3, &s[i]));
	}
	for (i = 0; i < 4; i++)
		EXPECT_EQ(-ETIME, syncobj_wait_point(self->fd, q[i].syncobj,
						     1, 0));
	EXPECT_EQ(0, d32(self)[3]);

	ASSERT_EQ(0, release(self, rel.queue_id, 1));
	ASSERT_EQ(0, syncobj_wait_point(self->fd, q[3].syncobj, s[3], WAIT_MS));
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(0x5eed, d32(self)[i]) TH_LOG("slot %u", i);
		EXPECT_EQ(1, timeline_fence_status(self->fd, q[i].syncobj, 1));
	}
	EXPECT_EQ(1, syncobj_fence_status(self->fd, bin));
}

/*
 * The second device of the cross-device tests: simulated device 50 (made
 * with 2 cores if need be), or on a part the next part (the pci lanes'
 * Trn3). Its minor, or -errno.
 */
static int second_minor(unsigned int *minor)
{
	int ret;

	if (dut_is_part())
		return part_minor(1, minor);
	if (!sim_exists(DEV2)) {
		ret = sim_new(DEV2, 2, 64, 2);
		if (ret)
			return ret;
	}
	return sim_minor(DEV2, minor);
}

static int second_device(void)
{
	unsigned int minor;
	int ret = second_minor(&minor);

	return ret ? ret : open_minor(minor);
}

/*
 * A job on device 50 waits for a job on device 0 through a sync_file
 * imported into a syncobj of device 50; both work on one host buffer of
 * device 0, shared through a dma-buf. The device-0 job waits on a
 * semaphore that the test releases once it has seen device 50 wait.
 */
TEST_F(sched, syncobj_across_devices)
{
	struct drm_trn_queue_create q0, rel, q1;
	struct drm_trn_sync out = { 0 }, in = { 0 };
	struct drm_prime_handle exp = { 0 }, imp = { 0 };
	struct drm_trn_bo_info bi;
	struct host_bo cmd2;
	struct cmds c;
	uint32_t s0, s1, bos2[2];
	uint64_t seq1;
	int fd2, sync_fd;

	/* The work that must wait waits on a device semaphore. */
	if (!(self->info.capabilities & DRM_TRN_CAP_SEMAPHORES))
		SKIP(return, "the device has no semaphores (TRN_CAP_SEMAPHORES clear)");
	fd2 = second_device();
	ASSERT_LE(0, fd2) TH_LOG("the second device: %s", strerror(-fd2));
	ASSERT_EQ(0, queue_create(self->fd, 0, DRM_TRN_PRIORITY_NORMAL, &q0));
	ASSERT_EQ(0, queue_create(self->fd, 0, DRM_TRN_PRIORITY_NORMAL, &rel));
	ASSERT_EQ(0, queue_create(fd2, 1, DRM_TRN_PRIORITY_NORMAL, &q1));

	/* The data buffer of device 0, in device 50's address space too. */
	exp.handle = self->data.handle;
	exp.flags = DRM_CLOEXEC | DRM_RDWR;
	ASSERT_EQ(0, raw_ioctl(self->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp));
	imp.fd = exp.fd;
	ASSERT_EQ(0, raw_ioctl(fd2, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp));
	close(exp.fd);
	ASSERT_EQ(0, bo_info(fd2, imp.handle, &bi));
	ASSERT_EQ(0, host_bo_new(fd2, 4096, &cmd2));

	ASSERT_EQ(0, syncobj_create(self->fd, 0, &s0));
	c = stream(self, 64);
	cmds_sem(&c, true, 4, 1);
	cmds_write32(&c, dva(self, 0), 0xabc);
	out.handle = s0;
	ASSERT_EQ(0, submit(self, q0.queue_id, &c, NULL, 0, &out, 1, NULL));

	sync_fd = syncobj_export_sync_file(self->fd, s0);
	ASSERT_LE(0, sync_fd);
	ASSERT_EQ(0, syncobj_create(fd2, 0, &s1));
	ASSERT_EQ(0, syncobj_import_sync_file(fd2, s1, sync_fd));
	close(sync_fd);

	cmds_init(&c, cmd2.map, cmd2.va, cmd2.size);
	cmds_copy(&c, bi.va + 4, bi.va, 4);
	{
		struct drm_trn_job j;

		job_init(&j, c.va, (uint32_t)c.len);
		bos2[0] = cmd2.handle;
		bos2[1] = imp.handle;
		j.bo_handles = (uintptr_t)bos2;
		j.bo_count = 2;
		in.handle = s1;
		j.in_syncs = (uintptr_t)&in;
		j.in_count = 1;
		ASSERT_EQ(0, submit_jobs(fd2, q1.queue_id, &j, 1));
		seq1 = j.seqno;
	}
	EXPECT_EQ(-ETIME, syncobj_wait_point(fd2, q1.syncobj, seq1, 0));
	EXPECT_EQ(0, d32(self)[1]);

	ASSERT_EQ(0, release(self, rel.queue_id, 4));
	ASSERT_EQ(0, syncobj_wait_point(fd2, q1.syncobj, seq1, WAIT_MS));
	EXPECT_EQ(0xabc, d32(self)[0]);
	EXPECT_EQ(0xabc, d32(self)[1]);
	EXPECT_EQ(1, timeline_fence_status(fd2, q1.syncobj, seq1));
	host_bo_free(fd2, &cmd2);
	close(fd2);
}

/* The same through libtrnhal: a trn_job waiting for another device's fence. */
TEST_F(sched, lib_fence_across_devices)
{
	trn_device_t *a, *b;
	trn_queue_t *qa, *qrel, *qb;
	trn_cmdbuf_t *ca, *crel, *cb;
	trn_bo_t *buf, *bufb;
	struct trn_fence fa, fb, frel;
	struct trn_job job;
	unsigned int ma, mb;
	uint32_t *m;
	int dmabuf;

	/* The work that must wait waits on a device semaphore. */
	if (!(self->info.capabilities & DRM_TRN_CAP_SEMAPHORES))
		SKIP(return, "the device has no semaphores (TRN_CAP_SEMAPHORES clear)");
	ASSERT_EQ(0, dut_minor(&ma));
	ASSERT_EQ(0, second_minor(&mb));
	ASSERT_EQ(0, trn_device_open(ma, &a));
	ASSERT_EQ(0, trn_device_open(mb, &b));
	ASSERT_EQ(0, trn_queue_create(a, 1, TRN_PRIORITY_NORMAL, &qa));
	ASSERT_EQ(0, trn_queue_create(a, 1, TRN_PRIORITY_NORMAL, &qrel));
	/*
	 * The waiting queue is a kernel queue: a user-mode queue waits for
	 * another device's fence on the CPU, before the job is written
	 * (libtrnhal.md), where this test wants the submission to return.
	 */
	ASSERT_EQ(0, trn_queue_create_flags(b, 0, TRN_PRIORITY_NORMAL,
					    TRN_QUEUE_CREATE_KERNEL, &qb));
	ASSERT_EQ(0, trn_bo_create(a, 4096, TRN_PLACEMENT_HOST, 0, 0, &buf));
	ASSERT_EQ(0, trn_bo_map(buf, (void **)&m));
	memset(m, 0, 4096);
	ASSERT_EQ(0, trn_bo_export(buf, &dmabuf));
	ASSERT_EQ(0, trn_bo_import(b, dmabuf, &bufb));
	close(dmabuf);
	ASSERT_EQ(0, trn_cmdbuf_create(a, 0, &ca));
	ASSERT_EQ(0, trn_cmdbuf_create(a, 0, &crel));
	ASSERT_EQ(0, trn_cmdbuf_create(b, 0, &cb));

	ASSERT_EQ(0, trn_cmd_sem_wait(ca, 2, 1));
	ASSERT_EQ(0, trn_cmd_write32(ca, trn_bo_va(buf), 0x1717));
	{
		trn_bo_t *bos[2] = { trn_cmdbuf_bo(ca), buf };

		memset(&job, 0, sizeof(job));
		job.cmd_va = trn_cmdbuf_va(ca);
		job.cmd_size = (uint32_t)trn_cmdbuf_size(ca);
		job.bos = bos;
		job.bo_count = 2;
		ASSERT_EQ(0, trn_submit(qa, &job, &fa));
	}
	ASSERT_EQ(0, trn_cmd_copy(cb, trn_bo_va(bufb) + 8, trn_bo_va(bufb), 4));
	{
		trn_bo_t *bos[2] = { trn_cmdbuf_bo(cb), bufb };

		memset(&job, 0, sizeof(job));
		job.cmd_va = trn_cmdbuf_va(cb);
		job.cmd_size = (uint32_t)trn_cmdbuf_size(cb);
		job.bos = bos;
		job.bo_count = 2;
		job.waits = &fa;
		job.wait_count = 1;
		ASSERT_EQ(0, trn_submit(qb, &job, &fb));
	}
	EXPECT_EQ(1, trn_fence_status(&fb));
	EXPECT_EQ(-ETIME, trn_fence_wait(&fb, 0));

	ASSERT_EQ(0, trn_cmd_sem_signal(crel, 2, 1));
	{
		trn_bo_t *bos[1] = { trn_cmdbuf_bo(crel) };

		memset(&job, 0, sizeof(job));
		job.cmd_va = trn_cmdbuf_va(crel);
		job.cmd_size = (uint32_t)trn_cmdbuf_size(crel);
		job.bos = bos;
		job.bo_count = 1;
		ASSERT_EQ(0, trn_submit(qrel, &job, &frel));
	}
	EXPECT_EQ(0, trn_fence_wait(&fb, trn_now_ns() + WAIT_MS * 1000000LL));
	EXPECT_EQ(0, trn_fence_status(&fa));
	EXPECT_EQ(0x1717, m[0]);
	EXPECT_EQ(0x1717, m[2]);

	EXPECT_EQ(0, trn_queue_wait_idle(qrel, trn_now_ns() + WAIT_MS * 1000000LL));
	trn_cmdbuf_destroy(ca);
	trn_cmdbuf_destroy(crel);
	trn_cmdbuf_destroy(cb);
	trn_bo_free(bufb);
	trn_bo_unmap(buf);
	trn_bo_free(buf);
	trn_queue_destroy(qa);
	trn_queue_destroy(qrel);
	trn_queue_destroy(qb);
	trn_device_close(a);
	trn_device_close(b);
}

/*
 * 10,000 jobs, each writing its own index, submitted back to back. The
 * harness's default 30 s is a hang guard, not a bound on the driver: under
 * the debug kernel (KASAN, lockdep) in software emulation this takes about
 * that long.
 */
TEST_F_TIMEOUT(sched, pipelined_10000, 600)
{
	const unsigned int n = 10000;
	const volatile struct drm_trn_queue_status_page *sp;
	struct drm_trn_queue_create q;
	struct drm_trn_queue_status st;
	struct cmds c = stream(self, (size_t)n * WRITE_SIZE);
	int64_t t0, t1, t2;
	unsigned int i;

	ASSERT_EQ(0, queue_create(self->fd, 3, DRM_TRN_PRIORITY_NORMAL, &q));
	sp = status_page_map(self->fd, q.status_handle);
	ASSERT_NE(NULL, sp);
	for (i = 0; i < n; i++)
		cmds_write32(&c, dva(self, i), i + 1);
	t0 = mono_ns();
	for (i = 0; i < n; i++) {
		struct drm_trn_job j = job_of(self, &c);

		j.cmd_va = c.va + (uint64_t)i * WRITE_SIZE;
		j.cmd_size = WRITE_SIZE;
		ASSERT_EQ(0, submit_jobs(self->fd, q.queue_id, &j, 1))
			TH_LOG("job %u", i);
		ASSERT_EQ(i + 1, j.seqno);
	}
	t1 = mono_ns();
	ASSERT_EQ(0, syncobj_wait_point(self->fd, q.syncobj, n, WAIT_MS * 2));
	t2 = mono_ns();
	TH_LOG("%u jobs: submitted in %.2f s, all done %.2f s later", n,
	       (t1 - t0) / 1e9, (t2 - t1) / 1e9);
	for (i = 0; i < n; i++)
		if (d32(self)[i] != i + 1) {
			EXPECT_EQ(i + 1, d32(self)[i]) TH_LOG("slot %u", i);
			break;
		}
	ASSERT_EQ(0, queue_status(self->fd, q.queue_id, &st));
	EXPECT_EQ(n, st.submitted_seqno);
	EXPECT_EQ(n, st.completed_seqno);
	EXPECT_EQ(0, st.jobs_failed);
	EXPECT_EQ(n, sp->completed_seqno);
	EXPECT_EQ(0, sp->failed_count);
}

/* One batch of the largest size: job k copies slot k - 1 to slot k. */
TEST_F(sched, batch_submit)
{
	struct drm_trn_job jobs[DRM_TRN_SUBMIT_MAX_JOBS];
	struct drm_trn_queue_create q;
	unsigned int i, n = DRM_TRN_SUBMIT_MAX_JOBS;

	ASSERT_EQ(0, queue_create(self->fd, 1, DRM_TRN_PRIORITY_NORMAL, &q));
	for (i = 0; i < n; i++) {
		struct cmds c = stream(self, 64);

		if (i == 0)
			cmds_write32(&c, dva(self, 0), 0xc0ffee);
		else
			cmds_copy(&c, dva(self, i), dva(self, i - 1), 4);
		jobs[i] = job_of(self, &c);
	}
	/* Two rounds: the second's numbers follow the first's. */
	ASSERT_EQ(0, submit_jobs(self->fd, q.queue_id, jobs, n));
	for (i = 0; i < n; i++)
		ASSERT_EQ(i + 1, jobs[i].seqno);
	ASSERT_EQ(0, syncobj_wait_point(self->fd, q.syncobj, n, WAIT_MS));
	for (i = 0; i < n; i++)
		ASSERT_EQ(0xc0ffee, d32(self)[i]) TH_LOG("slot %u", i);
	memset(self->data.map, 0, 4 * n);
	ASSERT_EQ(0, submit_jobs(self->fd, q.queue_id, jobs, n));
	for (i = 0; i < n; i++)
		ASSERT_EQ(n + i + 1, jobs[i].seqno);
	ASSERT_EQ(0, syncobj_wait_point(self->fd, q.syncobj, 2 * n, WAIT_MS));
	EXPECT_EQ(0xc0ffee, d32(self)[n - 1]);
}

/* ---- many submitters ---- */

#define THREADS		8
#define PER_THREAD	250

struct submitter {
	FIXTURE_DATA(sched) *self;
	unsigned int index;
	uint32_t queue;		/* the queue it submits to */
	uint64_t cmd_va;	/* its PER_THREAD WRITEs */
	uint64_t seqnos[PER_THREAD];
	int error;
};

static void *submit_thread(void *arg)
{
	struct submitter *s = arg;
	unsigned int i;

	for (i = 0; i < PER_THREAD; i++) {
		struct drm_trn_job j;

		job_init(&j, s->cmd_va + (uint64_t)i * WRITE_SIZE, WRITE_SIZE);
		j.bo_handles = (uintptr_t)s->self->bos;
		j.bo_count = 2;
		s->error = submit_jobs(s->self->fd, s->queue, &j, 1);
		if (s->error)
			return NULL;
		s->seqnos[i] = j.seqno;
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * THREADS threads each submit PER_THREAD WRITEs of their own slots, to one
 * shared queue (@shared) or to one queue each, spread over the cores.
 */
static void threads_submit(struct __test_metadata *_metadata,
			   FIXTURE_DATA(sched) *self, bool shared)
{
	struct submitter *s = calloc(THREADS, sizeof(*s));
	struct drm_trn_queue_create q[THREADS];
	pthread_t tids[THREADS];
	uint64_t *all = calloc(THREADS * PER_THREAD, sizeof(*all));
	unsigned int t, i;

	ASSERT_TRUE(s && all);
	for (t = 0; t < THREADS; t++) {
		struct cmds c = stream(self, PER_THREAD * WRITE_SIZE);

		if (t == 0 || !shared) {
			ASSERT_EQ(0, queue_create(self->fd,
						  t % self->info.num_cores,
						  DRM_TRN_PRIORITY_NORMAL,
						  &q[t]));
		} else {
			q[t] = q[0];
		}
		for (i = 0; i < PER_THREAD; i++)
			cmds_write32(&c, dva(self, t * PER_THREAD + i),
				     (t << 16) | (i + 1));
		s[t].self = self;
		s[t].index = t;
		s[t].queue = q[t].queue_id;
		s[t].cmd_va = c.va;
	}
	for (t = 0; t < THREADS; t++)
		ASSERT_EQ(0, pthread_create(&tids[t], NULL, submit_thread,
					    &s[t]));
	for (t = 0; t < THREADS; t++)
		pthread_join(tids[t], NULL);
	for (t = 0; t < THREADS; t++) {
		int err = s[t].error;

		ASSERT_EQ(0, err) TH_LOG("thread %u: %s", t, strerror(-err));
	}

	/* Each thread's own numbers grow; on a shared queue all are unique. */
	for (t = 0; t < THREADS; t++) {
		for (i = 1; i < PER_THREAD; i++)
			ASSERT_LT(s[t].seqnos[i - 1], s[t].seqnos[i]);
		if (!shared) {
			EXPECT_EQ(1, s[t].seqnos[0]);
			EXPECT_EQ(PER_THREAD, s[t].seqnos[PER_THREAD - 1]);
		}
	}
	if (shared) {
		for (t = 0; t < THREADS; t++)
			memcpy(all + t * PER_THREAD, s[t].seqnos,
			       sizeof(s[t].seqnos));
		qsort(all, THREADS * PER_THREAD, sizeof(*all), cmp_u64);
		for (i = 0; i < THREADS * PER_THREAD; i++)
			ASSERT_EQ(i + 1, all[i]);
	}
	for (t = 0; t < THREADS; t++)
		ASSERT_EQ(0, syncobj_wait_point(self->fd, q[t].syncobj,
						s[t].seqnos[PER_THREAD - 1],
						WAIT_MS));
	for (t = 0; t < THREADS; t++)
		for (i = 0; i < PER_THREAD; i++)
			ASSERT_EQ((t << 16) | (i + 1),
				  d32(self)[t * PER_THREAD + i])
				TH_LOG("thread %u job %u", t, i);
	free(all);
	free(s);
}

TEST_F(sched, threads_one_queue)
{
	threads_submit(_metadata, self, true);
}

TEST_F(sched, threads_many_queues)
{
	threads_submit(_metadata, self, false);
}

#define PROCS		4
#define PER_PROC	400

/*
 * PROCS processes, each with its own open of device 0 and its own queue
 * (two share core 0), submit PER_PROC jobs in batches of growing size
 * while this process does the same; each checks its own data.
 */
static int proc_run(unsigned int index, unsigned int cores)
{
	struct drm_trn_queue_create q;
	struct host_bo cmd, data;
	struct drm_trn_job jobs[32];
	struct cmds c;
	uint32_t bos[2], *d;
	unsigned int i = 0, k, n;
	int fd = dut_open();

	if (fd < 0)
		return 10;
	if (queue_create(fd, index % cores, DRM_TRN_PRIORITY_NORMAL, &q) ||
	    host_bo_new(fd, PER_PROC * WRITE_SIZE, &cmd) ||
	    host_bo_new(fd, PER_PROC * 4, &data))
		return 11;
	bos[0] = cmd.handle;
	bos[1] = data.handle;
	d = data.map;
	cmds_init(&c, cmd.map, cmd.va, cmd.size);
	for (i = 0; i < PER_PROC; i++)
		cmds_write32(&c, data.va + 4 * i, (index << 20) | i);
	for (i = 0, n = 1; i < PER_PROC; i += n, n = n % 32 + 1) {
		if (n > PER_PROC - i)
			n = PER_PROC - i;
		for (k = 0; k < n; k++) {
			job_init(&jobs[k], cmd.va + (uint64_t)(i + k) * WRITE_SIZE,
				 WRITE_SIZE);
			jobs[k].bo_handles = (uintptr_t)bos;
			jobs[k].bo_count = 2;
		}
		if (submit_jobs(fd, q.queue_id, jobs, n))
			return 12;
		if (jobs[0].seqno != i + 1)
			return 13;
	}
	if (syncobj_wait_point(fd, q.syncobj, PER_PROC, WAIT_MS))
		return 14;
	for (i = 0; i < PER_PROC; i++)
		if (d[i] != ((index << 20) | i))
			return 15;
	close(fd);
	return 0;
}

TEST_F(sched, processes)
{
	pid_t pids[PROCS];
	unsigned int i;
	int status;

	fflush(NULL);
	for (i = 0; i < PROCS; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (pids[i] == 0)
			_exit(proc_run(i + 1, self->info.num_cores));
	}
	EXPECT_EQ(0, proc_run(0, self->info.num_cores));
	for (i = 0; i < PROCS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("process %u", i + 1);
	}
}

/* Each priority is accepted (HIGH as root) and its queue runs jobs. */
TEST_F(sched, priorities)
{
	struct drm_trn_queue_create q[3];
	uint32_t p;

	for (p = DRM_TRN_PRIORITY_LOW; p <= DRM_TRN_PRIORITY_HIGH; p++) {
		struct cmds c = stream(self, 32);
		uint64_t seq;

		ASSERT_EQ(0, queue_create(self->fd, 0, p, &q[p]))
			TH_LOG("priority %u", p);
		cmds_write32(&c, dva(self, p), 10 + p);
		ASSERT_EQ(0, submit(self, q[p].queue_id, &c, NULL, 0, NULL, 0,
				    &seq));
		ASSERT_EQ(0, syncobj_wait_point(self->fd, q[p].syncobj, seq,
						WAIT_MS));
		EXPECT_EQ(10 + p, d32(self)[p]);
	}
}

/* Drop CAP_SYS_NICE from every set of the calling thread; 0 or -errno. */
static int drop_sys_nice(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[CAP_SYS_NICE / 32].effective &= ~(1u << (CAP_SYS_NICE % 32));
	data[CAP_SYS_NICE / 32].permitted &= ~(1u << (CAP_SYS_NICE % 32));
	data[CAP_SYS_NICE / 32].inheritable &= ~(1u << (CAP_SYS_NICE % 32));
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

TEST_F(sched, high_priority_needs_cap_sys_nice)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct drm_trn_queue_create q;
		int fd;

		if (drop_sys_nice())
			_exit(20);
		fd = dut_open();
		if (fd < 0)
			_exit(21);
		if (queue_create(fd, 0, DRM_TRN_PRIORITY_HIGH, &q) != -EACCES)
			_exit(22);
		if (queue_create(fd, 0, DRM_TRN_PRIORITY_NORMAL, &q))
			_exit(23);
		if (queue_create(fd, 0, DRM_TRN_PRIORITY_LOW, &q))
			_exit(24);
		/* A file opened with the capability does not lend it. */
		if (queue_create(self->fd, 1, DRM_TRN_PRIORITY_HIGH, &q) !=
		    -EACCES)
			_exit(25);
		close(fd);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
