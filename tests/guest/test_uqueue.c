// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * User-mode queues through the raw uAPI (DRM_TRN_QUEUE_USER_MODE,
 * DRM_IOCTL_TRN_QUEUE_FENCE, DRM_IOCTL_TRN_QUEUE_WAKE), on a simulated
 * device of its own (id 53: 2 cores, 16 MiB) made with job_timeout_ms at
 * TIMEOUT_MS: creation and every field's negative case, jobs written into
 * the mapped ring and announced by the write pointer with no system call,
 * the device's checks of descriptors, failures in the completion record
 * and the queue status, memory waits across queues, fences (in order,
 * errors, the queue's own timeline, bounded by the watchdog), bans,
 * destroying and closing with work pending, and removing the device.
 */
#include <poll.h>
#include <pthread.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "trn_test.h"
#include "trnhal.h"

#define DEV		53
#define TIMEOUT_MS	500
#define WAIT_MS		60000	/* for anything that must end */
#define HANG_SEM	201	/* never signalled */

/* A user-mode queue of the test's file, mapped. */
struct uq {
	struct drm_trn_queue_create qc;
	struct drm_trn_user_desc *ring;
	volatile struct drm_trn_doorbell *db;
	const volatile struct drm_trn_queue_status_page *page;
	uint64_t ring_size;
	uint64_t status_va;
	uint64_t wptr;
	unsigned int wakes;
};

static int uq_create(int fd, uint32_t core, uint32_t entries, struct uq *q)
{
	struct drm_trn_bo_info bi;
	void *p;
	int ret;

	memset(q, 0, sizeof(*q));
	q->qc.core = core;
	q->qc.priority = DRM_TRN_PRIORITY_NORMAL;
	q->qc.flags = DRM_TRN_QUEUE_USER_MODE;
	q->qc.ring_entries = entries;
	ret = raw_ioctl(fd, DRM_IOCTL_TRN_QUEUE_CREATE, &q->qc);
	if (ret)
		return ret;
	if (bo_info(fd, q->qc.ring_handle, &bi))
		return -EIO;
	q->ring_size = bi.size;
	p = mmap(NULL, bi.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)bi.mmap_offset);
	if (p == MAP_FAILED)
		return -errno;
	q->ring = p;
	if (bo_info(fd, q->qc.doorbell_handle, &bi))
		return -EIO;
	p = mmap(NULL, bi.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)bi.mmap_offset);
	if (p == MAP_FAILED)
		return -errno;
	q->db = p;
	q->page = status_page_map(fd, q->qc.status_handle);
	if (!q->page)
		return -EIO;
	if (bo_info(fd, q->qc.status_handle, &bi))
		return -EIO;
	q->status_va = bi.va;
	return 0;
}

static void uq_unmap(struct uq *q)
{
	if (q->ring)
		munmap(q->ring, q->ring_size);
	if (q->db)
		munmap((void *)q->db, TEST_PAGE);
	if (q->page)
		munmap((void *)q->page, TEST_PAGE);
	q->ring = NULL;
	q->db = NULL;
	q->page = NULL;
}

static void uq_destroy(int fd, struct uq *q)
{
	queue_destroy(fd, q->qc.queue_id);
	syncobj_destroy(fd, q->qc.syncobj);
	uq_unmap(q);
}

static int uq_wake(int fd, uint32_t queue_id, uint32_t flags)
{
	struct drm_trn_queue_wake w = { .queue_id = queue_id, .flags = flags };

	return raw_ioctl(fd, DRM_IOCTL_TRN_QUEUE_WAKE, &w);
}

/* Announce everything written up to @q->wptr; wake the device if asked. */
static int uq_ring(int fd, struct uq *q)
{
	__atomic_store_n(&q->db->wptr, q->wptr, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!(q->db->flags & DRM_TRN_DOORBELL_NEED_WAKEUP))
		return 0;
	q->wakes++;
	return uq_wake(fd, q->qc.queue_id, 0);
}

/* Write the next job's descriptor (not announced); its number. */
static uint64_t uq_put(struct uq *q, uint64_t cmd_va, uint32_t cmd_size,
		       uint32_t flags, uint64_t wait_va, uint64_t wait_value)
{
	uint64_t seqno = ++q->wptr;
	struct drm_trn_user_desc *d =
		&q->ring[seqno & (q->qc.ring_entries - 1)];

	d->cmd_va = cmd_va;
	d->cmd_size = cmd_size;
	d->flags = flags;
	d->wait_va = wait_va;
	d->wait_value = wait_value;
	return seqno;
}

static uint64_t uq_completed(const struct uq *q)
{
	return __atomic_load_n(&q->page->completed_seqno, __ATOMIC_ACQUIRE);
}

/* Wait (polling the mapped record) until job @seqno completed. */
static int uq_wait(const struct uq *q, uint64_t seqno, int ms)
{
	int64_t end = mono_ns() + (int64_t)ms * 1000000;

	while (uq_completed(q) < seqno) {
		if (mono_ns() > end)
			return -ETIME;
		usleep(100);
	}
	return 0;
}

/* The failure entry of job @seqno in the record: its status, or -1. */
static int uq_failure(const struct uq *q, uint64_t seqno, uint32_t *error)
{
	uint64_t n = q->page->failed_count, k;

	for (k = 0; k < n && k < DRM_TRN_STATUS_PAGE_FAILURES; k++) {
		const volatile struct drm_trn_job_failure *f =
			&q->page->failures[(n - 1 - k) %
					   DRM_TRN_STATUS_PAGE_FAILURES];

		if (f->seqno == seqno) {
			if (error)
				*error = f->error;
			return (int)f->status;
		}
	}
	return -1;
}

static int uq_fence(int fd, uint32_t queue_id, uint32_t flags,
		    uint64_t seqno, uint32_t syncobj, uint64_t point)
{
	struct drm_trn_queue_fence f = {
		.queue_id = queue_id,
		.flags = flags,
		.seqno = seqno,
		.syncobj = syncobj,
		.point = point,
	};

	return raw_ioctl(fd, DRM_IOCTL_TRN_QUEUE_FENCE, &f);
}

/* The error of a binary syncobj's fence: 1 signalled fine, 0 pending. */
static int binary_status(int fd, uint32_t handle)
{
	return syncobj_fence_status(fd, handle);
}

FIXTURE(uq)
{
	int fd;
	struct host_bo cmd, data;
	struct cmds cs;
	uint64_t nop_va;
};

