/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (c) 2026 The trn authors
 *
 * trn_pci: the backend for real Trainium2 / Trainium3 parts. The register
 * offsets and rules here are facts from AWS's own driver, each listed with
 * its source in Documentation/hardware.md.
 */
#ifndef __TRN_PCI_H__
#define __TRN_PCI_H__

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/rbtree.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

struct pci_dev;
struct scatterlist;
struct sg_table;
struct trn_device;
struct trn_hw_desc;
struct trn_hw_ring;
struct trn_hw_ring_status;
struct trn_mmu_map;

#define TRN_PCI_VENDOR_AMAZON	0x1d0f
#define TRN_PCI_DEVICE_TRN2	0x7364
#define TRN_PCI_DEVICE_TRN3_0	0x7564
#define TRN_PCI_DEVICE_TRN3_1	0x7565
/* AWS's QEMU models of the part report this revision. */
#define TRN_PCI_REVISION_QEMU	255

#define TRN_PCI_BAR_REGS	0
#define TRN_PCI_BAR_HBM		4

/* BAR0: MISC RAM (identity, firmware mailbox). */
#define TRN_PCI_MISC		0x06c84000
#define TRN_PCI_MISC_ROUTING_ID	0x24
#define TRN_PCI_MISC_SERIAL_LO	0x38
#define TRN_PCI_MISC_SERIAL_HI	0x3c
/* The firmware mailbox's reset request: a type, then the doorbell. */
#define TRN_PCI_MISC_FW_RESET	0x1ec
#define TRN_PCI_FW_RESET_DEVICE	1
#define TRN_PCI_MISC_FW_DOORBELL 0x800
#define TRN_PCI_MISC_FW_STATUS	0x808
#define TRN_PCI_FW_STATUS_BUSY	BIT(3)
/* MISC RAM reads this while the firmware is not ready. */
#define TRN_PCI_NOT_READY	0xdeadbeef
/* BAR0: the reset register of QEMU mode. */
#define TRN_PCI_QEMU_RESET	0x06300010

/* HBM: 4 stacks at sparse device addresses, 16 MiB of each the firmware's. */
#define TRN_PCI_STACKS		4
#define TRN_PCI_FW_CARVEOUT	SZ_16M
/* A real part's BAR4 shows stack n at n x 64 GiB; each stack holds this. */
#define TRN_PCI_STACK_STRIDE	SZ_64G
#define TRN_PCI_TRN2_STACK	(24ULL * SZ_1G)
#define TRN_PCI_TRN3_STACK	(36ULL * SZ_1G)

/* The device reaches host memory at its DMA address with this bit set. */
#define TRN_PCI_HOST_BIT	BIT_ULL(46)

/* UDMA: an engine's M2S and S2M queues, and their registers. */
#define TRN_UDMA_H2D_0		0x06900000
/* The first engine of each SENG group; engines are 1 MiB apart. */
#define TRN_UDMA_SENG_0		0x82000000
#define TRN_UDMA_SENG_1		0x94000000
#define TRN_UDMA_SENG_2		0xa2000000
#define TRN_UDMA_SENG_3		0xb4000000
#define TRN_UDMA_ENGINE_SIZE	SZ_1M
#define TRN_UDMA_QUEUES		16
#define TRN_UDMA_M2S_Q(q)	(0x01000 + (q) * 0x1000)
#define TRN_UDMA_S2M_Q(q)	(0x21000 + (q) * 0x1000)
#define TRN_UDMA_Q_CFG		0x20
#define TRN_UDMA_Q_STATUS	0x24
#define TRN_UDMA_Q_DRBP_LO	0x28
#define TRN_UDMA_Q_DRBP_HI	0x2c
#define TRN_UDMA_Q_DRL		0x30
#define TRN_UDMA_Q_DRHP		0x34
#define TRN_UDMA_Q_DRTP_INC	0x38
#define TRN_UDMA_Q_DRTP		0x3c
/* Head (bits 23:0) and tail pointers of a queue just reset: ring id 1. */
#define TRN_UDMA_DRHP_RESET	BIT(30)
#define TRN_UDMA_M2S_SW_CTRL	0xb0
#define TRN_UDMA_S2M_SW_CTRL	0x64
#define TRN_UDMA_CFG_EN_PREF	BIT(16)
#define TRN_UDMA_CFG_EN_SCHED	BIT(17)
#define TRN_UDMA_SW_CTRL_RST_Q	BIT(8)
/* Set by the QEMU model when a queue stopped on an error. */
#define TRN_UDMA_STATUS_ERROR	BIT(0)
#define TRN_UDMA_RING_MIN	32

