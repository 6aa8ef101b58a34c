// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * The execution ioctls on the device under test (simulated device 0, or a
 * part on the pci lane: trn_test.h, dut_minor()), raw: QUEUE_CREATE,
 * QUEUE_DESTROY, QUEUE_STATUS and SUBMIT. Every field of every structure
 * gets its negative test; a failing call must fail with the documented
 * errno, leave its argument as it was and queue nothing (the queue's
 * submitted_seqno is unchanged, and a job submitted afterwards is number
 * submitted + 1 and runs after nothing). Then the positive paths: job
 * numbers, the queue's timeline syncobj, the status page, binary and
 * timeline out-syncs, in-syncs across queues.
 *
 * Nothing here depends on timing: where a test needs a job that has not
 * finished yet, the job waits on a device semaphore that the test releases
 * from another queue of the same core (SEM_SIGNAL) once it has looked.
 */
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "trn_test.h"

#define WAIT_MS		20000	/* for a job that can run: generous */
#define JOB_V1_SIZE	64

_Static_assert(sizeof(struct drm_trn_job) == JOB_V1_SIZE, "job v1 is 64 bytes");
_Static_assert(sizeof(struct drm_trn_queue_create) == 40, "queue_create");
_Static_assert(sizeof(struct drm_trn_queue_status) == 96, "queue_status");
_Static_assert(sizeof(struct drm_trn_submit) == 24, "submit");
_Static_assert(sizeof(struct drm_trn_sync) == 16, "sync");

/* The errno of a queue id that the file does not have. */
#define ENOQUEUE	ENOENT

FIXTURE(exec)
{
	int fd;
	struct drm_trn_device_info info;
	struct drm_trn_queue_create q;		/* core 0, normal */
	struct host_bo cmd, data;
	struct cmds cs;
	uint32_t bos[2];			/* cmd, data */
	long page;
	unsigned char *guard;			/* one page, then PROT_NONE */
};

FIXTURE_SETUP(exec)
{
	self->fd = -1;
	if (!dut_available())
		SKIP(return, "no device under test (trn_sim not loaded, no part)");
	self->fd = dut_open();
	ASSERT_LE(0, self->fd) TH_LOG("open the device: %s", strerror(-self->fd));
	ASSERT_EQ(0, query_info(self->fd, &self->info));
	ASSERT_LE(2, self->info.num_cores);
	ASSERT_EQ(0, queue_create(self->fd, 0, DRM_TRN_PRIORITY_NORMAL,
				  &self->q));
	ASSERT_EQ(0, host_bo_new(self->fd, 64 * 1024, &self->cmd));
	ASSERT_EQ(0, host_bo_new(self->fd, 16 * 1024, &self->data));
	cmds_init(&self->cs, self->cmd.map, self->cmd.va, self->cmd.size);
	self->bos[0] = self->cmd.handle;
	self->bos[1] = self->data.handle;
	self->page = sysconf(_SC_PAGESIZE);
	self->guard = mmap(NULL, 2 * self->page, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->guard);
	ASSERT_EQ(0, mprotect(self->guard + self->page, self->page, PROT_NONE));
}

FIXTURE_TEARDOWN(exec)
{
	if (self->fd < 0)
		return;
	munmap(self->guard, 2 * self->page);
	close(self->fd);
}

static uint32_t *data32(FIXTURE_DATA(exec) *self)
{
	return self->data.map;
}

/* A job of @cmd_size bytes at the stream's offset @off using cmd and data. */
static void job_at(FIXTURE_DATA(exec) *self, struct drm_trn_job *j,
		   size_t off, size_t size)
{
	job_init(j, self->cs.va + off, (uint32_t)size);
	j->bo_handles = (uintptr_t)self->bos;
	j->bo_count = 2;
}

/* Record "WRITE32 data[@idx] = @value" and make @j the job running it. */
static int write_job(FIXTURE_DATA(exec) *self, struct drm_trn_job *j,
		     unsigned int idx, uint32_t value)
{
	size_t off = self->cs.len;
	int ret = cmds_write32(&self->cs, self->data.va + 4 * idx, value);

	if (!ret)
		job_at(self, j, off, self->cs.len - off);
	return ret;
}

static struct drm_trn_submit submit_of(uint32_t queue, void *jobs,
				       uint32_t count)
{
	struct drm_trn_submit s = {
		.queue_id = queue,
		.jobs = (uintptr_t)jobs,
		.job_count = count,
		.job_size = sizeof(struct drm_trn_job),
	};

	return s;
}

/*
 * @s must fail with @err, leaving @s, the jobs' seqno fields and the
 * submitted_seqno of queue @q (which @s may or may not name) as they were.
 */
static int fails_cleanly(int fd, uint32_t q, struct drm_trn_submit *s, int err)
{
	struct drm_trn_submit before = *s;
	uint64_t sub0 = queue_submitted(fd, q);
	int ret = raw_ioctl(fd, DRM_IOCTL_TRN_SUBMIT, s);
	uint64_t sub1 = queue_submitted(fd, q);

	if (ret != -err) {
		fprintf(stderr, "# expected %d (%s), got %d (%s)\n", -err,
			strerror(err), ret, strerror(-ret));
		return 1;
	}
	if (memcmp(&before, s, sizeof(*s))) {
		fprintf(stderr, "# the submit structure was modified\n");
		return 2;
	}
	if (sub0 == UINT64_MAX || sub0 != sub1) {
		fprintf(stderr, "# submitted_seqno went from %llu to %llu\n",
			(unsigned long long)sub0, (unsigned long long)sub1);
		return 3;
	}
	return 0;
}

/* The same for one job @j (whose seqno must stay 0). */
static int job_fails(FIXTURE_DATA(exec) *self, struct drm_trn_job *j, int err)
{
	struct drm_trn_submit s = submit_of(self->q.queue_id, j, 1);
	int ret = fails_cleanly(self->fd, self->q.queue_id, &s, err);

	if (!ret && j->seqno) {
		fprintf(stderr, "# a failed submit wrote seqno %llu\n",
			(unsigned long long)j->seqno);
		return 4;
	}
	return ret;
}

/*
 * Nothing was queued by the failures before: a job submitted now is
 * number @want_seqno, and once it finished data[0] is still zero (a
 * queued WRITE of data[0] would have run before it).
 */
static int nothing_ran(FIXTURE_DATA(exec) *self, uint64_t want_seqno)
{
	struct drm_trn_job j;
	int ret;

	ret = write_job(self, &j, 1023, 0x600d);
	if (!ret)
		ret = submit_jobs(self->fd, self->q.queue_id, &j, 1);
	if (ret)
		return ret;
	if (j.seqno != want_seqno) {
		fprintf(stderr, "# next job got seqno %llu, want %llu\n",
			(unsigned long long)j.seqno,
			(unsigned long long)want_seqno);
		return -EDOM;
	}
	ret = syncobj_wait_point(self->fd, self->q.syncobj, j.seqno, WAIT_MS);
	if (ret)
		return ret;
	if (data32(self)[1023] != 0x600d || data32(self)[0]) {
		fprintf(stderr, "# data[1023] %#x data[0] %#x\n",
			data32(self)[1023], data32(self)[0]);
		return -EDOM;
	}
	return 0;
}

/* ---- QUEUE_CREATE ---- */

static int create_fails(int fd, struct drm_trn_queue_create *c, int err)
{
	struct drm_trn_queue_create before = *c;
	int ret = raw_ioctl(fd, DRM_IOCTL_TRN_QUEUE_CREATE, c);

	if (ret != -err) {
		fprintf(stderr, "# expected %d, got %d (%s)\n", -err, ret,
			strerror(-ret));
		if (!ret)
			queue_destroy(fd, c->queue_id);
		return 1;
	}
	if (memcmp(&before, c, sizeof(*c))) {
		fprintf(stderr, "# the structure was modified\n");
		return 2;
	}
	return 0;
}

