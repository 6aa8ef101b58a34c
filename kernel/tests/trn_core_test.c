// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * KUnit tests of the trn core's pure logic: the size rules of
 * DRM_IOCTL_TRN_QUERY answers and the validation of backend descriptions.
 */

#include <kunit/device.h>
#include <kunit/test.h>
#include <linux/mman.h>
#include <linux/sizes.h>
#include <linux/uaccess.h>

#include <uapi/drm/trn_accel.h>

#include "../trn_compat.h"
#include "../trn_drv.h"

#define ANSWER_SIZE	64
#define ANSWER_MIN	48

struct copy_ctx {
	u8 answer[ANSWER_SIZE];
	unsigned long ubuf;	/* a user page, filled with 0xaa */
};

static struct copy_ctx *copy_ctx_init(struct kunit *test)
{
	struct copy_ctx *ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	u8 fill[ANSWER_SIZE * 2];
	int i;

	KUNIT_ASSERT_NOT_NULL(test, ctx);
	for (i = 0; i < ANSWER_SIZE; i++)
		ctx->answer[i] = i + 1;
	ctx->ubuf = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE,
				  PROT_READ | PROT_WRITE,
				  MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, ctx->ubuf, 0, "no user memory for the test");
	memset(fill, 0xaa, sizeof(fill));
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)ctx->ubuf, fill,
					   sizeof(fill)), 0);
	return ctx;
}

/* Bytes of the user buffer that no longer hold the 0xaa fill. */
static int copy_ctx_written(struct kunit *test, struct copy_ctx *ctx)
{
	u8 back[ANSWER_SIZE * 2];
	int i, n = 0;

	KUNIT_ASSERT_EQ(test, copy_from_user(back, (void __user *)ctx->ubuf,
					     sizeof(back)), 0);
	for (i = 0; i < sizeof(back); i++)
		if (back[i] != 0xaa)
			n = i + 1;
	return n;
}

static void query_size_zero_reports_size(struct kunit *test)
{
	struct copy_ctx *ctx = copy_ctx_init(test);
	struct drm_trn_query q = { .size = 0, .data = ctx->ubuf };

	KUNIT_EXPECT_EQ(test, trn_query_copy_out(&q, ctx->answer, ANSWER_SIZE,
						 ANSWER_MIN), 0);
	KUNIT_EXPECT_EQ(test, q.size, ANSWER_SIZE);
	KUNIT_EXPECT_EQ(test, copy_ctx_written(test, ctx), 0);
}

static void query_short_size_rejected(struct kunit *test)
{
	struct copy_ctx *ctx = copy_ctx_init(test);
	struct drm_trn_query q = { .size = ANSWER_MIN - 1, .data = ctx->ubuf };

	KUNIT_EXPECT_EQ(test, trn_query_copy_out(&q, ctx->answer, ANSWER_SIZE,
						 ANSWER_MIN), -EINVAL);
	KUNIT_EXPECT_EQ(test, q.size, ANSWER_MIN - 1);
	KUNIT_EXPECT_EQ(test, copy_ctx_written(test, ctx), 0);
}

static void query_old_size_gets_prefix(struct kunit *test)
{
	struct copy_ctx *ctx = copy_ctx_init(test);
	struct drm_trn_query q = { .size = ANSWER_MIN, .data = ctx->ubuf };
	u8 back[ANSWER_MIN];

	KUNIT_EXPECT_EQ(test, trn_query_copy_out(&q, ctx->answer, ANSWER_SIZE,
						 ANSWER_MIN), 0);
	KUNIT_EXPECT_EQ(test, q.size, ANSWER_MIN);
	KUNIT_EXPECT_EQ(test, copy_ctx_written(test, ctx), ANSWER_MIN);
	KUNIT_ASSERT_EQ(test, copy_from_user(back, (void __user *)ctx->ubuf,
					     sizeof(back)), 0);
	KUNIT_EXPECT_MEMEQ(test, back, ctx->answer, ANSWER_MIN);
}

static void query_big_size_gets_all(struct kunit *test)
{
	struct copy_ctx *ctx = copy_ctx_init(test);
	struct drm_trn_query q = { .size = SZ_4K, .data = ctx->ubuf };

	KUNIT_EXPECT_EQ(test, trn_query_copy_out(&q, ctx->answer, ANSWER_SIZE,
						 ANSWER_MIN), 0);
	KUNIT_EXPECT_EQ(test, q.size, ANSWER_SIZE);
	KUNIT_EXPECT_EQ(test, copy_ctx_written(test, ctx), ANSWER_SIZE);
}