FIXTURE_SETUP(uq)
{
	struct drm_trn_device_info info;
	int ret;

	self->fd = -1;
	if (!sim_available())
		SKIP(return, "trn_sim is not loaded");
	if (sim_exists(DEV))
		sim_del(DEV);
	ASSERT_EQ(0, debugfs_ready());
	ret = sim_new_timeout(DEV, 2, 16, 1, TIMEOUT_MS);
	ASSERT_EQ(0, ret) TH_LOG("device %u: %s", DEV, strerror(-ret));
	self->fd = sim_open(DEV);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, query_info(self->fd, &info));
	if (!(info.capabilities & DRM_TRN_CAP_USER_QUEUES))
		SKIP(return, "the device has no user-mode queues");
	ASSERT_EQ(0, host_bo_new(self->fd, 64 * 1024, &self->cmd));
	ASSERT_EQ(0, host_bo_new(self->fd, 64 * 1024, &self->data));
	cmds_init(&self->cs, self->cmd.map, self->cmd.va, self->cmd.size);
	ASSERT_EQ(0, cmds_nop(&self->cs));
	self->nop_va = self->cs.va;
}

FIXTURE_TEARDOWN(uq)
{
	if (self->fd >= 0) {
		host_bo_free(self->fd, &self->cmd);
		host_bo_free(self->fd, &self->data);
		close(self->fd);
	}
	if (sim_exists(DEV))
		sim_del(DEV);
}

/* Record a WRITE of @value to data + @off as its own command buffer. */
static uint64_t put_write(FIXTURE_DATA(uq) *self, uint64_t off,
			  uint64_t value, uint32_t *size)
{
	uint64_t va = cmds_tail_va(&self->cs);

	if (cmds_write64(&self->cs, self->data.va + off, value))
		return 0;
	*size = (uint32_t)(cmds_tail_va(&self->cs) - va);
	return va;
}

TEST_F(uq, device_offers_them)
{
	struct drm_trn_device_info info;

	ASSERT_EQ(0, query_info(self->fd, &info));
	EXPECT_TRUE(info.capabilities & DRM_TRN_CAP_USER_QUEUES);
	EXPECT_EQ(256, info.user_queues);
	EXPECT_LE(6, info.uapi_minor);
}

TEST_F(uq, create_maps_ring_doorbell_and_record)
{
	struct drm_trn_bo_info bi;
	struct uq q;
	void *p;

	ASSERT_EQ(0, uq_create(self->fd, 1, 0, &q));
	EXPECT_EQ(DRM_TRN_USER_RING_DEFAULT, q.qc.ring_entries);
	EXPECT_NE(0, q.qc.ring_handle);
	EXPECT_NE(0, q.qc.doorbell_handle);
	EXPECT_NE(0, q.qc.status_handle);
	EXPECT_EQ(DRM_TRN_USER_RING_DEFAULT * sizeof(struct drm_trn_user_desc),
		  q.ring_size);
	EXPECT_EQ(0, q.db->wptr);
	EXPECT_EQ(0, uq_completed(&q));
	/* The record is the device's to write. */
	ASSERT_EQ(0, bo_info(self->fd, q.qc.status_handle, &bi));
	p = mmap(NULL, bi.size, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 (off_t)bi.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	if (p != MAP_FAILED)
		munmap(p, bi.size);
	/* None of the three leaves the process. */
	{
		struct drm_prime_handle h = {
			.handle = q.qc.ring_handle,
			.flags = DRM_CLOEXEC,
		};

		EXPECT_EQ(-EOPNOTSUPP,
			  raw_ioctl(self->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &h));
		h.handle = q.qc.doorbell_handle;
		EXPECT_EQ(-EOPNOTSUPP,
			  raw_ioctl(self->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &h));
	}
	uq_destroy(self->fd, &q);

	ASSERT_EQ(0, uq_create(self->fd, 0, 16, &q));
	EXPECT_EQ(16, q.qc.ring_entries);
	EXPECT_EQ(TEST_PAGE, q.ring_size);
	uq_destroy(self->fd, &q);
}

TEST_F(uq, create_refuses_bad_fields)
{
	struct drm_trn_queue_create c;

#define TRY(errno_, ...) do {						\
		memset(&c, 0, sizeof(c));				\
		c.priority = DRM_TRN_PRIORITY_NORMAL;			\
		c.flags = DRM_TRN_QUEUE_USER_MODE;			\
		__VA_ARGS__;						\
		EXPECT_EQ(errno_,					\
			  raw_ioctl(self->fd, DRM_IOCTL_TRN_QUEUE_CREATE, &c)); \
	} while (0)

	TRY(-EINVAL, c.ring_entries = 24);
	TRY(-EINVAL, c.ring_entries = 8);
	TRY(-EINVAL, c.ring_entries = 131072);
	TRY(-EINVAL, c.ring_entries = 1U << 31);
	TRY(-EINVAL, c.ring_handle = 1);
	TRY(-EINVAL, c.doorbell_handle = 1);
	TRY(-EINVAL, c.pad = 1);
	TRY(-EINVAL, c.flags |= 2);
	TRY(-EINVAL, c.flags = 1U << 31);
	TRY(-EINVAL, c.core = 2);
	TRY(-EINVAL, c.priority = 3);
	/* ring_entries belongs to user-mode queues only. */
	TRY(-EINVAL, c.flags = 0; c.ring_entries = 16);
	TRY(-EINVAL, c.flags = 0; c.ring_handle = 1);
#undef TRY
	/* Nothing was left behind by the refusals. */
	{
		uint64_t queues;

		ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-queues", &queues));
		EXPECT_EQ(0, queues);
	}
}

TEST_F(uq, kernel_submission_is_refused)
{
	struct drm_trn_job j;
	struct uq q;

	ASSERT_EQ(0, uq_create(self->fd, 0, 16, &q));
	job_init(&j, self->nop_va, 8);
	EXPECT_EQ(-EINVAL, submit_jobs(self->fd, q.qc.queue_id, &j, 1));
	EXPECT_EQ(0, j.seqno);
	uq_destroy(self->fd, &q);
}

TEST_F(uq, jobs_run_in_order_without_system_calls)
{
	const uint64_t *ts = self->data.map;
	struct drm_trn_queue_status st;
	uint64_t seqno = 0, va;
	unsigned int i;
	struct uq q;

	/* 16 slots, 200 jobs: the ring wraps many times. */
	ASSERT_EQ(0, uq_create(self->fd, 1, 16, &q));
	for (i = 0; i < 200; i++) {
		/* A slot is free once its previous job completed. */
		if (q.wptr >= uq_completed(&q) + 16) {
			ASSERT_EQ(0, uq_ring(self->fd, &q));
			ASSERT_EQ(0, uq_wait(&q, q.wptr - 15, WAIT_MS));
		}
		va = cmds_tail_va(&self->cs);
		ASSERT_EQ(0, cmds_timestamp(&self->cs, self->data.va + 8 * i));
		seqno = uq_put(&q, va, (uint32_t)(cmds_tail_va(&self->cs) - va),
			       0, 0, 0);
	}
	ASSERT_EQ(0, uq_ring(self->fd, &q));
	ASSERT_EQ(0, uq_wait(&q, seqno, WAIT_MS));
	EXPECT_EQ(200, seqno);
	/* Each job started after the one before it finished. */
	for (i = 1; i < 200; i++)
		ASSERT_LE(ts[i - 1], ts[i]) TH_LOG("job %u", i + 1);
	EXPECT_NE(0, ts[0]);
	EXPECT_EQ(0, q.page->failed_count);

	ASSERT_EQ(0, queue_status(self->fd, q.qc.queue_id, &st));
	EXPECT_EQ(200, st.completed_seqno);
	EXPECT_EQ(200, st.submitted_seqno);
	EXPECT_EQ(0, st.jobs_failed);
	EXPECT_EQ(0, st.state);
	EXPECT_EQ(0, q.page->state);
	uq_destroy(self->fd, &q);
}

