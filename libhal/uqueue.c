// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * User-mode queues: the queue's ring and doorbell page are mapped into the
 * process, and a submission is descriptors written into the ring and one
 * store of the write pointer, with a system call only to wake a device
 * that stopped watching (DRM_TRN_DOORBELL_NEED_WAKEUP). The kernel sees no
 * job, so what it does for a kernel queue's job the library does here:
 *
 * - the queue holds at most trn_device_info.queue_depth unfinished jobs
 *   (and never more than its ring has slots): a submission beyond waits
 *   for the device, or fails with -EAGAIN;
 * - a fence of another queue of the same device to wait for becomes a
 *   device wait in the descriptor (DRM_TRN_USER_DESC_WAIT on that queue's
 *   completion record); a job with more of them is preceded by NOP jobs
 *   that carry the others. A fence of another device, and a raw syncobj,
 *   are waited for on the CPU before the job is written;
 * - syncobjs to signal get a fence for the job (DRM_IOCTL_TRN_QUEUE_FENCE)
 *   once it is written; their handles are checked first;
 * - buffers a job lists are kept alive (a library reference) until the job
 *   completed, so that trn_bo_free() of a buffer a job still uses frees it
 *   only afterwards, as the kernel does for a kernel queue's job.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <xf86drm.h>

#include "trn_accel.h"
#include "trn_isa.h"
#include "trnhal.h"
#include "internal.h"

/* A submission's device waits that need no malloc. */
#define STACK_WAITS	16

_Static_assert(sizeof(struct drm_trn_user_desc) == 32, "drm_trn_user_desc");

static void *map_bo(trn_device_t *dev, uint32_t handle, size_t *size)
{
	struct drm_trn_bo_info bi;
	void *p;

	memset(&bi, 0, sizeof(bi));
	bi.handle = handle;
	if (trn_ioctl_errno(dev->fd, DRM_IOCTL_TRN_BO_INFO, &bi) ||
	    !bi.mmap_offset)
		return NULL;
	p = trn_mmap(NULL, bi.size, PROT_READ | PROT_WRITE, MAP_SHARED,
		     dev->fd, (off_t)bi.mmap_offset);
	if (p == MAP_FAILED)
		return NULL;
	*size = bi.size;
	return p;
}

int trn_uq_open(trn_queue_t *q, const struct drm_trn_queue_create *c)
{
	struct trn_uq *uq;
	size_t db_size = 0;

	uq = calloc(1, sizeof(*uq));
	if (!uq)
		return -ENOMEM;
	uq->entries = c->ring_entries;
	uq->depth = c->ring_entries;
	if (q->dev->queue_depth && q->dev->queue_depth < uq->depth)
		uq->depth = q->dev->queue_depth;
	uq->ring = map_bo(q->dev, c->ring_handle, &uq->ring_size);
	uq->db = map_bo(q->dev, c->doorbell_handle, &db_size);
	if (!uq->ring || !uq->db || !uq->entries ||
	    uq->entries & (uq->entries - 1) ||
	    uq->ring_size < (size_t)uq->entries * sizeof(*uq->ring)) {
		if (uq->ring)
			trn_munmap(uq->ring, uq->ring_size);
		if (uq->db)
			trn_munmap(uq->db, db_size);
		free(uq);
		return -EIO;	/* not what the uAPI promises */
	}
	pthread_mutex_init(&uq->submit_lock, NULL);
	q->uq = uq;
	return 0;
}

/* Let go of the buffers of jobs that completed (all with @all). */
static void release_holds(trn_queue_t *q, bool all)
{
	struct trn_uq *uq = q->uq;
	struct trn_hold *h;
	uint64_t done = 0;

	/* With @all the record may be unmapped already: not read. */
	if (!all)
		done = __atomic_load_n(&q->page->completed_seqno,
				       __ATOMIC_ACQUIRE);

	while (uq->nholds) {
		h = &uq->holds[uq->hold_first];
		if (!all && h->seqno > done)
			break;
		trn_bo_free(h->bo);
		uq->hold_first = (uq->hold_first + 1) % uq->hold_cap;
		uq->nholds--;
	}
}

void trn_uq_reap(trn_queue_t *q)
{
	/* Not when a submitter of this queue (perhaps us) holds the lock. */
	if (!q->uq || pthread_mutex_trylock(&q->uq->submit_lock))
		return;
	release_holds(q, false);
	pthread_mutex_unlock(&q->uq->submit_lock);
}

void trn_uq_close(trn_queue_t *q, bool stale)
{
	struct trn_uq *uq = q->uq;

	(void)stale;	/* trn_bo_free() knows about forked children */
	release_holds(q, true);
	free(uq->holds);
	trn_bo_free(uq->nop);
	trn_munmap(uq->ring, uq->ring_size);
	trn_munmap(uq->db, 4096);
	pthread_mutex_destroy(&uq->submit_lock);
	free(uq);
	q->uq = NULL;
}