TEST_F(exec, queue_create_valid)
{
	struct drm_trn_queue_create c[3];
	uint32_t prio, core;
	uint64_t point = 1;

	/* The fixture's queue: an id, a syncobj at point 0, a status page. */
	EXPECT_NE(0, self->q.queue_id);
	EXPECT_NE(0, self->q.syncobj);
	EXPECT_NE(0, self->q.status_handle);
	EXPECT_EQ(0, syncobj_query(self->fd, self->q.syncobj, &point));
	EXPECT_EQ(0, point);

	for (prio = DRM_TRN_PRIORITY_LOW; prio <= DRM_TRN_PRIORITY_HIGH;
	     prio++) {
		memset(&c[prio], 0, sizeof(c[prio]));
		c[prio].core = self->info.num_cores - 1;
		c[prio].priority = prio;
		ASSERT_EQ(0, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUEUE_CREATE,
				       &c[prio]))
			TH_LOG("priority %u", prio);
		EXPECT_NE(0, c[prio].queue_id);
		EXPECT_NE(self->q.queue_id, c[prio].queue_id);
		EXPECT_NE(self->q.syncobj, c[prio].syncobj);
		EXPECT_NE(self->q.status_handle, c[prio].status_handle);
		/* A kernel queue: no ring, no doorbell. */
		EXPECT_EQ(0, c[prio].ring_entries);
		EXPECT_EQ(0, c[prio].ring_handle);
		EXPECT_EQ(0, c[prio].doorbell_handle);
		EXPECT_EQ(0, c[prio].pad);
	}
	EXPECT_NE(c[0].queue_id, c[1].queue_id);
	EXPECT_NE(c[1].queue_id, c[2].queue_id);
	EXPECT_NE(c[0].queue_id, c[2].queue_id);
	for (prio = 0; prio < 3; prio++)
		EXPECT_EQ(0, queue_destroy(self->fd, c[prio].queue_id));

	/* Every core, several queues each. */
	for (core = 0; core < self->info.num_cores; core++) {
		struct drm_trn_queue_create a, b;

		ASSERT_EQ(0, queue_create(self->fd, core,
					  DRM_TRN_PRIORITY_NORMAL, &a))
			TH_LOG("core %u", core);
		ASSERT_EQ(0, queue_create(self->fd, core, DRM_TRN_PRIORITY_LOW,
					  &b));
		EXPECT_NE(a.queue_id, b.queue_id);
		EXPECT_EQ(0, queue_destroy(self->fd, a.queue_id));
		EXPECT_EQ(0, queue_destroy(self->fd, b.queue_id));
	}
}

/*
 * Output fields are ignored on input, as everywhere else in the uAPI
 * (BO_CREATE's handle and va, QUEUE_STATUS's answer): uapi.md's
 * conventions reserve only pad, reserved and flags.
 */
TEST_F(exec, queue_create_ignores_output_fields)
{
	struct drm_trn_queue_create c;

	memset(&c, 0, sizeof(c));
	c.priority = DRM_TRN_PRIORITY_NORMAL;
	c.queue_id = 0xdead;
	c.syncobj = 0xbeef;
	c.status_handle = 0xf00d;
	ASSERT_EQ(0, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUEUE_CREATE, &c));
	EXPECT_NE(0xdead, c.queue_id);
	EXPECT_NE(0, c.queue_id);
	EXPECT_EQ(0, queue_destroy(self->fd, c.queue_id));
}

TEST_F(exec, queue_create_bad_core)
{
	const uint32_t cores[] = { self->info.num_cores,
				   self->info.num_cores + 1, 64, 0x80000000u,
				   UINT32_MAX };
	struct drm_trn_queue_create c;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cores); i++) {
		memset(&c, 0, sizeof(c));
		c.core = cores[i];
		c.priority = DRM_TRN_PRIORITY_NORMAL;
		EXPECT_EQ(0, create_fails(self->fd, &c, EINVAL))
			TH_LOG("core %u", cores[i]);
	}
}

TEST_F(exec, queue_create_bad_priority)
{
	const uint32_t prios[] = { 3, 4, 0x100, 0x80000000u, UINT32_MAX };
	struct drm_trn_queue_create c;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(prios); i++) {
		memset(&c, 0, sizeof(c));
		c.priority = prios[i];
		EXPECT_EQ(0, create_fails(self->fd, &c, EINVAL))
			TH_LOG("priority %u", prios[i]);
	}
}

TEST_F(exec, queue_create_bad_flags)
{
	struct drm_trn_queue_create c;
	unsigned int bit;

	/* Bit 0 is DRM_TRN_QUEUE_USER_MODE (test_uqueue). */
	for (bit = 1; bit < 32; bit++) {
		memset(&c, 0, sizeof(c));
		c.priority = DRM_TRN_PRIORITY_NORMAL;
		c.flags = 1u << bit;
		EXPECT_EQ(0, create_fails(self->fd, &c, EINVAL))
			TH_LOG("flags %#x", c.flags);
	}
}

/*
 * A user-mode queue (uAPI 1.6) where the device offers them, EOPNOTSUPP
 * where it does not (a part; a device whose DMA needs syncs); a bad ring
 * size is EINVAL either way, checked first (test_uqueue has the rest).
 */
TEST_F(exec, queue_create_user_mode_where_offered)
{
	bool offered = self->info.capabilities & DRM_TRN_CAP_USER_QUEUES;
	struct drm_trn_queue_create c;

	memset(&c, 0, sizeof(c));
	c.priority = DRM_TRN_PRIORITY_NORMAL;
	c.flags = DRM_TRN_QUEUE_USER_MODE;
	c.ring_entries = 24;
	EXPECT_EQ(0, create_fails(self->fd, &c, EINVAL));
	c.ring_entries = 16;
	if (!offered) {
		EXPECT_EQ(0, self->info.user_queues);
		EXPECT_EQ(0, create_fails(self->fd, &c, EOPNOTSUPP));
		return;
	}
	ASSERT_EQ(0, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUEUE_CREATE, &c));
	EXPECT_EQ(16, c.ring_entries);
	EXPECT_NE(0, c.ring_handle);
	EXPECT_NE(0, c.doorbell_handle);
	EXPECT_EQ(0, queue_destroy(self->fd, c.queue_id));
	EXPECT_EQ(0, syncobj_destroy(self->fd, c.syncobj));
}

/*
 * What was reserved before uAPI 1.6: a kernel queue takes no ring size,
 * and ring and doorbell handles and the padding are never input.
 */
TEST_F(exec, queue_create_reserved)
{
	struct drm_trn_queue_create c;
	unsigned int i, bit;

	for (i = 0; i < 4; i++) {
		for (bit = 0; bit < 32; bit += 5) {
			memset(&c, 0, sizeof(c));
			c.priority = DRM_TRN_PRIORITY_NORMAL;
			if (i == 0)
				c.ring_entries = 1u << bit;
			else if (i == 1)
				c.ring_handle = 1u << bit;
			else if (i == 2)
				c.doorbell_handle = 1u << bit;
			else
				c.pad = 1u << bit;
			EXPECT_EQ(0, create_fails(self->fd, &c, EINVAL))
				TH_LOG("field %u bit %u", i, bit);
		}
	}
}

TEST_F(exec, queue_create_bad_pointer)
{
	EXPECT_EQ(-EFAULT, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUEUE_CREATE,
				     NULL));
	EXPECT_EQ(-EFAULT, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUEUE_CREATE,
				     self->guard + self->page));
}

/* ---- QUEUE_DESTROY, QUEUE_STATUS ---- */