TEST_F(uq, a_burst_runs_with_few_wakeups)
{
	uint64_t *out = self->data.map, seqno = 0;
	uint32_t size[64];
	uint64_t va[64];
	unsigned int i;
	struct uq q;

	ASSERT_EQ(0, uq_create(self->fd, 0, 1024, &q));
	self->cs.len = 8;
	for (i = 0; i < 64; i++) {
		va[i] = put_write(self, 8 * i, 1000 + i, &size[i]);
		ASSERT_NE(0, va[i]);
	}
	for (i = 0; i < 1000; i++)
		seqno = uq_put(&q, va[i % 64], size[i % 64], 0, 0, 0);
	ASSERT_EQ(0, uq_ring(self->fd, &q));
	ASSERT_EQ(0, uq_wait(&q, seqno, WAIT_MS));
	for (i = 0; i < 64; i++)
		EXPECT_EQ(1000 + i, out[i]);
	/* One announcement, so at most one wake-up. */
	EXPECT_GE(1, q.wakes);
	uq_destroy(self->fd, &q);
}

TEST_F(uq, the_device_checks_descriptors)
{
	struct drm_trn_queue_status st;
	uint64_t bad[6], ok;
	uint32_t error;
	struct uq q;

	ASSERT_EQ(0, uq_create(self->fd, 0, 16, &q));
	bad[0] = uq_put(&q, self->nop_va, 8, 1U << 5, 0, 0);
	bad[1] = uq_put(&q, self->nop_va, 8, 0, self->data.va, 0);
	bad[2] = uq_put(&q, self->nop_va, 8, 0, 0, 7);
	bad[3] = uq_put(&q, self->nop_va + 4, 8, 0, 0, 0);
	bad[4] = uq_put(&q, self->nop_va, 0, 0, 0, 0);
	bad[5] = uq_put(&q, self->nop_va, 12, 0, 0, 0);
	ok = uq_put(&q, self->nop_va, 8, 0, 0, 0);
	ASSERT_EQ(0, uq_ring(self->fd, &q));
	ASSERT_EQ(0, uq_wait(&q, ok, WAIT_MS));

	EXPECT_EQ(DRM_TRN_STATUS_BAD_ARG, uq_failure(&q, bad[0], &error));
	EXPECT_EQ(EILSEQ, error);
	EXPECT_EQ(DRM_TRN_STATUS_BAD_ARG, uq_failure(&q, bad[1], NULL));
	EXPECT_EQ(DRM_TRN_STATUS_BAD_ARG, uq_failure(&q, bad[2], NULL));
	EXPECT_EQ(DRM_TRN_STATUS_BAD_ALIGN, uq_failure(&q, bad[3], NULL));
	EXPECT_EQ(DRM_TRN_STATUS_BAD_SIZE, uq_failure(&q, bad[4], NULL));
	EXPECT_EQ(DRM_TRN_STATUS_BAD_SIZE, uq_failure(&q, bad[5], NULL));
	EXPECT_EQ(-1, uq_failure(&q, ok, NULL));
	EXPECT_EQ(6, q.page->failed_count);

	ASSERT_EQ(0, queue_status(self->fd, q.qc.queue_id, &st));
	EXPECT_EQ(6, st.jobs_failed);
	EXPECT_EQ(bad[5], st.failed_seqno);
	EXPECT_EQ(DRM_TRN_STATUS_BAD_SIZE, st.status);
	EXPECT_EQ(EILSEQ, st.error);
	EXPECT_EQ(0, st.state & DRM_TRN_QUEUE_BANNED);
	uq_destroy(self->fd, &q);
}

TEST_F(uq, a_fault_is_the_jobs_alone)
{
	struct drm_trn_queue_status st;
	uint64_t *out = self->data.map;
	uint64_t bad, good, va, faults0, faults;
	uint32_t size, error;
	struct uq q;

	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-mmu-faults", &faults0));
	ASSERT_EQ(0, uq_create(self->fd, 1, 16, &q));
	/* A WRITE outside every mapping, then a good one. */
	va = cmds_tail_va(&self->cs);
	ASSERT_EQ(0, cmds_write64(&self->cs, 0x7f0000000000ULL, 1));
	bad = uq_put(&q, va, (uint32_t)(cmds_tail_va(&self->cs) - va), 0, 0, 0);
	va = put_write(self, 16, 77, &size);
	good = uq_put(&q, va, size, 0, 0, 0);
	ASSERT_EQ(0, uq_ring(self->fd, &q));
	ASSERT_EQ(0, uq_wait(&q, good, WAIT_MS));

	EXPECT_EQ(DRM_TRN_STATUS_MMU_FAULT, uq_failure(&q, bad, &error));
	EXPECT_EQ(EFAULT, error);
	EXPECT_EQ(77, out[2]);
	ASSERT_EQ(0, queue_status(self->fd, q.qc.queue_id, &st));
	EXPECT_EQ(bad, st.failed_seqno);
	EXPECT_EQ(DRM_TRN_STATUS_MMU_FAULT, st.status);
	EXPECT_EQ(0x7f0000000000ULL, st.fault_va);
	EXPECT_TRUE(st.state & DRM_TRN_QUEUE_FAULTED);
	ASSERT_EQ(0, fdinfo_u64(self->fd, "trn-mmu-faults", &faults));
	EXPECT_EQ(faults0 + 1, faults);
	uq_destroy(self->fd, &q);
}

