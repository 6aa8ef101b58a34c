// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * Streams (a queue plus the command buffers operations are recorded
 * into), the flush policy, and events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "eager_internal.h"

/* ---- the job being recorded ---- */

static bool pending(const eager_stream_t *s)
{
	return trn_cmdbuf_size(s->cbs[s->cur].cb) || s->nbos || s->nwaits;
}

/* Seqno the work issued so far on @s completes with (0: none). */
uint64_t eager_stream_tail(const eager_stream_t *s)
{
	return s->submitted + (pending(s) ? 1 : 0);
}

/* trn_fence_status() of job @seqno of @s, 1 for one not yet submitted. */
int eager_seqno_status(eager_stream_t *s, uint64_t seqno)
{
	struct trn_fence f = { s->q, seqno };

	if (!seqno)
		return 0;
	if (seqno > s->submitted)
		return 1;
	return trn_fence_status(&f);
}

static size_t ptr_hash(const void *p, size_t cap)
{
	uintptr_t v = (uintptr_t)p;

	v ^= v >> 17;
	v *= 0x9e3779b97f4a7c15ull;
	return (size_t)(v >> 20) & (cap - 1);
}

/* Grow the job's buffer list and its set (kept at most half full). */
static int grow_bos(eager_stream_t *s)
{
	size_t cap = s->cap_bos ? s->cap_bos * 2 : 32, i;
	trn_bo_t **bos, **set;

	bos = realloc(s->bos, cap * sizeof(*bos));
	if (!bos)
		return -ENOMEM;
	s->bos = bos;
	set = calloc(cap * 2, sizeof(*set));
	if (!set)
		return -ENOMEM;
	free(s->bo_set);
	s->bo_set = set;
	s->set_cap = cap * 2;
	s->cap_bos = cap;
	for (i = 0; i < s->nbos; i++) {
		size_t h = ptr_hash(s->bos[i], s->set_cap);

		while (set[h])
			h = (h + 1) & (s->set_cap - 1);
		set[h] = s->bos[i];
	}
	return 0;
}

/* List @bo in the job being recorded, once (the kernel wants no dups). */
static int job_add_bo(eager_stream_t *s, trn_bo_t *bo)
{
	size_t h;
	int ret;

	if (s->nbos + 1 > s->cap_bos) {
		ret = grow_bos(s);
		if (ret)
			return ret;
	}
	h = ptr_hash(bo, s->set_cap);
	while (s->bo_set[h]) {
		if (s->bo_set[h] == bo)
			return 0;
		h = (h + 1) & (s->set_cap - 1);
	}
	s->bo_set[h] = bo;
	s->bos[s->nbos++] = bo;
	return 0;
}

static void job_clear(eager_stream_t *s)
{
	if (s->bo_set)
		memset(s->bo_set, 0, s->set_cap * sizeof(*s->bo_set));
	s->nbos = 0;
	s->nwaits = 0;
	s->st.pending_commands = 0;
}

static const char *op_name;	/* eager_set_op_name() */

void eager_set_op_name(const char *name)
{
	op_name = name;
}

/* The op of @c's failed job: at the failing command if the queue says. */
static const char *failed_op(eager_stream_t *s, const struct eager_cmdbuf *c)
{
	struct trn_queue_status qs;
	unsigned int i;

	if (!c->nmarks)
		return NULL;
	if (trn_queue_status(s->q, &qs) || qs.failed_seqno != c->seqno)
		return c->marks[0].name;
	for (i = c->nmarks; i > 1; i--)
		if (c->marks[i - 1].offset <= qs.error_offset)
			break;
	return c->marks[i - 1].name;
}

/*
 * Keep the failure of the earliest job, and its op, until the next sync
 * reports it: @seq is the failing job's seqno (for commands lost before
 * they became a job, the seqno they would have had), whichever order the
 * failures are found in.
 */
static void set_error(eager_stream_t *s, int err, const char *op,
		      uint64_t seq)
{
	if (s->error && s->error_seq <= seq)
		return;
	s->error = err;
	s->error_seq = seq;
	s->error_op = op;
}

/* Remember the first failure of @s's jobs (reported at the next sync). */
static void check_cmdbuf(eager_stream_t *s, struct eager_cmdbuf *c)
{
	int st;

	if (!c->seqno || c->checked)
		return;
	st = eager_seqno_status(s, c->seqno);
	if (st == 1)
		return;
	if (st < 0)
		set_error(s, st, failed_op(s, c), c->seqno);
	c->checked = true;
}