TEST_F(exec, queue_destroy_bad)
{
	struct drm_trn_queue_destroy d;
	struct drm_trn_queue_create c;
	unsigned int bit;

	memset(&d, 0, sizeof(d));
	EXPECT_EQ(-ENOQUEUE, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUEUE_DESTROY,
				       &d));
	d.queue_id = self->q.queue_id + 1000;
	EXPECT_EQ(-ENOQUEUE, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUEUE_DESTROY,
				       &d));
	d.queue_id = UINT32_MAX;
	EXPECT_EQ(-ENOQUEUE, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUEUE_DESTROY,
				       &d));
	for (bit = 0; bit < 32; bit++) {
		d.queue_id = self->q.queue_id;
		d.flags = 1u << bit;
		EXPECT_EQ(-EINVAL, raw_ioctl(self->fd,
					     DRM_IOCTL_TRN_QUEUE_DESTROY, &d))
			TH_LOG("flags %#x", d.flags);
	}
	EXPECT_EQ(-EFAULT, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUEUE_DESTROY,
				     NULL));
	/* The queue survived all of that. */
	EXPECT_EQ(0, nothing_ran(self, 1));

	/* Double destroy. */
	ASSERT_EQ(0, queue_create(self->fd, 1, DRM_TRN_PRIORITY_NORMAL, &c));
	EXPECT_EQ(0, queue_destroy(self->fd, c.queue_id));
	EXPECT_EQ(-ENOQUEUE, queue_destroy(self->fd, c.queue_id));
	/* The status buffer went with the queue; the syncobj stays. */
	EXPECT_EQ(-EINVAL, gem_close(self->fd, c.status_handle));
	EXPECT_EQ(0, syncobj_destroy(self->fd, c.syncobj));
}

TEST_F(exec, queue_status_bad)
{
	struct drm_trn_queue_status st, before;
	unsigned int bit;

	EXPECT_EQ(-ENOQUEUE, queue_status(self->fd, 0, &st));
	EXPECT_EQ(-ENOQUEUE, queue_status(self->fd, self->q.queue_id + 1000,
					  &st));
	EXPECT_EQ(-ENOQUEUE, queue_status(self->fd, UINT32_MAX, &st));
	for (bit = 0; bit < 32; bit++) {
		memset(&st, 0x5a, sizeof(st));
		st.queue_id = self->q.queue_id;
		st.flags = 1u << bit;
		before = st;
		EXPECT_EQ(-EINVAL, raw_ioctl(self->fd,
					     DRM_IOCTL_TRN_QUEUE_STATUS, &st))
			TH_LOG("flags %#x", before.flags);
		EXPECT_EQ(0, memcmp(&before, &st, sizeof(st)));
	}
	EXPECT_EQ(-EFAULT, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUEUE_STATUS,
				     NULL));
}

TEST_F(exec, queue_status_fresh)
{
	struct drm_trn_queue_status st;

	/* Output fields are ignored on input, and all zero for a new queue. */
	memset(&st, 0x5a, sizeof(st));
	st.queue_id = self->q.queue_id;
	st.flags = 0;
	ASSERT_EQ(0, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUEUE_STATUS, &st));
	EXPECT_EQ(self->q.queue_id, st.queue_id);
	EXPECT_EQ(0, st.submitted_seqno);
	EXPECT_EQ(0, st.completed_seqno);
	EXPECT_EQ(0, st.jobs_failed);
	EXPECT_EQ(0, st.failed_seqno);
	EXPECT_EQ(0, st.error);
	EXPECT_EQ(0, st.status);
	EXPECT_EQ(0, st.error_offset);
	EXPECT_EQ(0, st.error_cmd_va);
	EXPECT_EQ(0, st.fault_va);
	EXPECT_EQ(0, st.state);
	EXPECT_EQ(0, st.resets);
	EXPECT_EQ(0, st.reserved[0]);
	EXPECT_EQ(0, st.reserved[1]);
}

/* Queue ids belong to their file. */
TEST_F(exec, queue_ids_are_per_file)
{
	struct drm_trn_queue_status st;
	struct drm_trn_job j;
	int fd2 = dut_open();

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, write_job(self, &j, 0, 1));
	/* The other file has no buffers of ours either: list none. */
	j.bo_count = 0;
	j.bo_handles = 0;
	EXPECT_EQ(-ENOQUEUE, queue_status(fd2, self->q.queue_id, &st));
	EXPECT_EQ(-ENOQUEUE, submit_jobs(fd2, self->q.queue_id, &j, 1));
	EXPECT_EQ(-ENOQUEUE, queue_destroy(fd2, self->q.queue_id));
	close(fd2);
	EXPECT_EQ(0, nothing_ran(self, 1));
}

/* ---- SUBMIT: every field ---- */

TEST_F(exec, submit_bad_queue)
{
	struct drm_trn_submit s;
	struct drm_trn_job j;
	const uint32_t ids[] = { 0, self->q.queue_id + 1000, UINT32_MAX };
	size_t i;

	ASSERT_EQ(0, write_job(self, &j, 0, 1));
	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		s = submit_of(ids[i], &j, 1);
		EXPECT_EQ(0, fails_cleanly(self->fd, self->q.queue_id, &s,
					   ENOQUEUE))
			TH_LOG("queue %u", ids[i]);
	}
	EXPECT_EQ(-EFAULT, raw_ioctl(self->fd, DRM_IOCTL_TRN_SUBMIT, NULL));
	EXPECT_EQ(0, nothing_ran(self, 1));
}

TEST_F(exec, submit_bad_flags)
{
	struct drm_trn_submit s;
	struct drm_trn_job j;
	unsigned int bit;

	ASSERT_EQ(0, write_job(self, &j, 0, 1));
	for (bit = 0; bit < 32; bit++) {
		if ((1u << bit) & DRM_TRN_SUBMIT_NONBLOCK)
			continue;
		s = submit_of(self->q.queue_id, &j, 1);
		s.flags = 1u << bit;
		EXPECT_EQ(0, fails_cleanly(self->fd, self->q.queue_id, &s,
					   EINVAL))
			TH_LOG("flags %#x", s.flags);
		/* Unknown bits beside a known one are refused all the same. */
		s.flags |= DRM_TRN_SUBMIT_NONBLOCK;
		EXPECT_EQ(0, fails_cleanly(self->fd, self->q.queue_id, &s,
					   EINVAL))
			TH_LOG("flags %#x", s.flags);
	}
	EXPECT_EQ(0, nothing_ran(self, 1));
}

TEST_F(exec, submit_job_count)
{
	struct drm_trn_job *jobs;
	struct drm_trn_submit s;
	const uint32_t counts[] = { 0, DRM_TRN_SUBMIT_MAX_JOBS + 1,
				    DRM_TRN_SUBMIT_MAX_JOBS * 2, 0x80000000u,
				    UINT32_MAX };
	size_t i;

	jobs = calloc(DRM_TRN_SUBMIT_MAX_JOBS + 1, sizeof(*jobs));
	ASSERT_NE(NULL, jobs);
	ASSERT_EQ(0, cmds_write32(&self->cs, self->data.va, 1));
	for (i = 0; i <= DRM_TRN_SUBMIT_MAX_JOBS; i++)
		job_at(self, &jobs[i], 0, self->cs.len);
	for (i = 0; i < ARRAY_SIZE(counts); i++) {
		s = submit_of(self->q.queue_id, jobs, counts[i]);
		EXPECT_EQ(0, fails_cleanly(self->fd, self->q.queue_id, &s,
					   EINVAL))
			TH_LOG("job_count %u", counts[i]);
	}
	free(jobs);
	EXPECT_EQ(0, nothing_ran(self, 1));
}

TEST_F(exec, submit_job_size_small)
{
	const uint32_t sizes[] = { 0, 1, 8, 32, 56, JOB_V1_SIZE - 8,
				   JOB_V1_SIZE - 1 };
	struct drm_trn_submit s;
	struct drm_trn_job j;
	size_t i;

	ASSERT_EQ(0, write_job(self, &j, 0, 1));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		s = submit_of(self->q.queue_id, &j, 1);
		s.job_size = sizes[i];
		EXPECT_EQ(0, fails_cleanly(self->fd, self->q.queue_id, &s,
					   EINVAL))
			TH_LOG("job_size %u", sizes[i]);
	}
	EXPECT_EQ(0, nothing_ran(self, 1));
}

