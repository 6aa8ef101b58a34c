/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (c) 2026 The trn authors
 *
 * The interface between the trn core and its hardware backends.
 *
 * A backend (the simulator, later a PCI driver for real parts) binds a
 * struct device, describes the hardware in a struct trn_device_desc and
 * registers it together with its struct trn_hw_ops. The core owns the DRM
 * device, the uAPI and all policy; it reaches the hardware only through the
 * ops and never asks which backend it is talking to.
 */
#ifndef __TRN_HW_H__
#define __TRN_HW_H__

#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/types.h>

#include <uapi/drm/trn_accel.h>

/*
 * HBM stacks a device may have: what sysfs's hbm_stack_used shows in one
 * page (64 numbers of up to 20 digits). The uAPI's stack number has room
 * for 256 (DRM_TRN_BO_STACK_MASK).
 */
#define TRN_MAX_HBM_STACKS	64

struct device;
struct module;
struct sg_table;
struct trn_device;

/**
 * struct trn_device_desc - what a backend tells the core about its device
 * @generation: one of &enum drm_trn_generation
 * @device_id: backend-defined identifier reported to userspace
 * @num_cores: number of NeuronCores, at least one
 * @queues_per_core: hardware queues per NeuronCore, at least one
 * @hbm_size: bytes of device memory
 * @hbm_stacks: HBM stacks @hbm_size is made of, 1 to %TRN_MAX_HBM_STACKS,
 *              each of the same size; stack n holds the offsets from
 *              n * (@hbm_size / @hbm_stacks)
 * @va_start: first device virtual address a context may use (page aligned)
 * @va_size: size of a context's device virtual address range (page aligned)
 * @capabilities: DRM_TRN_CAP_* bits
 * @hbm_cpu_wc: CPU mappings of device memory must be write-combined (a PCI
 *              BAR); otherwise they are cached (the simulator's memory)
 * @ring_entries: descriptors in each hardware queue's ring, a power of two
 *                from 16 to 65536
 * @user_queues: user-mode queues the device runs at once (0: none; then
 *               the uq_* operations are not used)
 */
struct trn_device_desc {
	u32 generation;
	u32 device_id;
	u32 num_cores;
	u32 queues_per_core;
	u64 hbm_size;
	u32 hbm_stacks;
	u64 va_start;
	u64 va_size;
	u64 capabilities;
	bool hbm_cpu_wc;
	u32 ring_entries;
	u32 user_queues;
};

/**
 * struct trn_hw_desc - one job in a hardware ring (device-visible memory)
 * @seqno: ring sequence number of the job (core); the descriptor of job S
 *         sits in slot S % entries
 * @cmd_va: device address of the job's command stream (core)
 * @cmd_size: bytes of commands (core)
 * @ctx: MMU context the job runs in (core)
 * @status: &enum drm_trn_job_status (device, before completing the job)
 * @flags: TRN_HW_DESC_* (core; the device reads them live, see below)
 * @error_offset: offset of the failing command in its buffer (device)
 * @error_cmd_va: device address of the failing command (device)
 * @fault_va: address that faulted, for DRM_TRN_STATUS_MMU_FAULT (device)
 * @start_ns: device clock when the job started (device)
 * @end_ns: device clock when the job finished (device)
 * @reserved: zero
 *
 * All fields are little endian. The core fills a descriptor, then rings the
 * doorbell; the device writes its fields back, then advances the ring's
 * &struct trn_hw_ring_status, then interrupts.
 *
 * The core may set %TRN_HW_DESC_CANCEL in @flags of a descriptor the
 * device has been handed already, then ring the doorbell again. A device
 * that finds the flag when it reaches the job, or while it runs it (at the
 * job's next command boundary, or when a blocked job is looked at again
 * after a doorbell), ends the job at once with status
 * %DRM_TRN_STATUS_ABORTED, in ring order like any completion. A device
 * that is stuck in a job (hung) does not notice: the ring reset ends it.
 */
struct trn_hw_desc {
	__le64 seqno;
	__le64 cmd_va;
	__le32 cmd_size;
	__le32 ctx;
	__le32 status;
	__le32 flags;
	__le64 error_offset;
	__le64 error_cmd_va;
	__le64 fault_va;
	__le64 start_ns;
	__le64 end_ns;
	__le64 reserved[7];
};

/* Flags of &trn_hw_desc.flags. */
#define TRN_HW_DESC_CANCEL	BIT(0)

/**
 * struct trn_hw_ring_status - completion record of a ring, written by the
 * device
 * @completed_seqno: every job up to this ring sequence number is finished
 *                   and its descriptor written back
 * @reserved: zero
 */