TEST_F(uq, a_job_waits_for_memory_and_for_another_queue)
{
	uint64_t *flag = (uint64_t *)self->data.map + 100;
	uint64_t *out = self->data.map;
	uint64_t a1, b1, va;
	uint32_t size;
	struct uq a, b;

	ASSERT_EQ(0, uq_create(self->fd, 0, 16, &a));
	ASSERT_EQ(0, uq_create(self->fd, 1, 16, &b));
	/* A's job waits for the CPU; B's waits for A's job. */
	*flag = 0;
	va = put_write(self, 0, 11, &size);
	a1 = uq_put(&a, va, size, DRM_TRN_USER_DESC_WAIT,
		    self->data.va + 800, 5);
	va = put_write(self, 0, 22, &size);
	b1 = uq_put(&b, va, size, DRM_TRN_USER_DESC_WAIT,
		    a.status_va + offsetof(struct drm_trn_queue_status_page,
					   completed_seqno), a1);
	ASSERT_EQ(0, uq_ring(self->fd, &b));
	ASSERT_EQ(0, uq_ring(self->fd, &a));
	usleep(50000);
	EXPECT_EQ(0, uq_completed(&a));
	EXPECT_EQ(0, uq_completed(&b));
	EXPECT_EQ(0, out[0]);

	/* A value below the wait is not enough. */
	__atomic_store_n(flag, 4, __ATOMIC_RELEASE);
	usleep(50000);
	EXPECT_EQ(0, uq_completed(&a));

	__atomic_store_n(flag, 5, __ATOMIC_RELEASE);
	ASSERT_EQ(0, uq_wait(&b, b1, WAIT_MS));
	EXPECT_EQ(a1, uq_completed(&a));
	/* B ran after A: its value is the one left. */
	EXPECT_EQ(22, out[0]);

	/* A wait on memory the context cannot reach faults the job. */
	b1 = uq_put(&b, self->nop_va, 8, DRM_TRN_USER_DESC_WAIT,
		    0x7f0000000000ULL, 1);
	ASSERT_EQ(0, uq_ring(self->fd, &b));
	ASSERT_EQ(0, uq_wait(&b, b1, WAIT_MS));
	EXPECT_EQ(DRM_TRN_STATUS_MMU_FAULT, uq_failure(&b, b1, NULL));
	uq_destroy(self->fd, &a);
	uq_destroy(self->fd, &b);
}

TEST_F(uq, fence_refuses_bad_fields)
{
	struct drm_trn_queue_create kq;
	uint32_t so;
	struct uq q;

	ASSERT_EQ(0, uq_create(self->fd, 0, 16, &q));
	ASSERT_EQ(0, syncobj_create(self->fd, 0, &so));
	uq_put(&q, self->nop_va, 8, 0, 0, 0);
	ASSERT_EQ(0, uq_ring(self->fd, &q));

	EXPECT_EQ(-EINVAL, uq_fence(self->fd, q.qc.queue_id, 0, 0, so, 0));
	EXPECT_EQ(-EINVAL, uq_fence(self->fd, q.qc.queue_id, 0, 2, so, 0));
	EXPECT_EQ(-EINVAL, uq_fence(self->fd, q.qc.queue_id, 2, 1, so, 0));
	EXPECT_EQ(-EINVAL, uq_fence(self->fd, q.qc.queue_id, 1U << 31, 1, so,
				    0));
	EXPECT_EQ(-EINVAL, uq_fence(self->fd, q.qc.queue_id,
				    DRM_TRN_QUEUE_FENCE_OWN_TIMELINE, 1, so,
				    0));
	EXPECT_EQ(-EINVAL, uq_fence(self->fd, q.qc.queue_id,
				    DRM_TRN_QUEUE_FENCE_OWN_TIMELINE, 1, 0,
				    1));
	{
		struct drm_trn_queue_fence f = {
			.queue_id = q.qc.queue_id,
			.seqno = 1,
			.syncobj = so,
			.pad = 1,
		};

		EXPECT_EQ(-EINVAL,
			  raw_ioctl(self->fd, DRM_IOCTL_TRN_QUEUE_FENCE, &f));
	}
	EXPECT_EQ(-ENOENT, uq_fence(self->fd, q.qc.queue_id + 100, 0, 1, so,
				    0));
	EXPECT_EQ(-ENOENT, uq_fence(self->fd, q.qc.queue_id, 0, 1, so + 100,
				    0));
	/* A kernel queue has no write pointer to fence. */
	ASSERT_EQ(0, queue_create(self->fd, 0, DRM_TRN_PRIORITY_NORMAL, &kq));
	EXPECT_EQ(-EINVAL, uq_fence(self->fd, kq.queue_id, 0, 1, so, 0));
	EXPECT_EQ(-EINVAL, uq_wake(self->fd, kq.queue_id, 0));
	EXPECT_EQ(-EINVAL, uq_wake(self->fd, q.qc.queue_id, 1));
	EXPECT_EQ(-ENOENT, uq_wake(self->fd, q.qc.queue_id + 100, 0));
	EXPECT_EQ(0, uq_wake(self->fd, q.qc.queue_id, 0));
	queue_destroy(self->fd, kq.queue_id);
	syncobj_destroy(self->fd, kq.syncobj);

	/* None of the refusals put a fence in the syncobj. */
	EXPECT_EQ(-1000 - EINVAL, binary_status(self->fd, so));
	syncobj_destroy(self->fd, so);
	uq_destroy(self->fd, &q);
}

TEST_F(uq, fences_signal_in_order_with_errors)
{
	uint64_t *flag = (uint64_t *)self->data.map + 100;
	uint64_t j1, j2, j3, va;
	uint32_t so1, so2, so3;
	struct uq q;

	ASSERT_EQ(0, uq_create(self->fd, 1, 16, &q));
	ASSERT_EQ(0, syncobj_create(self->fd, 0, &so1));
	ASSERT_EQ(0, syncobj_create(self->fd, 0, &so2));
	ASSERT_EQ(0, syncobj_create(self->fd, 0, &so3));
	*flag = 0;
	/* Job 1 waits for the CPU, job 2 faults, job 3 is fine. */
	j1 = uq_put(&q, self->nop_va, 8, DRM_TRN_USER_DESC_WAIT,
		    self->data.va + 800, 1);
	va = cmds_tail_va(&self->cs);
	ASSERT_EQ(0, cmds_write64(&self->cs, 0x7f0000000000ULL, 1));
	j2 = uq_put(&q, va, (uint32_t)(cmds_tail_va(&self->cs) - va), 0, 0, 0);
	j3 = uq_put(&q, self->nop_va, 8, 0, 0, 0);
	/* Announced but not rung: the fence call wakes the device itself. */
	__atomic_store_n(&q.db->wptr, q.wptr, __ATOMIC_RELEASE);
	ASSERT_EQ(0, uq_fence(self->fd, q.qc.queue_id, 0, j3, so3, 0));
	ASSERT_EQ(0, uq_fence(self->fd, q.qc.queue_id, 0, j1, so1, 0));
	ASSERT_EQ(0, uq_fence(self->fd, q.qc.queue_id, 0, j2, so2, 0));
	usleep(50000);
	EXPECT_EQ(0, binary_status(self->fd, so1));
	EXPECT_EQ(0, binary_status(self->fd, so3));

	__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, syncobj_wait_point(self->fd, so3, 0, WAIT_MS));
	EXPECT_EQ(1, binary_status(self->fd, so1));
	EXPECT_EQ(-EFAULT, binary_status(self->fd, so2));
	EXPECT_EQ(1, binary_status(self->fd, so3));

	/* A fence for a job already done is signalled at once, its error too. */
	ASSERT_EQ(0, uq_fence(self->fd, q.qc.queue_id, 0, j2, so1, 0));
	EXPECT_EQ(-EFAULT, binary_status(self->fd, so1));
	syncobj_destroy(self->fd, so1);
	syncobj_destroy(self->fd, so2);
	syncobj_destroy(self->fd, so3);
	uq_destroy(self->fd, &q);
}

