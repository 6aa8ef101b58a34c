// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * Devices: names, the per-device state opened on first use, the probe of
 * MATMUL's transpose flags, shutdown.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eager_internal.h"

static struct eager_backend *backends[EAGER_MAX_DEVICES];

int eager_device_parse(const char *text, struct eager_device *dev)
{
	unsigned long n;
	char *end;

	if (!text || !dev)
		return -EINVAL;
	if (!strcmp(text, "cpu")) {
		*dev = EAGER_DEVICE_CPU;
		return 0;
	}
	if (!strcmp(text, "trn")) {
		*dev = EAGER_DEVICE_TRN(0);
		return 0;
	}
	if (strncmp(text, "trn:", 4) || text[4] < '0' || text[4] > '9')
		return -EINVAL;
	errno = 0;
	n = strtoul(text + 4, &end, 10);
	if (errno || *end || n >= EAGER_MAX_DEVICES)
		return -EINVAL;
	*dev = EAGER_DEVICE_TRN((unsigned int)n);
	return 0;
}

const char *eager_device_name(struct eager_device dev, char *buf, size_t size)
{
	if (dev.type == EAGER_CPU)
		snprintf(buf, size, "cpu");
	else
		snprintf(buf, size, "trn:%u", dev.index);
	return buf;
}

int eager_backend_stream(struct eager_device dev, struct eager_backend **be,
			 eager_stream_t **s)
{
	int ret = eager_backend_get(dev, be);

	if (ret)
		return ret;
	*s = eager_current_stream(dev);
	return *s ? 0 : -ENODEV;
}

int eager_device_count(size_t *count)
{
	return trn_device_list(NULL, 0, count);
}

static void backend_free(struct eager_backend *be)
{
	unsigned int i;

	for (i = 0; i < EAGER_MAX_STREAMS; i++)
		if (be->streams[i])
			eager_stream_synchronize(be->streams[i]);
	for (i = 0; i < EAGER_MAX_STREAMS; i++)
		if (be->streams[i])
			eager_stream_free(be->streams[i]);
	eager_pool_fini(&be->staging);
	eager_pool_fini(&be->hbm);
	if (be->ts_map)
		trn_bo_unmap(be->ts_bo);
	trn_bo_free(be->ts_bo);
	trn_device_close(be->dev);
	free(be);
}

static int backend_open(unsigned int index, struct eager_backend **out)
{
	unsigned int minors[EAGER_MAX_DEVICES];
	struct eager_backend *be;
	size_t n;
	void *map;
	int ret;

	ret = trn_device_list(minors, EAGER_MAX_DEVICES, &n);
	if (ret)
		return ret;
	if (index >= n || index >= EAGER_MAX_DEVICES)
		return -ENODEV;
	be = calloc(1, sizeof(*be));
	if (!be)
		return -ENOMEM;
	be->index = index;
	be->has_transpose = -1;
	eager_pool_init(&be->hbm, be, TRN_PLACEMENT_HBM, false);
	eager_pool_init(&be->staging, be, TRN_PLACEMENT_HOST, true);
	ret = trn_device_open(minors[index], &be->dev);
	if (!ret)
		ret = trn_device_info(be->dev, &be->info);
	/* Timing events' timestamps: pinned host memory the device writes. */
	if (!ret)
		ret = trn_bo_create(be->dev, EAGER_TS_SLOTS * 8,
				    TRN_PLACEMENT_HOST, 0, 0, &be->ts_bo);
	if (!ret) {
		ret = trn_bo_map(be->ts_bo, &map);
		if (!ret)
			be->ts_map = map;
	}
	if (ret) {
		backend_free(be);
		return ret;
	}
	*out = be;
	return 0;
}

int eager_backend_get(struct eager_device dev, struct eager_backend **out)
{
	int ret;

	if (dev.type != EAGER_TRN || dev.index >= EAGER_MAX_DEVICES)
		return -EINVAL;
	if (!backends[dev.index]) {
		ret = backend_open(dev.index, &backends[dev.index]);
		if (ret)
			return ret;
	}
	*out = backends[dev.index];
	return 0;
}