struct trn_hw_ring_status {
	__le64 completed_seqno;
	__le64 reserved[7];
};

/**
 * struct trn_hw_ring - a hardware queue's ring, as the core sets it up
 * @index: ring number, core * queues_per_core + queue
 * @entries: descriptors in the ring (&trn_device_desc.ring_entries)
 * @desc: CPU address of the descriptors, for a backend that runs rings in
 *        software (trn_pci's command processor)
 * @desc_dma: DMA address of @entries &struct trn_hw_desc
 * @status: CPU address of the &struct trn_hw_ring_status
 * @status_dma: DMA address of the &struct trn_hw_ring_status
 *
 * Both are coherent DMA memory of the struct device the backend registered
 * (trn_device_register()'s @parent), so a PCI part reaches them directly.
 * Ring sequence numbers start at 1. The device executes jobs of one ring in
 * order, one at a time; rings of one NeuronCore share its engine.
 */
struct trn_hw_ring {
	u32 index;
	u32 entries;
	struct trn_hw_desc *desc;
	dma_addr_t desc_dma;
	struct trn_hw_ring_status *status;
	dma_addr_t status_dma;
};

/**
 * trn_hw_status_errno() - the errno a job's fences carry for a device status
 * @status: &enum drm_trn_job_status
 *
 * One table for the core, which signals fences, and for a device that
 * writes a user-mode queue's completion record itself.
 *
 * Return: 0 or a negative errno.
 */
static inline int trn_hw_status_errno(u32 status)
{
	switch (status) {
	case DRM_TRN_STATUS_OK:
		return 0;
	case DRM_TRN_STATUS_MMU_FAULT:
		return -EFAULT;
	case DRM_TRN_STATUS_TIMEOUT:
		return -ETIMEDOUT;
	case DRM_TRN_STATUS_ABORTED:
		return -ECANCELED;
	case DRM_TRN_STATUS_BAD_OPCODE:
	case DRM_TRN_STATUS_BAD_SIZE:
	case DRM_TRN_STATUS_BAD_ALIGN:
	case DRM_TRN_STATUS_BAD_ARG:
	case DRM_TRN_STATUS_CALL_DEPTH:
		return -EILSEQ;
	case DRM_TRN_STATUS_UNSUPPORTED:
		return -EOPNOTSUPP;
	default:
		return -EIO;
	}
}

/**
 * struct trn_hw_uq_state - what the device reports about a user-mode queue
 * @completed_seqno: every job up to this number has completed and its
 *                   completion record is written
 * @jobs_ok: jobs that completed successfully
 * @jobs_failed: jobs that failed (any status)
 * @fault_jobs: jobs that failed with %DRM_TRN_STATUS_MMU_FAULT
 * @busy_ns: device time the queue's jobs ran
 * @failed_seqno: the latest failed job, or 0
 * @status: its &enum drm_trn_job_status
 * @pad: zero
 * @error_offset: offset of its failing command in the buffer holding it
 * @error_cmd_va: device address of that command
 * @fault_va: the address that faulted, for %DRM_TRN_STATUS_MMU_FAULT
 * @reserved: zero
 *
 * Device-visible memory the core allocates per queue (coherent, on the
 * backend's device) and only reads; the counters only grow. The device
 * writes a failed job's fields before @jobs_failed, and @jobs_failed
 * before @completed_seqno.
 */
struct trn_hw_uq_state {
	__le64 completed_seqno;
	__le64 jobs_ok;
	__le64 jobs_failed;
	__le64 fault_jobs;
	__le64 busy_ns;
	__le64 failed_seqno;
	__le32 status;
	__le32 pad;
	__le64 error_offset;
	__le64 error_cmd_va;
	__le64 fault_va;
	__le64 reserved[6];
};

/**
 * struct trn_hw_uq - a user-mode queue, as the core hands it to the device
 * @id: the device's user-mode queue number, below
 *      &trn_device_desc.user_queues
 * @core: the NeuronCore that runs it
 * @ctx: the MMU context its jobs (and its ring) are reached in
 * @entries: descriptors in its ring, a power of two
 * @ring_va: device address of the ring (&struct drm_trn_user_desc array)
 *           in @ctx, mapped read-only for the device
 * @doorbell: CPU address of the &struct drm_trn_doorbell page
 * @doorbell_dma: its DMA address
 * @page: CPU address of the &struct drm_trn_queue_status_page, which the
 *        device writes as the core writes it for other queues: failure
 *        entry (with trn_hw_status_errno()), failed_count, then
 *        completed_seqno, each store ordered after the previous one
 * @page_dma: its DMA address
 * @state: CPU address of the queue's &struct trn_hw_uq_state
 * @state_dma: its DMA address
 *
 * All three pages are memory of the backend's device (the doorbell and
 * the status page are host buffers userspace maps; the state is the
 * core's coherent memory). Job numbers start at 1.
 */
