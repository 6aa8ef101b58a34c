// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * The simulated device's memory (HBM). Each page of device memory is a host
 * page, allocated zeroed when the core allocates a buffer there
 * (hbm_populate) unless one is still there from a buffer freed before. The
 * CPU sees the same pages (the "BAR"), cached.
 *
 * Nothing allocates after that: the engines reach device memory on the way
 * to signalling DMA fences, where an allocation that waits for reclaim
 * could wait for those very fences, so trn_sim_mem_page() only looks up.
 *
 * Freeing a buffer (hbm_clear) keeps up to hbm_keep_max of its pages where
 * they are, marked free and stale, and frees the rest: a new buffer there
 * costs no allocation, and free device memory costs little. A stale page
 * is zeroed the first time anything looks it up for a buffer, so a new
 * buffer reads as zero whoever had the memory before, without paying for
 * zeroing memory nobody reads.
 */

#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>

#include <asm/barrier.h>

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
	sdev->hbm_kept = 0;
	sdev->hbm_keep_max = TRN_SIM_HBM_KEEP_PAGES;
	sdev->hbm_pages = kvcalloc(sdev->hbm_npages, sizeof(*sdev->hbm_pages),
				   GFP_KERNEL);
	sdev->hbm_free = bitmap_zalloc(sdev->hbm_npages, GFP_KERNEL);
	sdev->hbm_stale = bitmap_zalloc(sdev->hbm_npages, GFP_KERNEL);
	if (!sdev->hbm_pages || !sdev->hbm_free || !sdev->hbm_stale) {
		bitmap_free(sdev->hbm_stale);
		bitmap_free(sdev->hbm_free);
		kvfree(sdev->hbm_pages);
		sdev->hbm_pages = NULL;
		return -ENOMEM;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_mem_init);

