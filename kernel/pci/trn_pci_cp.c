// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * The command processor: how jobs run on a part.
 *
 * The core fills trn_hw_desc rings as it does for the simulator. A part has
 * no engine that reads them, so each ring has a work item here that does:
 * it fetches the job's command stream through the job's context (the
 * tables of trn_pci_mem.c), turns each command into UDMA descriptor pairs
 * with the part's physical addresses, hands them to the ring's own UDMA
 * queue and polls for their completion marker; then it writes the job's
 * outcome back into the descriptor, advances the completion record and
 * calls trn_device_ring_irq(), exactly as the simulator's engine does.
 *
 * Userspace never supplies a physical address: every address a command
 * names is checked against the job's context (rights included) before a
 * descriptor is built, and an access outside it is an MMU fault, reported
 * like the simulator's. A WRITE, a FILL or a COPY row that would fault
 * writes nothing; the rows of a 2-D COPY before it were queued and run.
 *
 * What the UDMA engines can carry runs: NOP, WRITE (the value staged in a
 * host scratch slot), FILL (from a host page of the pattern), COPY 1D/2D
 * (split where either side's memory is not contiguous) and CALL. So do
 * SEM_SIGNAL and SEM_WAIT, which order the rings of one core: the context's
 * semaphores are the command processor's own (&trn_pci_ctx.sems), a signal
 * comes after the DMA of the commands before it completed, and a waiting
 * ring's work item sleeps on &trn_pci_dev.sem_wq, its batch flushed and
 * the table lock dropped. The other opcodes need the NeuronCores' own
 * engines, which the public driver does not document for this use; the
 * device does not advertise them (DRM_TRN_CAP_*) and fails a job at the
 * first one with %DRM_TRN_STATUS_UNSUPPORTED. Nothing is computed on the
 * CPU instead.
 *
 * Completion: the engines neither write back nor interrupt. A batch of
 * descriptors ends with a 4-byte copy of a sequence number between two
 * scratch words; the work item polls the second, spinning briefly, then
 * sleeping with a delay that doubles up to 1 ms, so an idle wait costs
 * little CPU and a short one little latency.
 *
 * A context's table lock is held from the first translation of a batch
 * until its DMA completed: unmapping waits for it, so memory is never
 * freed under an engine. The lock is dropped whenever no batch is
 * outstanding at a command boundary.
 *
 * Like the simulator's engine, this is the device on the way to signalling
 * fences: it allocates nothing while it runs (rings and scratch are set up
 * with the ring), and says so to lockdep.
 */

#include <linux/delay.h>
#include <linux/dma-fence.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <uapi/drm/trn_accel.h>
#include <uapi/drm/trn_isa.h>

#include "../trn_hw.h"
#include "../trn_isa_check.h"
#include "trn_pci.h"

/* Host scratch of a ring: the FILL pattern, WRITE values, the marker. */
#define TRN_CP_FILL_BYTES	SZ_64K
#define TRN_CP_SLOTS_BYTES	SZ_4K
#define TRN_CP_SCRATCH_BYTES	(TRN_CP_FILL_BYTES + TRN_CP_SLOTS_BYTES)
/* The last 8 bytes of the slot page are the marker's source and target. */
#define TRN_CP_SLOTS		(TRN_CP_SLOTS_BYTES / 8 - 1)
#define TRN_CP_MARKER_OFF	(TRN_CP_SCRATCH_BYTES - 8)
/* Largest single descriptor pair. */
#define TRN_CP_MAX_XFER		SZ_64K
/* Jobs one run of a ring's work item takes before it yields the worker. */
#define TRN_CP_JOBS_PER_RUN	64
/* Polling for a batch: spin this long, then sleep up to the maximum. */
#define TRN_CP_SPIN_US		20
#define TRN_CP_SLEEP_MIN_US	10
#define TRN_CP_SLEEP_MAX_US	1000

static const u64 trn_cp_seng[] = {
	TRN_UDMA_SENG_0, TRN_UDMA_SENG_1, TRN_UDMA_SENG_2, TRN_UDMA_SENG_3,
};

/* The opcodes the command processor runs (the rest: UNSUPPORTED). */
#define TRN_CP_RUNS	(BIT(TRN_OP_NOP) | BIT(TRN_OP_WRITE) | BIT(TRN_OP_FILL) | \
			 BIT(TRN_OP_COPY) | BIT(TRN_OP_CALL) | \
			 BIT(TRN_OP_SEM_SIGNAL) | BIT(TRN_OP_SEM_WAIT))
/* How long a SEM_WAIT sleeps before it looks at its cancel flag again. */
#define TRN_CP_SEM_POLL_MS	10

/* The largest command the processor reads whole. */
#define TRN_CP_CMD_WORDS	8

/**
 * struct trn_cp_frame - a command buffer being walked
 * @va: its device address
 * @size: its bytes
 * @pc: offset of the current command
 */
struct trn_cp_frame {
	u64 va;
	u64 size;
	u64 pc;
};

