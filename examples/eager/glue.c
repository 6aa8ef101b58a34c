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

/* One dimension of a strided copy: elements, and strides in elements. */
struct copy_dim {
	int64_t size, dst, src;
};

/*
 * The dims of a strided copy without those of one element, merged where
 * both sides step through them as through one (row-major order kept).
 * Returns how many are left; -1 if a destination stride is 0 with more
 * than one element (the elements would land on each other).
 */
static int copy_dims(int ndim, const int64_t *shape, const int64_t *dst_st,
		     const int64_t *src_st, struct copy_dim *d)
{
	int i, n = 0;

	for (i = 0; i < ndim; i++) {
		if (shape[i] == 1)
			continue;
		if (!dst_st[i])
			return -1;
		/* Unsigned: strides are not negative, products may wrap. */
		if (n && (uint64_t)d[n - 1].dst ==
				 (uint64_t)dst_st[i] * (uint64_t)shape[i] &&
		    (uint64_t)d[n - 1].src ==
				 (uint64_t)src_st[i] * (uint64_t)shape[i]) {
			d[n - 1].size *= shape[i];
			d[n - 1].dst = dst_st[i];
			d[n - 1].src = src_st[i];
			continue;
		}
		d[n++] = (struct copy_dim){ shape[i], dst_st[i], src_st[i] };
	}
	return n;
}

/* The last byte offset + 1 an operand reaches from @offset. */
static bool copy_span(const struct copy_dim *d, int n, bool dst,
		      uint64_t offset, uint64_t es, uint64_t *end)
{
	uint64_t span = 0, step;
	int i;

	for (i = 0; i < n; i++) {
		int64_t st = dst ? d[i].dst : d[i].src;

		if (__builtin_mul_overflow((uint64_t)(d[i].size - 1),
					   (uint64_t)st, &step) ||
		    __builtin_add_overflow(span, step, &span))
			return false;
	}
	return !__builtin_mul_overflow(span, es, &span) &&
	       !__builtin_add_overflow(span, es, &span) &&
	       !__builtin_add_overflow(span, offset, end);
}

int eager_raw_copy_strided(struct eager_block *dst, uint64_t dst_offset,
			   const int64_t *dst_strides, struct eager_block *src,
			   uint64_t src_offset, const int64_t *src_strides,
			   int ndim, const int64_t *shape, uint64_t elem_size,
			   uint64_t max_cmds)
{
	struct copy_dim d[EAGER_COPY_MAX_DIMS];
	int64_t idx[EAGER_COPY_MAX_DIMS] = { 0 };
	uint64_t dend, send, width, cmds = 1, dva, sva;
	int i, n, rows = -1;
	eager_stream_t *s;
	int ret;

	if (!dst || !src || !shape || !dst_strides || !src_strides ||
	    dst->pool->be != src->pool->be || ndim < 0 ||
	    ndim > EAGER_COPY_MAX_DIMS || !elem_size)
		return -EINVAL;
	for (i = 0; i < ndim; i++)
		if (shape[i] < 0 || dst_strides[i] < 0 || src_strides[i] < 0)
			return -EINVAL;
	for (i = 0; i < ndim; i++)
		if (!shape[i])
			return 0;
	n = copy_dims(ndim, shape, dst_strides, src_strides, d);
	if (n < 0 || !copy_span(d, n, true, dst_offset, elem_size, &dend) ||
	    !copy_span(d, n, false, src_offset, elem_size, &send) ||
	    dend > dst->size || send > src->size)
		return -EINVAL;
	/* COPY leaves overlapping bytes unspecified (isa.md): refuse them. */
	if (dst == src && dst_offset < send && src_offset < dend)
		return -EINVAL;
	/* Rows: the innermost dim if both sides are dense in it, ... */
	width = elem_size;
	if (n && d[n - 1].dst == 1 && d[n - 1].src == 1) {
		width *= d[n - 1].size;
		n--;
	}
	/* ... repeated along the longest of the others, once per command. */
	for (i = 0; i < n; i++)
		if (rows < 0 || d[i].size > d[rows].size)
			rows = i;
	for (i = 0; i < n; i++)
		if (i != rows &&
		    (__builtin_mul_overflow(cmds, (uint64_t)d[i].size, &cmds) ||
		     cmds > max_cmds))
			return -E2BIG;
	if (cmds > max_cmds)
		return -E2BIG;
	s = eager_current_stream(eager_block_device(dst));
	if (!s)
		return -ENODEV;
	eager_op_begin(s);
	ret = eager_op_use(s, dst);
	if (!ret && src != dst)
		ret = eager_op_use(s, src);
	while (!ret) {
		dva = dst->va + dst_offset;
		sva = src->va + src_offset;
		for (i = 0; i < n; i++) {
			if (i == rows)
				continue;
			dva += idx[i] * d[i].dst * elem_size;
			sva += idx[i] * d[i].src * elem_size;
		}
		if (rows < 0)
			EAGER_EMIT(ret, s, trn_cmd_copy(eager_cmdbuf(s), dva,
							 sva, width));
		else
			EAGER_EMIT(ret, s, trn_cmd_copy2d(eager_cmdbuf(s), dva,
					d[rows].dst * elem_size, sva,
					d[rows].src * elem_size, width,
					d[rows].size));
		/* The next index, row-major over the dims but @rows. */
		for (i = n - 1; i >= 0; i--) {
			if (i == rows)
				continue;
			if (++idx[i] < d[i].size)
				break;
			idx[i] = 0;
		}
		if (i < 0)
			break;
	}
	return ret ? ret : eager_op_end(s);
}

int eager_raw_bytes_to_f32(struct eager_block *dst, uint64_t dst_offset,
			   struct eager_block *src, uint64_t src_offset,
			   uint64_t count)
{
	const uint64_t max_dim = TRN_ISA_MAX_DIM;
	uint64_t done = 0, left, cols, rows;
	eager_stream_t *s;
	int ret;

	if (!dst || !src || dst->pool->be != src->pool->be || dst_offset % 4 ||
	    count > UINT64_MAX / 4 || !in_block(src, src_offset, count) ||
	    !in_block(dst, dst_offset, 4 * count))
		return -EINVAL;
	if (dst == src && dst_offset < src_offset + count &&
	    src_offset < dst_offset + 4 * count)
		return -EINVAL;
	if (!count)
		return 0;
	s = eager_current_stream(eager_block_device(dst));
	if (!s)
		return -ENODEV;
	if (!(s->be->info.capabilities & TRN_CAP_SRC_U8))
		return -EOPNOTSUPP;
	eager_op_begin(s);
	ret = eager_op_use(s, dst);
	if (!ret && src != dst)
		ret = eager_op_use(s, src);
	/* Rows of up to 2^16 bytes; a last, shorter row for the rest. */
	while (!ret && done < count) {
		left = count - done;
		cols = left < max_dim ? left : max_dim;
		rows = left / cols < max_dim ? left / cols : max_dim;
		EAGER_EMIT(ret, s, trn_cmd_unary(eager_cmdbuf(s),
				TRN_UNARY_COPY, TRN_ELEM_SRC_U8,
				(uint32_t)rows, (uint32_t)cols,
				dst->va + dst_offset + 4 * done, 4 * cols,
				src->va + src_offset + done, cols));
		done += rows * cols;
	}
	return ret ? ret : eager_op_end(s);
}