/* Frees the host pages of device pages [@first, @first + @count). */
static void trn_sim_mem_drop(struct trn_sim_dev *sdev, u64 first, u64 count)
{
	u64 i;

	for (i = first; i < first + count; i++) {
		struct page *page;

		spin_lock(&sdev->hbm_lock);
		page = sdev->hbm_pages[i];
		WRITE_ONCE(sdev->hbm_pages[i], NULL);
		if (test_bit(i, sdev->hbm_free)) {
			clear_bit(i, sdev->hbm_free);
			sdev->hbm_kept--;
		}
		clear_bit(i, sdev->hbm_stale);
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
	bitmap_free(sdev->hbm_stale);
	bitmap_free(sdev->hbm_free);
	kvfree(sdev->hbm_pages);
	sdev->hbm_pages = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_mem_fini);

/**
 * trn_sim_mem_page() - the host page behind a page of device memory
 * @sdev: the device
 * @offset: device memory offset, below the memory size
 *
 * Never allocates, never sleeps: the page was allocated with the buffer
 * (trn_sim_hbm_populate()). A page a freed buffer left is zeroed here,
 * the first time, under the memory's spinlock.
 *
 * Return: the page, or NULL where no buffer was allocated.
 */
struct page *trn_sim_mem_page(struct trn_sim_dev *sdev, u64 offset)
{
	u64 i = offset >> PAGE_SHIFT;
	struct page *page = READ_ONCE(sdev->hbm_pages[i]);

	if (!page || test_bit(i, sdev->hbm_free))
		return NULL;
	/* Who sees the bit clear sees the zeroes. */
	if (unlikely(test_bit_acquire(i, sdev->hbm_stale))) {
		spin_lock(&sdev->hbm_lock);
		if (test_bit(i, sdev->hbm_stale)) {
			clear_highpage(page);
			clear_bit_unlock(i, sdev->hbm_stale);
		}
		spin_unlock(&sdev->hbm_lock);
	}
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
EXPORT_SYMBOL_IF_KUNIT(trn_sim_hbm_pfn);

/* The pages of [@offset, @offset + @size), if that lies within the memory. */
static bool trn_sim_mem_range(struct trn_sim_dev *sdev, u64 offset, u64 size,
			      u64 *first, u64 *count)
{
	if (!PAGE_ALIGNED(offset) || !PAGE_ALIGNED(size) ||
	    offset > sdev->hbm_npages << PAGE_SHIFT ||
	    size > (sdev->hbm_npages << PAGE_SHIFT) - offset)
		return false;
	*first = offset >> PAGE_SHIFT;
	*count = size >> PAGE_SHIFT;
	return true;
}

/**
 * trn_sim_hbm_populate() - trn_hw_ops.hbm_populate of the simulator
 * @tdev: the device
 * @offset: start of a new buffer in device memory, page aligned
 * @size: its size, page aligned
 *
 * Gives every page of the range a host page that reads as zero: one a
 * freed buffer left there (zeroed when first looked up), else a new one,
 * so that nothing that reaches the buffer later allocates. On failure the
 * range holds no pages. May sleep.
 *
 * Return: 0, -EINVAL for a range outside the memory, or -ENOMEM.
 */
int trn_sim_hbm_populate(struct trn_device *tdev, u64 offset, u64 size)
{
	struct trn_sim_dev *sdev = trn_device_hw_priv(tdev);
	struct page *page;
	u64 first, count, i;

	if (!trn_sim_mem_range(sdev, offset, size, &first, &count))
		return -EINVAL;
	for (i = first; i < first + count; i++) {
		if (READ_ONCE(sdev->hbm_pages[i])) {
			spin_lock(&sdev->hbm_lock);
			if (test_bit(i, sdev->hbm_free)) {
				clear_bit(i, sdev->hbm_free);
				sdev->hbm_kept--;
			}
			spin_unlock(&sdev->hbm_lock);
			continue;
		}
		/*
		 * Fail rather than wake the OOM killer: the buffer's owner
		 * gets -ENOMEM, as for any device memory it cannot have.
		 */
		page = alloc_page(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN |
				  __GFP_RETRY_MAYFAIL);
		if (!page) {
			trn_sim_mem_drop(sdev, first, count);
			return -ENOMEM;
		}
		spin_lock(&sdev->hbm_lock);
		/* Readers see the zeroes before the page. */
		smp_store_release(&sdev->hbm_pages[i], page);
		spin_unlock(&sdev->hbm_lock);
		/* Not for every page: it costs as much as the page. */
		if (!((i - first + 1) % 512))
			cond_resched();
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_hbm_populate);

/**
 * trn_sim_hbm_clear() - trn_hw_ops.hbm_clear of the simulator
 * @tdev: the device
 * @offset: start of a freed buffer in device memory, page aligned
 * @size: its size, page aligned
 *
 * The range reads as zero for the next buffer there. Its pages stay, free
 * and stale, while the device keeps fewer than hbm_keep_max such; the
 * rest are freed.
 */
void trn_sim_hbm_clear(struct trn_device *tdev, u64 offset, u64 size)
{
	struct trn_sim_dev *sdev = trn_device_hw_priv(tdev);
	u64 first, count, i;

	if (!trn_sim_mem_range(sdev, offset, size, &first, &count))
		return;
	for (i = first; i < first + count; i++) {
		struct page *page;

		spin_lock(&sdev->hbm_lock);
		page = sdev->hbm_pages[i];
		if (page && test_bit(i, sdev->hbm_free)) {
			page = NULL;
		} else if (page && sdev->hbm_kept < sdev->hbm_keep_max) {
			set_bit(i, sdev->hbm_stale);
			set_bit(i, sdev->hbm_free);
			sdev->hbm_kept++;
			page = NULL;
		} else if (page) {
			WRITE_ONCE(sdev->hbm_pages[i], NULL);
			clear_bit(i, sdev->hbm_stale);
		}
		spin_unlock(&sdev->hbm_lock);
		if (page)
			__free_page(page);
	}
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_hbm_clear);

/**
 * trn_sim_hbm_read() - trn_hw_ops.hbm_read of the simulator
 * @tdev: the device
 * @offset: device memory offset
 * @buf: where to copy
 * @size: bytes
 *
 * Pages no buffer holds read as zero.
 */
void trn_sim_hbm_read(struct trn_device *tdev, u64 offset, void *buf,
		      size_t size)
{
	struct trn_sim_dev *sdev = trn_device_hw_priv(tdev);
	u64 end = sdev->hbm_npages << PAGE_SHIFT;
	struct page *page;
	size_t n;
	void *va;

	while (size) {
		n = min_t(size_t, size, PAGE_SIZE - offset_in_page(offset));
		page = offset < end ? trn_sim_mem_page(sdev, offset) : NULL;
		if (page) {
			va = kmap_local_page(page);
			memcpy(buf, va + offset_in_page(offset), n);
			kunmap_local(va);
		} else {
			memset(buf, 0, n);
		}
		buf += n;
		offset += n;
		size -= n;
	}
}