/**
 * struct trn_pci_ring - one ring and the engine state that runs it
 * @tpd: the part
 * @index: ring number
 * @entries: descriptors in the ring
 * @descs: the core's descriptors
 * @status: the core's completion record
 * @work: runs the ring's jobs, on &trn_pci_dev.cp_wq
 * @idle: ring_reset waits here for the job it abandons to leave the engine
 * @lock: protects @tail, @paused, @stopped, @running, @abort, @wedged and
 *        @seqno
 * @tail: the doorbell: jobs up to this sequence number are valid
 * @paused: a reset stopped the ring until the next doorbell
 * @stopped: ring_fini: the work item ends and stays off
 * @running: sequence number of the job on the engine, or 0
 * @abort: ring_reset abandons the job @running
 * @wedged: the ring's queue did not reset: the work item waits, holding
 *          what the engine may still reach, until a device reset
 * @seqno: the next job to fetch
 * @desc: the running job's descriptor (its cancel flag)
 * @uq: the ring's UDMA queue
 * @scratch: host scratch (TRN_CP_*), coherent
 * @scratch_dma: its DMA address
 * @queued: descriptor pairs queued since the last kick
 * @slots_used: WRITE values staged in the queued batch
 * @fill_pattern: the pattern the fill area holds, if @fill_valid
 * @fill_valid: whether the fill area holds @fill_pattern
 * @marker_seq: the last batch marker
 * @pctx: the running job's context
 * @ctx: its number
 * @locked: whether this holds @pctx's lock
 * @cmd: CPU cursor for command fetches
 * @src: DMA cursor for sources
 * @dst: DMA cursor for destinations
 * @status_code: the job's outcome (&enum drm_trn_job_status)
 * @fault_va: where it faulted
 * @stack: the CALL stack, @depth frames
 * @depth: frames in use
 * @cmd_off: offset of the command being run in its buffer
 * @cmd_va: its address
 * @batch_off: offset of the first command with a pair in the queued batch
 * @batch_va: its address (a failing batch's error is reported there: the
 *            engine does not say which descriptor failed)
 *
 * All but the fields under @lock belong to the work item.
 */
struct trn_pci_ring {
	struct trn_pci_dev *tpd;
	u32 index;
	u32 entries;
	struct trn_hw_desc *descs;
	struct trn_hw_ring_status *status;
	struct work_struct work;
	wait_queue_head_t idle;

	/* Protects the doorbell and reset state below (see @lock above). */
	spinlock_t lock;
	u64 tail;
	bool paused;
	bool stopped;
	u64 running;
	bool abort;
	bool wedged;
	u64 seqno;

	struct trn_hw_desc *desc;
	struct trn_udma_queue uq;
	u8 *scratch;
	dma_addr_t scratch_dma;
	u32 queued;
	u32 slots_used;
	u32 fill_pattern;
	bool fill_valid;
	u32 marker_seq;

	struct trn_pci_ctx *pctx;
	u32 ctx;
	bool locked;
	struct trn_pci_cursor cmd;
	struct trn_pci_cursor src;
	struct trn_pci_cursor dst;
	u32 status_code;
	u64 fault_va;
	struct trn_cp_frame stack[TRN_ISA_MAX_CALL_DEPTH + 1];
	u32 depth;
	u64 cmd_off;
	u64 cmd_va;
	u64 batch_off;
	u64 batch_va;
};

static struct trn_pci_ring *trn_cp_ring(struct trn_device *tdev, u32 index)
{
	struct trn_pci_dev *tpd = trn_device_hw_priv(tdev);

	return index < tpd->num_rings ? tpd->rings[index] : NULL;
}

static u64 trn_cp_scratch(struct trn_pci_ring *r, u32 off)
{
	return trn_pci_host_addr(r->scratch_dma + off);
}

/* Take the context's table lock for a batch, if not held yet. */
static void trn_cp_lock(struct trn_pci_ring *r)
{
	if (r->locked)
		return;
	mutex_lock(&r->pctx->lock);
	r->locked = true;
}

/* Drop it: the cursors may point at mappings that go away. */
static void trn_cp_unlock(struct trn_pci_ring *r)
{
	if (!r->locked)
		return;
	r->cmd.map = NULL;
	r->src.map = NULL;
	r->dst.map = NULL;
	mutex_unlock(&r->pctx->lock);
	r->locked = false;
}

static bool trn_cp_aborting(struct trn_pci_ring *r)
{
	return READ_ONCE(r->abort) || READ_ONCE(r->stopped);
}

/* Why a wait ended early: abandoned, the ring stopping, or the part. */
static int trn_cp_wait_error(struct trn_pci_ring *r, u32 st)
{
	if (st == U32_MAX) {
		trn_pci_lost(r->tpd);
		return -ENODEV;
	}
	if (st & TRN_UDMA_STATUS_ERROR)
		return -EIO;
	if (READ_ONCE(r->stopped))
		return -ESHUTDOWN;
	if (READ_ONCE(r->abort))
		return -ECANCELED;
	return 0;
}

/*
 * The ring's queue does not reset, so its engine may still reach the memory
 * of the batch: wait for the device reset (trn_pci_device_reset()), with
 * the context's table lock still held if the batch took it, so that no
 * mapping of it goes before the engine has stopped. ring_reset sees the
 * flag and asks the core for the device reset.
 */
static void trn_cp_wedge(struct trn_pci_ring *r)
{
	unsigned long flags;

	dev_err(&r->tpd->pdev->dev, "ring %u: UDMA queue does not reset\n",
		r->index);
	spin_lock_irqsave(&r->lock, flags);
	r->wedged = true;
	spin_unlock_irqrestore(&r->lock, flags);
	wake_up_all(&r->idle);
	wait_event(r->tpd->unwedged, !READ_ONCE(r->wedged));
}

/* Forget the queued batch: reset the queue, nothing of it runs. */
static void trn_cp_drop(struct trn_pci_ring *r)
{
	if (trn_udma_queue_stop(&r->uq) == -EIO)
		trn_cp_wedge(r);
	trn_udma_queue_start(&r->uq);
	r->queued = 0;
	r->slots_used = 0;
	r->fill_valid = false;
}

