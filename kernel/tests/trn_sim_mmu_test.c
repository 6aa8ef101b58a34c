// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * KUnit tests of the simulated device's MMU and memory: page table entries
 * made by mmu_map, translation and its faults, unmapping, DMA copies and
 * the zero-on-clear property of device memory, on a device that exists
 * only in the test.
 */

#include <kunit/test.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "../trn_compat.h"
#include "../trn_drv.h"
#include "../sim/trn_sim.h"

#define VA0	0x100000000ULL
#define CTX	7

struct mmu_env {
	struct trn_device tdev;
	struct trn_sim_dev sdev;
};

static void mmu_env_free(void *data)
{
	struct mmu_env *env = data;

	trn_sim_mmu_fini(&env->sdev);
	trn_sim_mem_fini(&env->sdev);
	kfree(env);
}

/*
 * A 1 MiB device with context CTX and no core behind it, its memory
 * populated as the driver's allocator would.
 */
static struct mmu_env *mmu_env_new(struct kunit *test)
{
	struct mmu_env *env = kzalloc(sizeof(*env), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, env);
	env->sdev.hbm_mib = 1;
	env->tdev.hw_priv = &env->sdev;
	xa_init_flags(&env->tdev.contexts, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	env->sdev.tdev = &env->tdev;
	KUNIT_ASSERT_EQ(test, trn_sim_mem_init(&env->sdev), 0);
	trn_sim_mmu_init(&env->sdev);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mmu_env_free,
							env), 0);
	KUNIT_ASSERT_EQ(test, trn_sim_hbm_populate(&env->tdev, 0, SZ_1M), 0);
	KUNIT_ASSERT_EQ(test, trn_sim_ctx_init(&env->tdev, CTX), 0);
	return env;
}

static void map_hbm(struct kunit *test, struct mmu_env *env, u64 va,
		    u64 size, u64 offset, u32 prot)
{
	struct trn_mmu_map map = {
		.va = va, .size = size, .prot = prot, .hbm_offset = offset,
	};

	KUNIT_ASSERT_EQ(test, trn_sim_mmu_map(&env->tdev, CTX, &map), 0);
}

static void translate_follows_ptes(struct kunit *test)
{
	struct mmu_env *env = mmu_env_new(test);
	struct page *page;
	int i;

	map_hbm(test, env, VA0, 4 * PAGE_SIZE, 8 * PAGE_SIZE,
		TRN_MMU_READ | TRN_MMU_WRITE);
	for (i = 0; i < 4; i++) {
		page = trn_sim_mmu_translate(&env->sdev, CTX,
					     VA0 + i * PAGE_SIZE + 123, true);
		KUNIT_ASSERT_FALSE(test, IS_ERR(page));
		KUNIT_EXPECT_PTR_EQ(test, page,
				    trn_sim_mem_page(&env->sdev,
						     (8 + i) * PAGE_SIZE));
	}
	KUNIT_EXPECT_EQ(test, atomic64_read(&env->sdev.mmu_faults), 0);
}

static void unmapped_and_readonly_fault(struct kunit *test)
{
	struct mmu_env *env = mmu_env_new(test);
	struct page *page;

	map_hbm(test, env, VA0, PAGE_SIZE, 0, TRN_MMU_READ);
	page = trn_sim_mmu_translate(&env->sdev, CTX, VA0, false);
	KUNIT_EXPECT_FALSE(test, IS_ERR(page));
	page = trn_sim_mmu_translate(&env->sdev, CTX, VA0, true);
	KUNIT_EXPECT_EQ(test, PTR_ERR(page), -EFAULT);
	page = trn_sim_mmu_translate(&env->sdev, CTX, VA0 + PAGE_SIZE, false);
	KUNIT_EXPECT_EQ(test, PTR_ERR(page), -EFAULT);
	/* Another context sees nothing of this one. */
	page = trn_sim_mmu_translate(&env->sdev, CTX + 1, VA0, false);
	KUNIT_EXPECT_EQ(test, PTR_ERR(page), -EFAULT);
	KUNIT_EXPECT_EQ(test, atomic64_read(&env->sdev.mmu_faults), 3);
}