/* A newer caller's bigger job: its unknown tail must be zero. */
TEST_F(exec, submit_job_size_tail)
{
	unsigned char buf[3 * 128];
	struct drm_trn_job j;
	struct drm_trn_submit s;
	uint64_t seqno;
	unsigned int off, i;

	ASSERT_EQ(0, write_job(self, &j, 0, 1));

	/* A non-zero byte anywhere in the tail: EINVAL. */
	for (off = JOB_V1_SIZE; off < 72; off++) {
		memset(buf, 0, sizeof(buf));
		memcpy(buf, &j, sizeof(j));
		buf[off] = 1;
		s = submit_of(self->q.queue_id, buf, 1);
		s.job_size = 72;
		EXPECT_EQ(0, fails_cleanly(self->fd, self->q.queue_id, &s,
					   EINVAL))
			TH_LOG("tail byte %u", off);
	}
	/* In the second job of a batch of 128-byte jobs. */
	memset(buf, 0, sizeof(buf));
	for (i = 0; i < 3; i++)
		memcpy(buf + 128 * i, &j, sizeof(j));
	buf[128 + 127] = 0x80;
	s = submit_of(self->q.queue_id, buf, 3);
	s.job_size = 128;
	EXPECT_EQ(0, fails_cleanly(self->fd, self->q.queue_id, &s, EINVAL));
	EXPECT_EQ(0, nothing_ran(self, 1));

	/* Zero tails are accepted; seqnos land at the caller's stride. */
	buf[128 + 127] = 0;
	s = submit_of(self->q.queue_id, buf, 3);
	s.job_size = 128;
	ASSERT_EQ(0, raw_ioctl(self->fd, DRM_IOCTL_TRN_SUBMIT, &s));
	for (i = 0; i < 3; i++) {
		memcpy(&seqno, buf + 128 * i +
		       offsetof(struct drm_trn_job, seqno), sizeof(seqno));
		EXPECT_EQ(2 + i, seqno) TH_LOG("job %u", i);
		EXPECT_TRUE(all_bytes(buf + 128 * i + JOB_V1_SIZE, 0,
				      128 - JOB_V1_SIZE));
	}
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &j, sizeof(j));
	s = submit_of(self->q.queue_id, buf, 1);
	s.job_size = 72;
	ASSERT_EQ(0, raw_ioctl(self->fd, DRM_IOCTL_TRN_SUBMIT, &s));
	memcpy(&seqno, buf + offsetof(struct drm_trn_job, seqno), 8);
	EXPECT_EQ(5, seqno);
	EXPECT_EQ(0, syncobj_wait_point(self->fd, self->q.syncobj, 5, WAIT_MS));
	EXPECT_EQ(1, data32(self)[0]);
}

TEST_F(exec, submit_jobs_pointer)
{
	struct drm_trn_submit s;
	struct drm_trn_job j, *straddle;

	ASSERT_EQ(0, write_job(self, &j, 0, 1));
	s = submit_of(self->q.queue_id, NULL, 1);
	EXPECT_EQ(0, fails_cleanly(self->fd, self->q.queue_id, &s, EFAULT));
	s = submit_of(self->q.queue_id, self->guard + self->page, 1);
	EXPECT_EQ(0, fails_cleanly(self->fd, self->q.queue_id, &s, EFAULT));
	s = submit_of(self->q.queue_id, NULL, 1);
	s.jobs = 0xffff800000000000ull;
	EXPECT_EQ(0, fails_cleanly(self->fd, self->q.queue_id, &s, EFAULT));
	s.jobs = 0x8000000000000000ull;
	EXPECT_EQ(0, fails_cleanly(self->fd, self->q.queue_id, &s, EFAULT));
	/* The first job readable, the second runs into the guard page. */
	straddle = (struct drm_trn_job *)(self->guard + self->page) - 1;
	*straddle = j;
	s = submit_of(self->q.queue_id, straddle, 2);
	EXPECT_EQ(0, fails_cleanly(self->fd, self->q.queue_id, &s, EFAULT));
	EXPECT_EQ(0, straddle->seqno);
	EXPECT_EQ(0, nothing_ran(self, 1));
}

TEST_F(exec, submit_cmd_va)
{
	const uint64_t end = self->info.va_start + self->info.va_size;
	const uint64_t bad[] = { 0, 8, SIM_VA_START - 8, self->info.va_start - 8,
				 end, end - 16, UINT64_MAX & ~7ull };
	struct drm_trn_job j;
	unsigned int mis;
	size_t i;

	ASSERT_EQ(0, write_job(self, &j, 0, 1));
	for (mis = 1; mis < 8; mis++) {
		job_at(self, &j, 0, 24);
		j.cmd_va += mis;
		EXPECT_EQ(0, job_fails(self, &j, EINVAL)) TH_LOG("+%u", mis);
	}
	/* Streams that are not (entirely) inside the VA window. */
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		job_at(self, &j, 0, 24);
		j.cmd_va = bad[i];
		EXPECT_EQ(0, job_fails(self, &j, EINVAL))
			TH_LOG("cmd_va %#llx", (unsigned long long)bad[i]);
	}
	EXPECT_EQ(0, nothing_ran(self, 1));
}

TEST_F(exec, submit_cmd_size)
{
	const uint32_t sizes[] = { 0, 1, 4, 12, 23, 25,
				   DRM_TRN_JOB_MAX_CMD_SIZE + 8,
				   DRM_TRN_JOB_MAX_CMD_SIZE * 2,
				   UINT32_MAX & ~7u, UINT32_MAX };
	struct drm_trn_job j;
	size_t i;

	ASSERT_EQ(0, write_job(self, &j, 0, 1));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		job_at(self, &j, 0, sizes[i]);
		EXPECT_EQ(0, job_fails(self, &j, EINVAL))
			TH_LOG("cmd_size %u", sizes[i]);
	}
	EXPECT_EQ(0, nothing_ran(self, 1));
}

TEST_F(exec, submit_job_flags_and_pad)
{
	struct drm_trn_job j;
	unsigned int bit;

	ASSERT_EQ(0, write_job(self, &j, 0, 1));
	for (bit = 0; bit < 32; bit++) {
		job_at(self, &j, 0, 24);
		j.flags = 1u << bit;
		EXPECT_EQ(0, job_fails(self, &j, EINVAL))
			TH_LOG("flags %#x", j.flags);
		job_at(self, &j, 0, 24);
		j.pad = 1u << bit;
		EXPECT_EQ(0, job_fails(self, &j, EINVAL))
			TH_LOG("pad %#x", j.pad);
	}
	EXPECT_EQ(0, nothing_ran(self, 1));
}

TEST_F(exec, submit_bo_count)
{
	const uint32_t counts[] = { DRM_TRN_JOB_MAX_BOS + 1,
				    DRM_TRN_JOB_MAX_BOS * 2, 0x80000000u,
				    UINT32_MAX };
	uint32_t *handles;
	struct drm_trn_job j;
	size_t i;

	/* Room for the largest count, so only the count is wrong. */
	handles = calloc(DRM_TRN_JOB_MAX_BOS * 2, sizeof(*handles));
	ASSERT_NE(NULL, handles);
	ASSERT_EQ(0, write_job(self, &j, 0, 1));
	for (i = 0; i < ARRAY_SIZE(counts); i++) {
		job_at(self, &j, 0, 24);
		j.bo_handles = (uintptr_t)handles;
		j.bo_count = counts[i];
		EXPECT_EQ(0, job_fails(self, &j, EINVAL))
			TH_LOG("bo_count %u", counts[i]);
	}
	free(handles);
	EXPECT_EQ(0, nothing_ran(self, 1));
}