/*
 * Hand the queued batch to the engine behind a marker, and wait for the
 * marker. On any failure the queue is reset (nothing of the batch touches
 * memory any more) and restarted empty.
 */
static int trn_cp_flush(struct trn_pci_ring *r)
{
	u32 *marker = (u32 *)(r->scratch + TRN_CP_MARKER_OFF);
	unsigned int sleep_us = TRN_CP_SLEEP_MIN_US;
	ktime_t spin_end;
	int ret = 0;

	if (!r->queued)
		return 0;
	if (++r->marker_seq == 0)
		r->marker_seq = 1;
	WRITE_ONCE(marker[0], r->marker_seq);
	trn_udma_queue_copy(&r->uq, trn_cp_scratch(r, TRN_CP_MARKER_OFF),
			    trn_cp_scratch(r, TRN_CP_MARKER_OFF + 4), 4, true);
	trn_udma_queue_kick(&r->uq, r->queued + 1);
	r->queued = 0;
	r->slots_used = 0;

	spin_end = ktime_add_us(ktime_get(), TRN_CP_SPIN_US);
	for (;;) {
		if (READ_ONCE(marker[1]) == r->marker_seq)
			break;
		ret = trn_cp_wait_error(r, trn_udma_queue_status(&r->uq));
		if (ret)
			break;
		if (ktime_before(ktime_get(), spin_end)) {
			cpu_relax();
			continue;
		}
		usleep_range(sleep_us, 2 * sleep_us);
		sleep_us = min(2 * sleep_us, TRN_CP_SLEEP_MAX_US);
	}
	if (ret && ret != -ENODEV)
		trn_cp_drop(r);
	return ret;
}

/* Queue one pair, flushing first if the queue's ring is full. */
static int trn_cp_pair(struct trn_pci_ring *r, u64 src, u64 dst, u32 len,
		       bool ordered)
{
	int ret;

	/* One slot stays free for the marker. */
	if (r->queued == r->uq.entries - 2) {
		ret = trn_cp_flush(r);
		if (ret)
			return ret;
	}
	if (!r->queued) {
		r->batch_off = r->cmd_off;
		r->batch_va = r->cmd_va;
	}
	trn_udma_queue_copy(&r->uq, src, dst, len, ordered);
	r->queued++;
	return 0;
}

/* The job's outcome is @status; returns the walker's "stop". */
static int trn_cp_fail(struct trn_pci_ring *r, u32 status)
{
	r->status_code = status;
	return -EPERM;
}

/* Look an access up; a miss is the job's MMU fault. */
static const struct trn_pci_map *trn_cp_lookup(struct trn_pci_ring *r,
					       u64 va, u64 len, u32 prot)
{
	const struct trn_pci_map *m;

	trn_cp_lock(r);
	m = trn_pci_lookup(r->pctx, va, len, prot, &r->fault_va);
	if (!m) {
		r->status_code = DRM_TRN_STATUS_MMU_FAULT;
		trn_device_mmu_fault(r->tpd->tdev, r->ctx, r->fault_va,
				     prot & TRN_MMU_WRITE);
	}
	return m;
}

/* Read command bytes of the job's context with the CPU. */
static int trn_cp_read(struct trn_pci_ring *r, u64 va, void *buf, u32 len)
{
	const struct trn_pci_map *m = trn_cp_lookup(r, va, len, TRN_MMU_READ);

	if (!m)
		return -EPERM;
	trn_pci_cursor_set(&r->cmd, m);
	if (trn_pci_read(r->tpd, &r->cmd, va - m->va, buf, len))
		return trn_cp_fail(r, DRM_TRN_STATUS_ABORTED);
	return 0;
}

/* Queue a copy from a host scratch area to @len bytes at @dst. */
static int trn_cp_from_scratch(struct trn_pci_ring *r,
			       const struct trn_pci_map *m, u64 dst, u64 len,
			       u32 scratch_off, u32 scratch_len)
{
	u64 off = dst - m->va, end = off + len, addr, contig;
	bool first = true;
	u32 n;
	int ret;

	trn_pci_cursor_set(&r->dst, m);
	while (off < end) {
		addr = trn_pci_dev_addr(r->tpd, &r->dst, off, &contig);
		if (addr == U64_MAX)
			return trn_cp_fail(r, DRM_TRN_STATUS_ABORTED);
		n = min3(end - off, contig, (u64)scratch_len);
		ret = trn_cp_pair(r, trn_cp_scratch(r, scratch_off), addr, n,
				  first);
		if (ret)
			return ret;
		first = false;
		off += n;
	}
	return 0;
}

static int trn_cp_write(struct trn_pci_ring *r, const struct trn_cmd_write *c,
			u32 flags)
{
	u64 dst = le64_to_cpu((__force __le64)c->dst);
	u64 value = le64_to_cpu((__force __le64)c->value);
	bool wide = flags & TRN_WRITE_64;
	const struct trn_pci_map *m;
	u32 len = wide ? 8 : 4;
	__le64 *slot;
	int ret;

	if (c->pad || (!wide && upper_32_bits(value)))
		return trn_cp_fail(r, DRM_TRN_STATUS_BAD_ARG);
	if (dst & (len - 1))
		return trn_cp_fail(r, DRM_TRN_STATUS_BAD_ALIGN);
	m = trn_cp_lookup(r, dst, len, TRN_MMU_WRITE);
	if (!m)
		return -EPERM;
	/*
	 * Room for the slot and its pair first: a flush between staging the
	 * value and queueing its pair would hand the slot out again. An
	 * aligned 4 or 8 bytes never cross a page, so one pair does.
	 */
	if (r->slots_used == TRN_CP_SLOTS || r->queued >= r->uq.entries - 2) {
		ret = trn_cp_flush(r);
		if (ret)
			return ret;
	}
	slot = (__le64 *)(r->scratch + TRN_CP_FILL_BYTES) + r->slots_used;
	*slot = cpu_to_le64(value);
	ret = trn_cp_from_scratch(r, m, dst, len,
				  TRN_CP_FILL_BYTES + r->slots_used * 8, len);
	r->slots_used++;
	return ret;
}