TEST_F(uq, the_queues_own_timeline_grows_only)
{
	uint64_t *flag = (uint64_t *)self->data.map + 100;
	uint64_t j1, j2, point = 0;
	struct uq q;

	ASSERT_EQ(0, uq_create(self->fd, 0, 16, &q));
	*flag = 0;
	j1 = uq_put(&q, self->nop_va, 8, DRM_TRN_USER_DESC_WAIT,
		    self->data.va + 800, 1);
	j2 = uq_put(&q, self->nop_va, 8, 0, 0, 0);
	ASSERT_EQ(0, uq_ring(self->fd, &q));
	ASSERT_EQ(0, uq_fence(self->fd, q.qc.queue_id,
			      DRM_TRN_QUEUE_FENCE_OWN_TIMELINE, j2, 0, 0));
	/* An earlier point after a later one adds nothing. */
	ASSERT_EQ(0, uq_fence(self->fd, q.qc.queue_id,
			      DRM_TRN_QUEUE_FENCE_OWN_TIMELINE, j1, 0, 0));
	ASSERT_EQ(0, syncobj_query(self->fd, q.qc.syncobj, &point));
	EXPECT_EQ(0, point);
	EXPECT_EQ(-ETIME, syncobj_wait_point(self->fd, q.qc.syncobj, j2, 20));

	__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, syncobj_wait_point(self->fd, q.qc.syncobj, j2, WAIT_MS));
	ASSERT_EQ(0, syncobj_query(self->fd, q.qc.syncobj, &point));
	EXPECT_EQ(j2, point);
	EXPECT_EQ(1, timeline_fence_status(self->fd, q.qc.syncobj, j2));
	uq_destroy(self->fd, &q);
}

TEST_F(uq, a_hang_is_bounded_by_the_watchdog)
{
	struct drm_trn_queue_status st;
	uint64_t hung, after, va;
	uint32_t so, size;
	int64_t t0, dt;
	struct uq q, r;

	ASSERT_EQ(0, uq_create(self->fd, 0, 16, &q));
	ASSERT_EQ(0, syncobj_create(self->fd, 0, &so));
	/* Hangs on a semaphore nobody signals; the next job is behind it. */
	va = cmds_tail_va(&self->cs);
	ASSERT_EQ(0, cmds_sem(&self->cs, true, HANG_SEM, 1));
	hung = uq_put(&q, va, (uint32_t)(cmds_tail_va(&self->cs) - va), 0, 0, 0);
	va = put_write(self, 0, 5, &size);
	after = uq_put(&q, va, size, 0, 0, 0);
	ASSERT_EQ(0, uq_ring(self->fd, &q));
	t0 = mono_ns();
	ASSERT_EQ(0, uq_fence(self->fd, q.qc.queue_id, 0, after, so, 0));
	ASSERT_EQ(0, syncobj_wait_point(self->fd, so, 0, WAIT_MS));
	dt = (mono_ns() - t0) / 1000000;
	/* One timeout, a quarter more for the watchdog's period, and slack. */
	EXPECT_LE(TIMEOUT_MS, dt);
	EXPECT_GT(20 * TIMEOUT_MS, dt);
	EXPECT_EQ(-ECANCELED, binary_status(self->fd, so));
	EXPECT_EQ(DRM_TRN_STATUS_TIMEOUT, uq_failure(&q, hung, NULL));
	EXPECT_EQ(DRM_TRN_STATUS_ABORTED, uq_failure(&q, after, NULL));
	EXPECT_EQ(0, ((uint64_t *)self->data.map)[0]);

	ASSERT_EQ(0, queue_status(self->fd, q.qc.queue_id, &st));
	EXPECT_TRUE(st.state & DRM_TRN_QUEUE_GUILTY);
	EXPECT_TRUE(st.state & DRM_TRN_QUEUE_BANNED);
	EXPECT_EQ(1, st.resets);
	/* The record says so too, for a submitter without system calls. */
	EXPECT_EQ(DRM_TRN_QUEUE_GUILTY | DRM_TRN_QUEUE_BANNED, q.page->state);

	/* Banned: later jobs complete as aborted, without running. */
	va = put_write(self, 8, 6, &size);
	after = uq_put(&q, va, size, 0, 0, 0);
	ASSERT_EQ(0, uq_ring(self->fd, &q));
	ASSERT_EQ(0, uq_wait(&q, after, WAIT_MS));
	EXPECT_EQ(DRM_TRN_STATUS_ABORTED, uq_failure(&q, after, NULL));
	EXPECT_EQ(0, ((uint64_t *)self->data.map)[1]);

	/* A queue made after the ban works. */
	ASSERT_EQ(0, uq_create(self->fd, 0, 16, &r));
	va = put_write(self, 16, 7, &size);
	after = uq_put(&r, va, size, 0, 0, 0);
	ASSERT_EQ(0, uq_ring(self->fd, &r));
	ASSERT_EQ(0, uq_wait(&r, after, WAIT_MS));
	EXPECT_EQ(7, ((uint64_t *)self->data.map)[2]);
	syncobj_destroy(self->fd, so);
	uq_destroy(self->fd, &q);
	uq_destroy(self->fd, &r);
}

TEST_F(uq, a_write_pointer_moved_back_cannot_hold_a_fence)
{
	uint64_t *flag = (uint64_t *)self->data.map + 100;
	uint64_t j1;
	uint32_t so;
	struct uq q;

	ASSERT_EQ(0, uq_create(self->fd, 1, 16, &q));
	ASSERT_EQ(0, syncobj_create(self->fd, 0, &so));
	*flag = 0;
	/* The first job waits for memory; a fence is made for the second. */
	uq_put(&q, self->nop_va, 8, DRM_TRN_USER_DESC_WAIT,
	       self->data.va + 800, 1);
	j1 = uq_put(&q, self->nop_va, 8, 0, 0, 0);
	ASSERT_EQ(0, uq_ring(self->fd, &q));
	ASSERT_EQ(0, uq_fence(self->fd, q.qc.queue_id, 0, j1, so, 0));
	/* Then taken back: the device never reaches the fenced job. */
	__atomic_store_n(&q.db->wptr, 0, __ATOMIC_RELEASE);
	ASSERT_EQ(0, syncobj_wait_point(self->fd, so, 0, WAIT_MS));
	EXPECT_GT(0, binary_status(self->fd, so));
	syncobj_destroy(self->fd, so);
	uq_destroy(self->fd, &q);
}