/* Descriptor control word. */
#define TRN_UDMA_DESC_LEN	GENMASK(15, 0)
#define TRN_UDMA_DESC_RING_ID	GENMASK(25, 24)
#define TRN_UDMA_DESC_FIRST	BIT(26)
#define TRN_UDMA_DESC_LAST	BIT(27)
#define TRN_UDMA_DESC_DMB	BIT(30)

/**
 * struct trn_udma_desc - a UDMA descriptor (device-visible, little endian)
 * @len_ctrl: length (0 means 64 KiB) and TRN_UDMA_DESC_* bits
 * @meta: M2S metadata, or zero
 * @addr: source (M2S) or destination (S2M) device address
 */
struct trn_udma_desc {
	__le32 len_ctrl;
	__le32 meta;
	__le64 addr;
};

/**
 * struct trn_udma_queue - one queue of one engine, both of its rings
 * @m2s: BAR0 address of its M2S (read side) registers
 * @s2m: BAR0 address of its S2M (write side) registers
 * @m2s_ring: CPU address of the M2S descriptors
 * @s2m_ring: CPU address of the S2M descriptors
 * @ring_dma: DMA address of both rings (M2S first)
 * @entries: descriptors in each ring
 * @tail: next free slot, the same in both rings
 * @ring_id: ring id of the descriptors written at @tail
 */
struct trn_udma_queue {
	void __iomem *m2s;
	void __iomem *s2m;
	struct trn_udma_desc *m2s_ring;
	struct trn_udma_desc *s2m_ring;
	dma_addr_t ring_dma;
	u32 entries;
	u32 tail;
	u32 ring_id;
};

/**
 * struct trn_pci_dev - one part bound to trn_pci
 * @pdev: the PCI device
 * @regs: BAR0, uncached
 * @qemu_mode: the part is AWS's QEMU mode of it (revision 255), not a real
 *             part: how it resets, and how BAR4 lays out its stacks
 * @stack_io: the allocatable part of each HBM stack in BAR4 (after the
 *            carve-out), write-combined, for the CPU's reads of command
 *            streams and for clearing memory; the rest of BAR4 is not
 *            mapped
 * @hbm_phys: bus address of BAR4, for mmap of device memory
 * @name: "Trn2" or "Trn3"
 * @routing_id: the part's place among the instance's devices
 * @serial: its serial number
 * @stack_size: bytes of one HBM stack, the carve-out included (QEMU mode:
 *              BAR4 / 4; a real part: its generation's)
 * @stack_stride: bytes between HBM stacks in BAR4 (QEMU mode: BAR4 / 4; a
 *                real part: 64 GiB)
 * @stack_usable: bytes of each stack trn may allocate (after the carve-out)
 * @hbm_usable: bytes of device memory trn may allocate (all stacks)
 * @hbm_scrubbed: one bit per TRN_PCI_SCRUB_GRANULE bytes of the allocator's
 *                range, set once the granule was cleared since the bind;
 *                a clear bit: no buffer has held it since, and it holds
 *                whatever the part held then (trn_pci_hbm_populate())
 * @scrub_lock: protects @hbm_scrubbed, held across a granule's first clear
 * @tdev: the trn device registered for the part, or NULL
 * @contexts: &struct trn_pci_ctx by context number
 * @rings: the command processor's rings, by ring number
 * @num_rings: entries of @rings
 * @cp_wq: where the rings' work items run
 * @unwedged: work items of rings whose queue did not reset wait here for
 *            the device reset
 * @sem_wq: work items of rings whose job is in SEM_WAIT wait here for a
 *          SEM_SIGNAL, a reset or the ring's end
 * @heartbeat: asks the part every %TRN_PCI_HEARTBEAT whether it still
 *             answers, from registration until remove
 * @silent: heartbeats in a row that found the part reading all ones (only
 *          the heartbeat touches it)
 * @gone: the part stopped answering (surprise removal); nothing touches
 *        its registers any more (trn_pci_lost())
 */