static int trn_cp_fill(struct trn_pci_ring *r, const struct trn_cmd_fill *c)
{
	u64 dst = le64_to_cpu((__force __le64)c->dst);
	u64 size = le64_to_cpu((__force __le64)c->size);
	const struct trn_pci_map *m;
	int ret;

	if ((dst | size) & 3)
		return trn_cp_fail(r, DRM_TRN_STATUS_BAD_ALIGN);
	if (!size)
		return 0;
	m = trn_cp_lookup(r, dst, size, TRN_MMU_WRITE);
	if (!m)
		return -EPERM;
	/* The pattern as fetched (little endian), repeated. */
	if (!r->fill_valid || r->fill_pattern != c->pattern) {
		ret = trn_cp_flush(r);
		if (ret)
			return ret;
		memset32((u32 *)r->scratch, c->pattern, TRN_CP_FILL_BYTES / 4);
		r->fill_pattern = c->pattern;
		r->fill_valid = true;
	}
	return trn_cp_from_scratch(r, m, dst, size, 0, TRN_CP_FILL_BYTES);
}

static int trn_cp_copy_row(struct trn_pci_ring *r, u64 dst, u64 src,
			   u64 width, bool first)
{
	const struct trn_pci_map *ms, *md;
	u64 off, sa, da, sc, dc;
	u32 n;
	int ret;

	ms = trn_cp_lookup(r, src, width, TRN_MMU_READ);
	if (!ms)
		return -EPERM;
	md = trn_cp_lookup(r, dst, width, TRN_MMU_WRITE);
	if (!md)
		return -EPERM;
	trn_pci_cursor_set(&r->src, ms);
	trn_pci_cursor_set(&r->dst, md);
	for (off = 0; off < width; off += n) {
		sa = trn_pci_dev_addr(r->tpd, &r->src, src - ms->va + off, &sc);
		da = trn_pci_dev_addr(r->tpd, &r->dst, dst - md->va + off, &dc);
		if (sa == U64_MAX || da == U64_MAX)
			return trn_cp_fail(r, DRM_TRN_STATUS_ABORTED);
		n = min3(width - off, min(sc, dc), (u64)TRN_CP_MAX_XFER);
		ret = trn_cp_pair(r, sa, da, n, first);
		if (ret)
			return ret;
		first = false;
	}
	return 0;
}

static int trn_cp_copy(struct trn_pci_ring *r, const struct trn_cmd_copy *c)
{
	u64 dst = le64_to_cpu((__force __le64)c->dst);
	u64 src = le64_to_cpu((__force __le64)c->src);
	u64 width = le64_to_cpu((__force __le64)c->width);
	u64 height = le64_to_cpu((__force __le64)c->height);
	u64 dpitch = le64_to_cpu((__force __le64)c->dst_pitch);
	u64 spitch = le64_to_cpu((__force __le64)c->src_pitch);
	u64 row;
	int ret;

	if (c->pad)
		return trn_cp_fail(r, DRM_TRN_STATUS_BAD_ARG);
	if (!width || !height)
		return 0;
	for (row = 0; row < height; row++) {
		if (trn_cp_aborting(r))
			return -ECANCELED;
		ret = trn_cp_copy_row(r, dst + row * dpitch, src + row * spitch,
				      width, !row);
		if (ret)
			return ret;
	}
	return 0;
}

static int trn_cp_call(struct trn_pci_ring *r, struct trn_cp_frame *f,
		       const struct trn_cmd_call *c, u32 words)
{
	u64 va = le64_to_cpu((__force __le64)c->va);
	u64 size = le64_to_cpu((__force __le64)c->size);
	u32 status = trn_isa_check_call(va, size, c->pad, r->depth);

	if (status != DRM_TRN_STATUS_OK)
		return trn_cp_fail(r, status);
	/* Return to the command after the CALL. */
	f->pc += (u64)words * 8;
	r->stack[r->depth++] = (struct trn_cp_frame) { .va = va, .size = size };
	return 0;
}

static bool trn_cp_cancelled(const struct trn_hw_desc *desc)
{
	return le32_to_cpu(READ_ONCE(desc->flags)) & TRN_HW_DESC_CANCEL;
}

/* Semaphore @sem of the running job's context on this ring's core. */
static atomic64_t *trn_cp_sem_at(struct trn_pci_ring *r, u32 sem)
{
	u32 core = r->index / TRN_PCI_QUEUES_PER_CORE;

	return &r->pctx->sems[core * TRN_NUM_SEMAPHORES + sem];
}

/*
 * Both semaphore commands: check the semaphore's number, then let the DMA
 * of every command before it complete.
 */
static int trn_cp_sem_begin(struct trn_pci_ring *r,
			    const struct trn_cmd_sem *c, u32 *sem)
{
	*sem = le32_to_cpu((__force __le32)c->sem);
	if (*sem >= TRN_NUM_SEMAPHORES)
		return trn_cp_fail(r, DRM_TRN_STATUS_BAD_ARG);
	return trn_cp_flush(r);
}

