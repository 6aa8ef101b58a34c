// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * The simulated device's MMU. Every context has a page table: one entry per
 * 4 KiB device page, mapping it to a page of device memory or to a host bus
 * address, with read and write rights. Every access the device makes goes
 * through trn_sim_mmu_translate(); an access to an unmapped page, or a write
 * to a read-only one, faults, and the fault is reported to the core with
 * its context and address. An engine keeps a few translations per ring
 * (struct trn_sim_tlb) while the access window they were made in is open,
 * which is until the end of the ring's slice: an unmap waits for open
 * windows, so a kept translation never outlives its mapping, and faults
 * are never kept.
 *
 * Page table entries (the device's format):
 *   bit 0  valid          bit 1  readable        bit 2  writable
 *   bit 3  device memory (else host bus address)
 *   bits 12-62  page address: device memory offset or host bus address
 */

#include <linux/debugfs.h>
#include <linux/dma-direct.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include <kunit/visibility.h>

#include <uapi/drm/trn_accel.h>
#include <uapi/drm/trn_isa.h>

#include "../trn_hw.h"
#include "trn_sim.h"

#define TRN_SIM_PTE_VALID	BIT_ULL(0)
#define TRN_SIM_PTE_READ	BIT_ULL(1)
#define TRN_SIM_PTE_WRITE	BIT_ULL(2)
#define TRN_SIM_PTE_HBM		BIT_ULL(3)
#define TRN_SIM_PTE_ADDR	GENMASK_ULL(62, 12)

/* The largest copy the debugfs test hook performs at once. */
#define TRN_SIM_DMA_MAX		SZ_64M

/**
 * struct trn_sim_ctx - one MMU context
 * @ptes: device page number -> page table entry (xarray value)
 * @rcu: frees the context after lookups that may still see it
 * @sems: the context's device semaphores, %TRN_NUM_SEMAPHORES per
 *        NeuronCore; only the engine of that NeuronCore touches them, and
 *        only while it runs a job of this context
 * @accesses: device accesses in flight that may hold a translation; an
 *            unmap waits for them (the simulator's TLB shootdown), so
 *            memory is never reached after its mapping was removed
 */
struct trn_sim_ctx {
	struct xarray ptes;
	struct rcu_head rcu;
	u64 *sems;
	atomic_t accesses;
};

/**
 * trn_sim_mmu_init() - the MMU of a new simulated device: no contexts
 * @sdev: the device
 */
void trn_sim_mmu_init(struct trn_sim_dev *sdev)
{
	xa_init(&sdev->ctxs);
	atomic64_set(&sdev->mmu_faults, 0);
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_mmu_init);

static void trn_sim_ctx_free(struct trn_sim_ctx *ctx)
{
	/* No job of the context runs any more: nobody uses its semaphores. */
	kvfree(ctx->sems);
	xa_destroy(&ctx->ptes);
	kfree_rcu(ctx, rcu);
}

/**
 * trn_sim_mmu_fini() - drop every context left by files still open when
 * the device went away
 * @sdev: the device, no longer registered with the core
 */
void trn_sim_mmu_fini(struct trn_sim_dev *sdev)
{
	struct trn_sim_ctx *ctx;
	unsigned long n;

	xa_for_each(&sdev->ctxs, n, ctx) {
		xa_erase(&sdev->ctxs, n);
		trn_sim_ctx_free(ctx);
	}
	xa_destroy(&sdev->ctxs);
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_mmu_fini);

/* trn_hw_ops.ctx_init */
int trn_sim_ctx_init(struct trn_device *tdev, u32 n)
{
	struct trn_sim_dev *sdev = trn_device_hw_priv(tdev);
	struct trn_sim_ctx *ctx;
	int ret;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	xa_init(&ctx->ptes);
	ctx->sems = kvcalloc(array_size(sdev->num_cores, TRN_NUM_SEMAPHORES),
			     sizeof(*ctx->sems), GFP_KERNEL);
	if (!ctx->sems) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = xa_insert(&sdev->ctxs, n, ctx, GFP_KERNEL);
	if (ret)
		goto err_sems;
	return 0;

err_sems:
	kvfree(ctx->sems);
err_free:
	kfree(ctx);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_ctx_init);

/*
 * Open an access window on context @n: translations made until
 * trn_sim_ctx_access_end() stay usable, because an unmap waits for the
 * window to close. Returns NULL if there is no such context.
 */
static struct trn_sim_ctx *trn_sim_ctx_access_begin(struct trn_sim_dev *sdev,
						    u32 n)
{
	struct trn_sim_ctx *ctx;

	rcu_read_lock();
	ctx = xa_load(&sdev->ctxs, n);
	if (ctx) {
		atomic_inc(&ctx->accesses);
		/* Count before the recheck and the PTE reads that follow. */
		smp_mb__after_atomic();
		if (xa_load(&sdev->ctxs, n) != ctx) {
			/* Being destroyed: its pages must not be touched. */
			if (atomic_dec_and_test(&ctx->accesses))
				wake_up_var(&ctx->accesses);
			ctx = NULL;
		}
	}
	rcu_read_unlock();
	return ctx;
}

static void trn_sim_ctx_access_end(struct trn_sim_ctx *ctx)
{
	/* Fully ordered: the accesses are done before the count drops. */
	if (ctx && atomic_dec_and_test(&ctx->accesses))
		wake_up_var(&ctx->accesses);
}

/* Wait for every access that may still use a translation just removed. */
static void trn_sim_ctx_shootdown(struct trn_sim_ctx *ctx)
{
	/* The PTE (or context) removal before the read of the count. */
	smp_mb();
	wait_var_event(&ctx->accesses, !atomic_read(&ctx->accesses));
}

/* trn_hw_ops.ctx_fini */
void trn_sim_ctx_fini(struct trn_device *tdev, u32 n)
{
	struct trn_sim_dev *sdev = trn_device_hw_priv(tdev);
	struct trn_sim_ctx *ctx = xa_erase(&sdev->ctxs, n);

	if (ctx) {
		trn_sim_ctx_shootdown(ctx);
		trn_sim_ctx_free(ctx);
	}
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_ctx_fini);

static void trn_sim_ptes_clear(struct trn_sim_ctx *ctx, u64 va, u64 size)
{
	unsigned long first = va >> PAGE_SHIFT;
	unsigned long i;

	for (i = first; i < first + (size >> PAGE_SHIFT); i++)
		xa_erase(&ctx->ptes, i);
}

/* trn_hw_ops.mmu_map */
int trn_sim_mmu_map(struct trn_device *tdev, u32 n,
		    const struct trn_mmu_map *map)
{
	struct trn_sim_dev *sdev = trn_device_hw_priv(tdev);
	unsigned long page = map->va >> PAGE_SHIFT;
	u64 flags = TRN_SIM_PTE_VALID, done = 0;
	struct trn_sim_ctx *ctx;
	struct scatterlist *sg;
	unsigned int i;
	int ret = 0;

	ctx = xa_load(&sdev->ctxs, n);
	if (!ctx)
		return -ENOENT;
	if (map->prot & TRN_MMU_READ)
		flags |= TRN_SIM_PTE_READ;
	if (map->prot & TRN_MMU_WRITE)
		flags |= TRN_SIM_PTE_WRITE;

	if (!map->sgt) {
		for (done = 0; done < map->size && !ret; done += PAGE_SIZE)
			ret = xa_err(xa_store(&ctx->ptes, page++,
					      xa_mk_value(flags | TRN_SIM_PTE_HBM |
							  (map->hbm_offset + done)),
					      GFP_KERNEL));
	} else {
		for_each_sgtable_dma_sg(map->sgt, sg, i) {
			dma_addr_t addr = sg_dma_address(sg);
			u64 off;

			for (off = 0; off < sg_dma_len(sg) && !ret &&
			     done < map->size; off += PAGE_SIZE, done += PAGE_SIZE)
				ret = xa_err(xa_store(&ctx->ptes, page++,
						      xa_mk_value(flags | (addr + off)),
						      GFP_KERNEL));
			if (ret)
				break;
		}
	}
	if (ret) {
		trn_sim_ptes_clear(ctx, map->va, done);
		/* A racing job may have reached what was stored: wait for it. */
		trn_sim_ctx_shootdown(ctx);
	}
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_mmu_map);

/* trn_hw_ops.mmu_unmap */
void trn_sim_mmu_unmap(struct trn_device *tdev, u32 n, u64 va, u64 size)
{
	struct trn_sim_dev *sdev = trn_device_hw_priv(tdev);
	struct trn_sim_ctx *ctx = xa_load(&sdev->ctxs, n);

	if (ctx) {
		trn_sim_ptes_clear(ctx, va, size);
		trn_sim_ctx_shootdown(ctx);
	}
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_mmu_unmap);

/**
 * trn_sim_mmu_translate() - what a device access in a context reaches
 * @sdev: the device
 * @n: the context
 * @va: device virtual address
 * @write: the access is a write
 *
 * A failed translation is reported to the core as a fault of context @n.
 * The page stays what @va reaches only while an access window is open
 * (trn_sim_mmu_rw(), trn_sim_tlb_rw() and trn_sim_dma_copy() open one):
 * an unmap waits for open windows before the memory can be freed.
 *
 * Return: the page holding @va, or an ERR_PTR(): -EFAULT for a fault,
 * -ENOMEM if device memory cannot be backed.
 */
struct page *trn_sim_mmu_translate(struct trn_sim_dev *sdev, u32 n, u64 va,
				   bool write)
{
	u64 need = TRN_SIM_PTE_VALID |
		   (write ? TRN_SIM_PTE_WRITE : TRN_SIM_PTE_READ);
	struct trn_sim_ctx *ctx;
	struct page *page;
	u64 pte = 0;
	void *entry;

	rcu_read_lock();
	ctx = xa_load(&sdev->ctxs, n);
	if (ctx) {
		entry = xa_load(&ctx->ptes, va >> PAGE_SHIFT);
		if (xa_is_value(entry))
			pte = xa_to_value(entry);
	}
	rcu_read_unlock();

	if ((pte & need) != need) {
		atomic64_inc(&sdev->mmu_faults);
		trn_device_mmu_fault(sdev->tdev, n, va, write);
		return ERR_PTR(-EFAULT);
	}
	if (pte & TRN_SIM_PTE_HBM) {
		page = trn_sim_mem_page(sdev, pte & TRN_SIM_PTE_ADDR);
		return page ?: ERR_PTR(-ENOMEM);
	}
	return pfn_to_page(PHYS_PFN(dma_to_phys(&sdev->dev,
						pte & TRN_SIM_PTE_ADDR)));
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_mmu_translate);

/* An access in a context that does not exist (any more): a fault. */
static struct page *trn_sim_mmu_no_ctx(struct trn_sim_dev *sdev, u32 n, u64 va,
				       bool write)
{
	atomic64_inc(&sdev->mmu_faults);
	trn_device_mmu_fault(sdev->tdev, n, va, write);
	return ERR_PTR(-EFAULT);
}

/**
 * trn_sim_ctx_sems() - the semaphores of a context on a NeuronCore
 * @sdev: the device
 * @n: the context
 * @core: the NeuronCore
 *
 * The array stays valid until the context is destroyed, which the core
 * does only after every job of the context finished or was abandoned.
 *
 * Return: %TRN_NUM_SEMAPHORES semaphores, or NULL if there is no such
 * context.
 */
u64 *trn_sim_ctx_sems(struct trn_sim_dev *sdev, u32 n, u32 core)
{
	struct trn_sim_ctx *ctx;
	u64 *sems = NULL;

	rcu_read_lock();
	ctx = xa_load(&sdev->ctxs, n);
	if (ctx && core < sdev->num_cores)
		sems = ctx->sems + (size_t)core * TRN_NUM_SEMAPHORES;
	rcu_read_unlock();
	return sems;
}

/**
 * trn_sim_mmu_rw() - a device access of @len bytes in context @n
 * @sdev: the device
 * @n: the context
 * @va: device virtual address
 * @buf: where the bytes come from or go to
 * @len: bytes
 * @write: the device writes (@buf to @va), else it reads
 * @fault_va: on -EFAULT, the first address that could not be reached
 *
 * Every page is translated through the context's page table; a fault is
 * reported to the core by trn_sim_mmu_translate(). Bytes before the fault
 * stay transferred. May sleep.
 *
 * Return: 0, -EFAULT or -ENOMEM.
 */
int trn_sim_mmu_rw(struct trn_sim_dev *sdev, u32 n, u64 va, void *buf,
		   size_t len, bool write, u64 *fault_va)
{
	struct trn_sim_tlb tlb = { };
	int ret = trn_sim_tlb_rw(sdev, &tlb, n, va, buf, len, write, fault_va);

	trn_sim_tlb_close(&tlb);
	return ret;
}

#define TRN_SIM_TLB_READ	BIT(0)
#define TRN_SIM_TLB_WRITE	BIT(1)

/* The page @va reaches in @tlb's open window, translated if not kept. */
static struct page *trn_sim_tlb_page(struct trn_sim_dev *sdev,
				     struct trn_sim_tlb *tlb, u64 va,
				     bool write)
{
	u8 need = write ? TRN_SIM_TLB_WRITE : TRN_SIM_TLB_READ;
	u64 vpn = va >> PAGE_SHIFT;
	struct page *page;
	unsigned int i;

	if (!tlb->ctx)
		return trn_sim_mmu_no_ctx(sdev, tlb->n, va, write);
	for (i = 0; i < TRN_SIM_TLB_ENTRIES; i++)
		if (tlb->page[i] && tlb->vpn[i] == vpn &&
		    (tlb->rights[i] & need))
			return tlb->page[i];
	page = trn_sim_mmu_translate(sdev, tlb->n, va, write);
	if (IS_ERR(page))
		return page;
	for (i = 0; i < TRN_SIM_TLB_ENTRIES; i++)
		if (tlb->page[i] && tlb->vpn[i] == vpn)
			break;
	if (i == TRN_SIM_TLB_ENTRIES) {
		i = tlb->next;
		tlb->next = (i + 1) % TRN_SIM_TLB_ENTRIES;
		tlb->vpn[i] = vpn;
		tlb->rights[i] = 0;
	}
	tlb->page[i] = page;
	tlb->rights[i] |= need;
	return page;
}

/**
 * trn_sim_tlb_close() - close a ring's access window: forget its
 * translations, let unmaps proceed
 * @tlb: the ring's translations
 */
void trn_sim_tlb_close(struct trn_sim_tlb *tlb)
{
	trn_sim_ctx_access_end(tlb->ctx);
	memset(tlb, 0, sizeof(*tlb));
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_tlb_close);

/**
 * trn_sim_tlb_rw() - trn_sim_mmu_rw() through a ring's kept translations
 * @sdev: the device
 * @tlb: the ring's translations; its window opens on first use, and
 *       moves to context @n if it was open on another
 * @n: the context
 * @va: device virtual address
 * @buf: where the bytes come from or go to
 * @len: bytes
 * @write: the device writes (@buf to @va), else it reads
 * @fault_va: on -EFAULT, the first address that could not be reached
 *
 * The caller closes the window (trn_sim_tlb_close()) before it sleeps for
 * long or lets go of the ring: an unmap in the context waits for it.
 *
 * Return: as trn_sim_mmu_rw().
 */
int trn_sim_tlb_rw(struct trn_sim_dev *sdev, struct trn_sim_tlb *tlb, u32 n,
		   u64 va, void *buf, size_t len, bool write, u64 *fault_va)
{
	int ret = 0;

	if (tlb->ctx && tlb->n != n)
		trn_sim_tlb_close(tlb);
	if (!tlb->ctx) {
		tlb->ctx = trn_sim_ctx_access_begin(sdev, n);
		tlb->n = n;
	}
	while (len) {
		size_t chunk = min_t(u64, len, PAGE_SIZE - offset_in_page(va));
		struct page *page;
		void *p;

		page = trn_sim_tlb_page(sdev, tlb, va, write);
		if (IS_ERR(page)) {
			if (PTR_ERR(page) == -EFAULT)
				*fault_va = va;
			ret = PTR_ERR(page);
			break;
		}
		p = kmap_local_page(page);
		if (write)
			memcpy(p + offset_in_page(va), buf, chunk);
		else
			memcpy(buf, p + offset_in_page(va), chunk);
		kunmap_local(p);
		buf += chunk;
		va += chunk;
		len -= chunk;
	}
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_tlb_rw);

/**
 * trn_sim_mmu_copy() - a DMA engine copy in context @n
 * @sdev: the device
 * @n: the context
 * @dst: destination device address
 * @src: source device address
 * @len: bytes
 * @fault_va: on -EFAULT, the first address that could not be reached
 *
 * Page to page, each byte moved once. Overlapping ranges copy in address
 * order, a page at a time.
 *
 * Return: 0, or the error of the first access that failed; what was copied
 * before it stays copied, as with real hardware.
 */
int trn_sim_mmu_copy(struct trn_sim_dev *sdev, u32 n, u64 dst, u64 src,
		     u64 len, u64 *fault_va)
{
	struct trn_sim_ctx *ctx = trn_sim_ctx_access_begin(sdev, n);
	int ret = 0;

	while (len) {
		size_t chunk = min3(len, PAGE_SIZE - offset_in_page(src),
				    PAGE_SIZE - offset_in_page(dst));
		struct page *sp, *dp;
		void *s, *d;

		sp = ctx ? trn_sim_mmu_translate(sdev, n, src, false) :
			   trn_sim_mmu_no_ctx(sdev, n, src, false);
		if (IS_ERR(sp)) {
			*fault_va = src;
			ret = PTR_ERR(sp);
			break;
		}
		dp = trn_sim_mmu_translate(sdev, n, dst, true);
		if (IS_ERR(dp)) {
			*fault_va = dst;
			ret = PTR_ERR(dp);
			break;
		}

		s = kmap_local_page(sp);
		d = kmap_local_page(dp);
		/* Only within one page can the two ranges overlap. */
		if (sp == dp)
			memmove(d + offset_in_page(dst),
				s + offset_in_page(src), chunk);
		else
			memcpy(d + offset_in_page(dst),
			       s + offset_in_page(src), chunk);
		kunmap_local(d);
		kunmap_local(s);

		src += chunk;
		dst += chunk;
		len -= chunk;
		cond_resched();
	}
	trn_sim_ctx_access_end(ctx);
	return ret;
}

/**
 * trn_sim_dma_copy() - a DMA engine copy in context @n, for the debugfs
 * hook and KUnit
 * @sdev: the device
 * @n: the context
 * @dst: destination device address
 * @src: source device address
 * @len: bytes
 *
 * Return: as trn_sim_mmu_copy().
 */
int trn_sim_dma_copy(struct trn_sim_dev *sdev, u32 n, u64 dst, u64 src,
		     u64 len)
{
	u64 fault_va;

	return trn_sim_mmu_copy(sdev, n, dst, src, len, &fault_va);
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_dma_copy);

/*
 * debugfs "dma_copy": write "CTX DST SRC LEN" (context number decimal,
 * addresses hexadecimal, length decimal) to run a copy on the device in
 * that context. Fails with -EFAULT on an MMU fault. A test hook for the
 * MMU until the command stream can issue copies.
 */
static ssize_t trn_sim_dma_copy_write(struct file *file,
				      const char __user *ubuf, size_t count,
				      loff_t *ppos)
{
	struct trn_sim_dev *sdev = file->private_data;
	u64 dst, src, len;
	int consumed = 0;
	char buf[96];
	u32 n;
	int ret;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (sscanf(strim(buf), "%u %llx %llx %llu%n", &n, &dst, &src, &len,
		   &consumed) != 4 || consumed != strlen(strim(buf)))
		return -EINVAL;
	if (!len || len > TRN_SIM_DMA_MAX)
		return -EINVAL;

	ret = trn_sim_dma_copy(sdev, n, dst, src, len);
	return ret ? ret : count;
}

static const struct file_operations trn_sim_dma_copy_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = trn_sim_dma_copy_write,
};

static int trn_sim_mmu_faults_get(void *data, u64 *val)
{
	struct trn_sim_dev *sdev = data;

	*val = atomic64_read(&sdev->mmu_faults);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(trn_sim_mmu_faults_fops, trn_sim_mmu_faults_get,
			 NULL, "%llu\n");

/**
 * trn_sim_mmu_debugfs_init() - the MMU's knobs and counters
 * @sdev: the device, whose debugfs directory exists
 */
void trn_sim_mmu_debugfs_init(struct trn_sim_dev *sdev)
{
	debugfs_create_file("dma_copy", 0200, sdev->debugfs, sdev,
			    &trn_sim_dma_copy_fops);
	debugfs_create_file_unsafe("mmu_faults", 0400, sdev->debugfs, sdev,
				   &trn_sim_mmu_faults_fops);
}