static void query_bad_pointer_faults(struct kunit *test)
{
	struct copy_ctx *ctx = copy_ctx_init(test);
	struct drm_trn_query q = { .size = ANSWER_SIZE, .data = 0 };

	KUNIT_EXPECT_EQ(test, trn_query_copy_out(&q, ctx->answer, ANSWER_SIZE,
						 ANSWER_MIN), -EFAULT);
	KUNIT_EXPECT_EQ(test, q.size, ANSWER_SIZE);

	/* A kernel address is never a valid user pointer. */
	q.data = (uintptr_t)ctx->answer;
	KUNIT_EXPECT_EQ(test, trn_query_copy_out(&q, ctx->answer, ANSWER_SIZE,
						 ANSWER_MIN), -EFAULT);
	KUNIT_EXPECT_EQ(test, q.size, ANSWER_SIZE);
}

static const struct trn_device_desc good_desc = {
	.generation = DRM_TRN_GEN_SIM,
	.num_cores = 8,
	.queues_per_core = 4,
	.hbm_size = SZ_256M,
	.hbm_stacks = 4,
	.va_start = SZ_4G,
	.va_size = SZ_4G,
	.ring_entries = 256,
};

struct desc_case {
	const char *name;
	void (*mutate)(struct trn_device_desc *desc);
	int expect;
};

static void no_change(struct trn_device_desc *d)
{
}

static void no_cores(struct trn_device_desc *d)
{
	d->num_cores = 0;
}

static void no_queues(struct trn_device_desc *d)
{
	d->queues_per_core = 0;
}

static void no_hbm(struct trn_device_desc *d)
{
	d->hbm_size = 0;
}

static void no_stacks(struct trn_device_desc *d)
{
	d->hbm_stacks = 0;
}

static void too_many_stacks(struct trn_device_desc *d)
{
	d->hbm_stacks = TRN_MAX_HBM_STACKS + 1;
}

static void most_stacks(struct trn_device_desc *d)
{
	d->hbm_stacks = TRN_MAX_HBM_STACKS;
}

static void stacks_uneven(struct trn_device_desc *d)
{
	d->hbm_stacks = 3;
}

static void stack_not_pages(struct trn_device_desc *d)
{
	d->hbm_size = 3 * SZ_4K;
	d->hbm_stacks = 2;
}

static void va_start_unaligned(struct trn_device_desc *d)
{
	d->va_start++;
}

static void va_size_unaligned(struct trn_device_desc *d)
{
	d->va_size--;
}

static void va_size_zero(struct trn_device_desc *d)
{
	d->va_size = 0;
}

static void va_wraps(struct trn_device_desc *d)
{
	d->va_start = U64_MAX - SZ_4K + 1;
	d->va_size = SZ_8K;
}

static void ring_not_pow2(struct trn_device_desc *d)
{
	d->ring_entries = 100;
}

static void ring_too_small(struct trn_device_desc *d)
{
	d->ring_entries = 8;
}

static void ring_too_big(struct trn_device_desc *d)
{
	d->ring_entries = 1U << 17;
}

static const struct desc_case desc_cases[] = {
	{ "valid", no_change, 0 },
	{ "no_cores", no_cores, -EINVAL },
	{ "no_queues", no_queues, -EINVAL },
	{ "no_hbm", no_hbm, -EINVAL },
	{ "no_stacks", no_stacks, -EINVAL },
	{ "too_many_stacks", too_many_stacks, -EINVAL },
	{ "most_stacks", most_stacks, 0 },
	{ "stacks_uneven", stacks_uneven, -EINVAL },
	{ "stack_not_pages", stack_not_pages, -EINVAL },
	{ "va_start_unaligned", va_start_unaligned, -EINVAL },
	{ "va_size_unaligned", va_size_unaligned, -EINVAL },
	{ "va_size_zero", va_size_zero, -EINVAL },
	{ "va_wraps", va_wraps, -EINVAL },
	{ "ring_not_pow2", ring_not_pow2, -EINVAL },
	{ "ring_too_small", ring_too_small, -EINVAL },
	{ "ring_too_big", ring_too_big, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(desc, desc_cases, name);

static void desc_validate(struct kunit *test)
{
	const struct desc_case *c = test->param_value;
	struct trn_device_desc desc = good_desc;
	struct device *dev;

	dev = kunit_device_register(test, "trn-kunit");
	KUNIT_ASSERT_FALSE(test, IS_ERR(dev));
	c->mutate(&desc);
	KUNIT_EXPECT_EQ(test, trn_desc_validate(dev, &desc), c->expect);
}

static struct kunit_case trn_core_cases[] = {
	KUNIT_CASE(query_size_zero_reports_size),
	KUNIT_CASE(query_short_size_rejected),
	KUNIT_CASE(query_old_size_gets_prefix),
	KUNIT_CASE(query_big_size_gets_all),
	KUNIT_CASE(query_bad_pointer_faults),
	KUNIT_CASE_PARAM(desc_validate, desc_gen_params),
	{}
};

static struct kunit_suite trn_core_suite = {
	.name = "trn_core",
	.test_cases = trn_core_cases,
};

kunit_test_suite(trn_core_suite);