/* SEM_SIGNAL: after everything before it reached memory. */
static int trn_cp_sem_signal(struct trn_pci_ring *r,
			     const struct trn_cmd_sem *c)
{
	u32 sem;
	int ret;

	ret = trn_cp_sem_begin(r, c, &sem);
	if (ret)
		return ret;
	/*
	 * Ordered after the batch's completion; the wake-up orders it for
	 * the waiter, which reads it with acquire semantics.
	 */
	atomic64_add(le64_to_cpu((__force __le64)c->value),
		     trn_cp_sem_at(r, sem));
	wake_up_all(&r->tpd->sem_wq);
	return 0;
}

static bool trn_cp_sem_reached(struct trn_pci_ring *r, u32 sem, u64 value)
{
	return (u64)atomic64_read_acquire(trn_cp_sem_at(r, sem)) >= value;
}

/*
 * SEM_WAIT: flush, let go of the context's table, then sleep until the
 * semaphore is reached (the command is done: 0, @f moves on), the job is
 * cancelled (0, @f stays: the caller ends the job at this boundary), or
 * the ring is reset, stopped or the part gone (the wait's error). Only a
 * reset ends a wait that is never satisfied: the job's timeout.
 */
static int trn_cp_sem_wait(struct trn_pci_ring *r, struct trn_cp_frame *f,
			   const struct trn_cmd_sem *c, u32 words)
{
	u64 value = le64_to_cpu((__force __le64)c->value);
	u32 sem;
	int ret;

	ret = trn_cp_sem_begin(r, c, &sem);
	if (ret)
		return ret;
	trn_cp_unlock(r);
	for (;;) {
		if (trn_cp_sem_reached(r, sem, value)) {
			f->pc += (u64)words * 8;
			return 0;
		}
		if (READ_ONCE(r->tpd->gone))
			return -ENODEV;
		ret = trn_cp_wait_error(r, 0);
		if (ret)
			return ret;
		if (trn_cp_cancelled(r->desc))
			return 0;
		wait_event_timeout(r->tpd->sem_wq,
				   trn_cp_sem_reached(r, sem, value) ||
				   trn_cp_aborting(r),
				   msecs_to_jiffies(TRN_CP_SEM_POLL_MS));
	}
}

/*
 * Fetch and run the command at @f's pc. The header rules are the ISA's,
 * checked in the simulator's order, so that a malformed command fails with
 * the same status on both.
 */
static int trn_cp_command(struct trn_pci_ring *r, struct trn_cp_frame *f)
{
	u64 cmd[TRN_CP_CMD_WORDS];
	u32 hdr, op, words, status;
	int ret;

	r->cmd_off = f->pc;
	r->cmd_va = f->va + f->pc;
	/* Only the opcodes that run are read whole. */
	BUILD_BUG_ON(sizeof(struct trn_cmd_copy) > sizeof(cmd) ||
		     sizeof(struct trn_cmd_write) > sizeof(cmd) ||
		     sizeof(struct trn_cmd_fill) > sizeof(cmd) ||
		     sizeof(struct trn_cmd_call) > sizeof(cmd) ||
		     sizeof(struct trn_cmd_sem) > sizeof(cmd));

	ret = trn_cp_read(r, f->va + f->pc, cmd, 8);
	if (ret)
		return ret;
	hdr = lower_32_bits(le64_to_cpu((__force __le64)cmd[0]));
	op = TRN_CMD_OPCODE(hdr);
	words = TRN_CMD_WORDS(hdr);
	status = trn_isa_check_header(hdr, f->size - f->pc);
	if (status != DRM_TRN_STATUS_OK)
		return trn_cp_fail(r, status);
	if (!(TRN_CP_RUNS & BIT(op)))
		return trn_cp_fail(r, DRM_TRN_STATUS_UNSUPPORTED);
	/* A NOP's body is never fetched. */
	if (op != TRN_OP_NOP && words > 1) {
		ret = trn_cp_read(r, f->va + f->pc + 8, &cmd[1],
				  (words - 1) * 8);
		if (ret)
			return ret;
	}

	switch (op) {
	case TRN_OP_WRITE:
		ret = trn_cp_write(r, (const void *)cmd, TRN_CMD_FLAGS(hdr));
		break;
	case TRN_OP_FILL:
		ret = trn_cp_fill(r, (const void *)cmd);
		break;
	case TRN_OP_COPY:
		ret = trn_cp_copy(r, (const void *)cmd);
		break;
	case TRN_OP_CALL:
		return trn_cp_call(r, f, (const void *)cmd, words);
	case TRN_OP_SEM_SIGNAL:
		ret = trn_cp_sem_signal(r, (const void *)cmd);
		break;
	case TRN_OP_SEM_WAIT:
		return trn_cp_sem_wait(r, f, (const void *)cmd, words);
	default:	/* NOP */
		break;
	}
	if (!ret)
		f->pc += (u64)words * 8;
	return ret;
}

/*
 * Run one job. Returns 0 when its outcome is in the ring's fields (a job
 * that finds the part already lost fails with DEVICE_ERROR at once), or
 * -ECANCELED / -ESHUTDOWN when it was abandoned, -ENODEV when the part
 * went while it ran (nothing is written back: the core fails it with
 * -ENODEV when the part is removed, or its timeout does).
 */