struct trn_hw_uq {
	u32 id;
	u32 core;
	u32 ctx;
	u32 entries;
	u64 ring_va;
	struct drm_trn_doorbell *doorbell;
	dma_addr_t doorbell_dma;
	struct drm_trn_queue_status_page *page;
	dma_addr_t page_dma;
	struct trn_hw_uq_state *state;
	dma_addr_t state_dma;
};

/* Device access rights of a mapping. */
#define TRN_MMU_READ	BIT(0)
#define TRN_MMU_WRITE	BIT(1)

/**
 * struct trn_mmu_map - one mapping to program into a context's MMU
 * @va: device virtual address, page aligned
 * @size: bytes, page aligned
 * @prot: TRN_MMU_* rights
 * @sgt: host memory, DMA-mapped for the backend's device; or NULL for
 * @hbm_offset: device memory at this offset
 */
struct trn_mmu_map {
	u64 va;
	u64 size;
	u32 prot;
	struct sg_table *sgt;
	u64 hbm_offset;
};

/**
 * struct trn_hw_ops - hardware operations a backend provides
 * @owner: module implementing the ops; pinned while a file is open on one of
 *         its devices so that the backend outlives every user of its ops
 * @hw_init: optional; bring the hardware up, called before the device is
 *           visible to userspace
 * @hw_fini: optional; quiesce the hardware, called after the device was
 *           unplugged (no new hardware access can start)
 * @ctx_init: create MMU context @ctx (an address space with nothing mapped)
 * @ctx_fini: destroy MMU context @ctx; nothing is mapped in it any more
 * @mmu_map: map @map into context @ctx; the range is unmapped before
 * @mmu_unmap: remove the mapping of [@va, @va + @size) from context @ctx
 * @hbm_pfn: store in @pfn the CPU page frame through which the CPU reaches
 *           device memory at @offset (page aligned), for mmap
 * @hbm_populate: optional; make device memory [@offset, @offset + @size)
 *                ready for a new buffer, before anything can reach it:
 *                afterwards neither the device nor @hbm_pfn allocates to
 *                reach it (the device executes jobs in the fence
 *                signalling path, where allocating could deadlock). May
 *                sleep; returns 0 or -ENOMEM
 * @hbm_clear: zero device memory [@offset, @offset + @size) before it is
 *             handed out again; it must read as zero when this returns
 * @hbm_read: optional; copy @size bytes of device memory at @offset (within
 *            one buffer) to @buf, for a post-mortem dump; may sleep. Where
 *            it is missing, dumps leave out commands in device memory
 * @ring_init: start watching ring @ring; its status reads 0 (nothing done)
 * @ring_fini: stop watching ring @index; nothing runs on it any more
 * @ring_doorbell: descriptors up to ring sequence number @tail are valid
 * @ring_reset: abandon job @seqno of ring @index (the oldest job the core
 *              has not retired, normally running) unless the device has
 *              finished it. If it had not: when this returns the device no
 *              longer touches it, its descriptor is not written back, the
 *              ring's completed_seqno reads @seqno, and the return is 1.
 *              If it had (it finished as its timeout was handled), the
 *              ring is left as it is, the job that runs now included, and
 *              the return is 0. Either way the device starts no further
 *              job of the ring until the next ring_doorbell (so that the
 *              core can flag the jobs to skip first). A negative errno
 *              means the ring could not be stopped (its engine no longer
 *              responds): the job is neither abandoned nor finished, the
 *              device may still touch its memory, and the core resets the
 *              whole device (@device_reset)
 * @device_reset: optional; reset the whole device, called when a ring
 *                could not be reset, with every ring held by the core (no
 *                ring_doorbell or ring_reset meanwhile). On every ring the
 *                job the device was running, if any, is abandoned as by a
 *                successful ring_reset (not written back; completed_seqno
 *                reads its number); jobs it finished keep their write-back;
 *                the ring starts nothing until the next ring_doorbell, and
 *                then goes on with the job after the abandoned one. Device
 *                memory and every context's mappings survive. Returns 0, or
 *                a negative errno if the device did not come back (the
 *                core then declares it wedged: its jobs fail with -EIO).
 *                A user-mode queue's running job is abandoned the same
 *                way and completes with %DRM_TRN_STATUS_ABORTED; the
 *                queue goes on
 * @uq_init: start user-mode queue @uq: from now on the device watches its
 *           doorbell and runs its jobs in order. May sleep
 * @uq_fini: stop user-mode queue @id: when this returns the device no
 *           longer touches it or its memory. An interrupt it raised for
 *           the queue may still arrive (the core then finds the number
 *           unused, or used by a newer queue, which a spurious interrupt
 *           does not harm). May sleep
 * @uq_wake: look at user-mode queue @id's write pointer again (the
 *           doorbell ioctl); called with a spinlock held
 * @uq_irq_at: raise trn_device_uq_irq() once the queue's completed_seqno
 *             reaches @seqno (once; a new call replaces the old value;
 *             U64_MAX: never). The device also raises it after every job
 *             that fails. Called with a spinlock held
 * @uq_stop: user-mode queue @id must run nothing more: with @abandon, the
 *           job it runs is abandoned now (it hangs) and completes with
 *           %DRM_TRN_STATUS_TIMEOUT; without, it ends at its next command
 *           boundary with %DRM_TRN_STATUS_ABORTED. Every later job the
 *           doorbell announces completes with %DRM_TRN_STATUS_ABORTED
 *           without running. May sleep
 *
 * The core calls the context, MMU and memory operations only between
 * drm_dev_enter() and drm_dev_exit(), and serialises calls for one context.
 * It calls ring_doorbell with a spinlock held (the backend must not sleep
 * there); ring_reset, device_reset and ring_fini may sleep, and the core
 * holds no lock there that trn_device_ring_irq() takes. A context is
 * destroyed only after every job that ran in it finished or was abandoned
 * by ring_reset or device_reset.
 */