TEST_F(uq, faults_ban_the_context)
{
	struct drm_trn_queue_status st = { 0 };
	uint64_t last = 0, va;
	unsigned int i;
	uint32_t size;
	struct uq q;

	ASSERT_EQ(0, uq_create(self->fd, 0, 64, &q));
	va = cmds_tail_va(&self->cs);
	ASSERT_EQ(0, cmds_write64(&self->cs, 0x7f0000000000ULL, 1));
	size = (uint32_t)(cmds_tail_va(&self->cs) - va);
	for (i = 0; i < 16; i++)
		uq_put(&q, va, size, 0, 0, 0);
	ASSERT_EQ(0, uq_ring(self->fd, &q));
	ASSERT_EQ(0, uq_wait(&q, 16, WAIT_MS));
	/* The ban follows the 16th fault; jobs after it are aborted. */
	for (i = 0; i < 50 && !(st.state & DRM_TRN_QUEUE_BANNED); i++) {
		ASSERT_EQ(0, queue_status(self->fd, q.qc.queue_id, &st));
		usleep(20000);
	}
	EXPECT_TRUE(st.state & DRM_TRN_QUEUE_BANNED);
	EXPECT_EQ(DRM_TRN_QUEUE_FAULTED | DRM_TRN_QUEUE_BANNED, q.page->state);
	last = uq_put(&q, self->nop_va, 8, 0, 0, 0);
	ASSERT_EQ(0, uq_ring(self->fd, &q));
	ASSERT_EQ(0, uq_wait(&q, last, WAIT_MS));
	EXPECT_EQ(DRM_TRN_STATUS_ABORTED, uq_failure(&q, last, NULL));
	uq_destroy(self->fd, &q);
}

TEST_F(uq, destroy_and_close_fail_pending_fences)
{
	uint64_t *flag = (uint64_t *)self->data.map + 100;
	uint32_t so, so2;
	uint64_t j;
	int fd2;
	struct uq q;

	*flag = 0;
	ASSERT_EQ(0, syncobj_create(self->fd, 0, &so));
	ASSERT_EQ(0, uq_create(self->fd, 0, 16, &q));
	j = uq_put(&q, self->nop_va, 8, DRM_TRN_USER_DESC_WAIT,
		   self->data.va + 800, 1);
	ASSERT_EQ(0, uq_ring(self->fd, &q));
	ASSERT_EQ(0, uq_fence(self->fd, q.qc.queue_id, 0, j, so, 0));
	EXPECT_EQ(0, queue_destroy(self->fd, q.qc.queue_id));
	EXPECT_EQ(-ESRCH, binary_status(self->fd, so));
	/* The record stays readable, the job never completed. */
	EXPECT_EQ(0, uq_completed(&q));
	syncobj_destroy(self->fd, q.qc.syncobj);
	uq_unmap(&q);

	/* A file closed with a pending fence another file holds. */
	fd2 = sim_open(DEV);
	ASSERT_LE(0, fd2);
	{
		struct host_bo cmd, data;
		struct cmds c;
		int sofd;

		ASSERT_EQ(0, host_bo_new(fd2, TEST_PAGE, &cmd));
		ASSERT_EQ(0, host_bo_new(fd2, TEST_PAGE, &data));
		cmds_init(&c, cmd.map, cmd.va, cmd.size);
		ASSERT_EQ(0, cmds_nop(&c));
		ASSERT_EQ(0, uq_create(fd2, 1, 16, &q));
		j = uq_put(&q, cmd.va, 8, DRM_TRN_USER_DESC_WAIT, data.va, 1);
		ASSERT_EQ(0, uq_ring(fd2, &q));
		ASSERT_EQ(0, syncobj_create(fd2, 0, &so2));
		ASSERT_EQ(0, uq_fence(fd2, q.qc.queue_id, 0, j, so2, 0));
		sofd = syncobj_export_sync_file(fd2, so2);
		ASSERT_LE(0, sofd);
		/* Pending until the file goes, buffers and all. */
		{
			struct pollfd p = { .fd = sofd, .events = POLLIN };

			EXPECT_EQ(0, poll(&p, 1, 50));
			munmap(cmd.map, cmd.size);
			munmap(data.map, data.size);
			uq_unmap(&q);
			close(fd2);
			EXPECT_EQ(1, poll(&p, 1, WAIT_MS));
		}
		close(sofd);
	}
	syncobj_destroy(self->fd, so);
}

TEST_F(uq, the_device_runs_a_bounded_number)
{
	struct drm_trn_queue_create c;
	static struct uq qs[256];
	int fd2, fd3;
	unsigned int i, n = 0;

	fd2 = sim_open(DEV);
	ASSERT_LE(0, fd2);
	/* 255 in one file (256 queues a file), one in another... */
	for (i = 0; i < 255; i++) {
		memset(&c, 0, sizeof(c));
		c.core = i % 2;
		c.priority = DRM_TRN_PRIORITY_NORMAL;
		c.flags = DRM_TRN_QUEUE_USER_MODE;
		c.ring_entries = 16;
		ASSERT_EQ(0, raw_ioctl(self->fd, DRM_IOCTL_TRN_QUEUE_CREATE,
				       &c)) TH_LOG("queue %u", i);
		qs[n++].qc = c;
	}
	memset(&c, 0, sizeof(c));
	c.flags = DRM_TRN_QUEUE_USER_MODE;
	c.ring_entries = 16;
	ASSERT_EQ(0, raw_ioctl(fd2, DRM_IOCTL_TRN_QUEUE_CREATE, &c));
	/* ...and the device has no more; a kernel queue still works. */
	fd3 = sim_open(DEV);
	ASSERT_LE(0, fd3);
	memset(&c, 0, sizeof(c));
	c.flags = DRM_TRN_QUEUE_USER_MODE;
	EXPECT_EQ(-ENOSPC, raw_ioctl(fd3, DRM_IOCTL_TRN_QUEUE_CREATE, &c));
	memset(&c, 0, sizeof(c));
	EXPECT_EQ(0, raw_ioctl(fd3, DRM_IOCTL_TRN_QUEUE_CREATE, &c));
	/* Closing a file gives its numbers back. */
	close(fd2);
	memset(&c, 0, sizeof(c));
	c.flags = DRM_TRN_QUEUE_USER_MODE;
	c.ring_entries = 16;
	EXPECT_EQ(0, raw_ioctl(fd3, DRM_IOCTL_TRN_QUEUE_CREATE, &c));
	close(fd3);
	for (i = 0; i < n; i++) {
		queue_destroy(self->fd, qs[i].qc.queue_id);
		syncobj_destroy(self->fd, qs[i].qc.syncobj);
	}
}