/* The current op's commands begin here (a new name, or a new buffer). */
static void mark_op(eager_stream_t *s)
{
	struct eager_cmdbuf *c = &s->cbs[s->cur];

	if (!op_name || c->nmarks == EAGER_OP_MARKS ||
	    (c->nmarks && c->marks[c->nmarks - 1].name == op_name))
		return;
	c->marks[c->nmarks].offset = (uint32_t)trn_cmdbuf_size(c->cb);
	c->marks[c->nmarks].name = op_name;
	c->nmarks++;
}

/*
 * Pick a command buffer to record into next: one whose job finished, a
 * new one while there are fewer than EAGER_CMDBUFS, else wait for the
 * oldest job.
 */
static int next_cmdbuf(eager_stream_t *s)
{
	struct eager_cmdbuf *c, *oldest = NULL;
	struct trn_fence f;
	unsigned int i, idx;

	for (i = 1; i < s->ncbs; i++) {
		idx = (s->cur + i) % s->ncbs;
		c = &s->cbs[idx];
		check_cmdbuf(s, c);
		if (!c->seqno || c->checked)
			goto take;
		if (!oldest || c->seqno < oldest->seqno)
			oldest = c;
	}
	if (s->ncbs < EAGER_CMDBUFS &&
	    !trn_cmdbuf_create(s->be->dev, EAGER_CMDBUF_SIZE,
			       &s->cbs[s->ncbs].cb)) {
		idx = s->ncbs++;
		c = &s->cbs[idx];
		goto take;
	}
	/*
	 * All in use, or no memory for one more: wait for the oldest (with
	 * one buffer, the one just submitted). Never keep recording into a
	 * buffer already submitted: its commands would run twice.
	 */
	c = oldest ? oldest : &s->cbs[s->cur];
	idx = (unsigned int)(c - s->cbs);
	f.queue = s->q;
	f.seqno = c->seqno;
	trn_fence_wait(&f, INT64_MAX);
	check_cmdbuf(s, c);
take:
	trn_cmdbuf_reset(c->cb);
	c->seqno = 0;
	c->checked = false;
	c->nmarks = 0;
	s->cur = idx;
	return 0;
}

trn_cmdbuf_t *eager_cmdbuf(eager_stream_t *s)
{
	return s->cbs[s->cur].cb;
}

/* Submit the job being recorded (if any) as one job of @s's queue. */
int eager_flush(eager_stream_t *s, int reason)
{
	struct eager_cmdbuf *c = &s->cbs[s->cur];
	struct trn_job job;
	struct trn_fence f;
	int ret;

	if (!pending(s))
		return 0;
	/* Buffers or in-fences without commands still make a job. */
	if (!trn_cmdbuf_size(c->cb)) {
		ret = trn_cmd_nop(c->cb);
		if (ret)
			return ret;
	}
	ret = job_add_bo(s, trn_cmdbuf_bo(c->cb));
	if (ret)
		return ret;
	memset(&job, 0, sizeof(job));
	job.cmd_va = trn_cmdbuf_va(c->cb);
	job.cmd_size = (uint32_t)trn_cmdbuf_size(c->cb);
	job.bos = s->bos;
	job.bo_count = (uint32_t)s->nbos;
	job.waits = s->waits;
	job.wait_count = s->nwaits;
	ret = trn_submit(s->q, &job, &f);
	if (ret) {
		/* The commands are lost: report it at the next sync. */
		set_error(s, ret, NULL, s->submitted + 1);
		trn_cmdbuf_reset(c->cb);
		job_clear(s);
		return ret;
	}
	c->seqno = f.seqno;
	c->checked = false;
	s->submitted = f.seqno;
	s->st.jobs++;
	if (reason == EAGER_FLUSH_DRY)
		s->st.flush_dry++;
	else if (reason == EAGER_FLUSH_FULL)
		s->st.flush_full++;
	else
		s->st.flush_sync++;
	job_clear(s);
	return next_cmdbuf(s);
}

/*
 * Submit what is recorded and wait for all of @s's jobs; their first
 * failure stays recorded (sticky) for the next eager_sync(). 0 or that
 * failure.
 */