TEST_F(exec, submit_bad_bo_handle)
{
	uint32_t handles[3] = { self->cmd.handle, self->data.handle, 0 };
	const uint32_t bad[] = { 0, self->data.handle + 100, UINT32_MAX };
	struct drm_trn_job j;
	size_t i;

	ASSERT_EQ(0, write_job(self, &j, 0, 1));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		handles[2] = bad[i];
		job_at(self, &j, 0, 24);
		j.bo_handles = (uintptr_t)handles;
		j.bo_count = 3;
		EXPECT_EQ(0, job_fails(self, &j, ENOENT))
			TH_LOG("handle %u", bad[i]);
	}
	/* A handle closed a moment ago. */
	{
		uint32_t h;

		ASSERT_EQ(0, bo_create(self->fd, TEST_PAGE,
				       DRM_TRN_PLACEMENT_HBM, 0, 0, &h, NULL));
		ASSERT_EQ(0, gem_close(self->fd, h));
		handles[2] = h;
		job_at(self, &j, 0, 24);
		j.bo_handles = (uintptr_t)handles;
		j.bo_count = 3;
		EXPECT_EQ(0, job_fails(self, &j, ENOENT));
	}
	EXPECT_EQ(0, nothing_ran(self, 1));
}

TEST_F(exec, submit_duplicate_bo)
{
	uint32_t handles[4] = { self->cmd.handle, self->data.handle,
				self->cmd.handle, self->data.handle };
	struct drm_trn_job j;

	ASSERT_EQ(0, write_job(self, &j, 0, 1));
	j.bo_handles = (uintptr_t)handles;
	j.bo_count = 3;
	EXPECT_EQ(0, job_fails(self, &j, EINVAL));
	handles[2] = handles[1];
	EXPECT_EQ(0, job_fails(self, &j, EINVAL));
	j.bo_handles = (uintptr_t)&handles[1];
	j.bo_count = 2;
	EXPECT_EQ(0, job_fails(self, &j, EINVAL));
	EXPECT_EQ(0, nothing_ran(self, 1));
}

/*
 * Buffer lists of every size the kernel handles differently (a few kept in
 * the job, more looked up at once, many checked for duplicates by sorting):
 * a duplicate or an unknown handle anywhere fails the call; distinct
 * buffers run.
 */
TEST_F(exec, submit_many_bos)
{
	static const uint32_t counts[] = { 4, 5, 16, 17, 40 };
	uint32_t handles[40], bad;
	struct drm_trn_job j;
	unsigned int i, k, n;

	handles[0] = self->cmd.handle;
	handles[1] = self->data.handle;
	for (i = 2; i < ARRAY_SIZE(handles); i++)
		ASSERT_EQ(0, bo_create(self->fd, TEST_PAGE,
				       DRM_TRN_PLACEMENT_HBM, 0, 0,
				       &handles[i], NULL));
	ASSERT_EQ(0, bo_create(self->fd, TEST_PAGE, DRM_TRN_PLACEMENT_HBM, 0,
			       0, &bad, NULL));
	ASSERT_EQ(0, gem_close(self->fd, bad));

	ASSERT_EQ(0, write_job(self, &j, 0, 1));
	j.bo_handles = (uintptr_t)handles;
	for (k = 0; k < ARRAY_SIZE(counts); k++) {
		uint32_t last;

		n = counts[k];
		j.bo_count = n;
		last = handles[n - 1];
		/* The last one repeats the first, or one in the middle. */
		handles[n - 1] = handles[0];
		EXPECT_EQ(0, job_fails(self, &j, EINVAL)) TH_LOG("%u bos", n);
		handles[n - 1] = handles[n / 2];
		EXPECT_EQ(0, job_fails(self, &j, EINVAL)) TH_LOG("%u bos", n);
		handles[n - 1] = bad;
		EXPECT_EQ(0, job_fails(self, &j, ENOENT)) TH_LOG("%u bos", n);
		handles[n - 1] = last;
	}
	EXPECT_EQ(0, nothing_ran(self, 1));

	for (k = 0; k < ARRAY_SIZE(counts); k++) {
		ASSERT_EQ(0, write_job(self, &j, 2 + k, 0x100 + k));
		j.bo_handles = (uintptr_t)handles;
		j.bo_count = counts[k];
		ASSERT_EQ(0, submit_jobs(self->fd, self->q.queue_id, &j, 1))
			TH_LOG("%u bos", counts[k]);
	}
	ASSERT_EQ(0, syncobj_wait_point(self->fd, self->q.syncobj, j.seqno,
					WAIT_MS));
	for (k = 0; k < ARRAY_SIZE(counts); k++)
		EXPECT_EQ(0x100 + k, data32(self)[2 + k]);
	for (i = 2; i < ARRAY_SIZE(handles); i++)
		EXPECT_EQ(0, gem_close(self->fd, handles[i]));
}

TEST_F(exec, submit_bo_handles_pointer)
{
	struct drm_trn_job j;
	uint32_t *last;

	ASSERT_EQ(0, write_job(self, &j, 0, 1));
	j.bo_handles = 0;
	EXPECT_EQ(0, job_fails(self, &j, EFAULT));
	j.bo_handles = (uintptr_t)(self->guard + self->page);
	EXPECT_EQ(0, job_fails(self, &j, EFAULT));
	j.bo_handles = 0xffff800000000000ull;
	EXPECT_EQ(0, job_fails(self, &j, EFAULT));
	/* One handle readable, the second in the guard page. */
	last = (uint32_t *)(self->guard + self->page) - 1;
	*last = self->cmd.handle;
	j.bo_handles = (uintptr_t)last;
	EXPECT_EQ(0, job_fails(self, &j, EFAULT));
	EXPECT_EQ(0, nothing_ran(self, 1));
}

TEST_F(exec, submit_sync_counts)
{
	const uint32_t counts[] = { DRM_TRN_JOB_MAX_FENCES + 1, 1000,
				    0x80000000u, UINT32_MAX };
	struct drm_trn_sync *syncs;
	struct drm_trn_job j;
	uint32_t h;
	size_t i, n = 2 * DRM_TRN_JOB_MAX_FENCES;

	ASSERT_EQ(0, syncobj_create(self->fd, DRM_SYNCOBJ_CREATE_SIGNALED, &h));
	syncs = calloc(n, sizeof(*syncs));
	ASSERT_NE(NULL, syncs);
	for (i = 0; i < n; i++)
		syncs[i].handle = h;
	ASSERT_EQ(0, write_job(self, &j, 0, 1));
	for (i = 0; i < ARRAY_SIZE(counts); i++) {
		job_at(self, &j, 0, 24);
		j.in_syncs = (uintptr_t)syncs;
		j.in_count = counts[i];
		EXPECT_EQ(0, job_fails(self, &j, EINVAL))
			TH_LOG("in_count %u", counts[i]);
		job_at(self, &j, 0, 24);
		j.out_syncs = (uintptr_t)syncs;
		j.out_count = counts[i];
		EXPECT_EQ(0, job_fails(self, &j, EINVAL))
			TH_LOG("out_count %u", counts[i]);
	}
	free(syncs);
	EXPECT_EQ(0, nothing_ran(self, 1));
}