/* Create and destroy user-mode queues in a loop (a thread of its own). */
struct churn {
	int fd;
	unsigned int rounds;
	int ret;
};

static void *churn_main(void *arg)
{
	struct churn *c = arg;
	unsigned int i;

	for (i = 0; i < c->rounds && !c->ret; i++) {
		struct drm_trn_queue_create q = {
			.core = i % 2,
			.priority = DRM_TRN_PRIORITY_NORMAL,
			.flags = DRM_TRN_QUEUE_USER_MODE,
			.ring_entries = 16,
		};

		c->ret = raw_ioctl(c->fd, DRM_IOCTL_TRN_QUEUE_CREATE, &q);
		if (!c->ret)
			c->ret = queue_destroy(c->fd, q.queue_id);
		if (!c->ret)
			c->ret = syncobj_destroy(c->fd, q.syncobj);
	}
	return NULL;
}

/*
 * A device number given back by one queue is taken at once by another:
 * never before the device let go of it (the fuzzer once saw EBUSY).
 */
TEST_F(uq, numbers_are_reused_only_when_free)
{
	struct churn c[3];
	pthread_t th[3];
	unsigned int i;

	for (i = 0; i < 3; i++) {
		c[i].fd = sim_open(DEV);
		ASSERT_LE(0, c[i].fd);
		c[i].rounds = 150;
		c[i].ret = 0;
	}
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, churn_main, &c[i]));
	for (i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		EXPECT_EQ(0, c[i].ret) TH_LOG("thread %u", i);
		close(c[i].fd);
	}
}

TEST_F(uq, removing_the_device_fails_what_is_pending)
{
	uint32_t so;
	uint64_t j;
	int sofd;
	struct uq q;

	ASSERT_EQ(0, uq_create(self->fd, 0, 16, &q));
	ASSERT_EQ(0, syncobj_create(self->fd, 0, &so));
	*((uint64_t *)self->data.map + 100) = 0;
	j = uq_put(&q, self->nop_va, 8, DRM_TRN_USER_DESC_WAIT,
		   self->data.va + 800, 1);
	ASSERT_EQ(0, uq_ring(self->fd, &q));
	ASSERT_EQ(0, uq_fence(self->fd, q.qc.queue_id, 0, j, so, 0));
	sofd = syncobj_export_sync_file(self->fd, so);
	ASSERT_LE(0, sofd);
	ASSERT_EQ(0, sim_del(DEV));
	{
		struct pollfd p = { .fd = sofd, .events = POLLIN };

		EXPECT_EQ(1, poll(&p, 1, WAIT_MS));
	}
	close(sofd);
	/* The record and the ring stay readable in the process. */
	EXPECT_EQ(0, uq_completed(&q));
	EXPECT_EQ(j, q.db->wptr);
	EXPECT_EQ(-ENODEV, uq_wake(self->fd, q.qc.queue_id, 0));
	uq_unmap(&q);
}

TEST_F(uq, a_runaway_write_pointer_costs_only_its_queue)
{
	uint64_t before, after, va;
	uint32_t size;
	struct uq q, r;

	ASSERT_EQ(0, uq_create(self->fd, 0, 16, &q));
	ASSERT_EQ(0, uq_create(self->fd, 0, 16, &r));
	/* Empty slots read as descriptors of size 0: each fails at once. */
	q.wptr = 1ULL << 40;
	ASSERT_EQ(0, uq_ring(self->fd, &q));
	usleep(20000);
	/* Another queue of the same core still runs. */
	va = put_write(self, 24, 9, &size);
	uq_put(&r, va, size, 0, 0, 0);
	ASSERT_EQ(0, uq_ring(self->fd, &r));
	ASSERT_EQ(0, uq_wait(&r, 1, WAIT_MS));
	EXPECT_EQ(9, ((uint64_t *)self->data.map)[3]);
	EXPECT_LT(1, uq_completed(&q));
	/* Destroying it stops the device at once. */
	uq_destroy(self->fd, &q);
	ASSERT_EQ(0, sim_debugfs_u64(DEV, "jobs_executed", &before));
	usleep(20000);
	ASSERT_EQ(0, sim_debugfs_u64(DEV, "jobs_executed", &after));
	EXPECT_EQ(before, after);
	uq_destroy(self->fd, &r);
}

/*
 * libtrnhal on user-mode queues: the kind it makes, and that the API means
 * what it means on a kernel queue (depth, device waits for another
 * queue's fences, buffers kept for the jobs that use them, bans).
 */
static int lib_job(trn_queue_t *q, trn_cmdbuf_t *cb, trn_bo_t *data,
		   const struct trn_fence *wait, struct trn_fence *f,
		   bool try)
{
	trn_bo_t *bos[2] = { trn_cmdbuf_bo(cb), data };
	struct trn_job j;

	memset(&j, 0, sizeof(j));
	j.cmd_va = trn_cmdbuf_va(cb);
	j.cmd_size = (uint32_t)trn_cmdbuf_size(cb);
	j.bos = bos;
	j.bo_count = data ? 2 : 1;
	j.waits = wait;
	j.wait_count = wait ? 1 : 0;
	return try ? trn_try_submit(q, &j, f) : trn_submit(q, &j, f);
}