static int trn_cp_run(struct trn_pci_ring *r, struct trn_hw_desc *desc,
		      u64 *error_offset, u64 *error_cmd_va)
{
	u64 va = le64_to_cpu(READ_ONCE(desc->cmd_va));
	u32 size = le32_to_cpu(READ_ONCE(desc->cmd_size));
	struct trn_cp_frame *f = NULL;
	int ret = 0, flush;

	r->status_code = DRM_TRN_STATUS_OK;
	r->fault_va = 0;
	*error_offset = 0;
	*error_cmd_va = 0;
	r->desc = desc;
	r->ctx = le32_to_cpu(READ_ONCE(desc->ctx));
	r->pctx = trn_pci_ctx_get(r->tpd, r->ctx);
	/* Lost before the job began: nothing of it reached the part. */
	if (READ_ONCE(r->tpd->gone)) {
		r->status_code = DRM_TRN_STATUS_DEVICE_ERROR;
		return 0;
	}
	if (!r->pctx) {
		r->status_code = DRM_TRN_STATUS_ABORTED;
		return 0;
	}
	if (((va | size) & 7) || !size) {
		r->status_code = DRM_TRN_STATUS_BAD_ALIGN;
		*error_cmd_va = va;
		return 0;
	}
	r->stack[0] = (struct trn_cp_frame) { .va = va, .size = size };
	r->depth = 1;

	while (r->depth) {
		f = &r->stack[r->depth - 1];
		if (f->pc == f->size) {
			r->depth--;	/* return from a CALL */
			continue;
		}
		if (trn_cp_aborting(r)) {
			ret = -ECANCELED;
			break;
		}
		if (trn_cp_cancelled(desc)) {
			/* At a command boundary; what ran so far stays. */
			ret = trn_cp_flush(r);
			r->status_code = DRM_TRN_STATUS_ABORTED;
			r->fault_va = 0;
			f = NULL;
			break;
		}
		ret = trn_cp_command(r, f);
		if (ret)
			break;
		if (!r->queued)
			trn_cp_unlock(r);
	}

	if (ret == -ECANCELED || ret == -ESHUTDOWN || ret == -ENODEV) {
		/* Abandoned: what is queued must not run. */
		if (r->queued && ret != -ENODEV)
			trn_cp_drop(r);
	} else {
		/* What was queued before a failing command still runs. */
		flush = trn_cp_flush(r);
		if (!ret)
			ret = flush;
	}
	trn_cp_unlock(r);
	switch (ret) {
	case 0:
		break;
	case -EPERM:	/* the command failed; status_code says why */
		if (f) {
			*error_offset = f->pc;
			*error_cmd_va = f->va + f->pc;
		}
		break;
	case -ECANCELED:
	case -ESHUTDOWN:
	case -ENODEV:
		return ret;
	default:	/* -EIO: a batch failed in the engine */
		r->status_code = DRM_TRN_STATUS_DEVICE_ERROR;
		*error_offset = r->batch_off;
		*error_cmd_va = r->batch_va;
		break;
	}
	if (r->status_code != DRM_TRN_STATUS_MMU_FAULT)
		r->fault_va = 0;
	return 0;
}

static void trn_cp_work(struct work_struct *work)
{
	struct trn_pci_ring *r = container_of(work, struct trn_pci_ring, work);
	u64 error_offset, error_cmd_va, seqno;
	struct trn_hw_desc *desc;
	unsigned long flags;
	unsigned int n;
	bool cookie, abandoned;
	int ret;

	cookie = dma_fence_begin_signalling();
	for (n = 0; n < TRN_CP_JOBS_PER_RUN; n++) {
		spin_lock_irqsave(&r->lock, flags);
		if (r->stopped || r->paused || r->seqno > r->tail) {
			spin_unlock_irqrestore(&r->lock, flags);
			goto out;
		}
		seqno = r->seqno;
		r->running = seqno;
		spin_unlock_irqrestore(&r->lock, flags);

		desc = &r->descs[seqno & (r->entries - 1)];
		WRITE_ONCE(desc->start_ns, cpu_to_le64(ktime_get_ns()));
		ret = trn_cp_run(r, desc, &error_offset, &error_cmd_va);

		spin_lock_irqsave(&r->lock, flags);
		/* Decided under the lock, so ring_reset and this agree. */
		abandoned = ret || r->abort;
		if (!abandoned) {
			WRITE_ONCE(desc->error_offset, cpu_to_le64(error_offset));
			WRITE_ONCE(desc->error_cmd_va, cpu_to_le64(error_cmd_va));
			WRITE_ONCE(desc->fault_va, cpu_to_le64(r->fault_va));
			WRITE_ONCE(desc->end_ns, cpu_to_le64(ktime_get_ns()));
			WRITE_ONCE(desc->status, cpu_to_le32(r->status_code));
		}
		/*
		 * A finished job, or one a reset abandoned, is done; one the
		 * ring's stop cut short is not.
		 */
		if (!abandoned || r->abort) {
			/* Pairs with the core's dma_rmb() after reading it. */
			smp_store_release(&r->status->completed_seqno,
					  cpu_to_le64(seqno));
			r->seqno = seqno + 1;
		}
		r->running = 0;
		r->abort = false;
		spin_unlock_irqrestore(&r->lock, flags);
		wake_up_all(&r->idle);

		if (!abandoned)
			trn_device_ring_irq(r->tpd->tdev, r->index);
		/* Stopping, or nothing left to run on. */
		if (ret == -ESHUTDOWN || ret == -ENODEV)
			goto out;
	}
	/* Still busy: continue after whatever else waits for a worker. */
	spin_lock_irqsave(&r->lock, flags);
	if (!r->stopped)
		queue_work(r->tpd->cp_wq, &r->work);
	spin_unlock_irqrestore(&r->lock, flags);
out:
	dma_fence_end_signalling(cookie);
}