int eager_wait(eager_stream_t *s)
{
	struct trn_fence f = { s->q, 0 };
	unsigned int i;
	int ret, wait = 0;

	/* Even if this fails, what was submitted before must be waited for. */
	ret = eager_flush(s, EAGER_FLUSH_SYNC);
	if (ret)
		set_error(s, ret, NULL, s->submitted + 1);
	f.seqno = s->submitted;
	if (f.seqno)
		wait = trn_fence_wait(&f, INT64_MAX);
	/* Each job's own failure, named; the earliest is kept. */
	for (i = 0; i < s->ncbs; i++)
		check_cmdbuf(s, &s->cbs[i]);
	/* The wait's, where no command buffer told (it was reused). */
	if (wait < 0 && wait != -ETIME)
		set_error(s, wait, NULL, f.seqno);
	return s->error;
}

int eager_sync(eager_stream_t *s)
{
	int ret = eager_wait(s);

	s->error = 0;
	return ret;
}

/* ---- recording operations ---- */

void eager_op_begin(eager_stream_t *s)
{
	s->op_nbos = 0;
	mark_op(s);
}

int eager_op_use_bo(eager_stream_t *s, trn_bo_t *bo)
{
	if (s->op_nbos < sizeof(s->op_bos) / sizeof(s->op_bos[0]))
		s->op_bos[s->op_nbos++] = bo;
	else
		return -E2BIG;	/* an op names at most 8 buffers */
	return job_add_bo(s, bo);
}

/* The op reads or writes @b on @s: list it and remember the stream. */
int eager_op_use(eager_stream_t *s, struct eager_block *b)
{
	b->use_mask |= 1ULL << s->id;
	return eager_op_use_bo(s, b->bo);
}

/* The buffer is full: submit it, then list the op's buffers again. */
int eager_emit_retry(eager_stream_t *s)
{
	unsigned int i;
	int ret;

	ret = eager_flush(s, EAGER_FLUSH_FULL);
	if (!ret)
		mark_op(s);
	for (i = 0; !ret && i < s->op_nbos; i++)
		ret = job_add_bo(s, s->op_bos[i]);
	return ret;
}

/*
 * The flush policy, after each operation: if the queue has finished
 * every job we gave it (the device would idle), submit what is recorded
 * now; otherwise keep batching behind the running job.
 */
static int maybe_flush(eager_stream_t *s)
{
	if (eager_seqno_status(s, s->submitted) == 1)
		return 0;
	return eager_flush(s, EAGER_FLUSH_DRY);
}

int eager_op_end(eager_stream_t *s)
{
	s->st.ops++;
	return maybe_flush(s);
}

/* Device address of a constant @value, stored by a WRITE before use. */
int eager_scalar(eager_stream_t *s, float value, uint64_t *va)
{
	uint32_t bits;

	memcpy(&bits, &value, 4);
	return eager_scalar_bits(s, bits, va);
}

/* Device address of the 32-bit constant @bits, stored by a WRITE. */
int eager_scalar_bits(eager_stream_t *s, uint32_t bits, uint64_t *va)
{
	int ret;

	ret = eager_op_use(s, s->scalars);
	if (ret)
		return ret;
	/*
	 * Slots are reused round robin: a later WRITE to the same slot is
	 * ordered after the op that reads it, by the stream.
	 */
	*va = s->scalars->va + 4 * (s->next_scalar++ % EAGER_SCALAR_SLOTS);
	EAGER_EMIT(ret, s, trn_cmd_write32(eager_cmdbuf(s), *va, bits));
	return ret;
}

/* ---- streams ---- */

int eager_stream_new(struct eager_backend *be, uint32_t core,
		     eager_stream_t **out)
{
	eager_stream_t *s;
	unsigned int id;
	int ret;

	for (id = 0; id < EAGER_MAX_STREAMS && be->streams[id]; id++)
		;
	if (id == EAGER_MAX_STREAMS)
		return -EMFILE;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->be = be;
	s->id = id;
	ret = trn_queue_create(be->dev, core, TRN_PRIORITY_NORMAL, &s->q);
	if (!ret)
		ret = grow_bos(s);
	if (!ret)
		ret = trn_cmdbuf_create(be->dev, EAGER_CMDBUF_SIZE,
					&s->cbs[0].cb);
	if (ret) {
		trn_queue_destroy(s->q);
		free(s->bos);
		free(s->bo_set);
		free(s);
		return ret;
	}
	s->ncbs = 1;
	be->streams[id] = s;
	ret = eager_block_alloc(&be->hbm, s, EAGER_SCALAR_SLOTS * 4,
				&s->scalars);
	if (ret) {
		eager_stream_free(s);
		return ret;
	}
	*out = s;
	return 0;
}