TEST_F(uq, libtrnhal_keeps_its_meaning)
{
	trn_cmdbuf_t *gate, *nop, *wr, *hang;
	struct trn_fence f0, f1, f2, fh;
	struct trn_queue_status st;
	trn_queue_t *q, *q2, *kq;
	trn_bo_t *flag, *data;
	trn_device_t *dev;
	unsigned int minor, i;
	uint64_t *fm, *dm;
	int ret = 0;

	ASSERT_EQ(0, sim_minor(DEV, &minor));
	ASSERT_EQ(0, trn_device_open(minor, &dev));
	ASSERT_EQ(-EINVAL, trn_queue_create_flags(dev, 0, TRN_PRIORITY_NORMAL,
						  TRN_QUEUE_CREATE_KERNEL |
						  TRN_QUEUE_CREATE_USER, &q));
	ASSERT_EQ(-EINVAL, trn_queue_create_flags(dev, 0, TRN_PRIORITY_NORMAL,
						  4, &q));
	ASSERT_EQ(0, trn_queue_create(dev, 0, TRN_PRIORITY_NORMAL, &q));
	ASSERT_EQ(0, trn_queue_create_flags(dev, 1, TRN_PRIORITY_NORMAL,
					    TRN_QUEUE_CREATE_USER, &q2));
	ASSERT_EQ(0, trn_queue_create_flags(dev, 1, TRN_PRIORITY_NORMAL,
					    TRN_QUEUE_CREATE_KERNEL, &kq));
	EXPECT_EQ(1, trn_queue_is_user_mode(q));
	EXPECT_EQ(1, trn_queue_is_user_mode(q2));
	EXPECT_EQ(0, trn_queue_is_user_mode(kq));
	EXPECT_EQ(0, trn_queue_is_user_mode(NULL));

	ASSERT_EQ(0, trn_bo_create(dev, 4096, TRN_PLACEMENT_HOST, 0, 0, &flag));
	ASSERT_EQ(0, trn_bo_map(flag, (void **)&fm));
	ASSERT_EQ(0, trn_bo_create(dev, 4096, TRN_PLACEMENT_HOST, 0, 0, &data));
	ASSERT_EQ(0, trn_bo_map(data, (void **)&dm));
	fm[0] = 0;
	dm[0] = 0;
	ASSERT_EQ(0, trn_cmdbuf_create(dev, 0, &gate));
	ASSERT_EQ(0, trn_cmdbuf_create(dev, 0, &nop));
	ASSERT_EQ(0, trn_cmdbuf_create(dev, 0, &wr));
	ASSERT_EQ(0, trn_cmdbuf_create(dev, 0, &hang));
	/* A job that cannot finish until the CPU lets it: a semaphore. */
	ASSERT_EQ(0, trn_cmd_sem_wait(gate, 3, 1));
	ASSERT_EQ(0, trn_cmd_nop(nop));
	ASSERT_EQ(0, trn_cmd_write64(wr, trn_bo_va(data), 0x600d));

	/*
	 * q2's job waits for q's gate (a device wait, the submission returns
	 * at once) and writes into a buffer freed right after: the library
	 * keeps it for the job.
	 */
	ASSERT_EQ(0, lib_job(q, gate, NULL, NULL, &f0, false));
	ASSERT_EQ(0, lib_job(q2, wr, data, &f0, &f1, false));
	EXPECT_EQ(1, trn_fence_status(&f1));
	trn_bo_unmap(data);
	trn_bo_free(data);
	/* Depth: the ring behind the gate fills; a try says so, unchanged. */
	for (i = 1; i < 1024 && !ret; i++)
		ret = lib_job(q, nop, NULL, NULL, &f2, true);
	EXPECT_EQ(0, ret);
	EXPECT_EQ(-EAGAIN, lib_job(q, nop, NULL, NULL, NULL, true));
	EXPECT_EQ(1024, trn_queue_last_seqno(q));

	/* Let the gate go: a semaphore signal from a kernel queue. */
	{
		trn_cmdbuf_t *sig;

		ASSERT_EQ(0, trn_cmdbuf_create(dev, 0, &sig));
		ASSERT_EQ(0, trn_cmd_sem_signal(sig, 3, 1));
		/* Same context, same core: q's core is 0. */
		trn_queue_destroy(kq);
		ASSERT_EQ(0, trn_queue_create_flags(dev, 0,
						    TRN_PRIORITY_NORMAL,
						    TRN_QUEUE_CREATE_KERNEL,
						    &kq));
		ASSERT_EQ(0, lib_job(kq, sig, NULL, NULL, NULL, false));
		ASSERT_EQ(0, trn_queue_wait_idle(q, trn_now_ns() +
						    WAIT_MS * 1000000LL));
		trn_cmdbuf_destroy(sig);
	}
	EXPECT_EQ(0, trn_fence_wait(&f1, trn_now_ns() + WAIT_MS * 1000000LL));
	EXPECT_EQ(0, trn_fence_status(&f0));
	EXPECT_EQ(0, trn_fence_status(&f2));

	/* A hang bans the context: the next submission says so. */
	ASSERT_EQ(0, trn_cmd_sem_wait(hang, HANG_SEM, 1));
	ASSERT_EQ(0, lib_job(q, hang, NULL, NULL, &fh, false));
	EXPECT_EQ(-ETIMEDOUT, trn_fence_wait(&fh, trn_now_ns() +
					     WAIT_MS * 1000000LL));
	EXPECT_EQ(-ECANCELED, lib_job(q, nop, NULL, NULL, NULL, false));
	EXPECT_EQ(-ECANCELED, lib_job(q2, nop, NULL, NULL, NULL, false));
	ASSERT_EQ(0, trn_queue_status(q, &st));
	EXPECT_TRUE(st.state & TRN_QUEUE_GUILTY);
	EXPECT_TRUE(st.state & TRN_QUEUE_BANNED);

	trn_cmdbuf_destroy(gate);
	trn_cmdbuf_destroy(nop);
	trn_cmdbuf_destroy(wr);
	trn_cmdbuf_destroy(hang);
	trn_bo_unmap(flag);
	trn_bo_free(flag);
	trn_queue_destroy(q);
	trn_queue_destroy(q2);
	trn_queue_destroy(kq);
	trn_device_close(dev);
}

/*
 * Where the environment asks for kernel queues, trn_queue_create() makes
 * them; the explicit flag still gets a user-mode queue.
 */
TEST_F(uq, libtrnhal_environment_chooses_kernel_queues)
{
	trn_queue_t *q, *u;
	trn_device_t *dev;
	unsigned int minor;
	char *old = getenv("TRNHAL_USER_QUEUES");

	ASSERT_EQ(0, sim_minor(DEV, &minor));
	ASSERT_EQ(0, trn_device_open(minor, &dev));
	setenv("TRNHAL_USER_QUEUES", "0", 1);
	ASSERT_EQ(0, trn_queue_create(dev, 0, TRN_PRIORITY_NORMAL, &q));
	ASSERT_EQ(0, trn_queue_create_flags(dev, 0, TRN_PRIORITY_NORMAL,
					    TRN_QUEUE_CREATE_USER, &u));
	EXPECT_EQ(0, trn_queue_is_user_mode(q));
	EXPECT_EQ(1, trn_queue_is_user_mode(u));
	setenv("TRNHAL_USER_QUEUES", "1", 1);
	trn_queue_destroy(q);
	ASSERT_EQ(0, trn_queue_create(dev, 0, TRN_PRIORITY_NORMAL, &q));
	EXPECT_EQ(1, trn_queue_is_user_mode(q));
	if (old)
		setenv("TRNHAL_USER_QUEUES", old, 1);
	else
		unsetenv("TRNHAL_USER_QUEUES");
	trn_queue_destroy(q);
	trn_queue_destroy(u);
	trn_device_close(dev);
}

TEST_HARNESS_MAIN
