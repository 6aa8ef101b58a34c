// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * Fences: job N of a queue. Whether it is done, and how it ended, is read
 * from the queue's status page without a system call; waiting spins on the
 * page briefly and then sleeps on the queue's timeline syncobj.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xf86drm.h>

#include "trn_accel.h"
#include "trnhal.h"
#include "internal.h"

#define RING	DRM_TRN_STATUS_PAGE_FAILURES

/* Fences of trn_fence_wait_many() that need no malloc. */
#define STACK_FENCES	16

/*
 * Rereads of the failure ring when the kernel keeps adding failures while
 * it is read; past this the answer is "cannot tell" (-ERANGE).
 */
#define RING_RETRIES	100

/*
 * After the syncobj point has signalled, the status page must say so too
 * (the kernel writes it first). Give a lagging page this many yields before
 * calling it a broken promise.
 */
#define PAGE_LAG_YIELDS	1000

#ifdef TRNHAL_TESTING
int64_t trnhal_test_spin_ns = TRN_FENCE_SPIN_NS;
#endif

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

TRN_PUBLIC int64_t trn_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t completed(const trn_queue_t *q)
{
	return __atomic_load_n(&q->page->completed_seqno, __ATOMIC_ACQUIRE);
}

/*
 * The kernel stores a failure's entry, then failed_count, then
 * completed_seqno (release each); loads go the other way round (acquire).
 * Failures are recorded in job order, so the ring is sorted by seqno and
 * is searched from the newest entry back. The slot the kernel overwrites
 * next is the oldest one; an entry newer than the completed_seqno read
 * first is being written right now and is not trusted, and so is an
 * entry whose seqno changes while its error is read.
 */