TEST_F(exec, submit_sync_pointers)
{
	const uint64_t bad[] = { 0, (uintptr_t)(self->guard + self->page),
				 0xffff800000000000ull,
				 /* one entry readable, the next not */
				 (uintptr_t)(self->guard + self->page) -
				 sizeof(struct drm_trn_sync) };
	struct drm_trn_sync *last;
	struct drm_trn_job j;
	uint32_t h;
	size_t i;

	ASSERT_EQ(0, syncobj_create(self->fd, DRM_SYNCOBJ_CREATE_SIGNALED, &h));
	last = (struct drm_trn_sync *)(self->guard + self->page) - 1;
	memset(last, 0, sizeof(*last));
	last->handle = h;
	ASSERT_EQ(0, write_job(self, &j, 0, 1));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		job_at(self, &j, 0, 24);
		j.in_syncs = bad[i];
		j.in_count = i == 3 ? 2 : 1;
		EXPECT_EQ(0, job_fails(self, &j, EFAULT)) TH_LOG("in %zu", i);
		job_at(self, &j, 0, 24);
		j.out_syncs = bad[i];
		j.out_count = i == 3 ? 2 : 1;
		EXPECT_EQ(0, job_fails(self, &j, EFAULT)) TH_LOG("out %zu", i);
	}
	EXPECT_EQ(0, nothing_ran(self, 1));
	/* The syncobj an out-sync named was not touched. */
	EXPECT_EQ(1, syncobj_fence_status(self->fd, h));
}

TEST_F(exec, submit_sync_flags)
{
	struct drm_trn_sync sync;
	struct drm_trn_job j;
	uint32_t h;
	unsigned int bit;

	ASSERT_EQ(0, syncobj_create(self->fd, DRM_SYNCOBJ_CREATE_SIGNALED, &h));
	ASSERT_EQ(0, write_job(self, &j, 0, 1));
	for (bit = 0; bit < 32; bit++) {
		memset(&sync, 0, sizeof(sync));
		sync.handle = h;
		sync.flags = 1u << bit;
		job_at(self, &j, 0, 24);
		j.in_syncs = (uintptr_t)&sync;
		j.in_count = 1;
		EXPECT_EQ(0, job_fails(self, &j, EINVAL))
			TH_LOG("in flags %#x", sync.flags);
		job_at(self, &j, 0, 24);
		j.out_syncs = (uintptr_t)&sync;
		j.out_count = 1;
		EXPECT_EQ(0, job_fails(self, &j, EINVAL))
			TH_LOG("out flags %#x", sync.flags);
	}
	EXPECT_EQ(0, nothing_ran(self, 1));
}

TEST_F(exec, submit_unknown_syncobj)
{
	struct drm_trn_sync sync[2];
	struct drm_trn_job j;
	uint32_t h;

	ASSERT_EQ(0, syncobj_create(self->fd, DRM_SYNCOBJ_CREATE_SIGNALED, &h));
	memset(sync, 0, sizeof(sync));
	sync[0].handle = h;
	sync[1].handle = h + 100;
	ASSERT_EQ(0, write_job(self, &j, 0, 1));
	j.in_syncs = (uintptr_t)sync;
	j.in_count = 2;
	EXPECT_EQ(0, job_fails(self, &j, ENOENT));
	job_at(self, &j, 0, 24);
	j.out_syncs = (uintptr_t)sync;
	j.out_count = 2;
	EXPECT_EQ(0, job_fails(self, &j, ENOENT));
	sync[1].handle = 0;
	EXPECT_EQ(0, job_fails(self, &j, ENOENT));
	/* A GEM handle is not a syncobj handle. */
	sync[1].handle = self->data.handle;
	if (sync[1].handle != h) {
		job_at(self, &j, 0, 24);
		j.in_syncs = (uintptr_t)&sync[1];
		j.in_count = 1;
		EXPECT_EQ(0, job_fails(self, &j, ENOENT));
	}
	EXPECT_EQ(0, nothing_ran(self, 1));
	/* The out-sync that was valid was not replaced. */
	EXPECT_EQ(1, syncobj_fence_status(self->fd, h));
}

/* A point to wait for must have a fence already (no wait-for-submit). */
TEST_F(exec, submit_in_sync_without_fence)
{
	struct drm_trn_sync sync = { 0 };
	struct drm_trn_job j;
	uint32_t h;

	ASSERT_EQ(0, syncobj_create(self->fd, 0, &h));
	sync.handle = h;
	ASSERT_EQ(0, write_job(self, &j, 0, 1));
	j.in_syncs = (uintptr_t)&sync;
	j.in_count = 1;
	EXPECT_EQ(0, job_fails(self, &j, EINVAL));
	/* A point of the queue's own timeline that no job has yet. */
	sync.handle = self->q.syncobj;
	sync.point = 5;
	EXPECT_EQ(0, job_fails(self, &j, EINVAL));
	EXPECT_EQ(0, nothing_ran(self, 1));
}

/* A batch whose last job is bad queues none of them. */
TEST_F(exec, submit_batch_last_bad)
{
	struct drm_trn_job jobs[4];
	uint32_t bad_handle = 0xfffff;
	struct drm_trn_submit s;
	struct drm_trn_sync sync = { .handle = 0xfffff };
	unsigned int i, kind;
	size_t off;

	/* Three good jobs writing data[0], data[1], data[2]. */
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, write_job(self, &jobs[i], i, 0xbad));
	off = self->cs.len;
	ASSERT_EQ(0, cmds_write32(&self->cs, self->data.va + 12, 0xbad));
	for (kind = 0; kind < 7; kind++) {
		job_at(self, &jobs[3], off, 24);
		switch (kind) {
		case 0:
			jobs[3].flags = 1;
			break;
		case 1:
			jobs[3].cmd_size = 12;
			break;
		case 2:
			jobs[3].bo_handles = (uintptr_t)&bad_handle;
			jobs[3].bo_count = 1;
			break;
		case 3:
			jobs[3].in_syncs = (uintptr_t)&sync;
			jobs[3].in_count = 1;
			break;
		case 4:
			jobs[3].out_syncs = (uintptr_t)&sync;
			jobs[3].out_count = 1;
			break;
		case 5:
			jobs[3].bo_handles = 0;
			break;
		default:
			jobs[3].cmd_va += 4;
			break;
		}
		s = submit_of(self->q.queue_id, jobs, 4);
		EXPECT_EQ(0, fails_cleanly(self->fd, self->q.queue_id, &s,
					   kind == 2 || kind == 3 || kind == 4 ?
					   ENOENT : kind == 5 ? EFAULT : EINVAL))
			TH_LOG("kind %u", kind);
		for (i = 0; i < 4; i++)
			EXPECT_EQ(0, jobs[i].seqno);
	}
	EXPECT_EQ(0, nothing_ran(self, 1));
	EXPECT_EQ(0, data32(self)[1]);
	EXPECT_EQ(0, data32(self)[2]);
	EXPECT_EQ(0, data32(self)[3]);
}

/* ---- positive paths ---- */

TEST_F(exec, seqnos_consecutive)
{
	struct drm_trn_job jobs[DRM_TRN_SUBMIT_MAX_JOBS];
	struct drm_trn_queue_status st;
	uint64_t next = 1, point = 0;
	unsigned int i, n, round, idx = 0;

	for (round = 0; round < 4; round++) {
		n = round == 2 ? DRM_TRN_SUBMIT_MAX_JOBS : 1 + round * 3;
		self->cs.len = 0;
		for (i = 0; i < n; i++)
			ASSERT_EQ(0, write_job(self, &jobs[i], idx + i,
					       idx + i + 1));
		ASSERT_EQ(0, submit_jobs(self->fd, self->q.queue_id, jobs, n));
		for (i = 0; i < n; i++)
			ASSERT_EQ(next + i, jobs[i].seqno);
		next += n;
		idx += n;
		ASSERT_EQ(next - 1, queue_submitted(self->fd,
						    self->q.queue_id));
		/* Wait before the stream is overwritten. */
		ASSERT_EQ(0, syncobj_wait_point(self->fd, self->q.syncobj,
						next - 1, WAIT_MS));
	}
	for (i = 0; i < idx; i++)
		ASSERT_EQ(i + 1, data32(self)[i]) TH_LOG("data[%u]", i);
	ASSERT_EQ(0, queue_status(self->fd, self->q.queue_id, &st));
	EXPECT_EQ(next - 1, st.submitted_seqno);
	EXPECT_EQ(next - 1, st.completed_seqno);
	EXPECT_EQ(0, st.jobs_failed);
	EXPECT_EQ(0, st.state);
	EXPECT_EQ(0, syncobj_query(self->fd, self->q.syncobj, &point));
	EXPECT_EQ(next - 1, point);
}