void eager_stream_free(eager_stream_t *s)
{
	struct eager_backend *be = s->be;
	eager_event_t *e;
	unsigned int i;

	eager_sync(s);
	/* Its events' work is done: they stay valid, as finished. */
	for (e = be->events; e; e = e->next)
		if (e->stream == s)
			e->stream = NULL;
	eager_block_free(s->scalars);
	eager_pool_forget_stream(&be->hbm, s);
	eager_pool_forget_stream(&be->staging, s);
	if (be->current == s)
		be->current = NULL;
	if (be->default_stream == s)
		be->default_stream = NULL;
	be->streams[s->id] = NULL;
	for (i = 0; i < s->ncbs; i++)
		trn_cmdbuf_destroy(s->cbs[i].cb);
	trn_queue_destroy(s->q);
	free(s->bos);
	free(s->bo_set);
	free(s);
}

int eager_stream_create(struct eager_device dev, uint32_t core,
			eager_stream_t **out)
{
	struct eager_backend *be;
	int ret = eager_backend_get(dev, &be);

	return ret ? ret : eager_stream_new(be, core, out);
}

void eager_stream_destroy(eager_stream_t *s)
{
	if (s)
		eager_stream_free(s);
}

static eager_stream_t *default_stream(struct eager_backend *be)
{
	if (!be->default_stream &&
	    eager_stream_new(be, 0, &be->default_stream))
		return NULL;
	return be->default_stream;
}

eager_stream_t *eager_current_stream(struct eager_device dev)
{
	struct eager_backend *be;

	if (eager_backend_get(dev, &be))
		return NULL;
	return be->current ? be->current : default_stream(be);
}

eager_stream_t *eager_default_stream(struct eager_device dev)
{
	struct eager_backend *be;

	return eager_backend_get(dev, &be) ? NULL : default_stream(be);
}

int eager_set_current_stream(struct eager_device dev, eager_stream_t *s)
{
	struct eager_backend *be;
	int ret = eager_backend_get(dev, &be);

	if (ret)
		return ret;
	if (s && s->be != be)
		return -EXDEV;
	be->current = s;
	return 0;
}

int eager_stream_flush(eager_stream_t *s)
{
	return eager_flush(s, EAGER_FLUSH_SYNC);
}

int eager_stream_synchronize(eager_stream_t *s)
{
	return eager_sync(s);
}

int eager_stream_query(eager_stream_t *s)
{
	int ret;

	if (pending(s)) {
		ret = eager_flush(s, EAGER_FLUSH_SYNC);
		if (ret)
			return ret;
	}
	ret = eager_seqno_status(s, s->submitted);
	if (ret == 1)
		return 1;
	return s->error ? s->error : ret;
}

int eager_synchronize(struct eager_device dev)
{
	struct eager_backend *be;
	unsigned int i;
	int ret = eager_backend_get(dev, &be), r;

	if (ret)
		return ret;
	/* Every stream, also after one failed: none is left running. */
	for (i = 0; i < EAGER_MAX_STREAMS; i++)
		if (be->streams[i]) {
			r = eager_sync(be->streams[i]);
			if (r && !ret)
				ret = r;
		}
	return ret;
}

int eager_stream_stats(eager_stream_t *s, struct eager_stream_stats *st)
{
	*st = s->st;
	return 0;
}

const char *eager_stream_error_op(eager_stream_t *s)
{
	return s ? s->error_op : NULL;
}

trn_queue_t *eager_stream_queue(eager_stream_t *s)
{
	return s->q;
}

struct trn_fence eager_stream_last_fence(eager_stream_t *s)
{
	struct trn_fence f = { s->q, s->submitted };

	return f;
}

/* ---- events ---- */