static void unmap_removes_ptes(struct kunit *test)
{
	struct mmu_env *env = mmu_env_new(test);
	struct page *page;

	map_hbm(test, env, VA0, 2 * PAGE_SIZE, 0, TRN_MMU_READ);
	trn_sim_mmu_unmap(&env->tdev, CTX, VA0, PAGE_SIZE);
	page = trn_sim_mmu_translate(&env->sdev, CTX, VA0, false);
	KUNIT_EXPECT_EQ(test, PTR_ERR(page), -EFAULT);
	page = trn_sim_mmu_translate(&env->sdev, CTX, VA0 + PAGE_SIZE, false);
	KUNIT_EXPECT_FALSE(test, IS_ERR(page));
}

static void dma_copy_crosses_pages(struct kunit *test)
{
	struct mmu_env *env = mmu_env_new(test);
	u8 *p;
	int i;

	map_hbm(test, env, VA0, 4 * PAGE_SIZE, 0,
		TRN_MMU_READ | TRN_MMU_WRITE);
	p = kmap_local_page(trn_sim_mem_page(&env->sdev, 0));
	for (i = 0; i < PAGE_SIZE; i++)
		p[i] = i % 251;
	kunmap_local(p);

	/* Unaligned on both sides, straddling a page boundary. */
	KUNIT_ASSERT_EQ(test, trn_sim_dma_copy(&env->sdev, CTX,
					       VA0 + 2 * PAGE_SIZE - 100,
					       VA0 + 10, 300), 0);
	p = kmap_local_page(trn_sim_mem_page(&env->sdev, PAGE_SIZE));
	for (i = 0; i < 100; i++)
		KUNIT_EXPECT_EQ(test, p[PAGE_SIZE - 100 + i], (10 + i) % 251);
	kunmap_local(p);
	p = kmap_local_page(trn_sim_mem_page(&env->sdev, 2 * PAGE_SIZE));
	for (i = 0; i < 200; i++)
		KUNIT_EXPECT_EQ(test, p[i], (110 + i) % 251);
	kunmap_local(p);

	/* Past the mapping: fails at the first unmapped byte. */
	KUNIT_EXPECT_EQ(test, trn_sim_dma_copy(&env->sdev, CTX, VA0,
					       VA0 + 4 * PAGE_SIZE - 8, 16),
			-EFAULT);
}

static void cleared_memory_reads_zero(struct kunit *test)
{
	struct mmu_env *env = mmu_env_new(test);
	struct page *page;
	u8 *p;

	page = trn_sim_mem_page(&env->sdev, 3 * PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, page);
	p = kmap_local_page(page);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(p, 0, PAGE_SIZE));
	memset(p, 0xff, PAGE_SIZE);
	kunmap_local(p);

	/* Cleared memory has no pages until it is populated again. */
	trn_sim_hbm_clear(&env->tdev, 2 * PAGE_SIZE, 2 * PAGE_SIZE);
	KUNIT_EXPECT_NULL(test, trn_sim_mem_page(&env->sdev, 3 * PAGE_SIZE));
	KUNIT_ASSERT_EQ(test, trn_sim_hbm_populate(&env->tdev, 2 * PAGE_SIZE,
						   2 * PAGE_SIZE), 0);
	page = trn_sim_mem_page(&env->sdev, 3 * PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, page);
	p = kmap_local_page(page);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(p, 0, PAGE_SIZE));
	kunmap_local(p);
}

/*
 * What an engine keeps for a ring (struct trn_sim_tlb): a read keeps no
 * right to write, a fault is not kept, and a closed window forgets
 * everything, so an unmap is seen at once; another context moves the
 * window.
 */
