// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * The simulated device's memory (HBM). Each page of device memory is a host
 * page allocated, zeroed, the first time anything touches it and freed when
 * the driver clears the range, so an idle device of any size costs nothing
 * and cleared memory reads as zero by construction. The CPU sees the same
 * pages (the "BAR"), cached.
 */

#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>

#include <kunit/visibility.h>

#include "../trn_hw.h"
#include "trn_sim.h"

/**
 * trn_sim_mem_init() - give a simulated device its (empty) memory
 * @sdev: the device
 *
 * Return: 0 or -ENOMEM.
 */
int trn_sim_mem_init(struct trn_sim_dev *sdev)
{
	spin_lock_init(&sdev->hbm_lock);
	sdev->hbm_npages = (u64)sdev->hbm_mib * (SZ_1M / PAGE_SIZE);
	sdev->hbm_pages = kvcalloc(sdev->hbm_npages, sizeof(*sdev->hbm_pages),
				   GFP_KERNEL);
	return sdev->hbm_pages ? 0 : -ENOMEM;
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_mem_init);

static void trn_sim_mem_drop(struct trn_sim_dev *sdev, u64 first, u64 count)
{
	u64 i;

	for (i = first; i < first + count; i++) {
		struct page *page;

		spin_lock(&sdev->hbm_lock);
		page = sdev->hbm_pages[i];
		sdev->hbm_pages[i] = NULL;
		spin_unlock(&sdev->hbm_lock);
		if (page)
			__free_page(page);
	}
}

/**
 * trn_sim_mem_fini() - free a simulated device's memory
 * @sdev: the device, no longer registered with the core
 */
void trn_sim_mem_fini(struct trn_sim_dev *sdev)
{
	trn_sim_mem_drop(sdev, 0, sdev->hbm_npages);
	kvfree(sdev->hbm_pages);
	sdev->hbm_pages = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_mem_fini);

/**
 * trn_sim_mem_page() - the host page behind a page of device memory
 * @sdev: the device
 * @offset: device memory offset, below the memory size
 *
 * Return: the page, allocated and zeroed on first use, or NULL if there is
 * no memory for it.
 */
struct page *trn_sim_mem_page(struct trn_sim_dev *sdev, u64 offset)
{
	u64 i = offset >> PAGE_SHIFT;
	struct page *page, *fresh;

	page = READ_ONCE(sdev->hbm_pages[i]);
	if (page)
		return page;

	fresh = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!fresh)
		return NULL;
	spin_lock(&sdev->hbm_lock);
	page = sdev->hbm_pages[i];
	if (!page) {
		page = fresh;
		WRITE_ONCE(sdev->hbm_pages[i], fresh);
		fresh = NULL;
	}
	spin_unlock(&sdev->hbm_lock);
	if (fresh)
		__free_page(fresh);
	return page;
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_mem_page);

/* trn_hw_ops.hbm_pfn */
int trn_sim_hbm_pfn(struct trn_device *tdev, u64 offset, unsigned long *pfn)
{
	struct page *page = trn_sim_mem_page(trn_device_hw_priv(tdev), offset);

	if (!page)
		return -ENOMEM;
	*pfn = page_to_pfn(page);
	return 0;
}

/* trn_hw_ops.hbm_populate */
int trn_sim_hbm_populate(struct trn_device *tdev, u64 offset, u64 size)
{
	return 0;
}

/* trn_hw_ops.hbm_clear */
void trn_sim_hbm_clear(struct trn_device *tdev, u64 offset, u64 size)
{
	trn_sim_mem_drop(trn_device_hw_priv(tdev), offset >> PAGE_SHIFT,
			 size >> PAGE_SHIFT);
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_hbm_clear);