/*
 * Job 2 of three waits on semaphore 7 of core 0: point 1 signals, point 2
 * and 3 cannot, the status page says 1; once another queue of core 0
 * signals the semaphore, everything completes.
 */
TEST_F(exec, timeline_and_status_page)
{
	const volatile struct drm_trn_queue_status_page *sp;
	struct drm_trn_queue_create rel;
	struct drm_trn_queue_status st;
	struct drm_trn_job jobs[3], r;
	size_t off;
	void *w;

	/* The job that must wait waits on a device semaphore. */
	if (!(self->info.capabilities & DRM_TRN_CAP_SEMAPHORES))
		SKIP(return, "the device has no semaphores (TRN_CAP_SEMAPHORES clear)");
	sp = status_page_map(self->fd, self->q.status_handle);
	ASSERT_NE(NULL, sp);
	EXPECT_EQ(0, sp->completed_seqno);
	EXPECT_EQ(0, sp->failed_count);
	/* Userspace maps it read-only. */
	{
		struct drm_trn_bo_info bi;

		ASSERT_EQ(0, bo_info(self->fd, self->q.status_handle, &bi));
		EXPECT_EQ(DRM_TRN_PLACEMENT_HOST, bi.placement);
		EXPECT_LE(sizeof(*sp), bi.size);
		w = mmap(NULL, bi.size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 self->fd, (off_t)bi.mmap_offset);
		EXPECT_EQ(MAP_FAILED, w);
		EXPECT_EQ(EACCES, errno);
		if (w != MAP_FAILED)
			munmap(w, bi.size);
		/* Nor can a read-only mapping be made writable later. */
		w = mmap(NULL, bi.size, PROT_READ, MAP_SHARED, self->fd,
			 (off_t)bi.mmap_offset);
		ASSERT_NE(MAP_FAILED, w);
		EXPECT_EQ(-1, mprotect(w, bi.size, PROT_READ | PROT_WRITE));
		EXPECT_EQ(EACCES, errno);
		munmap(w, bi.size);
		/* Nor exported, to be mapped writable elsewhere. */
		{
			struct drm_prime_handle ph = {
				.handle = self->q.status_handle,
				.flags = DRM_CLOEXEC | DRM_RDWR,
			};

			EXPECT_EQ(-1, ioctl(self->fd,
					    DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph));
			EXPECT_EQ(EOPNOTSUPP, errno);
		}
	}

	ASSERT_EQ(0, write_job(self, &jobs[0], 0, 1));
	off = self->cs.len;
	ASSERT_EQ(0, cmds_sem(&self->cs, true, 7, 1));
	ASSERT_EQ(0, cmds_write32(&self->cs, self->data.va + 4, 2));
	job_at(self, &jobs[1], off, self->cs.len - off);
	ASSERT_EQ(0, write_job(self, &jobs[2], 2, 3));
	ASSERT_EQ(0, submit_jobs(self->fd, self->q.queue_id, jobs, 3));
	ASSERT_EQ(1, jobs[0].seqno);
	ASSERT_EQ(3, jobs[2].seqno);

	ASSERT_EQ(0, syncobj_wait_point(self->fd, self->q.syncobj, 1, WAIT_MS));
	EXPECT_EQ(1, data32(self)[0]);
	EXPECT_EQ(1, sp->completed_seqno);
	EXPECT_EQ(-ETIME, syncobj_wait_point(self->fd, self->q.syncobj, 2, 0));
	EXPECT_EQ(-ETIME, syncobj_wait_point(self->fd, self->q.syncobj, 3, 0));
	ASSERT_EQ(0, queue_status(self->fd, self->q.queue_id, &st));
	EXPECT_EQ(3, st.submitted_seqno);
	EXPECT_EQ(1, st.completed_seqno);
	EXPECT_EQ(0, data32(self)[1]);
	EXPECT_EQ(0, data32(self)[2]);

	/* Release it from another queue of the same core. */
	ASSERT_EQ(0, queue_create(self->fd, 0, DRM_TRN_PRIORITY_NORMAL, &rel));
	off = self->cs.len;
	ASSERT_EQ(0, cmds_sem(&self->cs, false, 7, 1));
	job_at(self, &r, off, self->cs.len - off);
	ASSERT_EQ(0, submit_jobs(self->fd, rel.queue_id, &r, 1));
	EXPECT_EQ(1, r.seqno);
	ASSERT_EQ(0, syncobj_wait_point(self->fd, self->q.syncobj, 3, WAIT_MS));
	EXPECT_EQ(2, data32(self)[1]);
	EXPECT_EQ(3, data32(self)[2]);
	EXPECT_EQ(3, sp->completed_seqno);
	EXPECT_EQ(0, sp->failed_count);
	EXPECT_EQ(1, timeline_fence_status(self->fd, self->q.syncobj, 3));
	ASSERT_EQ(0, syncobj_wait_point(self->fd, rel.syncobj, 1, WAIT_MS));
	munmap((void *)sp, TEST_PAGE);
}

TEST_F(exec, binary_out_sync)
{
	struct drm_trn_sync out[2] = { { 0 } };
	struct drm_trn_job j;
	uint32_t h1, h2;

	/* One unsignalled syncobj, one signalled: both get the job's fence. */
	ASSERT_EQ(0, syncobj_create(self->fd, 0, &h1));
	ASSERT_EQ(0, syncobj_create(self->fd, DRM_SYNCOBJ_CREATE_SIGNALED, &h2));
	out[0].handle = h1;
	out[1].handle = h2;
	ASSERT_EQ(0, write_job(self, &j, 5, 55));
	j.out_syncs = (uintptr_t)out;
	j.out_count = 2;
	ASSERT_EQ(0, submit_jobs(self->fd, self->q.queue_id, &j, 1));
	EXPECT_EQ(1, j.seqno);
	ASSERT_EQ(0, syncobj_wait_point(self->fd, h1, 0, WAIT_MS));
	EXPECT_EQ(55, data32(self)[5]);
	EXPECT_EQ(1, syncobj_fence_status(self->fd, h1));
	EXPECT_EQ(1, syncobj_fence_status(self->fd, h2));
}

TEST_F(exec, timeline_out_sync)
{
	struct drm_trn_sync out = { 0 };
	struct drm_trn_job j;
	uint64_t point = 0;
	uint32_t h;

	ASSERT_EQ(0, syncobj_create(self->fd, 0, &h));
	out.handle = h;
	out.point = 5;
	ASSERT_EQ(0, write_job(self, &j, 6, 66));
	j.out_syncs = (uintptr_t)&out;
	j.out_count = 1;
	ASSERT_EQ(0, submit_jobs(self->fd, self->q.queue_id, &j, 1));
	ASSERT_EQ(0, syncobj_wait_point(self->fd, h, 5, WAIT_MS));
	EXPECT_EQ(66, data32(self)[6]);
	EXPECT_EQ(0, syncobj_query(self->fd, h, &point));
	EXPECT_EQ(5, point);

	/* A later point of the same syncobj from a second job. */
	out.point = 9;
	ASSERT_EQ(0, write_job(self, &j, 7, 77));
	j.out_syncs = (uintptr_t)&out;
	j.out_count = 1;
	ASSERT_EQ(0, submit_jobs(self->fd, self->q.queue_id, &j, 1));
	EXPECT_EQ(2, j.seqno);
	ASSERT_EQ(0, syncobj_wait_point(self->fd, h, 9, WAIT_MS));
	EXPECT_EQ(77, data32(self)[7]);
	EXPECT_EQ(0, syncobj_query(self->fd, h, &point));
	EXPECT_EQ(9, point);
}

