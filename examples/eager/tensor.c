// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * Tensors: creation, copies between the host and devices through DMA
 * (device COPY commands to and from host staging buffers), reading back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "eager_internal.h"

size_t eager_dtype_size(enum eager_dtype dtype)
{
	return dtype == EAGER_BF16 ? 2 : 4;
}

const char *eager_dtype_name(enum eager_dtype dtype)
{
	return dtype == EAGER_BF16 ? "bf16" : "f32";
}

uint16_t eager_f32_to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40);	/* quiet NaN */
	u += 0x7fffu + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

float eager_bf16_to_f32(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

int64_t eager_cols(const eager_tensor_t *t)
{
	return t->shape[t->ndim - 1];
}

int64_t eager_rows(const eager_tensor_t *t)
{
	return t->numel / eager_cols(t);
}

int eager_tensor_new(struct eager_device dev, enum eager_dtype dtype,
		     int ndim, const int64_t *shape, eager_tensor_t **out)
{
	struct eager_backend *be = NULL;
	eager_stream_t *s = NULL;
	eager_tensor_t *t;
	int64_t numel = 1;
	int i, ret;

	if (ndim < 1 || ndim > EAGER_MAX_DIMS || !shape || !out ||
	    (dtype != EAGER_F32 && dtype != EAGER_BF16))
		return -EINVAL;
	for (i = 0; i < ndim; i++) {
		if (shape[i] < 1 || shape[i] > (INT64_C(1) << 40) / numel)
			return -EINVAL;
		numel *= shape[i];
	}
	if (dev.type == EAGER_TRN) {
		ret = eager_backend_stream(dev, &be, &s);
		if (ret)
			return ret;
	} else if (dev.type != EAGER_CPU) {
		return -EINVAL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->device = dev;
	t->dtype = dtype;
	t->ndim = ndim;
	t->numel = numel;
	t->nbytes = (uint64_t)numel * eager_dtype_size(dtype);
	for (i = ndim - 1; i >= 0; i--) {
		t->shape[i] = shape[i];
		t->strides[i] = i == ndim - 1 ? 1 :
				t->strides[i + 1] * t->shape[i + 1];
	}
	if (be) {
		ret = eager_block_alloc(&be->hbm, s, t->nbytes, &t->block);
		if (!ret)
			t->va = t->block->va;
	} else {
		/* 64-byte aligned, whole 8-byte words: safe for any copy. */
		t->host = aligned_alloc(64, (t->nbytes + 63) & ~(uint64_t)63);
		ret = t->host ? 0 : -ENOMEM;
	}
	if (ret) {
		free(t);
		return ret;
	}
	*out = t;
	return 0;
}

int eager_empty(struct eager_device dev, enum eager_dtype dtype, int ndim,
		const int64_t *shape, eager_tensor_t **out)
{
	return eager_tensor_new(dev, dtype, ndim, shape, out);
}

int eager_zeros(struct eager_device dev, enum eager_dtype dtype, int ndim,
		const int64_t *shape, eager_tensor_t **out)
{
	int ret = eager_tensor_new(dev, dtype, ndim, shape, out);

	if (ret)
		return ret;
	if (dev.type == EAGER_CPU) {
		memset((*out)->host, 0, (*out)->nbytes);
		return 0;
	}
	ret = eager_fill(*out, 0.0f);
	if (ret) {
		eager_free(*out);
		*out = NULL;
	}
	return ret;
}

void eager_free(eager_tensor_t *t)
{
	if (!t)
		return;
	if (t->block)
		eager_block_free(t->block);
	free(t->host);
	free(t);
}

/* Byte offset of device tensor @t in its block. */
static uint64_t offset_of(const eager_tensor_t *t)
{
	return t->va - eager_block_va(t->block);
}

int eager_from_host(struct eager_device dev, enum eager_dtype dtype,
		    int ndim, const int64_t *shape, const void *data,
		    eager_tensor_t **out)
{
	int ret;

	if (!data)
		return -EINVAL;
	ret = eager_tensor_new(dev, dtype, ndim, shape, out);
	if (ret)
		return ret;
	if (dev.type == EAGER_CPU) {
		memcpy((*out)->host, data, (*out)->nbytes);
		return 0;
	}
	ret = eager_raw_write((*out)->block, offset_of(*out), data,
			      (*out)->nbytes);
	if (ret) {
		eager_free(*out);
		*out = NULL;
	}
	return ret;
}

int eager_read(const eager_tensor_t *t, void *dst)
{
	if (!t || !dst)
		return -EINVAL;
	if (t->device.type == EAGER_CPU) {
		memcpy(dst, t->host, t->nbytes);
		return 0;
	}
	return eager_raw_read(t->block, offset_of(t), dst, t->nbytes);
}

int eager_read_f32(const eager_tensor_t *t, float *dst)
{
	uint16_t *tmp;
	int64_t i;
	int ret;

	if (!t || !dst)
		return -EINVAL;
	if (t->dtype == EAGER_F32)
		return eager_read(t, dst);
	tmp = malloc(t->nbytes);
	if (!tmp)
		return -ENOMEM;
	ret = eager_read(t, tmp);
	for (i = 0; !ret && i < t->numel; i++)
		dst[i] = eager_bf16_to_f32(tmp[i]);
	free(tmp);
	return ret;
}

int eager_to(const eager_tensor_t *t, struct eager_device dev,
	     eager_tensor_t **out)
{
	void *tmp;
	int ret;

	if (!t || !out)
		return -EINVAL;
	if (t->device.type == EAGER_CPU)
		return eager_from_host(dev, t->dtype, t->ndim, t->shape,
				       t->host, out);
	if (dev.type == EAGER_CPU) {
		ret = eager_tensor_new(dev, t->dtype, t->ndim, t->shape, out);
		if (ret)
			return ret;
		ret = eager_read(t, (*out)->host);
		if (ret) {
			eager_free(*out);
			*out = NULL;
		}
		return ret;
	}
	if (dev.index == t->device.index) {
		ret = eager_tensor_new(dev, t->dtype, t->ndim, t->shape, out);
		if (ret)
			return ret;
		ret = eager_copy(*out, t);
		if (ret) {
			eager_free(*out);
			*out = NULL;
		}
		return ret;
	}
	/* Another device: through the host (no peer-to-peer DMA here). */
	tmp = malloc(t->nbytes);
	if (!tmp)
		return -ENOMEM;
	ret = eager_read(t, tmp);
	if (!ret)
		ret = eager_from_host(dev, t->dtype, t->ndim, t->shape, tmp,
				      out);
	free(tmp);
	return ret;
}
