// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * KUnit tests of the simulator's control-file parser (what new_device and
 * del_device accept and what they refuse), of its device memory (pages
 * exist from hbm_populate to hbm_clear, and looking them up never
 * allocates), and of its check of user-mode queue descriptors.
 */

#include <kunit/test.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include <uapi/drm/trn_accel.h>

#include "../trn_compat.h"
#include "../trn_drv.h"
#include "../sim/trn_sim.h"

struct parse_case {
	const char *name;
	const char *buf;
	int max;
	int expect;		/* numbers found, or -errno */
	u32 vals[4];
};

static const struct parse_case parse_cases[] = {
	{ "one", "7", 4, 1, { 7 } },
	{ "four", "1 2 3 4", 4, 4, { 1, 2, 3, 4 } },
	{ "blanks_and_newline", " \t5\t 6\n", 4, 2, { 5, 6 } },
	{ "empty", "", 4, 0 },
	{ "only_blanks", " \t", 4, 0 },
	{ "only_newline", "\n", 4, 0 },
	{ "u32_max", "4294967295", 4, 1, { 4294967295U } },
	{ "too_many", "1 2 3 4 5", 4, -EINVAL },
	{ "negative", "-1", 4, -EINVAL },
	{ "letters", "1 x", 4, -EINVAL },
	{ "trailing_junk", "12abc", 4, -EINVAL },
	{ "overflow", "4294967296", 4, -EINVAL },
	{ "hex_is_not_decimal", "0x10", 4, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(parse, parse_cases, name);

static void parse_numbers(struct kunit *test)
{
	const struct parse_case *c = test->param_value;
	u32 vals[4] = {};
	int n;

	n = trn_sim_parse(c->buf, strlen(c->buf), vals, c->max);
	KUNIT_ASSERT_EQ(test, n, c->expect);
	if (n > 0)
		KUNIT_EXPECT_MEMEQ(test, vals, c->vals, n * sizeof(u32));
}

/* sysfs buffers are not terminated where the write ended. */
static void parse_honours_count(struct kunit *test)
{
	u32 vals[4] = {};

	KUNIT_EXPECT_EQ(test, trn_sim_parse("12 34", 2, vals, 4), 1);
	KUNIT_EXPECT_EQ(test, vals[0], 12);
}

struct shape_case {
	const char *name;
	const char *buf;
	int expect;
	struct trn_sim_shape shape;
};

static const struct shape_case shape_cases[] = {
	{ "defaults", "3", 0, { 3, 8, 4, 256, 4 } },
	{ "cores_only", "4 2", 0, { 4, 2, 4, 256, 4 } },
	{ "all_but_stacks", "5 2 64 1", 0, { 5, 2, 1, 64, 4 } },
	{ "all", "5 2 64 1 2", 0, { 5, 2, 1, 64, 2 } },
	{ "largest", "1023 64 4096 16 16", 0, { 1023, 64, 16, 4096, 16 } },
	{ "smallest", "0 1 1 1 1", 0, { 0, 1, 1, 1, 1 } },
	{ "stacks_of_pages", "1 8 3 4 16", 0, { 1, 8, 4, 3, 16 } },
	{ "empty", "", -EINVAL },
	{ "id_too_big", "1024", -EINVAL },
	{ "no_cores", "1 0", -EINVAL },
	{ "too_many_cores", "1 65", -EINVAL },
	{ "no_hbm", "1 8 0", -EINVAL },
	{ "too_much_hbm", "1 8 4097", -EINVAL },
	{ "no_queues", "1 8 256 0", -EINVAL },
	{ "too_many_queues", "1 8 256 17", -EINVAL },
	{ "no_stacks", "1 8 256 4 0", -EINVAL },
	{ "too_many_stacks", "1 8 256 4 17", -EINVAL },
	{ "stacks_not_pages", "1 8 1 4 3", -EINVAL },
	{ "extra_field", "1 8 256 4 4 9", -EINVAL },
	{ "garbage", "one", -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(shape, shape_cases, name);

static void parse_shape(struct kunit *test)
{
	const struct shape_case *c = test->param_value;
	struct trn_sim_shape untouched, shape;

	memset(&shape, 0x5a, sizeof(shape));
	untouched = shape;
	KUNIT_ASSERT_EQ(test, trn_sim_parse_shape(c->buf, strlen(c->buf),
						  &shape), c->expect);
	if (c->expect)
		KUNIT_EXPECT_MEMEQ(test, &shape, &untouched, sizeof(shape));
	else
		KUNIT_EXPECT_MEMEQ(test, &shape, &c->shape, sizeof(shape));
}

static struct kunit_case trn_sim_parse_cases[] = {
	KUNIT_CASE_PARAM(parse_numbers, parse_gen_params),
	KUNIT_CASE(parse_honours_count),
	KUNIT_CASE_PARAM(parse_shape, shape_gen_params),
	{}
};

static struct kunit_suite trn_sim_parse_suite = {
	.name = "trn_sim_parse",
	.test_cases = trn_sim_parse_cases,
};

#define VA0	0x100000000ULL
#define CTX	3

struct mem_env {
	struct trn_device tdev;
	struct trn_sim_dev sdev;
	bool mmu;
};

static void mem_env_free(void *data)
{
	struct mem_env *env = data;

	if (env->mmu)
		trn_sim_mmu_fini(&env->sdev);
	trn_sim_mem_fini(&env->sdev);
	kfree(env);
}

/* A 1 MiB device memory, nothing allocated in it. */
static struct mem_env *mem_env_new(struct kunit *test)
{
	struct mem_env *env = kzalloc(sizeof(*env), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, env);
	env->sdev.hbm_mib = 1;
	env->tdev.hw_priv = &env->sdev;
	env->sdev.tdev = &env->tdev;
	if (trn_sim_mem_init(&env->sdev)) {
		kfree(env);
		KUNIT_FAIL_AND_ABORT(test, "trn_sim_mem_init failed");
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mem_env_free,
							env), 0);
	return env;
}

static bool page_is_zero(struct page *page)
{
	void *p = kmap_local_page(page);
	bool zero = !memchr_inv(p, 0, PAGE_SIZE);

	kunmap_local(p);
	return zero;
}

/* Pages [@first, @first + @count) are all there (@there) or all missing. */
static void expect_pages(struct kunit *test, struct mem_env *env, u64 first,
			 u64 count, bool there)
{
	unsigned long pfn;
	u64 i;

	for (i = first; i < first + count; i++) {
		struct page *page = trn_sim_mem_page(&env->sdev,
						     i << PAGE_SHIFT);

		KUNIT_EXPECT_EQ_MSG(test, !!page, there, "page %llu", i);
		KUNIT_EXPECT_EQ_MSG(test, trn_sim_hbm_pfn(&env->tdev,
							  i << PAGE_SHIFT,
							  &pfn),
				    there ? 0 : -ENOMEM, "page %llu", i);
	}
}

/*
 * Free device memory has no pages and looking there finds nothing (the
 * engine's and the CPU's path never allocate); hbm_populate backs a range
 * with zeroed pages, keeps those already there, and hbm_clear drops them,
 * so a range populated again reads as zero.
 */
static void populate_and_clear(struct kunit *test)
{
	struct mem_env *env = mem_env_new(test);
	struct page *page, *kept;
	u64 npages = SZ_1M / PAGE_SIZE, i;
	u8 *p;

	expect_pages(test, env, 0, npages, false);
	KUNIT_ASSERT_EQ(test, trn_sim_hbm_populate(&env->tdev, 2 * PAGE_SIZE,
						   4 * PAGE_SIZE), 0);
	expect_pages(test, env, 0, 2, false);
	expect_pages(test, env, 2, 4, true);
	expect_pages(test, env, 6, npages - 6, false);
	for (i = 2; i < 6; i++) {
		page = trn_sim_mem_page(&env->sdev, i << PAGE_SHIFT);
		KUNIT_EXPECT_TRUE(test, page && page_is_zero(page));
	}

	kept = trn_sim_mem_page(&env->sdev, 3 * PAGE_SIZE);
	p = kmap_local_page(kept);
	memset(p, 0xa5, PAGE_SIZE);
	kunmap_local(p);
	KUNIT_ASSERT_EQ(test, trn_sim_hbm_populate(&env->tdev, 3 * PAGE_SIZE,
						   PAGE_SIZE), 0);
	KUNIT_EXPECT_PTR_EQ(test, trn_sim_mem_page(&env->sdev, 3 * PAGE_SIZE),
			    kept);
	KUNIT_EXPECT_FALSE(test, page_is_zero(kept));

	trn_sim_hbm_clear(&env->tdev, 2 * PAGE_SIZE, 2 * PAGE_SIZE);
	expect_pages(test, env, 2, 2, false);
	expect_pages(test, env, 4, 2, true);
	KUNIT_ASSERT_EQ(test, trn_sim_hbm_populate(&env->tdev, 2 * PAGE_SIZE,
						   2 * PAGE_SIZE), 0);
	page = trn_sim_mem_page(&env->sdev, 3 * PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_EXPECT_TRUE(test, page_is_zero(page));

	/* All of it, then none of it. */
	KUNIT_ASSERT_EQ(test, trn_sim_hbm_populate(&env->tdev, 0, SZ_1M), 0);
	expect_pages(test, env, 0, npages, true);
	trn_sim_hbm_clear(&env->tdev, 0, SZ_1M);
	expect_pages(test, env, 0, npages, false);
}

/*
 * A freed buffer's pages stay for the next buffer there, up to
 * hbm_keep_max of them, and read as zero for it: no allocation, and no
 * data from the buffer before.
 */
static void freed_pages_are_kept(struct kunit *test)
{
	struct mem_env *env = mem_env_new(test);
	struct trn_sim_dev *sdev = &env->sdev;
	struct page *page, *old;
	u8 *p;

	KUNIT_ASSERT_EQ(test, trn_sim_hbm_populate(&env->tdev, 0,
						   4 * PAGE_SIZE), 0);
	old = trn_sim_mem_page(sdev, PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, old);
	p = kmap_local_page(old);
	memset(p, 0xa5, PAGE_SIZE);
	kunmap_local(p);

	trn_sim_hbm_clear(&env->tdev, 0, 4 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, sdev->hbm_kept, 4);
	expect_pages(test, env, 0, 4, false);
	/* Clearing free memory again keeps nothing twice. */
	trn_sim_hbm_clear(&env->tdev, 0, 4 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, sdev->hbm_kept, 4);

	KUNIT_ASSERT_EQ(test, trn_sim_hbm_populate(&env->tdev, PAGE_SIZE,
						   PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, sdev->hbm_kept, 3);
	page = trn_sim_mem_page(sdev, PAGE_SIZE);
	KUNIT_EXPECT_PTR_EQ(test, page, old);
	KUNIT_EXPECT_TRUE(test, page && page_is_zero(page));
	/* Zeroed once: what the new buffer writes stays. */
	p = kmap_local_page(old);
	p[7] = 1;
	kunmap_local(p);
	page = trn_sim_mem_page(sdev, PAGE_SIZE);
	p = kmap_local_page(page);
	KUNIT_EXPECT_EQ(test, p[7], 1);
	kunmap_local(p);

	/* Beyond hbm_keep_max, freed pages go. */
	sdev->hbm_keep_max = 3;
	KUNIT_ASSERT_EQ(test, trn_sim_hbm_populate(&env->tdev, 8 * PAGE_SIZE,
						   2 * PAGE_SIZE), 0);
	trn_sim_hbm_clear(&env->tdev, 8 * PAGE_SIZE, 2 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, sdev->hbm_kept, 3);
	KUNIT_EXPECT_NULL(test, READ_ONCE(sdev->hbm_pages[8]));
	KUNIT_EXPECT_NULL(test, READ_ONCE(sdev->hbm_pages[9]));

	/* A buffer over kept and live pages takes the kept ones. */
	KUNIT_ASSERT_EQ(test, trn_sim_hbm_populate(&env->tdev, 0,
						   4 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, sdev->hbm_kept, 0);
	expect_pages(test, env, 0, 4, true);
	KUNIT_EXPECT_TRUE(test, page_is_zero(trn_sim_mem_page(sdev, 0)));
	KUNIT_EXPECT_TRUE(test,
			  page_is_zero(trn_sim_mem_page(sdev, 3 * PAGE_SIZE)));
}

/* Ranges outside the memory, or not in pages, are refused whole. */
static void populate_bad_ranges(struct kunit *test)
{
	struct mem_env *env = mem_env_new(test);
	static const struct { u64 offset, size; } bad[] = {
		{ SZ_1M, PAGE_SIZE },
		{ SZ_1M - PAGE_SIZE, 2 * PAGE_SIZE },
		{ PAGE_SIZE, U64_MAX - PAGE_SIZE + 1 },
		{ 100, PAGE_SIZE },
		{ 0, 100 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ_MSG(test, trn_sim_hbm_populate(&env->tdev,
							       bad[i].offset,
							       bad[i].size),
				    -EINVAL, "range %zu", i);
	expect_pages(test, env, 0, SZ_1M / PAGE_SIZE, false);
	/* Clearing them changes nothing either. */
	KUNIT_ASSERT_EQ(test, trn_sim_hbm_populate(&env->tdev, 0, SZ_1M), 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		trn_sim_hbm_clear(&env->tdev, bad[i].offset, bad[i].size);
	expect_pages(test, env, 0, SZ_1M / PAGE_SIZE, true);
}

/*
 * Device memory no buffer backs, mapped all the same: the device's path
 * fails the access with -ENOMEM (the job's ABORTED) instead of allocating,
 * and it is no MMU fault.
 */
static void unbacked_memory_fails(struct kunit *test)
{
	struct mem_env *env = mem_env_new(test);
	struct trn_mmu_map map = {
		.va = VA0, .size = 2 * PAGE_SIZE,
		.prot = TRN_MMU_READ | TRN_MMU_WRITE, .hbm_offset = 0,
	};
	struct page *page;

	xa_init_flags(&env->tdev.contexts, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	trn_sim_mmu_init(&env->sdev);
	env->mmu = true;
	KUNIT_ASSERT_EQ(test, trn_sim_ctx_init(&env->tdev, CTX), 0);
	KUNIT_ASSERT_EQ(test, trn_sim_mmu_map(&env->tdev, CTX, &map), 0);

	page = trn_sim_mmu_translate(&env->sdev, CTX, VA0, false);
	KUNIT_EXPECT_EQ(test, PTR_ERR(page), -ENOMEM);
	KUNIT_EXPECT_EQ(test, trn_sim_dma_copy(&env->sdev, CTX,
					       VA0 + PAGE_SIZE, VA0, 8),
			-ENOMEM);
	KUNIT_EXPECT_EQ(test, atomic64_read(&env->sdev.mmu_faults), 0);
	expect_pages(test, env, 0, 2, false);

	KUNIT_ASSERT_EQ(test, trn_sim_hbm_populate(&env->tdev, 0,
						   2 * PAGE_SIZE), 0);
	page = trn_sim_mmu_translate(&env->sdev, CTX, VA0 + 8, true);
	KUNIT_EXPECT_PTR_EQ(test, page, trn_sim_mem_page(&env->sdev, 0));
	KUNIT_EXPECT_EQ(test, trn_sim_dma_copy(&env->sdev, CTX,
					       VA0 + PAGE_SIZE, VA0, 8), 0);
}

static struct kunit_case trn_sim_mem_cases[] = {
	KUNIT_CASE(populate_and_clear),
	KUNIT_CASE(freed_pages_are_kept),
	KUNIT_CASE(populate_bad_ranges),
	KUNIT_CASE(unbacked_memory_fails),
	{}
};

static struct kunit_suite trn_sim_mem_suite = {
	.name = "trn_sim_mem",
	.test_cases = trn_sim_mem_cases,
};

struct udesc_case {
	const char *name;
	struct drm_trn_user_desc d;
	u32 status;
};

#define UVA	0x100000000ULL

static const struct udesc_case udesc_cases[] = {
	{ "plain", { UVA, 8, 0, 0, 0 }, DRM_TRN_STATUS_OK },
	{ "largest", { UVA, DRM_TRN_JOB_MAX_CMD_SIZE, 0, 0, 0 },
	  DRM_TRN_STATUS_OK },
	{ "wait", { UVA, 16, DRM_TRN_USER_DESC_WAIT, UVA + 8, 3 },
	  DRM_TRN_STATUS_OK },
	{ "wait_for_zero", { UVA, 8, DRM_TRN_USER_DESC_WAIT, 0, 0 },
	  DRM_TRN_STATUS_OK },
	{ "unknown_flag", { UVA, 8, 2, 0, 0 }, DRM_TRN_STATUS_BAD_ARG },
	{ "top_flag", { UVA, 8, 1U << 31, 0, 0 }, DRM_TRN_STATUS_BAD_ARG },
	{ "wait_va_without_flag", { UVA, 8, 0, UVA, 0 },
	  DRM_TRN_STATUS_BAD_ARG },
	{ "wait_value_without_flag", { UVA, 8, 0, 0, 1 },
	  DRM_TRN_STATUS_BAD_ARG },
	{ "cmd_misaligned", { UVA + 4, 8, 0, 0, 0 },
	  DRM_TRN_STATUS_BAD_ALIGN },
	{ "wait_misaligned", { UVA, 8, DRM_TRN_USER_DESC_WAIT, UVA + 1, 1 },
	  DRM_TRN_STATUS_BAD_ALIGN },
	{ "size_zero", { UVA, 0, 0, 0, 0 }, DRM_TRN_STATUS_BAD_SIZE },
	{ "size_odd", { UVA, 12, 0, 0, 0 }, DRM_TRN_STATUS_BAD_SIZE },
	{ "size_too_big", { UVA, DRM_TRN_JOB_MAX_CMD_SIZE + 8, 0, 0, 0 },
	  DRM_TRN_STATUS_BAD_SIZE },
	{ "flag_before_size", { UVA, 0, 4, 0, 0 }, DRM_TRN_STATUS_BAD_ARG },
};

KUNIT_ARRAY_PARAM_DESC(udesc, udesc_cases, name);

static void udesc_check(struct kunit *test)
{
	const struct udesc_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, trn_sim_udesc_check(&c->d), c->status);
}

static struct kunit_case trn_sim_uq_cases[] = {
	KUNIT_CASE_PARAM(udesc_check, udesc_gen_params),
	{}
};

static struct kunit_suite trn_sim_uq_suite = {
	.name = "trn_sim_uq",
	.test_cases = trn_sim_uq_cases,
};

kunit_test_suites(&trn_sim_parse_suite, &trn_sim_mem_suite,
		  &trn_sim_uq_suite);

MODULE_DESCRIPTION("KUnit tests of the trn driver and its simulator");
MODULE_AUTHOR("The trn authors");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");
