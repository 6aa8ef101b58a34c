/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (c) 2026 The trn authors
 *
 * trn_sim: a simulated Trainium-class device. Devices live on their own bus
 * (/sys/bus/trn_sim), are created and destroyed at runtime through its
 * new_device and del_device files, and are bound by the trn_sim driver,
 * which registers them with the trn core like any hardware backend.
 */
#ifndef __TRN_SIM_H__
#define __TRN_SIM_H__

#include <linux/bits.h>
#include <linux/device.h>
#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/xarray.h>

struct dentry;
struct page;
struct trn_device;
struct trn_hw_ring;
struct trn_mmu_map;
struct trn_sim_core;
struct trn_sim_ctx;
struct trn_sim_uring;
struct trn_hw_uq;
struct workqueue_struct;

#define TRN_SIM_MAX_ID		1023
#define TRN_SIM_MAX_CORES	64
#define TRN_SIM_MAX_QUEUES	16
#define TRN_SIM_MAX_HBM_MIB	4096
#define TRN_SIM_MAX_STACKS	16

#define TRN_SIM_DEFAULT_CORES	8
#define TRN_SIM_DEFAULT_HBM_MIB	256
#define TRN_SIM_DEFAULT_QUEUES	4
/* HBM stacks, as on Trainium2 and 3: placement has something to choose. */
#define TRN_SIM_DEFAULT_STACKS	4
/* Freed device memory whose host pages a device keeps for the next buffer. */
#define TRN_SIM_HBM_KEEP_PAGES	(SZ_16M / PAGE_SIZE)

/* Descriptors in each hardware ring. */
#define TRN_SIM_RING_ENTRIES	256

/* User-mode queues a device runs at once. */
#define TRN_SIM_USER_QUEUES	256

/* Every context sees the same device VA window: [4 GiB, 256 TiB). */
#define TRN_SIM_VA_START	BIT_ULL(32)
#define TRN_SIM_VA_END		BIT_ULL(48)

/**
 * struct trn_sim_shape - what new_device asks for
 * @id: identifier, 0 to %TRN_SIM_MAX_ID
 * @num_cores: NeuronCores
 * @queues_per_core: hardware queues per NeuronCore
 * @hbm_mib: device memory in MiB
 * @hbm_stacks: HBM stacks @hbm_mib is split into, each a whole number of
 *              pages
 */
struct trn_sim_shape {
	u32 id;
	u32 num_cores;
	u32 queues_per_core;
	u32 hbm_mib;
	u32 hbm_stacks;
};

/**
 * struct trn_sim_dev - one simulated device
 * @dev: the device on the trn_sim bus
 * @list: entry in the bus's device list, under trn_sim_lock
 * @id: identifier chosen by whoever created the device
 * @num_cores: NeuronCores
 * @queues_per_core: hardware queues per NeuronCore
 * @hbm_mib: device memory in MiB
 * @hbm_stacks: HBM stacks of equal size @hbm_mib is split into
 * @tdev: the core's device while bound, NULL otherwise
 * @probe_err: why binding failed, for new_device to report
 * @debugfs: this device's knob directory while bound
 * @hbm_lock: protects the slots of @hbm_pages, @hbm_kept and the zeroing
 *            of stale pages
 * @hbm_pages: the host page behind each page of device memory, or NULL
 *             where no buffer was allocated
 * @hbm_npages: pages of device memory
 * @hbm_free: pages of @hbm_pages that belong to no buffer (kept for reuse)
 * @hbm_stale: pages of @hbm_pages holding a freed buffer's data, zeroed
 *             before anything reads them
 * @hbm_kept: bits set in @hbm_free
 * @hbm_keep_max: at most so many freed pages are kept
 * @ctxs: MMU context number -> its page table
 * @mmu_faults: device accesses that faulted, in any context
 * @engine_wq: unbound workqueue running the engines of the NeuronCores
 * @cores: one engine per NeuronCore while the device is bound, else NULL
 * @clock_base: ktime_get_ns() when the device came up; the device clock
 *              counts from there
 * @hang_next: debugfs knob: so many of the next jobs to start hang
 * @late_next: debugfs knob: so many of the next jobs to start stall until
 *             their ring is reset, then finish just before it (the race of
 *             a timeout with a completion, on purpose)
 * @reset_fail_next: debugfs knob: so many of the next ring resets fail, as
 *                   on an engine that no longer responds (the core then
 *                   resets the device)
 * @jobs_executed: jobs the device finished (and wrote back), any status
 * @uring_lock: protects @urings
 * @urings: the user-mode queues by the device's number
 *          (%TRN_SIM_USER_QUEUES of them), NULL where none runs
 * @waiting: user-mode jobs waiting for a memory value, on any core
 */
struct trn_sim_dev {
	struct device dev;
	struct list_head list;
	u32 id;
	u32 num_cores;
	u32 queues_per_core;
	u32 hbm_mib;
	u32 hbm_stacks;
	struct trn_device *tdev;
	int probe_err;
	struct dentry *debugfs;

	/* Protects the slots of hbm_pages, hbm_kept and stale page zeroing. */
	spinlock_t hbm_lock;
	struct page **hbm_pages;
	u64 hbm_npages;
	unsigned long *hbm_free;
	unsigned long *hbm_stale;
	u64 hbm_kept;
	u64 hbm_keep_max;

	struct xarray ctxs;
	atomic64_t mmu_faults;

	struct workqueue_struct *engine_wq;
	struct trn_sim_core **cores;
	u64 clock_base;
	atomic_t hang_next;
	atomic_t late_next;
	atomic_t reset_fail_next;
	atomic64_t jobs_executed;