struct trn_pci_dev {
	struct pci_dev *pdev;
	void __iomem *regs;
	bool qemu_mode;
	void __iomem *stack_io[TRN_PCI_STACKS];
	phys_addr_t hbm_phys;
	const char *name;
	u32 routing_id;
	u64 serial;
	u64 stack_size;
	u64 stack_stride;
	u64 stack_usable;
	u64 hbm_usable;
	unsigned long *hbm_scrubbed;
	struct mutex scrub_lock;	/* see above */
	struct trn_device *tdev;
	struct xarray contexts;
	struct trn_pci_ring **rings;
	u32 num_rings;
	struct workqueue_struct *cp_wq;
	wait_queue_head_t unwedged;
	wait_queue_head_t sem_wq;
	struct delayed_work heartbeat;
	unsigned int silent;
	bool gone;
};

/*
 * How often a bound part is asked whether it still answers, and how many
 * answers of all ones in a row mean that it does not: a function level
 * reset reads all ones for a moment too.
 */
#define TRN_PCI_HEARTBEAT	HZ
#define TRN_PCI_SILENT_BEATS	3

/*
 * How long a real part's firmware may take to take a reset request (it
 * is sent again, up to %TRN_PCI_FW_RESET_SENDS times in all, as AWS's
 * driver does), and then to bring the part back: 60 s in all (our
 * choice).
 */
#define TRN_PCI_FW_RESET_SENDS		3
#define TRN_PCI_FW_RESET_TAKE_US	(10 * USEC_PER_SEC)
#define TRN_PCI_FW_RESET_STEP_US	(30 * USEC_PER_SEC)

/* Device memory is cleared on first use in granules of this size. */
#define TRN_PCI_SCRUB_GRANULE	SZ_2M

/* The part seen by the core: 8 NeuronCores, 4 rings each. */
#define TRN_PCI_CORES		8
#define TRN_PCI_QUEUES_PER_CORE	4
#define TRN_PCI_RING_ENTRIES	256
/* Device addresses handed to contexts: the same range as the simulator's. */
#define TRN_PCI_VA_START	BIT_ULL(32)
#define TRN_PCI_VA_END		BIT_ULL(48)

/**
 * struct trn_pci_map - one mapping of a context, kept by the backend: the
 * part has no MMU the driver programs, so the command processor translates
 * every address through these
 * @node: in &trn_pci_ctx.maps, by @va
 * @va: first device virtual address
 * @size: bytes
 * @prot: TRN_MMU_* rights
 * @sgt: host memory, DMA-mapped for the part; or NULL for
 * @hbm_offset: device memory at this offset of the allocator's range
 */
struct trn_pci_map {
	struct rb_node node;
	u64 va;
	u64 size;
	u32 prot;
	struct sg_table *sgt;
	u64 hbm_offset;
};

/**
 * struct trn_pci_ctx - a context's address space and semaphores
 * @lock: protects @maps; the command processor holds it from translating
 *        an address until the DMA that uses it completed, so that a
 *        mapping is never removed under an engine
 * @maps: &struct trn_pci_map by address
 * @sems: %TRN_NUM_SEMAPHORES semaphores per NeuronCore (core * 256 + sem),
 *        kept by the command processor: the rings of one core run in
 *        parallel work items, so they are atomic rather than locked
 */
struct trn_pci_ctx {
	struct mutex lock;	/* see above */
	struct rb_root maps;
	atomic64_t *sems;
};

