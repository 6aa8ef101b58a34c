// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * The caching allocator: one device buffer per block, blocks in power of
 * two size classes, freed blocks kept in per-class free lists and handed
 * out again once no job that used them can still run (see alloc_ok()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "eager_internal.h"

static unsigned int size_class(uint64_t size, uint64_t *class_size)
{
	unsigned int cls = 0;
	uint64_t s = EAGER_MIN_BLOCK;

	while (s < size && cls + 1 < EAGER_NUM_CLASSES) {
		s <<= 1;
		cls++;
	}
	*class_size = s;
	return cls;
}

void eager_pool_init(struct eager_pool *p, struct eager_backend *be,
		     uint32_t placement, bool strict)
{
	memset(p, 0, sizeof(*p));
	p->be = be;
	p->placement = placement;
	p->strict = strict;
}

static void block_destroy(struct eager_block *b)
{
	if (b->map)
		trn_bo_unmap(b->bo);
	trn_bo_free(b->bo);
	free(b);
}

static void unlink_all(struct eager_pool *p, struct eager_block *b)
{
	struct eager_block **pp;

	for (pp = &p->all; *pp; pp = &(*pp)->all_next)
		if (*pp == b) {
			*pp = b->all_next;
			return;
		}
}

void eager_pool_fini(struct eager_pool *p)
{
	struct eager_block *b, *next;

	/* Tensors still alive lose their storage here (see eager_shutdown). */
	for (b = p->all; b; b = next) {
		next = b->all_next;
		block_destroy(b);
	}
	memset(p->free_list, 0, sizeof(p->free_list));
	p->all = NULL;
}

/*
 * Whether cached block @b may be handed to stream @s (NULL: to the host,
 * or to nobody in particular). A job of another stream that used it must
 * have finished; a job of @s itself need not in a non-strict pool: @s
 * runs its jobs in order, so whatever @s does next with the block happens
 * after them. Staging blocks are written by the host at once: strict.
 */
static bool alloc_ok(struct eager_pool *p, struct eager_block *b,
		     eager_stream_t *s)
{
	unsigned int i;

	for (i = 0; i < b->nuses; i++) {
		struct eager_use *u = &b->uses[i];

		if (!p->strict && s && u->stream == s)
			continue;
		if (eager_seqno_status(u->stream, u->seqno) == 1)
			return false;
	}
	return true;
}

static void account_alloc(struct eager_pool *p, struct eager_block *b)
{
	struct eager_memory_stats *st = &p->st;

	st->allocated += b->size;
	st->requested += b->requested;
	st->allocs++;
	if (st->allocated > st->peak_allocated)
		st->peak_allocated = st->allocated;
}

static int block_create(struct eager_pool *p, uint64_t size, unsigned int cls,
			struct eager_block **out)
{
	struct eager_block *b;
	int ret;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	ret = trn_bo_create(p->be->dev, size, p->placement, 0, 0, &b->bo);
	if (!ret && p->placement == TRN_PLACEMENT_HOST)
		ret = trn_bo_map(b->bo, &b->map);
	if (ret) {
		if (b->bo)
			trn_bo_free(b->bo);
		free(b);
		return ret;
	}
	b->pool = p;
	b->va = trn_bo_va(b->bo);
	b->size = size;
	b->cls = cls;
	b->all_next = p->all;
	p->all = b;
	p->st.reserved += size;
	p->st.buffers_created++;
	if (p->st.reserved > p->st.peak_reserved)
		p->st.peak_reserved = p->st.reserved;
	*out = b;
	return 0;
}

int eager_block_alloc(struct eager_pool *p, eager_stream_t *s, uint64_t size,
		      struct eager_block **out)
{
	struct eager_block **pp, *b = NULL;
	uint64_t csize;
	unsigned int cls = size_class(size, &csize);
	int ret;

	if (size > csize)
		return -E2BIG;
	for (pp = &p->free_list[cls]; *pp; pp = &(*pp)->next)
		if (alloc_ok(p, *pp, s)) {
			b = *pp;
			*pp = b->next;
			p->st.blocks_cached--;
			p->st.cache_hits++;
			break;
		}
	if (!b) {
		p->st.cache_misses++;
		ret = block_create(p, csize, cls, &b);
		/*
		 * Out of device memory: give back cached blocks nobody uses
		 * any more and retry, then wait for every stream, give back
		 * all of them and retry once more.
		 */
		if (ret == -ENOMEM || ret == -EDQUOT) {
			p->st.oom_retries++;
			eager_pool_release(p, false);
			ret = block_create(p, csize, cls, &b);
			if (ret == -ENOMEM || ret == -EDQUOT) {
				eager_pool_release(p, true);
				ret = block_create(p, csize, cls, &b);
			}
		}
		if (ret)
			return ret;
	}
	b->in_use = true;
	b->requested = size;
	b->nuses = 0;
	b->use_mask = 0;
	b->next = NULL;
	account_alloc(p, b);
	*out = b;
	return 0;
}

/* Remember where @s stands; waits if the block has no room left. */
static void note_use(struct eager_block *b, eager_stream_t *s)
{
	uint64_t tail = eager_stream_tail(s);
	struct trn_fence f;

	if (!tail || eager_seqno_status(s, tail) != 1)
		return;		/* nothing of @s can still touch it */
	if (b->nuses == EAGER_BLOCK_FENCES) {
		/* Used by many streams: rare, so simply wait for this one. */
		eager_flush(s, EAGER_FLUSH_SYNC);
		f.queue = s->q;
		f.seqno = tail;
		trn_fence_wait(&f, INT64_MAX);
		return;
	}
	b->uses[b->nuses].stream = s;
	b->uses[b->nuses].seqno = tail;
	b->nuses++;
}

void eager_block_free(struct eager_block *b)
{
	struct eager_pool *p;
	unsigned int i;

	if (!b)
		return;
	p = b->pool;
	b->nuses = 0;
	for (i = 0; i < EAGER_MAX_STREAMS; i++)
		if ((b->use_mask >> i & 1) && p->be->streams[i])
			note_use(b, p->be->streams[i]);
	b->in_use = false;
	p->st.allocated -= b->size;
	p->st.requested -= b->requested;
	p->st.frees++;
	p->st.blocks_cached++;
	b->next = p->free_list[b->cls];
	p->free_list[b->cls] = b;
}

/* A stream goes away (synchronised): blocks no longer wait for it. */
void eager_pool_forget_stream(struct eager_pool *p, eager_stream_t *s)
{
	struct eager_block *b;
	unsigned int i, j;

	for (b = p->all; b; b = b->all_next) {
		b->use_mask &= ~(1ULL << s->id);
		for (i = j = 0; i < b->nuses; i++)
			if (b->uses[i].stream != s)
				b->uses[j++] = b->uses[i];
		b->nuses = j;
	}
}

/*
 * Give cached blocks' buffers back to the device: those no job can still
 * use, or (@wait) all of them after synchronising every stream.
 */
int eager_pool_release(struct eager_pool *p, bool wait)
{
	struct eager_block **pp, *b;
	unsigned int cls, i;
	int ret = 0, r;

	if (wait)
		for (i = 0; i < EAGER_MAX_STREAMS; i++)
			if (p->be->streams[i]) {
				/* Failures stay for the streams' owners. */
				r = eager_wait(p->be->streams[i]);
				if (r && !ret)
					ret = r;
			}
	for (cls = 0; cls < EAGER_NUM_CLASSES; cls++) {
		pp = &p->free_list[cls];
		while ((b = *pp)) {
			if (!alloc_ok(p, b, NULL)) {
				pp = &b->next;
				continue;
			}
			*pp = b->next;
			unlink_all(p, b);
			p->st.reserved -= b->size;
			p->st.blocks_cached--;
			p->st.buffers_released++;
			block_destroy(b);
		}
	}
	return ret;
}

int eager_memory_stats(struct eager_device dev, struct eager_memory_stats *st)
{
	struct eager_backend *be;
	int ret = eager_backend_get(dev, &be);

	if (ret)
		return ret;
	*st = be->hbm.st;
	st->cached = st->reserved - st->allocated;
	return 0;
}

int eager_memory_reset_peak(struct eager_device dev)
{
	struct eager_backend *be;
	int ret = eager_backend_get(dev, &be);

	if (ret)
		return ret;
	be->hbm.st.peak_allocated = be->hbm.st.allocated;
	be->hbm.st.peak_reserved = be->hbm.st.reserved;
	return 0;
}

int eager_empty_cache(struct eager_device dev)
{
	struct eager_backend *be;
	int ret = eager_backend_get(dev, &be);

	if (ret)
		return ret;
	ret = eager_pool_release(&be->hbm, true);
	eager_pool_release(&be->staging, true);
	return ret;
}
