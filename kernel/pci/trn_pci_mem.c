// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * Memory of a part: contexts, their mappings, and device memory.
 *
 * The part has no MMU that the driver programs (AWS's driver hands the
 * engines physical addresses), so a context's address space lives here, as
 * a table the command processor (trn_pci_cp.c) translates every address of
 * a job through. Userspace never names a physical address: a job reaches
 * only what its own context maps, with the rights it was mapped with.
 *
 * Device memory: the core allocates from one linear range of
 * &trn_pci_dev.hbm_usable bytes; offset o of it is byte o % stack_usable of
 * stack o / stack_usable, after that stack's firmware carve-out. It is
 * cleared through BAR4 when a buffer frees it (the core's rule) and, since
 * the part keeps what it held before the bind, the first time a buffer
 * reaches it (trn_pci_hbm_populate()).
 */

#include <linux/bitmap.h>
#include <linux/highmem.h>
#include <linux/io.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/pci.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include <uapi/drm/trn_isa.h>

#include "../trn_hw.h"
#include "trn_pci.h"

static struct trn_pci_dev *trn_pci_of(struct trn_device *tdev)
{
	return trn_device_hw_priv(tdev);
}

/* Where byte @off of the allocator's range is, and how far it runs on. */
static u64 trn_pci_hbm_locate(const struct trn_pci_dev *tpd, u64 off,
			      unsigned int *stack, u64 *contig)
{
	u64 within = off % tpd->stack_usable;

	*stack = off / tpd->stack_usable;
	*contig = tpd->stack_usable - within;
	return TRN_PCI_FW_CARVEOUT + within;
}

static u64 trn_pci_hbm_bar_off(const struct trn_pci_dev *tpd, u64 off,
			       u64 *contig)
{
	unsigned int stack;
	u64 in_stack = trn_pci_hbm_locate(tpd, off, &stack, contig);

	return stack * tpd->stack_stride + in_stack;
}

/* The CPU's mapping of byte @off of the allocator's range. */
static void __iomem *trn_pci_hbm_io(const struct trn_pci_dev *tpd, u64 off,
				    u64 *contig)
{
	unsigned int stack;
	u64 in_stack = trn_pci_hbm_locate(tpd, off, &stack, contig);

	return tpd->stack_io[stack] + (in_stack - TRN_PCI_FW_CARVEOUT);
}

/**
 * trn_pci_ctx_init() - trn_hw_ops.ctx_init: an empty address space
 * @tdev: the device
 * @ctx: the context number
 *
 * Contexts are tables in host memory, and so are their semaphores (the
 * NeuronCores' semaphore registers are 32-bit and shared by the whole
 * part): the part bounds their number only by the core's own limit.
 *
 * Return: 0, -ENOMEM or -EBUSY.
 */
int trn_pci_ctx_init(struct trn_device *tdev, u32 ctx)
{
	struct trn_pci_dev *tpd = trn_pci_of(tdev);
	struct trn_pci_ctx *pctx;
	int ret;

	pctx = kzalloc(sizeof(*pctx), GFP_KERNEL);
	if (!pctx)
		return -ENOMEM;
	pctx->sems = kvcalloc(array_size(TRN_PCI_CORES, TRN_NUM_SEMAPHORES),
			      sizeof(*pctx->sems), GFP_KERNEL);
	if (!pctx->sems) {
		ret = -ENOMEM;
		goto err_free;
	}
	mutex_init(&pctx->lock);
	pctx->maps = RB_ROOT;
	ret = xa_insert(&tpd->contexts, ctx, pctx, GFP_KERNEL);
	if (ret)
		goto err_sems;
	return 0;

err_sems:
	mutex_destroy(&pctx->lock);
	kvfree(pctx->sems);
err_free:
	kfree(pctx);
	return ret;
}

/**
 * trn_pci_ctx_fini() - trn_hw_ops.ctx_fini
 * @tdev: the device
 * @ctx: the context number; no job runs in it and nothing is mapped
 */
void trn_pci_ctx_fini(struct trn_device *tdev, u32 ctx)
{
	struct trn_pci_ctx *pctx = xa_erase(&trn_pci_of(tdev)->contexts, ctx);
	struct rb_node *node;

	if (!pctx)
		return;
	/* The core unmapped everything; free what a bug might have left. */
	while ((node = rb_first(&pctx->maps))) {
		rb_erase(node, &pctx->maps);
		kfree(rb_entry(node, struct trn_pci_map, node));
	}
	mutex_destroy(&pctx->lock);
	kvfree(pctx->sems);
	kfree(pctx);
}

/**
 * trn_pci_ctx_get() - a context's address space, for the command processor
 * @tpd: the part
 * @ctx: the context number of a job the core handed over
 *
 * The core destroys a context only after its jobs, so the answer stays
 * valid while the job runs.
 *
 * Return: the context, or NULL when the number is unknown.
 */
struct trn_pci_ctx *trn_pci_ctx_get(struct trn_pci_dev *tpd, u32 ctx)
{
	return xa_load(&tpd->contexts, ctx);
}

/**
 * trn_pci_mmu_map() - trn_hw_ops.mmu_map: add a mapping to the table
 * @tdev: the device
 * @ctx: the context
 * @map: the mapping
 *
 * Return: 0, -ENOMEM, -ENOENT for an unknown context, -EEXIST if the range
 * overlaps a mapping.
 */
int trn_pci_mmu_map(struct trn_device *tdev, u32 ctx,
		    const struct trn_mmu_map *map)
{
	struct trn_pci_ctx *pctx = trn_pci_ctx_get(trn_pci_of(tdev), ctx);
	struct rb_node **link, *parent = NULL;
	struct trn_pci_map *m, *other;
	int ret = 0;

	if (!pctx)
		return -ENOENT;
	/* Allocated before the lock, which the command processor takes. */
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	m->va = map->va;
	m->size = map->size;
	m->prot = map->prot;
	m->sgt = map->sgt;
	m->hbm_offset = map->hbm_offset;

	mutex_lock(&pctx->lock);
	link = &pctx->maps.rb_node;
	while (*link) {
		parent = *link;
		other = rb_entry(parent, struct trn_pci_map, node);
		if (m->va + m->size <= other->va) {
			link = &parent->rb_left;
		} else if (m->va >= other->va + other->size) {
			link = &parent->rb_right;
		} else {
			ret = -EEXIST;
			break;
		}
	}
	if (!ret) {
		rb_link_node(&m->node, parent, link);
		rb_insert_color(&m->node, &pctx->maps);
	}
	mutex_unlock(&pctx->lock);
	if (ret)
		kfree(m);
	return ret;
}

/**
 * trn_pci_mmu_unmap() - trn_hw_ops.mmu_unmap: remove mappings from the
 * table
 * @tdev: the device
 * @ctx: the context
 * @va: first address
 * @size: bytes
 *
 * Waits for a batch of DMA the command processor translated through the
 * context to complete (bounded by the job timeout: a hung batch is ended
 * by the ring reset), so that the memory is not reached once this returns.
 */
void trn_pci_mmu_unmap(struct trn_device *tdev, u32 ctx, u64 va, u64 size)
{
	struct trn_pci_ctx *pctx = trn_pci_ctx_get(trn_pci_of(tdev), ctx);
	struct trn_pci_map *m, *next;
	struct rb_node *node;
	LIST_HEAD(dead);

	if (!pctx)
		return;
	mutex_lock(&pctx->lock);
	node = pctx->maps.rb_node;
	/* Find the leftmost mapping that ends after @va. */
	m = NULL;
	while (node) {
		struct trn_pci_map *cand = rb_entry(node, struct trn_pci_map,
						    node);

		if (cand->va + cand->size > va) {
			m = cand;
			node = node->rb_left;
		} else {
			node = node->rb_right;
		}
	}
	while (m && m->va < va + size) {
		node = rb_next(&m->node);
		next = node ? rb_entry(node, struct trn_pci_map, node) : NULL;
		rb_erase(&m->node, &pctx->maps);
		kfree(m);
		m = next;
	}
	mutex_unlock(&pctx->lock);
}

/**
 * trn_pci_lookup() - check an access against a context's mappings
 * @pctx: the context, its lock held
 * @va: first address
 * @len: bytes, at least one
 * @prot: the TRN_MMU_* rights the access needs
 * @fault_va: where the access faults, when it does
 *
 * An access must lie in one mapping (buffers are separated by unmapped
 * guard pages, so a legitimate access never spans two).
 *
 * Return: the mapping, or NULL with *@fault_va set.
 */
const struct trn_pci_map *trn_pci_lookup(struct trn_pci_ctx *pctx, u64 va,
					 u64 len, u32 prot, u64 *fault_va)
{
	struct rb_node *node = pctx->maps.rb_node;
	struct trn_pci_map *m;

	lockdep_assert_held(&pctx->lock);
	while (node) {
		m = rb_entry(node, struct trn_pci_map, node);
		if (va < m->va) {
			node = node->rb_left;
		} else if (va >= m->va + m->size) {
			node = node->rb_right;
		} else {
			if ((m->prot & prot) != prot) {
				*fault_va = va;
				return NULL;
			}
			if (len > m->va + m->size - va) {
				*fault_va = m->va + m->size;
				return NULL;
			}
			return m;
		}
	}
	*fault_va = va;
	return NULL;
}

/* Move @cur to the scatterlist entry holding mapping offset @off. */
static bool trn_pci_seek(struct trn_pci_cursor *cur, u64 off)
{
	struct sg_table *sgt = cur->map->sgt;
	unsigned int count = cur->dma ? sgt->nents : sgt->orig_nents;
	u64 len;

	if (!cur->sg || off < cur->start) {
		cur->sg = sgt->sgl;
		cur->idx = 0;
		cur->start = 0;
	}
	while (cur->idx < count) {
		len = cur->dma ? sg_dma_len(cur->sg) : cur->sg->length;
		if (off < cur->start + len)
			return true;
		cur->start += len;
		cur->sg = sg_next(cur->sg);
		cur->idx++;
	}
	cur->sg = NULL;
	return false;
}

/**
 * trn_pci_dev_addr() - the part's address of a byte of a mapping
 * @tpd: the part
 * @cur: a DMA cursor on the mapping
 * @off: offset in the mapping, below its size
 * @contig: bytes from there on that are contiguous for the part
 *
 * Return: the device address, or U64_MAX if the mapping's memory is
 * shorter than the mapping (never for the core's buffers).
 */
u64 trn_pci_dev_addr(struct trn_pci_dev *tpd, struct trn_pci_cursor *cur,
		     u64 off, u64 *contig)
{
	const struct trn_pci_map *m = cur->map;
	unsigned int stack;
	u64 in_stack, in_sg;

	if (!m->sgt) {
		in_stack = trn_pci_hbm_locate(tpd, m->hbm_offset + off, &stack,
					      contig);
		return trn_pci_stack_addr(stack) + in_stack;
	}
	if (!trn_pci_seek(cur, off))
		return U64_MAX;
	in_sg = off - cur->start;
	*contig = sg_dma_len(cur->sg) - in_sg;
	return trn_pci_host_addr(sg_dma_address(cur->sg) + in_sg);
}

/**
 * trn_pci_read() - read a mapping's memory with the CPU
 * @tpd: the part
 * @cur: a CPU cursor on the mapping
 * @off: offset in the mapping
 * @buf: where to
 * @len: bytes, within the mapping
 *
 * Return: 0, or -EFAULT if the memory is shorter than the mapping.
 */
int trn_pci_read(struct trn_pci_dev *tpd, struct trn_pci_cursor *cur,
		 u64 off, void *buf, size_t len)
{
	const struct trn_pci_map *m = cur->map;
	u64 contig, in_sg;
	struct page *page;
	void __iomem *io;
	size_t n;
	void *va;

	while (len) {
		if (!m->sgt) {
			io = trn_pci_hbm_io(tpd, m->hbm_offset + off, &contig);
			n = min_t(u64, len, contig);
			memcpy_fromio(buf, io, n);
		} else {
			if (!trn_pci_seek(cur, off))
				return -EFAULT;
			in_sg = cur->sg->offset + off - cur->start;
			/*
			 * By frame number: a segment's struct pages need not
			 * be contiguous (and nth_page() is gone from 7.x).
			 */
			page = pfn_to_page(page_to_pfn(sg_page(cur->sg)) +
					   (in_sg >> PAGE_SHIFT));
			n = min_t(u64, len, PAGE_SIZE - offset_in_page(in_sg));
			n = min_t(u64, n, cur->sg->length -
					  (off - cur->start));
			va = kmap_local_page(page);
			memcpy(buf, va + offset_in_page(in_sg), n);
			kunmap_local(va);
		}
		buf += n;
		off += n;
		len -= n;
	}
	return 0;
}

/**
 * trn_pci_hbm_pfn() - trn_hw_ops.hbm_pfn: the BAR4 page of device memory
 * @tdev: the device
 * @offset: page-aligned offset in the allocator's range
 * @pfn: the CPU page frame
 *
 * Return: 0 or -EINVAL.
 */
int trn_pci_hbm_pfn(struct trn_device *tdev, u64 offset, unsigned long *pfn)
{
	struct trn_pci_dev *tpd = trn_pci_of(tdev);
	u64 contig;

	if (offset >= tpd->hbm_usable)
		return -EINVAL;
	*pfn = PHYS_PFN(tpd->hbm_phys +
			trn_pci_hbm_bar_off(tpd, offset, &contig));
	return 0;
}

/**
 * trn_pci_hbm_clear() - trn_hw_ops.hbm_clear: zero device memory through
 * BAR4
 * @tdev: the device
 * @offset: offset in the allocator's range
 * @size: bytes
 */
void trn_pci_hbm_clear(struct trn_device *tdev, u64 offset, u64 size)
{
	struct trn_pci_dev *tpd = trn_pci_of(tdev);
	void __iomem *io;
	u64 contig, n;

	while (size) {
		io = trn_pci_hbm_io(tpd, offset, &contig);
		n = min(size, contig);
		memset_io(io, 0, n);
		offset += n;
		size -= n;
		cond_resched();
	}
	/* Out of the write-combining buffers before the memory is reused. */
	wmb();
}

/**
 * trn_pci_hbm_populate() - trn_hw_ops.hbm_populate: clear device memory
 * that no buffer has held since the bind
 * @tdev: the device
 * @offset: offset in the allocator's range
 * @size: bytes
 *
 * The core clears device memory when a buffer frees it, which covers what
 * was handed out before; memory never handed out since the bind holds what
 * the part held then: another driver's tenants' data, the firmware's, the
 * probe's self-test page. Each granule of TRN_PCI_SCRUB_GRANULE bytes is
 * cleared whole the first time a buffer reaches it. A granule not cleared
 * yet has held no buffer since the bind, so clearing all of it destroys
 * nothing; &trn_pci_dev.scrub_lock keeps a second new buffer in the same
 * granule from clearing it again under the first one's data. (Clearing all
 * of a real part's 96 or 144 GiB at probe would stall it, through BAR4.)
 *
 * Return: 0.
 */
int trn_pci_hbm_populate(struct trn_device *tdev, u64 offset, u64 size)
{
	struct trn_pci_dev *tpd = trn_pci_of(tdev);
	u64 g = div64_u64(offset, TRN_PCI_SCRUB_GRANULE);
	u64 last = div64_u64(offset + size - 1, TRN_PCI_SCRUB_GRANULE);
	u64 start;

	mutex_lock(&tpd->scrub_lock);
	for (; g <= last; g++) {
		if (test_bit(g, tpd->hbm_scrubbed))
			continue;
		start = g * TRN_PCI_SCRUB_GRANULE;
		trn_pci_hbm_clear(tdev, start,
				  min_t(u64, TRN_PCI_SCRUB_GRANULE,
					tpd->hbm_usable - start));
		__set_bit(g, tpd->hbm_scrubbed);
	}
	mutex_unlock(&tpd->scrub_lock);
	return 0;
}

/**
 * trn_pci_hbm_read() - trn_hw_ops.hbm_read: copy device memory out through
 * BAR4
 * @tdev: the device
 * @offset: offset in the allocator's range
 * @buf: where to copy
 * @size: bytes
 */
void trn_pci_hbm_read(struct trn_device *tdev, u64 offset, void *buf,
		      size_t size)
{
	struct trn_pci_dev *tpd = trn_pci_of(tdev);
	void __iomem *io;
	size_t n;
	u64 contig;

	while (size) {
		if (offset >= tpd->hbm_usable) {
			memset(buf, 0, size);
			return;
		}
		io = trn_pci_hbm_io(tpd, offset, &contig);
		n = min_t(u64, size, contig);
		memcpy_fromio(buf, io, n);
		buf += n;
		offset += n;
		size -= n;
	}
}