int trn_queue_need_point(trn_queue_t *q, uint64_t seqno)
{
	struct drm_trn_queue_fence f;
	int ret;

	if (!q->uq || !seqno ||
	    seqno <= __atomic_load_n(&q->uq->timeline_max, __ATOMIC_ACQUIRE))
		return 0;
	memset(&f, 0, sizeof(f));
	f.queue_id = q->id;
	f.flags = DRM_TRN_QUEUE_FENCE_OWN_TIMELINE;
	f.seqno = seqno;
	ret = trn_ioctl_errno(q->dev->fd, DRM_IOCTL_TRN_QUEUE_FENCE, &f);
	if (ret)
		return ret;
	/* Only grows, whichever racing caller stores last. */
	{
		uint64_t cur = __atomic_load_n(&q->uq->timeline_max,
					       __ATOMIC_RELAXED);

		while (cur < seqno &&
		       !__atomic_compare_exchange_n(&q->uq->timeline_max, &cur,
						    seqno, true,
						    __ATOMIC_RELEASE,
						    __ATOMIC_RELAXED))
			;
	}
	return 0;
}

/* A device wait of a job: the completion record at @va reaching @value. */
struct dwait {
	uint64_t va;
	uint64_t value;
};

/*
 * What job @j waits for: in-fences that are not done yet and belong to a
 * queue of @q's device become device waits in @w (at most @cap; counted
 * in *@n even beyond); others are waited for on the CPU here, or make a
 * non-blocking submission fail with -EAGAIN.
 */
static int job_waits(trn_queue_t *q, const struct trn_job *j, bool nonblock,
		     struct dwait *w, size_t cap, size_t *n)
{
	uint32_t i;
	int ret;

	for (i = 0; i < j->wait_count; i++) {
		const struct trn_fence *f = &j->waits[i];

		if (!f->seqno)
			continue;
		if (!f->queue)
			return -EINVAL;
		if (trn_handle_stale(f->queue->dev))
			return -ECHILD;
		if (__atomic_load_n(&f->queue->page->completed_seqno,
				    __ATOMIC_ACQUIRE) >= f->seqno)
			continue;
		if (f->seqno > trn_queue_last_seqno(f->queue))
			return -EINVAL;		/* never handed out */
		if (f->queue->dev == q->dev) {
			if (*n < cap) {
				w[*n].va = f->queue->status_va +
					   offsetof(struct drm_trn_queue_status_page,
						    completed_seqno);
				w[*n].value = f->seqno;
			}
			(*n)++;
			continue;
		}
		if (nonblock)
			return -EAGAIN;
		ret = trn_queue_wait_point(f->queue, f->seqno, INT64_MAX);
		if (ret)
			return ret;
	}
	for (i = 0; i < j->wait_syncobj_count; i++) {
		const struct trn_syncobj_point *p = &j->wait_syncobjs[i];
		struct drm_syncobj_timeline_wait tw;
		uint32_t handle = p->handle;
		uint64_t point = p->point;

		if (p->reserved)
			return -EINVAL;
		memset(&tw, 0, sizeof(tw));
		tw.handles = (uintptr_t)&handle;
		tw.points = (uintptr_t)&point;
		tw.count_handles = 1;
		tw.timeout_nsec = nonblock ? 0 : INT64_MAX;
		tw.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
		ret = trn_ioctl_errno(q->dev->fd,
				      DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &tw);
		if (ret == -ETIME && nonblock)
			return -EAGAIN;
		if (ret)
			return ret;
	}
	return 0;
}

/* The syncobjs a job signals exist (checked before anything is written). */
static int check_signals(trn_queue_t *q, const struct trn_job *j)
{
	uint32_t i;
	int ret;

	for (i = 0; i < j->signal_syncobj_count; i++) {
		struct drm_syncobj_timeline_array a;
		uint32_t handle = j->signal_syncobjs[i].handle;
		uint64_t point = 0;

		if (j->signal_syncobjs[i].reserved)
			return -EINVAL;
		memset(&a, 0, sizeof(a));
		a.handles = (uintptr_t)&handle;
		a.points = (uintptr_t)&point;
		a.count_handles = 1;
		ret = trn_ioctl_errno(q->dev->fd, DRM_IOCTL_SYNCOBJ_QUERY, &a);
		if (ret)
			return ret;
	}
	return 0;
}