int trn_queue_page_status(const trn_queue_t *q, uint64_t seqno)
{
	const struct drm_trn_queue_status_page *pg = q->page;
	int tries;

	for (tries = 0; tries < RING_RETRIES; tries++) {
		uint64_t done, failed, n, k, s;
		bool unsure = false;
		int ret = 2;	/* not known yet */

		done = completed(q);
		if (done < seqno)
			return 1;
		failed = __atomic_load_n(&pg->failed_count, __ATOMIC_ACQUIRE);
		n = failed < RING ? failed : RING;
		for (k = 0; k < n; k++) {
			const struct drm_trn_job_failure *f =
				&pg->failures[(failed - 1 - k) % RING];

			s = __atomic_load_n(&f->seqno, __ATOMIC_ACQUIRE);
			if (s > done) {
				/* Newer than what we look for, or in flux. */
				if (k == RING - 1)
					unsure = true;
				continue;
			}
			if (s == seqno) {
				uint32_t e = __atomic_load_n(&f->error,
							     __ATOMIC_RELAXED);

				/*
				 * The kernel stores seqno before error: an
				 * entry rewritten under us shows a new seqno
				 * on a second look.
				 */
				__atomic_thread_fence(__ATOMIC_ACQUIRE);
				if (__atomic_load_n(&f->seqno,
						    __ATOMIC_RELAXED) != s) {
					unsure = true;
					break;
				}
				ret = e ? -(int)e : -EIO;
				break;
			}
			if (s < seqno) {
				ret = 0;	/* older failures only below */
				break;
			}
		}
		if (ret == 2 && !unsure)
			/* Every retained failure is newer than the job. */
			ret = failed > RING ? -ERANGE : 0;
		/* Entries read above may have been replaced meanwhile. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (ret != 2 &&
		    __atomic_load_n(&pg->failed_count, __ATOMIC_RELAXED) == failed)
			return ret;
	}
	return -ERANGE;
}

/* Common checks of a fence; 0 when it may be looked at. */
static int fence_check(const struct trn_fence *f)
{
	if (!f || !f->queue)
		return -EINVAL;
	if (trn_handle_stale(f->queue->dev))
		return -ECHILD;
	/* Never handed out: waiting for it would never end. */
	if (f->seqno > __atomic_load_n(&f->queue->last_seqno, __ATOMIC_ACQUIRE))
		return -EINVAL;
	return 0;
}

TRN_PUBLIC int trn_fence_status(const struct trn_fence *f)
{
	int ret;

	if (f && !f->seqno)
		return 0;
	ret = fence_check(f);
	if (ret)
		return ret;
	return trn_queue_page_status(f->queue, f->seqno);
}

/*
 * Poll until @done(@arg) or TRN_SPIN_NS (or @abs_timeout_ns) has passed.
 * Returns whether it is done.
 */
static bool spin(bool (*done)(const void *), const void *arg,
		 int64_t abs_timeout_ns)
{
	int64_t start = trn_now_ns(), end = start + TRN_SPIN_NS, now;
	int i;

	if (end > abs_timeout_ns)
		end = abs_timeout_ns;
	for (;;) {
		if (done(arg))
			return true;
		now = trn_now_ns();
		if (now >= end)
			return false;
		if (now - start >= TRN_FENCE_SPIN_PAUSE_NS) {
			sched_yield();
			continue;
		}
		for (i = 0; i < 8; i++)
			cpu_relax();
	}
}

static bool fence_done(const void *arg)
{
	const struct trn_fence *f = arg;

	return !f->seqno || completed(f->queue) >= f->seqno;
}

/* The page catches up with a signalled point; see PAGE_LAG_YIELDS. */
static int page_catch_up(const trn_queue_t *q, uint64_t seqno)
{
	int i;

	for (i = 0; i < PAGE_LAG_YIELDS; i++) {
		if (completed(q) >= seqno)
			return 0;
		sched_yield();
	}
	return -EIO;
}

int trn_queue_wait_point(trn_queue_t *q, uint64_t seqno,
			 int64_t abs_timeout_ns)
{
	struct drm_syncobj_timeline_wait w;
	struct trn_fence f = { q, seqno };
	int ret;

	if (!seqno || completed(q) >= seqno)
		return 0;
	if (abs_timeout_ns <= trn_now_ns())
		return -ETIME;		/* a poll: no system call */
	if (spin(fence_done, &f, abs_timeout_ns))
		return 0;
	ret = trn_queue_need_point(q, seqno);
	if (ret)
		return ret;

	memset(&w, 0, sizeof(w));
	w.handles = (uintptr_t)&q->syncobj;
	w.points = (uintptr_t)&seqno;
	w.timeout_nsec = abs_timeout_ns;
	w.count_handles = 1;
	ret = trn_ioctl_errno(q->dev->fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w);
	if (ret)
		return ret;
	return page_catch_up(q, seqno);
}

TRN_PUBLIC int trn_fence_wait(const struct trn_fence *f,
			      int64_t abs_timeout_ns)
{
	int ret;

	if (f && !f->seqno)
		return 0;
	ret = fence_check(f);
	if (ret)
		return ret;
	ret = trn_queue_wait_point(f->queue, f->seqno, abs_timeout_ns);
	if (ret)
		return ret;
	trn_uq_reap(f->queue);
	return trn_queue_page_status(f->queue, f->seqno);
}

struct many {
	const struct trn_fence *fences;
	size_t count;
	bool any;
	size_t first;
};

static bool many_done(const void *arg)
{
	struct many *m = (struct many *)arg;
	size_t i;

	for (i = 0; i < m->count; i++) {
		if (fence_done(&m->fences[i])) {
			if (m->any) {
				m->first = i;
				return true;
			}
		} else if (!m->any) {
			return false;
		}
	}
	return !m->any;
}

TRN_PUBLIC int trn_fence_wait_many(const struct trn_fence *fences,
				   size_t count, int wait_any,
				   int64_t abs_timeout_ns, size_t *first)
{
	uint32_t stack_handles[STACK_FENCES], *handles = stack_handles;
	uint64_t stack_points[STACK_FENCES], *points = stack_points;
	size_t stack_index[STACK_FENCES], *index = stack_index;
	struct many m = { fences, count, wait_any != 0, 0 };
	struct drm_syncobj_timeline_wait w;
	trn_device_t *dev = NULL;
	void *heap = NULL;
	size_t i, n = 0;
	int ret;

	if (!fences || !count || count > UINT32_MAX)
		return -EINVAL;
	for (i = 0; i < count; i++) {
		if (!fences[i].seqno)
			continue;
		ret = fence_check(&fences[i]);
		if (ret)
			return ret;
		/* One ioctl on one file: syncobj handles are per file. */
		if (dev && fences[i].queue->dev != dev)
			return -EXDEV;
		dev = fences[i].queue->dev;
	}

	if (many_done(&m))
		goto done;
	if (abs_timeout_ns <= trn_now_ns())
		return -ETIME;
	if (spin(many_done, &m, abs_timeout_ns))
		goto done;

	if (count > STACK_FENCES) {
		heap = malloc(count * (sizeof(*handles) + sizeof(*points) +
				       sizeof(*index)));
		if (!heap)
			return -ENOMEM;
		points = heap;
		index = (size_t *)(points + count);
		handles = (uint32_t *)(index + count);
	}
	/* Only the pending ones: a timeline's point 0 means something else. */
	for (i = 0; i < count; i++) {
		if (fence_done(&fences[i]))
			continue;
		ret = trn_queue_need_point(fences[i].queue, fences[i].seqno);
		if (ret) {
			free(heap);
			return ret;
		}
		handles[n] = fences[i].queue->syncobj;
		points[n] = fences[i].seqno;
		index[n++] = i;
	}
	if (!n) {
		free(heap);
		/* Everything finished between the spin and now. */
		if (many_done(&m))
			goto done;
		return -EIO;
	}
	memset(&w, 0, sizeof(w));
	w.handles = (uintptr_t)handles;
	w.points = (uintptr_t)points;
	w.timeout_nsec = abs_timeout_ns;
	w.count_handles = (uint32_t)n;
	w.flags = wait_any ? 0 : DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
	ret = trn_ioctl_errno(dev->fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w);
	if (!ret && wait_any) {
		if (w.first_signaled < n)
			m.first = index[w.first_signaled];
		else
			ret = -EIO;
	}
	free(heap);
	if (ret)
		return ret;
	if (wait_any) {
		ret = page_catch_up(fences[m.first].queue,
				    fences[m.first].seqno);
	} else {
		for (i = 0; i < count && !ret; i++)
			if (fences[i].seqno)
				ret = page_catch_up(fences[i].queue,
						    fences[i].seqno);
	}
	if (ret)
		return ret;
done:
	for (i = 0; i < count; i++)
		if (fences[i].seqno)
			trn_uq_reap(fences[i].queue);
	if (wait_any && first)
		*first = m.first;
	return 0;
}

TRN_PUBLIC int trn_fence_sync_file(const struct trn_fence *f, int *fd)
{
	struct drm_syncobj_handle h;
	trn_queue_t *q;
	int ret;

	if (!fd)
		return -EINVAL;
	*fd = -1;
	/* A sync_file is made on a device, so even seqno 0 needs a queue. */
	ret = fence_check(f);
	if (ret)
		return ret;
	q = f->queue;

	/*
	 * One binary syncobj per queue carries the point into the sync_file;
	 * the lock keeps another thread's point out of it until exported.
	 */
	pthread_mutex_lock(&q->lock);
	if (!q->have_binary_syncobj) {
		struct drm_syncobj_create c;

		memset(&c, 0, sizeof(c));
		ret = trn_ioctl_errno(q->dev->fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);
		if (ret)
			goto out;
		q->binary_syncobj = c.handle;
		q->have_binary_syncobj = true;
	}
	if (!f->seqno) {
		struct drm_syncobj_array a;

		memset(&a, 0, sizeof(a));
		a.handles = (uintptr_t)&q->binary_syncobj;
		a.count_handles = 1;
		ret = trn_ioctl_errno(q->dev->fd, DRM_IOCTL_SYNCOBJ_SIGNAL, &a);
	} else {
		struct drm_syncobj_transfer t;

		ret = trn_queue_need_point(q, f->seqno);
		if (ret)
			goto out;
		memset(&t, 0, sizeof(t));
		t.src_handle = q->syncobj;
		t.dst_handle = q->binary_syncobj;
		t.src_point = f->seqno;
		t.dst_point = 0;
		ret = trn_ioctl_errno(q->dev->fd, DRM_IOCTL_SYNCOBJ_TRANSFER, &t);
	}
	if (ret)
		goto out;
	memset(&h, 0, sizeof(h));
	h.handle = q->binary_syncobj;
	h.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE;
	h.fd = -1;
	ret = trn_ioctl_errno(q->dev->fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h);
	if (!ret)
		*fd = h.fd;
out:
	pthread_mutex_unlock(&q->lock);
	return ret;
}