struct trn_hw_ops {
	struct module *owner;
	int (*hw_init)(struct trn_device *tdev);
	void (*hw_fini)(struct trn_device *tdev);
	int (*ctx_init)(struct trn_device *tdev, u32 ctx);
	void (*ctx_fini)(struct trn_device *tdev, u32 ctx);
	int (*mmu_map)(struct trn_device *tdev, u32 ctx,
		       const struct trn_mmu_map *map);
	void (*mmu_unmap)(struct trn_device *tdev, u32 ctx, u64 va, u64 size);
	int (*hbm_pfn)(struct trn_device *tdev, u64 offset, unsigned long *pfn);
	int (*hbm_populate)(struct trn_device *tdev, u64 offset, u64 size);
	void (*hbm_clear)(struct trn_device *tdev, u64 offset, u64 size);
	void (*hbm_read)(struct trn_device *tdev, u64 offset, void *buf,
			 size_t size);
	int (*ring_init)(struct trn_device *tdev, const struct trn_hw_ring *ring);
	void (*ring_fini)(struct trn_device *tdev, u32 index);
	void (*ring_doorbell)(struct trn_device *tdev, u32 index, u64 tail);
	int (*ring_reset)(struct trn_device *tdev, u32 index, u64 seqno);
	int (*device_reset)(struct trn_device *tdev);
	int (*uq_init)(struct trn_device *tdev, const struct trn_hw_uq *uq);
	void (*uq_fini)(struct trn_device *tdev, u32 id);
	void (*uq_wake)(struct trn_device *tdev, u32 id);
	void (*uq_irq_at)(struct trn_device *tdev, u32 id, u64 seqno);
	void (*uq_stop)(struct trn_device *tdev, u32 id, bool abandon);
};

/**
 * enum trn_hw_error - trouble of the device itself that no job caused,
 * which a backend reports with trn_device_error()
 * @TRN_HW_ERROR_NOT_ANSWERING: the device stopped answering: its registers
 *                              read all ones (a surprise removal, a link
 *                              that went down)
 */
enum trn_hw_error {
	TRN_HW_ERROR_NOT_ANSWERING,
};

struct trn_device *trn_device_register(struct device *parent,
				       const struct trn_device_desc *desc,
				       const struct trn_hw_ops *ops,
				       void *hw_priv);
void trn_device_unregister(struct trn_device *tdev);
void *trn_device_hw_priv(struct trn_device *tdev);
void trn_device_mmu_fault(struct trn_device *tdev, u32 ctx, u64 va,
			  bool write);
void trn_device_ring_irq(struct trn_device *tdev, u32 index);
void trn_device_uq_irq(struct trn_device *tdev, u32 id);
void trn_device_error(struct trn_device *tdev, enum trn_hw_error error);

#endif /* __TRN_HW_H__ */