/**
 * trn_pci_ring_init() - trn_hw_ops.ring_init: give a ring its UDMA queue
 * @tdev: the device
 * @hw: the ring
 *
 * Ring q of NeuronCore c runs on queue q of one engine of c's own: SENG
 * group c % 4, engine c / 4 of it.
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int trn_pci_ring_init(struct trn_device *tdev, const struct trn_hw_ring *hw)
{
	struct trn_pci_dev *tpd = trn_device_hw_priv(tdev);
	u32 core = hw->index / TRN_PCI_QUEUES_PER_CORE;
	struct trn_pci_ring *r;
	void __iomem *engine;
	int ret;

	/* A core's rings are queues of one engine. */
	BUILD_BUG_ON(TRN_PCI_QUEUES_PER_CORE > TRN_UDMA_QUEUES);
	if (hw->index >= tpd->num_rings || tpd->rings[hw->index] ||
	    !hw->desc || !hw->status)
		return -EINVAL;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->tpd = tpd;
	r->index = hw->index;
	r->entries = hw->entries;
	r->descs = hw->desc;
	r->status = hw->status;
	r->seqno = 1;
	INIT_WORK(&r->work, trn_cp_work);
	init_waitqueue_head(&r->idle);
	spin_lock_init(&r->lock);
	r->cmd.dma = false;
	r->src.dma = true;
	r->dst.dma = true;

	r->scratch = dma_alloc_coherent(&tpd->pdev->dev, TRN_CP_SCRATCH_BYTES,
					&r->scratch_dma, GFP_KERNEL);
	if (!r->scratch) {
		ret = -ENOMEM;
		goto err_free;
	}
	engine = tpd->regs + trn_cp_seng[core % ARRAY_SIZE(trn_cp_seng)] +
		 (core / ARRAY_SIZE(trn_cp_seng)) * TRN_UDMA_ENGINE_SIZE;
	ret = trn_udma_queue_alloc(tpd, &r->uq, engine,
				   hw->index % TRN_PCI_QUEUES_PER_CORE,
				   TRN_PCI_RING_ENTRIES);
	if (ret)
		goto err_scratch;
	trn_udma_queue_start(&r->uq);
	WRITE_ONCE(r->status->completed_seqno, cpu_to_le64(0));
	tpd->rings[hw->index] = r;
	return 0;

err_scratch:
	dma_free_coherent(&tpd->pdev->dev, TRN_CP_SCRATCH_BYTES, r->scratch,
			  r->scratch_dma);
err_free:
	kfree(r);
	return ret;
}

/*
 * Stop a part with an engine that ignores its queue reset: a device reset,
 * and where it fails, bus mastering off, so that the engine can never
 * reach host memory after the caller lets go of the context tables and
 * mappings a wedged work item holds. Only a rebind (whose probe enables
 * bus mastering again) brings such a part back.
 */
static int trn_cp_stop_part(struct trn_pci_dev *tpd)
{
	int ret;

	ret = trn_pci_reset(tpd);
	if (ret) {
		pci_clear_master(tpd->pdev);
		dev_err(&tpd->pdev->dev,
			"cannot reset the part (%d): bus mastering off until it is bound again\n",
			ret);
	}
	return ret;
}

/**
 * trn_pci_ring_fini() - trn_hw_ops.ring_fini: stop a ring's engine
 * @tdev: the device
 * @index: the ring
 *
 * Abandons the job on the engine (its DMA is stopped), and frees the
 * ring's queue and scratch.
 */
void trn_pci_ring_fini(struct trn_device *tdev, u32 index)
{
	struct trn_pci_ring *r = trn_cp_ring(tdev, index);
	unsigned long flags;

	if (!r)
		return;
	spin_lock_irqsave(&r->lock, flags);
	r->stopped = true;
	spin_unlock_irqrestore(&r->lock, flags);
	wake_up_all(&r->tpd->sem_wq);	/* a job in SEM_WAIT ends */
	/* A queue that did not reset stops only with the part. */
	if (READ_ONCE(r->wedged)) {
		if (!READ_ONCE(r->tpd->gone))
			trn_cp_stop_part(r->tpd);
		spin_lock_irqsave(&r->lock, flags);
		r->wedged = false;
		spin_unlock_irqrestore(&r->lock, flags);
		wake_up_all(&r->tpd->unwedged);
	}
	cancel_work_sync(&r->work);
	r->tpd->rings[index] = NULL;
	if (!READ_ONCE(r->tpd->gone))
		trn_udma_queue_stop(&r->uq);
	trn_udma_queue_free(r->tpd, &r->uq);
	dma_free_coherent(&r->tpd->pdev->dev, TRN_CP_SCRATCH_BYTES, r->scratch,
			  r->scratch_dma);
	kfree(r);
}

/**
 * trn_pci_ring_doorbell() - trn_hw_ops.ring_doorbell
 * @tdev: the device
 * @index: the ring
 * @tail: jobs up to this sequence number are valid
 *
 * Called with a spinlock held: only queues the ring's work item.
 */
void trn_pci_ring_doorbell(struct trn_device *tdev, u32 index, u64 tail)
{
	struct trn_pci_ring *r = trn_cp_ring(tdev, index);
	unsigned long flags;

	if (!r)
		return;
	spin_lock_irqsave(&r->lock, flags);
	r->tail = tail;
	r->paused = false;
	if (!r->stopped)
		queue_work(r->tpd->cp_wq, &r->work);
	spin_unlock_irqrestore(&r->lock, flags);
}

static bool trn_cp_left(struct trn_pci_ring *r, u64 seqno)
{
	unsigned long flags;
	bool left;

	spin_lock_irqsave(&r->lock, flags);
	left = r->running != seqno;
	spin_unlock_irqrestore(&r->lock, flags);
	return left;
}