	/* Protects urings (taken with interrupts off, outside cores' locks). */
	spinlock_t uring_lock;
	struct trn_sim_uring **urings;
	atomic_t waiting;
};

static inline struct trn_sim_dev *to_trn_sim_dev(struct device *dev)
{
	return container_of(dev, struct trn_sim_dev, dev);
}

extern struct dentry *trn_sim_debugfs_root;

int trn_sim_probe(struct device *dev);
void trn_sim_remove(struct device *dev);

/* trn_sim_mem.c: device memory */
int trn_sim_mem_init(struct trn_sim_dev *sdev);
void trn_sim_mem_fini(struct trn_sim_dev *sdev);
struct page *trn_sim_mem_page(struct trn_sim_dev *sdev, u64 offset);
int trn_sim_hbm_pfn(struct trn_device *tdev, u64 offset, unsigned long *pfn);
int trn_sim_hbm_populate(struct trn_device *tdev, u64 offset, u64 size);
void trn_sim_hbm_clear(struct trn_device *tdev, u64 offset, u64 size);
void trn_sim_hbm_read(struct trn_device *tdev, u64 offset, void *buf,
		      size_t size);

/* trn_sim_mmu.c: contexts, page tables, translation */

/* Translations an engine keeps for one ring (struct trn_sim_tlb). */
#define TRN_SIM_TLB_ENTRIES	4

/**
 * struct trn_sim_tlb - an engine's translations for one ring, reused
 * while its access window is open
 * @ctx: the context whose window is open; NULL: closed, nothing kept
 * @n: that context's number
 * @vpn: device page number of each entry
 * @page: the page it reaches; NULL: the entry is empty
 * @rights: the accesses the page table allowed for it, TRN_SIM_TLB_*
 * @next: the entry the next miss replaces
 *
 * An unmap waits for open windows (the simulator's shootdown), so what a
 * window keeps stays valid until trn_sim_tlb_close(), which the engine
 * calls at the end of every slice of the ring. Only the ring's engine,
 * under its exec_lock, uses it.
 */
struct trn_sim_tlb {
	struct trn_sim_ctx *ctx;
	u32 n;
	u64 vpn[TRN_SIM_TLB_ENTRIES];
	struct page *page[TRN_SIM_TLB_ENTRIES];
	u8 rights[TRN_SIM_TLB_ENTRIES];
	unsigned int next;
};

void trn_sim_mmu_init(struct trn_sim_dev *sdev);
void trn_sim_mmu_fini(struct trn_sim_dev *sdev);
void trn_sim_mmu_debugfs_init(struct trn_sim_dev *sdev);
int trn_sim_ctx_init(struct trn_device *tdev, u32 n);
void trn_sim_ctx_fini(struct trn_device *tdev, u32 n);
int trn_sim_mmu_map(struct trn_device *tdev, u32 n,
		    const struct trn_mmu_map *map);
void trn_sim_mmu_unmap(struct trn_device *tdev, u32 n, u64 va, u64 size);
struct page *trn_sim_mmu_translate(struct trn_sim_dev *sdev, u32 n, u64 va,
				   bool write);
int trn_sim_mmu_copy(struct trn_sim_dev *sdev, u32 n, u64 dst, u64 src,
		     u64 len, u64 *fault_va);
int trn_sim_dma_copy(struct trn_sim_dev *sdev, u32 n, u64 dst, u64 src,
		     u64 len);
u64 *trn_sim_ctx_sems(struct trn_sim_dev *sdev, u32 n, u32 core);
int trn_sim_mmu_rw(struct trn_sim_dev *sdev, u32 n, u64 va, void *buf,
		   size_t len, bool write, u64 *fault_va);
int trn_sim_tlb_rw(struct trn_sim_dev *sdev, struct trn_sim_tlb *tlb, u32 n,
		   u64 va, void *buf, size_t len, bool write, u64 *fault_va);
void trn_sim_tlb_close(struct trn_sim_tlb *tlb);

/* trn_sim_engine.c: rings, the engines of the NeuronCores */
int trn_sim_engine_init(struct trn_sim_dev *sdev);
void trn_sim_engine_fini(struct trn_sim_dev *sdev);
void trn_sim_engine_debugfs_init(struct trn_sim_dev *sdev);
int trn_sim_ring_init(struct trn_device *tdev, const struct trn_hw_ring *ring);
void trn_sim_ring_fini(struct trn_device *tdev, u32 index);
void trn_sim_ring_doorbell(struct trn_device *tdev, u32 index, u64 tail);
int trn_sim_ring_reset(struct trn_device *tdev, u32 index, u64 seqno);
int trn_sim_device_reset(struct trn_device *tdev);

/* trn_sim_uq.c: user-mode queues */
int trn_sim_uq_init(struct trn_device *tdev, const struct trn_hw_uq *uq);
void trn_sim_uq_fini(struct trn_device *tdev, u32 id);
void trn_sim_uq_wake(struct trn_device *tdev, u32 id);
void trn_sim_uq_irq_at(struct trn_device *tdev, u32 id, u64 seqno);
void trn_sim_uq_stop(struct trn_device *tdev, u32 id, bool abandon);

#if IS_ENABLED(CONFIG_KUNIT)
struct drm_trn_user_desc;
u32 trn_sim_udesc_check(const struct drm_trn_user_desc *d);
int trn_sim_parse(const char *buf, size_t count, u32 *vals, int max);
int trn_sim_parse_shape(const char *buf, size_t count,
			struct trn_sim_shape *shape);
#endif

#endif /* __TRN_SIM_H__ */
