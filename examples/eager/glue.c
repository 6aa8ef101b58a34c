// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * glue.c - what a framework backend built on this runtime needs beyond
 * owning tensors (pytorch/ uses it): raw blocks of the caching allocator,
 * so that the framework's storages and views share one allocator with
 * eager's own tensors, and tensor headers over part of such a block.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "eager_internal.h"

int eager_raw_alloc(struct eager_device dev, uint64_t size,
		    struct eager_block **out)
{
	struct eager_backend *be;
	eager_stream_t *s;
	int ret;

	if (!out || !size || dev.type != EAGER_TRN)
		return -EINVAL;
	ret = eager_backend_stream(dev, &be, &s);
	return ret ? ret : eager_block_alloc(&be->hbm, s, size, out);
}

int eager_pinned_alloc(struct eager_device dev, uint64_t size,
		       struct eager_block **out, void **cpu)
{
	struct eager_backend *be;
	int ret;

	if (!out || !cpu || !size || dev.type != EAGER_TRN)
		return -EINVAL;
	ret = eager_backend_get(dev, &be);
	if (!ret)
		ret = eager_block_alloc(&be->staging, NULL, size, out);
	if (!ret)
		*cpu = (*out)->map;
	return ret;
}

void eager_raw_free(struct eager_block *b)
{
	if (b)
		eager_block_free(b);
}

uint64_t eager_block_va(const struct eager_block *b)
{
	return b->va;
}

struct eager_device eager_block_device(const struct eager_block *b)
{
	return EAGER_DEVICE_TRN(b->pool->be->index);
}

int eager_view(struct eager_block *b, uint64_t offset, enum eager_dtype dtype,
	       int ndim, const int64_t *shape, eager_tensor_t *t)
{
	int64_t numel = 1;
	int i;

	if (!b || !t || !shape || ndim < 1 || ndim > EAGER_MAX_DIMS ||
	    (dtype != EAGER_F32 && dtype != EAGER_BF16))
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	for (i = ndim - 1; i >= 0; i--) {
		if (shape[i] < 1)
			return -EINVAL;
		t->shape[i] = shape[i];
		t->strides[i] = numel;
		numel *= shape[i];
	}
	t->device = eager_block_device(b);
	t->dtype = dtype;
	t->ndim = ndim;
	t->numel = numel;
	t->nbytes = (uint64_t)numel * eager_dtype_size(dtype);
	if (offset > b->size || t->nbytes > b->size - offset)
		return -ERANGE;
	t->block = b;
	t->va = b->va + offset;
	return 0;
}

static bool in_block(const struct eager_block *b, uint64_t offset,
		     uint64_t size)
{
	return offset <= b->size && size <= b->size - offset;
}

/* Record COPY of @size bytes between two blocks on @s. */
static int record(eager_stream_t *s, struct eager_block *dst, uint64_t dva,
		  struct eager_block *src, uint64_t sva, uint64_t size)
{
	int ret;

	eager_op_begin(s);
	ret = eager_op_use(s, dst);
	if (!ret && src != dst)
		ret = eager_op_use(s, src);
	if (!ret)
		EAGER_EMIT(ret, s, trn_cmd_copy(eager_cmdbuf(s), dva, sva, size));
	return ret ? ret : eager_op_end(s);
}

/* The current stream of @b's device and a staging block of @size bytes. */
static int stage_for(struct eager_block *b, uint64_t size, eager_stream_t **s,
		     struct eager_block **stage)
{
	struct eager_device dev = eager_block_device(b);

	*s = eager_current_stream(dev);
	if (!*s)
		return -ENODEV;
	return eager_block_alloc(&b->pool->be->staging, NULL, size, stage);
}

/*
 * Copy @size bytes between host memory @host and @b at @offset through a
 * staging block: to the device (returns once staged) or from it (waits).
 */
static int staged(struct eager_block *b, uint64_t offset, void *host,
		  uint64_t size, bool to_device)
{
	struct eager_block *stage;
	eager_stream_t *s;
	int ret;

	if (!b || !host || !in_block(b, offset, size))
		return -EINVAL;
	if (!size)
		return 0;
	ret = stage_for(b, size, &s, &stage);
	if (ret)
		return ret;
	if (to_device) {
		memcpy(stage->map, host, size);
		ret = record(s, b, b->va + offset, stage, stage->va, size);
	} else {
		ret = record(s, stage, stage->va, b, b->va + offset, size);
		if (!ret)
			ret = eager_sync(s);
		if (!ret)
			memcpy(host, stage->map, size);
	}
	eager_block_free(stage);
	return ret;
}

int eager_raw_write(struct eager_block *b, uint64_t offset, const void *src,
		    uint64_t size)
{
	return staged(b, offset, (void *)src, size, true);
}

int eager_raw_read(struct eager_block *b, uint64_t offset, void *dst,
		   uint64_t size)
{
	return staged(b, offset, dst, size, false);
}

int eager_raw_copy(struct eager_block *dst, uint64_t dst_offset,
		   struct eager_block *src, uint64_t src_offset, uint64_t size)
{
	eager_stream_t *s;

	if (!dst || !src || dst->pool->be != src->pool->be ||
	    !in_block(dst, dst_offset, size) || !in_block(src, src_offset, size))
		return -EINVAL;
	if (!size)
		return 0;
	s = eager_current_stream(eager_block_device(dst));
	if (!s)
		return -ENODEV;
	return record(s, dst, dst->va + dst_offset, src, src->va + src_offset,
		      size);
}