int eager_device_handle(struct eager_device dev, trn_device_t **out)
{
	struct eager_backend *be;
	int ret = eager_backend_get(dev, &be);

	if (!ret)
		*out = be->dev;
	return ret;
}

/*
 * Run C = A^T B^T for 2x2 matrices with both flags and compare: the flags
 * must be accepted by libtrnhal (else -EINVAL when recording) and
 * implemented by the device (else the job fails with -EILSEQ).
 */
static int probe_transpose(struct eager_backend *be)
{
	/* A stored [k][m], B stored [n][k]; k = m = n = 2. */
	static const float a_t[4] = { 1, 2, 3, 4 };	/* A = [[1,3],[2,4]] */
	static const float b_t[4] = { 5, 6, 7, 8 };	/* B = [[5,7],[6,8]] */
	static const float want[4] = { 23, 31, 34, 46 };
	const int64_t shape[2] = { 2, 2 };
	eager_tensor_t *a = NULL, *b = NULL, *c = NULL;
	struct eager_device dev = EAGER_DEVICE_TRN(be->index);
	struct trn_matmul mm;
	eager_stream_t *s;
	float got[4];
	int ret, prior;

	s = eager_current_stream(dev);
	if (!s)
		return -ENODEV;
	/*
	 * An error of the caller's earlier work must neither be taken for the
	 * probe's nor be lost: set it aside and give it back afterwards.
	 */
	prior = eager_sync(s);
	ret = eager_from_host(dev, EAGER_F32, 2, shape, a_t, &a);
	if (!ret)
		ret = eager_from_host(dev, EAGER_F32, 2, shape, b_t, &b);
	if (!ret)
		ret = eager_zeros(dev, EAGER_F32, 2, shape, &c);
	if (ret)
		goto out;
	memset(&mm, 0, sizeof(mm));
	mm.m = mm.n = mm.k = 2;
	mm.flags = TRN_MATMUL_TRANSPOSE_A | TRN_MATMUL_TRANSPOSE_B;
	mm.a = a->va;
	mm.lda = 8;
	mm.b = b->va;
	mm.ldb = 8;
	mm.c = c->va;
	mm.ldc = 8;
	eager_op_begin(s);
	ret = eager_op_use(s, a->block);
	if (!ret)
		ret = eager_op_use(s, b->block);
	if (!ret)
		ret = eager_op_use(s, c->block);
	if (!ret)
		EAGER_EMIT(ret, s, trn_cmd_matmul(eager_cmdbuf(s), &mm));
	if (!ret)
		ret = eager_op_end(s);
	if (ret == -EINVAL) {		/* libtrnhal does not know the flags */
		ret = 0;
		goto out;
	}
	if (!ret)
		ret = eager_sync(s);
	if (ret == -EILSEQ) {		/* the device does not know them */
		s->error = 0;
		ret = 0;
		goto out;
	}
	if (!ret)
		ret = eager_read(c, got);
	if (!ret)
		be->has_transpose = !memcmp(got, want, sizeof(want));
out:
	eager_free(a);
	eager_free(b);
	eager_free(c);
	if (!ret && be->has_transpose < 0)
		be->has_transpose = 0;
	if (prior && !s->error) {
		s->error = prior;
		s->error_seq = 0;	/* before anything since */
	}
	return ret;
}

int eager_device_capabilities(struct eager_device dev, uint64_t *caps)
{
	struct eager_backend *be;
	int ret = eager_backend_get(dev, &be);

	if (ret)
		return ret;
	*caps = be->info.capabilities;
	return 0;
}

int eager_device_has_transpose(struct eager_device dev)
{
	struct eager_backend *be;
	const char *env;
	int ret;

	ret = eager_backend_get(dev, &be);
	if (ret)
		return ret;
	if (be->has_transpose < 0) {
		env = getenv("EAGER_NO_TRANSPOSE");
		if (env && *env && strcmp(env, "0")) {
			be->has_transpose = 0;
		} else {
			ret = probe_transpose(be);
			if (ret)
				return ret;
		}
	}
	return be->has_transpose;
}

void eager_shutdown(void)
{
	unsigned int i;

	for (i = 0; i < EAGER_MAX_DEVICES; i++) {
		if (backends[i])
			backend_free(backends[i]);
		backends[i] = NULL;
	}
}