/* A one-command NOP buffer of the queue's device, for carrier jobs. */
static int nop_buffer(trn_queue_t *q)
{
	struct trn_cmd_nop *n;
	int ret;

	if (q->uq->nop)
		return 0;
	ret = trn_bo_create(q->dev, 4096, TRN_PLACEMENT_HOST, 0, 0,
			    &q->uq->nop);
	if (ret)
		return ret;
	ret = trn_bo_map(q->uq->nop, (void **)&n);
	if (ret) {
		trn_bo_free(q->uq->nop);
		q->uq->nop = NULL;
		return ret;
	}
	memset(n, 0, sizeof(*n));
	n->header = TRN_CMD_HEADER(TRN_OP_NOP, 0, 1);
	trn_bo_unmap(q->uq->nop);
	return 0;
}

/* Room for @n more buffers to hold. */
static int holds_reserve(struct trn_uq *uq, size_t n)
{
	struct trn_hold *h;
	size_t cap, i;

	if (uq->nholds + n <= uq->hold_cap)
		return 0;
	cap = uq->hold_cap ? uq->hold_cap : 64;
	while (cap < uq->nholds + n)
		cap *= 2;
	h = malloc(cap * sizeof(*h));
	if (!h)
		return -ENOMEM;
	for (i = 0; i < uq->nholds; i++)
		h[i] = uq->holds[(uq->hold_first + i) % uq->hold_cap];
	free(uq->holds);
	uq->holds = h;
	uq->hold_cap = cap;
	uq->hold_first = 0;
	return 0;
}

static void hold(struct trn_uq *uq, uint64_t seqno, trn_bo_t *bo)
{
	struct trn_hold *h;

	h = &uq->holds[(uq->hold_first + uq->nholds) % uq->hold_cap];
	h->seqno = seqno;
	h->bo = bo;
	uq->nholds++;
}

/* Write job number ++wptr into its slot. */
static uint64_t put_desc(struct trn_uq *uq, uint64_t cmd_va, uint32_t size,
			 const struct dwait *w)
{
	uint64_t seqno = ++uq->wptr;
	struct drm_trn_user_desc *d = &uq->ring[seqno & (uq->entries - 1)];

	d->cmd_va = cmd_va;
	d->cmd_size = size;
	d->flags = w ? DRM_TRN_USER_DESC_WAIT : 0;
	d->wait_va = w ? w->va : 0;
	d->wait_value = w ? w->value : 0;
	return seqno;
}