int eager_event_create(struct eager_device dev, uint32_t flags,
		       eager_event_t **out)
{
	struct eager_backend *be;
	eager_event_t *e;
	int ret, slot = -1, i;

	if (flags & ~EAGER_EVENT_TIMING)
		return -EINVAL;
	ret = eager_backend_get(dev, &be);
	if (ret)
		return ret;
	if (flags & EAGER_EVENT_TIMING) {
		for (i = 0; i < EAGER_TS_SLOTS && slot < 0; i++)
			if (!be->ts_used[i])
				slot = i;
		if (slot < 0)
			return -ENOSPC;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->be = be;
	e->flags = flags;
	e->ts_slot = slot;
	if (slot >= 0)
		be->ts_used[slot] = true;
	e->next = be->events;
	if (e->next)
		e->next->pprev = &e->next;
	e->pprev = &be->events;
	be->events = e;
	*out = e;
	return 0;
}

void eager_event_destroy(eager_event_t *e)
{
	if (!e)
		return;
	/* A pending TIMESTAMP may still write the slot: let it finish. */
	if (e->ts_slot >= 0) {
		eager_event_synchronize(e);
		e->be->ts_used[e->ts_slot] = false;
	}
	*e->pprev = e->next;
	if (e->next)
		e->next->pprev = e->pprev;
	free(e);
}

int eager_event_record(eager_event_t *e, eager_stream_t *s)
{
	int ret;

	if (!e || !s || s->be != e->be)
		return -EINVAL;
	if (e->ts_slot >= 0) {
		/* Moving a timing event: its older TIMESTAMP must be done. */
		if (e->stream && e->stream != s)
			eager_event_synchronize(e);
		eager_op_begin(s);
		ret = eager_op_use_bo(s, e->be->ts_bo);
		if (!ret)
			EAGER_EMIT(ret, s, trn_cmd_timestamp(eager_cmdbuf(s),
				   trn_bo_va(e->be->ts_bo) + 8 * e->ts_slot));
		if (ret)
			return ret;
		ret = maybe_flush(s);
		if (ret)
			return ret;
	}
	e->stream = s;
	e->seqno = eager_stream_tail(s);
	e->recorded = true;
	return 0;
}

/* Make sure the event's job exists (has been submitted). */
static int event_submit(eager_event_t *e)
{
	if (e->stream && e->seqno > e->stream->submitted)
		return eager_flush(e->stream, EAGER_FLUSH_SYNC);
	return 0;
}

int eager_event_query(eager_event_t *e)
{
	int ret;

	if (!e)
		return -EINVAL;
	if (!e->stream)
		return 0;
	ret = event_submit(e);
	return ret ? ret : eager_seqno_status(e->stream, e->seqno);
}

int eager_event_synchronize(eager_event_t *e)
{
	struct trn_fence f;
	int ret;

	if (!e)
		return -EINVAL;
	if (!e->stream || !e->seqno)
		return 0;
	ret = event_submit(e);
	if (ret)
		return ret;
	f.queue = e->stream->q;
	f.seqno = e->seqno;
	return trn_fence_wait(&f, INT64_MAX);
}

int eager_stream_wait_event(eager_stream_t *s, eager_event_t *e)
{
	struct trn_fence f;
	unsigned int i;
	int ret;

	if (!s || !e)
		return -EINVAL;
	if (!e->stream || e->stream == s || !e->seqno)
		return 0;	/* never recorded, or ordered by the stream */
	ret = event_submit(e);
	if (ret)
		return ret;
	if (eager_seqno_status(e->stream, e->seqno) != 1)
		return 0;	/* already finished: nothing to wait for */
	/* What @s recorded before the wait must not wait. */
	if (pending(s)) {
		ret = eager_flush(s, EAGER_FLUSH_SYNC);
		if (ret)
			return ret;
	}
	f.queue = e->stream->q;
	f.seqno = e->seqno;
	for (i = 0; i < s->nwaits; i++)
		if (s->waits[i].queue == f.queue) {
			if (s->waits[i].seqno < f.seqno)
				s->waits[i].seqno = f.seqno;
			return 0;
		}
	if (s->nwaits == EAGER_MAX_STREAMS)
		return -ENOSPC;
	s->waits[s->nwaits++] = f;
	/* The job that carries the wait goes out now if the queue is dry. */
	return maybe_flush(s);
}

int eager_event_timestamp(eager_event_t *e, uint64_t *ns)
{
	int ret;

	if (!e || e->ts_slot < 0 || !e->recorded)
		return -EINVAL;
	ret = eager_event_synchronize(e);
	if (ret)
		return ret;
	*ns = e->be->ts_map[e->ts_slot];
	return 0;
}

int eager_event_elapsed_ns(eager_event_t *start, eager_event_t *end,
			   uint64_t *ns)
{
	uint64_t t0, t1;
	int ret;

	ret = eager_event_timestamp(start, &t0);
	if (!ret)
		ret = eager_event_timestamp(end, &t1);
	if (ret)
		return ret;
	if (t1 < t0)
		return -ERANGE;	/* @end ran before @start */
	*ns = t1 - t0;
	return 0;
}