/* No job on the engine, or one that waits for the device reset. */
static bool trn_cp_quiet(struct trn_pci_ring *r)
{
	unsigned long flags;
	bool quiet;

	spin_lock_irqsave(&r->lock, flags);
	quiet = !r->running || r->wedged;
	spin_unlock_irqrestore(&r->lock, flags);
	return quiet;
}

/**
 * trn_pci_ring_reset() - trn_hw_ops.ring_reset: abandon a job
 * @tdev: the device
 * @index: the ring
 * @seqno: the oldest job the core has not retired
 *
 * A job on the engine is stopped where it is (its UDMA queue reset, so no
 * DMA of it continues) and not written back; a job not started yet is
 * skipped. The ring then waits for the next doorbell.
 *
 * Return: true if the job was abandoned, false if it had finished.
 */
int trn_pci_ring_reset(struct trn_device *tdev, u32 index, u64 seqno)
{
	struct trn_pci_ring *r = trn_cp_ring(tdev, index);
	unsigned long flags;

	if (!r)
		return 0;
	spin_lock_irqsave(&r->lock, flags);
	r->paused = true;
	if (r->running == seqno) {
		r->abort = true;
		spin_unlock_irqrestore(&r->lock, flags);
		wake_up_all(&r->tpd->sem_wq);	/* if it is in SEM_WAIT */
		/* Its queue resets, or does not (the device must). */
		wait_event(r->idle,
			   trn_cp_left(r, seqno) || READ_ONCE(r->wedged));
		return READ_ONCE(r->wedged) ? -EIO : 1;
	}
	if (r->seqno == seqno) {
		/* Not fetched: skipped; pairs with the core's dma_rmb(). */
		smp_store_release(&r->status->completed_seqno,
				  cpu_to_le64(seqno));
		r->seqno = seqno + 1;
		spin_unlock_irqrestore(&r->lock, flags);
		return 1;
	}
	spin_unlock_irqrestore(&r->lock, flags);
	return 0;
}

/**
 * trn_pci_device_reset() - trn_hw_ops.device_reset: reset the part
 * @tdev: the device, every ring held by the core
 *
 * Abandons the job on every ring (a wedged ring's included, once the reset
 * has stopped its engine), resets the part (trn_pci_reset()) and
 * restarts every ring's UDMA queue empty. Device memory is kept, and so
 * are the contexts' tables, which are host memory. When the part does not
 * come back, its bus mastering is turned off before any ring lets go of
 * what its engine may still reach (trn_cp_stop_part()).
 *
 * Return: 0, -ETIMEDOUT or -ENODEV if the part did not come back.
 */
int trn_pci_device_reset(struct trn_device *tdev)
{
	struct trn_pci_dev *tpd = trn_device_hw_priv(tdev);
	struct trn_pci_ring *r;
	unsigned long flags;
	u32 i;
	int ret;

	/* Every engine stops where it is; a wedged one waits for the reset. */
	for (i = 0; i < tpd->num_rings; i++) {
		r = tpd->rings[i];
		if (!r)
			continue;
		spin_lock_irqsave(&r->lock, flags);
		r->paused = true;
		if (r->running)
			r->abort = true;
		spin_unlock_irqrestore(&r->lock, flags);
		wake_up_all(&tpd->sem_wq);
		/* Its queue may not reset either: then it waits for us. */
		wait_event(r->idle, trn_cp_quiet(r));
	}
	/* A part that did not come back loses bus mastering first. */
	ret = trn_cp_stop_part(tpd);
	for (i = 0; i < tpd->num_rings; i++) {
		r = tpd->rings[i];
		if (!r)
			continue;
		spin_lock_irqsave(&r->lock, flags);
		r->wedged = false;
		spin_unlock_irqrestore(&r->lock, flags);
	}
	/*
	 * Also when the reset failed: the core declares the device wedged
	 * and nothing reaches it again, so the work items may end.
	 */
	wake_up_all(&tpd->unwedged);
	for (i = 0; i < tpd->num_rings; i++) {
		r = tpd->rings[i];
		if (!r)
			continue;
		/* The woken ones restart their queues themselves. */
		flush_work(&r->work);
		trn_udma_queue_start(&r->uq);
		r->queued = 0;
		r->slots_used = 0;
		r->fill_valid = false;
	}
	return ret;
}

/**
 * trn_pci_cp_init() - the command processor's rings and worker
 * @tpd: the part
 *
 * Return: 0 or -ENOMEM.
 */
int trn_pci_cp_init(struct trn_pci_dev *tpd)
{
	tpd->num_rings = TRN_PCI_CORES * TRN_PCI_QUEUES_PER_CORE;
	tpd->rings = kcalloc(tpd->num_rings, sizeof(*tpd->rings), GFP_KERNEL);
	if (!tpd->rings)
		return -ENOMEM;
	/* Like an engine: reclaim may wait for the jobs it runs. */
	tpd->cp_wq = alloc_workqueue("trn_pci_cp", WQ_UNBOUND | WQ_MEM_RECLAIM,
				     0);
	if (!tpd->cp_wq) {
		kfree(tpd->rings);
		tpd->rings = NULL;
		return -ENOMEM;
	}
	return 0;
}

/**
 * trn_pci_cp_fini() - undo trn_pci_cp_init()
 * @tpd: the part, whose rings are all stopped
 */
void trn_pci_cp_fini(struct trn_pci_dev *tpd)
{
	destroy_workqueue(tpd->cp_wq);
	kfree(tpd->rings);
	tpd->rings = NULL;
}