/* Publish everything written; wake the device if it stopped watching. */
static int ring_doorbell(trn_queue_t *q)
{
	struct trn_uq *uq = q->uq;
	struct drm_trn_queue_wake wk;

	__atomic_store_n(&uq->db->wptr, uq->wptr, __ATOMIC_RELEASE);
	/* The device sets the flag, then looks at wptr: one of us sees. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!(__atomic_load_n(&uq->db->flags, __ATOMIC_RELAXED) &
	      DRM_TRN_DOORBELL_NEED_WAKEUP))
		return 0;
	memset(&wk, 0, sizeof(wk));
	wk.queue_id = q->id;
	return trn_ioctl_errno(q->dev->fd, DRM_IOCTL_TRN_QUEUE_WAKE, &wk);
}

/* Wait until the queue has room for @slots more jobs (or -EAGAIN). */
static int wait_room(trn_queue_t *q, uint64_t slots, bool nonblock)
{
	struct trn_uq *uq = q->uq;
	uint64_t done;

	if (slots > uq->depth)
		return -EINVAL;		/* never fits */
	done = __atomic_load_n(&q->page->completed_seqno, __ATOMIC_ACQUIRE);
	if (uq->wptr + slots <= done + uq->depth)
		return 0;
	if (nonblock)
		return -EAGAIN;
	return trn_queue_wait_point(q, uq->wptr + slots - uq->depth,
				    INT64_MAX);
}

static void signal_fences(trn_queue_t *q, const struct trn_job *j,
			  uint64_t seqno, int *err)
{
	struct drm_trn_queue_fence f;
	uint32_t i;
	int ret;

	for (i = 0; i < j->signal_syncobj_count; i++) {
		memset(&f, 0, sizeof(f));
		f.queue_id = q->id;
		f.seqno = seqno;
		f.syncobj = j->signal_syncobjs[i].handle;
		f.point = j->signal_syncobjs[i].point;
		ret = trn_ioctl_errno(q->dev->fd, DRM_IOCTL_TRN_QUEUE_FENCE,
				      &f);
		if (ret && !*err)
			*err = ret;
	}
}

/* Per job of a submission: its device waits and its number. */
struct job_plan {
	size_t nwaits;
	uint64_t seqno;
};

int trn_uq_submit(trn_queue_t *q, const struct trn_job *jobs, size_t count,
		  struct trn_fence *fences, bool nonblock)
{
	struct dwait stack_waits[STACK_WAITS], *waits = stack_waits;
	struct job_plan stack_plan[4], *plan = stack_plan;
	size_t i, k, total = 0, nbos = 0, cap, slots = 0;
	struct trn_uq *uq = q->uq;
	bool signals = false;
	int ret = 0, err = 0;

	/* Everything that can fail is checked before a slot is written. */
	for (i = 0; i < count; i++) {
		const struct trn_job *j = &jobs[i];

		for (k = 0; k < 4; k++)
			if (j->reserved[k])
				return -EINVAL;
		if ((j->bo_count && !j->bos) || (j->wait_count && !j->waits) ||
		    (j->wait_syncobj_count && !j->wait_syncobjs) ||
		    (j->signal_syncobj_count && !j->signal_syncobjs) ||
		    j->bo_count > DRM_TRN_JOB_MAX_BOS ||
		    (uint64_t)j->wait_count + j->wait_syncobj_count >
		    DRM_TRN_JOB_MAX_FENCES ||
		    j->signal_syncobj_count > DRM_TRN_JOB_MAX_FENCES ||
		    j->flags)
			return -EINVAL;
		/* What the kernel checks of a kernel queue's job. */
		if (!j->cmd_size || j->cmd_size % 8 || j->cmd_va % 8 ||
		    j->cmd_size > DRM_TRN_JOB_MAX_CMD_SIZE)
			return -EINVAL;
		for (k = 0; k < j->bo_count; k++) {
			if (!j->bos[k])
				return -EINVAL;
			if (trn_bo_device(j->bos[k]) != q->dev)
				return -EXDEV;
		}
		nbos += j->bo_count;
		signals |= j->signal_syncobj_count != 0;
	}
	/* As a kernel queue's SUBMIT says it: the record says it here. */
	if (__atomic_load_n(&q->page->state, __ATOMIC_RELAXED) &
	    DRM_TRN_QUEUE_BANNED)
		return -ECANCELED;
	if (count > 4) {
		plan = calloc(count, sizeof(*plan));
		if (!plan)
			return -ENOMEM;
	}
	for (i = 0; i < count && !ret; i++)
		ret = check_signals(q, &jobs[i]);
	if (ret)
		goto out_free;

	pthread_mutex_lock(&uq->submit_lock);
	/* The device waits, in one array; CPU waits happen here. */
	cap = STACK_WAITS;
	for (i = 0; i < count; i++) {
		for (;;) {
			size_t n = 0;

			ret = job_waits(q, &jobs[i], nonblock, waits + total,
					cap - total, &n);
			if (ret)
				goto out_unlock;
			if (total + n <= cap) {
				plan[i].nwaits = n;
				total += n;
				break;
			}
			/* Grow and ask again: fences done by now drop out. */
			cap = (total + n) * 2;
			if (waits == stack_waits) {
				waits = malloc(cap * sizeof(*waits));
				if (waits)
					memcpy(waits, stack_waits,
					       total * sizeof(*waits));
			} else {
				struct dwait *w = realloc(waits,
							  cap * sizeof(*waits));

				if (!w)
					free(waits);
				waits = w;
			}
			if (!waits) {
				ret = -ENOMEM;
				goto out_unlock;
			}
		}
		/* One slot a job, one more for each wait beyond its first. */
		slots += plan[i].nwaits > 1 ? plan[i].nwaits : 1;
	}
	ret = wait_room(q, slots, nonblock);
	if (!ret && slots > count)
		ret = nop_buffer(q);
	if (!ret)
		ret = holds_reserve(uq, nbos);
	if (ret)
		goto out_unlock;
	release_holds(q, false);

	total = 0;
	for (i = 0; i < count; i++) {
		const struct trn_job *j = &jobs[i];
		const struct dwait *w = plan[i].nwaits ? &waits[total] : NULL;

		/* Extra waits ride on NOP jobs just before, in order. */
		for (k = 1; k < plan[i].nwaits; k++)
			put_desc(uq, trn_bo_va(uq->nop), 8, &waits[total + k]);
		total += plan[i].nwaits;
		plan[i].seqno = put_desc(uq, j->cmd_va, j->cmd_size, w);
		if (j->bo_count) {
			trn_bo_ref_many(j->bos, j->bo_count);
			for (k = 0; k < j->bo_count; k++)
				hold(uq, plan[i].seqno, j->bos[k]);
		}
		if (fences) {
			fences[i].queue = q;
			fences[i].seqno = plan[i].seqno;
		}
	}
	__atomic_store_n(&q->last_seqno, uq->wptr, __ATOMIC_RELEASE);
	ret = ring_doorbell(q);
	for (i = 0; signals && i < count; i++)
		signal_fences(q, &jobs[i], plan[i].seqno, &err);
	/* The jobs are queued; a failed wake-up or fence is still reported. */
	if (!ret)
		ret = err;
out_unlock:
	pthread_mutex_unlock(&uq->submit_lock);
out_free:
	if (waits != stack_waits)
		free(waits);
	if (plan != stack_plan)
		free(plan);
	return ret;
}