/*
 * Queue A (core 0) runs "wait for semaphore 3; data[0] = 7". Queue B
 * (core 1) waits for A's job through an in-sync and copies data[0] to
 * data[1]. B cannot finish before A's job, which cannot start before the
 * test releases the semaphore from queue C (core 0).
 */
TEST_F(exec, in_sync_orders_across_queues)
{
	struct drm_trn_queue_create b, c;
	struct drm_trn_sync in[2] = { { 0 } };
	struct drm_trn_job ja, jb, jc;
	uint32_t bin;
	size_t off;

	/* The job that must wait waits on a device semaphore. */
	if (!(self->info.capabilities & DRM_TRN_CAP_SEMAPHORES))
		SKIP(return, "the device has no semaphores (TRN_CAP_SEMAPHORES clear)");
	ASSERT_EQ(0, queue_create(self->fd, 1, DRM_TRN_PRIORITY_NORMAL, &b));
	ASSERT_EQ(0, queue_create(self->fd, 0, DRM_TRN_PRIORITY_NORMAL, &c));
	ASSERT_EQ(0, syncobj_create(self->fd, DRM_SYNCOBJ_CREATE_SIGNALED,
				    &bin));

	off = self->cs.len;
	ASSERT_EQ(0, cmds_sem(&self->cs, true, 3, 1));
	ASSERT_EQ(0, cmds_write32(&self->cs, self->data.va, 7));
	job_at(self, &ja, off, self->cs.len - off);
	ASSERT_EQ(0, submit_jobs(self->fd, self->q.queue_id, &ja, 1));

	off = self->cs.len;
	ASSERT_EQ(0, cmds_copy(&self->cs, self->data.va + 4, self->data.va, 4));
	job_at(self, &jb, off, self->cs.len - off);
	in[0].handle = self->q.syncobj;
	in[0].point = ja.seqno;
	in[1].handle = bin;	/* already signalled: no wait */
	jb.in_syncs = (uintptr_t)in;
	jb.in_count = 2;
	ASSERT_EQ(0, submit_jobs(self->fd, b.queue_id, &jb, 1));
	EXPECT_EQ(1, jb.seqno);

	EXPECT_EQ(-ETIME, syncobj_wait_point(self->fd, b.syncobj, 1, 0));
	EXPECT_EQ(0, data32(self)[1]);

	off = self->cs.len;
	ASSERT_EQ(0, cmds_sem(&self->cs, false, 3, 1));
	job_at(self, &jc, off, self->cs.len - off);
	ASSERT_EQ(0, submit_jobs(self->fd, c.queue_id, &jc, 1));

	ASSERT_EQ(0, syncobj_wait_point(self->fd, b.syncobj, 1, WAIT_MS));
	EXPECT_EQ(7, data32(self)[0]);
	EXPECT_EQ(7, data32(self)[1]);
	EXPECT_EQ(1, timeline_fence_status(self->fd, b.syncobj, 1));
}

/*
 * Destroying a queue does not wait, and its unfinished jobs are cancelled:
 * A's job blocks on semaphore 9; after the destroy, C releases the
 * semaphore, and A's job must neither write nor succeed.
 */
TEST_F(exec, destroy_with_jobs_in_flight)
{
	struct drm_trn_queue_create a, c;
	struct drm_trn_job ja, jc;
	size_t off;

	/* The job that must wait waits on a device semaphore. */
	if (!(self->info.capabilities & DRM_TRN_CAP_SEMAPHORES))
		SKIP(return, "the device has no semaphores (TRN_CAP_SEMAPHORES clear)");
	ASSERT_EQ(0, queue_create(self->fd, 0, DRM_TRN_PRIORITY_NORMAL, &a));
	ASSERT_EQ(0, queue_create(self->fd, 0, DRM_TRN_PRIORITY_NORMAL, &c));
	off = self->cs.len;
	ASSERT_EQ(0, cmds_sem(&self->cs, true, 9, 1));
	ASSERT_EQ(0, cmds_write32(&self->cs, self->data.va + 40, 0x99));
	job_at(self, &ja, off, self->cs.len - off);
	ASSERT_EQ(0, submit_jobs(self->fd, a.queue_id, &ja, 1));
	ASSERT_EQ(0, queue_destroy(self->fd, a.queue_id));
	EXPECT_EQ(-ENOQUEUE, submit_jobs(self->fd, a.queue_id, &ja, 1));
	/* Cancelled, whether it was on the device already or not. */
	ASSERT_EQ(0, syncobj_wait_point(self->fd, a.syncobj, 1, WAIT_MS));
	EXPECT_EQ(-ESRCH, timeline_fence_status(self->fd, a.syncobj, 1));

	off = self->cs.len;
	ASSERT_EQ(0, cmds_sem(&self->cs, false, 9, 1));
	job_at(self, &jc, off, self->cs.len - off);
	ASSERT_EQ(0, submit_jobs(self->fd, c.queue_id, &jc, 1));
	ASSERT_EQ(0, syncobj_wait_point(self->fd, a.syncobj, 1, WAIT_MS));
	ASSERT_EQ(0, syncobj_wait_point(self->fd, c.syncobj, 1, WAIT_MS));
	EXPECT_EQ(0, data32(self)[10]);
	EXPECT_EQ(-ESRCH, timeline_fence_status(self->fd, a.syncobj, 1));
}

/* A job listing no buffers at all may still run (its memory is mapped). */
TEST_F(exec, job_without_bo_list)
{
	struct drm_trn_job j;

	ASSERT_EQ(0, write_job(self, &j, 3, 33));
	j.bo_handles = 0;
	j.bo_count = 0;
	ASSERT_EQ(0, submit_jobs(self->fd, self->q.queue_id, &j, 1));
	ASSERT_EQ(0, syncobj_wait_point(self->fd, self->q.syncobj, j.seqno,
					WAIT_MS));
	EXPECT_EQ(33, data32(self)[3]);
}

/*
 * Jobs that can be read but whose seqno cannot be written: the call fails
 * with EFAULT before anything is queued (the numbers go back before the
 * first job is armed).
 */
TEST_F(exec, submit_jobs_read_only)
{
	struct drm_trn_submit s;
	struct drm_trn_job *ro;

	ro = mmap(NULL, self->page, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_EQ(0, write_job(self, &ro[0], 0, 1));
	ASSERT_EQ(0, write_job(self, &ro[1], 1, 2));
	ASSERT_EQ(0, mprotect(ro, self->page, PROT_READ));
	s = submit_of(self->q.queue_id, ro, 2);
	EXPECT_EQ(0, fails_cleanly(self->fd, self->q.queue_id, &s, EFAULT));
	EXPECT_EQ(0, ro[0].seqno);
	EXPECT_EQ(0, ro[1].seqno);
	EXPECT_EQ(0, nothing_ran(self, 1));
	munmap(ro, self->page);
}

/*
 * The submit structure itself is only read (DRM_IOW): in read-only
 * memory the call succeeds, and says so, instead of reporting EFAULT
 * for jobs it queued (the DRM core's copy-back of a read/write ioctl).
 */
TEST_F(exec, submit_struct_read_only)
{
	struct drm_trn_submit *s;
	struct drm_trn_job j;

	ASSERT_EQ(0, write_job(self, &j, 5, 0x55));
	s = mmap(NULL, self->page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, s);
	*s = submit_of(self->q.queue_id, &j, 1);
	ASSERT_EQ(0, mprotect(s, self->page, PROT_READ));
	ASSERT_EQ(0, raw_ioctl(self->fd, DRM_IOCTL_TRN_SUBMIT, s));
	EXPECT_EQ(1, j.seqno);
	EXPECT_EQ(1, queue_submitted(self->fd, self->q.queue_id));
	ASSERT_EQ(0, syncobj_wait_point(self->fd, self->q.syncobj, 1, WAIT_MS));
	EXPECT_EQ(0x55, data32(self)[5]);
	munmap(s, self->page);
}

TEST_HARNESS_MAIN