static void kept_translations(struct kunit *test)
{
	struct mmu_env *env = mmu_env_new(test);
	struct trn_sim_tlb tlb = { };
	u32 v = 0x12345678, got = 0;
	u64 fault_va = 0;

	map_hbm(test, env, VA0, PAGE_SIZE, 0, TRN_MMU_READ);
	map_hbm(test, env, VA0 + PAGE_SIZE, PAGE_SIZE, PAGE_SIZE,
		TRN_MMU_READ | TRN_MMU_WRITE);

	KUNIT_EXPECT_EQ(test, trn_sim_tlb_rw(&env->sdev, &tlb, CTX, VA0, &got,
					     4, false, &fault_va), 0);
	KUNIT_EXPECT_EQ(test, trn_sim_tlb_rw(&env->sdev, &tlb, CTX, VA0 + 8,
					     &v, 4, true, &fault_va), -EFAULT);
	KUNIT_EXPECT_EQ(test, fault_va, VA0 + 8);
	KUNIT_EXPECT_EQ(test, atomic64_read(&env->sdev.mmu_faults), 1);

	KUNIT_EXPECT_EQ(test, trn_sim_tlb_rw(&env->sdev, &tlb, CTX,
					     VA0 + PAGE_SIZE + 4, &v, 4, true,
					     &fault_va), 0);
	KUNIT_EXPECT_EQ(test, trn_sim_tlb_rw(&env->sdev, &tlb, CTX,
					     VA0 + PAGE_SIZE + 4, &got, 4,
					     false, &fault_va), 0);
	KUNIT_EXPECT_EQ(test, got, v);

	/* Not mapped yet: a fault, not kept once the page is mapped. */
	KUNIT_EXPECT_EQ(test, trn_sim_tlb_rw(&env->sdev, &tlb, CTX,
					     VA0 + 2 * PAGE_SIZE, &got, 4,
					     false, &fault_va), -EFAULT);
	map_hbm(test, env, VA0 + 2 * PAGE_SIZE, PAGE_SIZE, 2 * PAGE_SIZE,
		TRN_MMU_READ);
	KUNIT_EXPECT_EQ(test, trn_sim_tlb_rw(&env->sdev, &tlb, CTX,
					     VA0 + 2 * PAGE_SIZE, &got, 4,
					     false, &fault_va), 0);

	/* Closed, the window lets an unmap through and keeps nothing. */
	trn_sim_tlb_close(&tlb);
	trn_sim_mmu_unmap(&env->tdev, CTX, VA0 + PAGE_SIZE, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, trn_sim_tlb_rw(&env->sdev, &tlb, CTX,
					     VA0 + PAGE_SIZE + 4, &got, 4,
					     false, &fault_va), -EFAULT);
	KUNIT_EXPECT_EQ(test, fault_va, VA0 + PAGE_SIZE + 4);

	/* Another context (none here) moves the window: it faults. */
	KUNIT_EXPECT_EQ(test, trn_sim_tlb_rw(&env->sdev, &tlb, CTX + 1, VA0,
					     &got, 4, false, &fault_va),
			-EFAULT);
	KUNIT_EXPECT_EQ(test, tlb.n, CTX + 1);
	trn_sim_tlb_close(&tlb);
	KUNIT_EXPECT_NULL(test, tlb.ctx);
	KUNIT_EXPECT_EQ(test, atomic64_read(&env->sdev.mmu_faults), 4);
}

static struct kunit_case trn_sim_mmu_cases[] = {
	KUNIT_CASE(translate_follows_ptes),
	KUNIT_CASE(unmapped_and_readonly_fault),
	KUNIT_CASE(unmap_removes_ptes),
	KUNIT_CASE(dma_copy_crosses_pages),
	KUNIT_CASE(cleared_memory_reads_zero),
	KUNIT_CASE(kept_translations),
	{}
};

static struct kunit_suite trn_sim_mmu_suite = {
	.name = "trn_sim_mmu",
	.test_cases = trn_sim_mmu_cases,
};

kunit_test_suite(trn_sim_mmu_suite);