/**
 * struct trn_pci_cursor - a walk through one mapping's memory
 * @map: the mapping, or NULL before the first seek
 * @sg: the scatterlist entry holding @start (host memory), or NULL to
 *      start over
 * @idx: index of @sg in the table
 * @start: mapping offset at which @sg starts
 * @dma: whether the walk is over DMA addresses (else CPU pages)
 */
struct trn_pci_cursor {
	const struct trn_pci_map *map;
	struct scatterlist *sg;
	unsigned int idx;
	u64 start;
	bool dma;
};

static inline void trn_pci_cursor_set(struct trn_pci_cursor *cur,
				      const struct trn_pci_map *map)
{
	if (cur->map != map) {
		cur->map = map;
		cur->sg = NULL;
	}
}

/* Where the part reaches host memory of DMA address @addr. */
static inline u64 trn_pci_host_addr(dma_addr_t addr)
{
	return addr | TRN_PCI_HOST_BIT;
}

u64 trn_pci_stack_addr(unsigned int stack);
void trn_pci_lost(struct trn_pci_dev *tpd);
int trn_pci_udma_selftest(struct trn_pci_dev *tpd);
int trn_udma_queue_alloc(struct trn_pci_dev *tpd, struct trn_udma_queue *uq,
			 void __iomem *engine, u32 queue, u32 entries);
void trn_udma_queue_free(struct trn_pci_dev *tpd, struct trn_udma_queue *uq);
void trn_udma_queue_start(struct trn_udma_queue *uq);
int trn_udma_queue_stop(struct trn_udma_queue *uq);
int trn_pci_reset(struct trn_pci_dev *tpd);
void trn_udma_queue_copy(struct trn_udma_queue *uq, u64 src, u64 dst,
			 u32 len, bool ordered);
void trn_udma_queue_kick(struct trn_udma_queue *uq, u32 n);
u32 trn_udma_queue_status(struct trn_udma_queue *uq);

/* trn_pci_mem.c: contexts, mappings, device memory. */
int trn_pci_ctx_init(struct trn_device *tdev, u32 ctx);
void trn_pci_ctx_fini(struct trn_device *tdev, u32 ctx);
int trn_pci_mmu_map(struct trn_device *tdev, u32 ctx,
		    const struct trn_mmu_map *map);
void trn_pci_mmu_unmap(struct trn_device *tdev, u32 ctx, u64 va, u64 size);
int trn_pci_hbm_pfn(struct trn_device *tdev, u64 offset, unsigned long *pfn);
void trn_pci_hbm_clear(struct trn_device *tdev, u64 offset, u64 size);
int trn_pci_hbm_populate(struct trn_device *tdev, u64 offset, u64 size);
void trn_pci_hbm_read(struct trn_device *tdev, u64 offset, void *buf,
		      size_t size);
struct trn_pci_ctx *trn_pci_ctx_get(struct trn_pci_dev *tpd, u32 ctx);
const struct trn_pci_map *trn_pci_lookup(struct trn_pci_ctx *pctx, u64 va,
					 u64 len, u32 prot, u64 *fault_va);
u64 trn_pci_dev_addr(struct trn_pci_dev *tpd, struct trn_pci_cursor *cur,
		     u64 off, u64 *contig);
int trn_pci_read(struct trn_pci_dev *tpd, struct trn_pci_cursor *cur,
		 u64 off, void *buf, size_t len);

/* trn_pci_cp.c: the command processor. */
int trn_pci_cp_init(struct trn_pci_dev *tpd);
void trn_pci_cp_fini(struct trn_pci_dev *tpd);
int trn_pci_ring_init(struct trn_device *tdev, const struct trn_hw_ring *hw);
void trn_pci_ring_fini(struct trn_device *tdev, u32 index);
void trn_pci_ring_doorbell(struct trn_device *tdev, u32 index, u64 tail);
int trn_pci_ring_reset(struct trn_device *tdev, u32 index, u64 seqno);
int trn_pci_device_reset(struct trn_device *tdev);

#endif /* __TRN_PCI_H__ */
