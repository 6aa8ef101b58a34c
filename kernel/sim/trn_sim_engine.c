// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * The execution engines of the simulated device: one per NeuronCore, each
 * serving the hardware rings of its core. The core (trn_ring.c) fills
 * descriptors in DMA-coherent memory and rings a doorbell; an engine
 * fetches the jobs, runs their command streams through the MMU context
 * named in the descriptor (trn_sim_isa.c), writes the outcome back into
 * the descriptor, advances the ring's completion record and "interrupts"
 * with trn_device_ring_irq() -- asynchronously to the submitter, like
 * hardware.
 *
 * An engine is a work item on an unbound workqueue of the device, not a
 * kthread: a NeuronCore that has nothing to do costs no thread and no
 * wake-ups (a device has up to 64 of them, most idle most of the time),
 * the doorbell can queue it from any context (it is called under a
 * spinlock with interrupts off), a work item queued while it is running
 * is run once more, so no doorbell is lost, and cancel_work_sync() is a complete stop.
 * Unbound workers are not concurrency-managed, so an engine that computes
 * for a long time delays nothing else; it still yields the CPU between
 * slices (cond_resched()) and requeues itself after TRN_SIM_PASSES rounds.
 *
 * Each run of the work item goes round the rings of its core, giving each
 * ring with work a slice of about TRN_SIM_SLICE_BUDGET units; a job keeps
 * its place between slices (trn_sim_exec: CALL stack, current command,
 * cursor), so one long job does not starve the core's other rings, and a
 * job blocked in SEM_WAIT stalls only its own ring. When a round makes no
 * progress (every ring idle, hung or blocked on a semaphore that nothing
 * changed) the work item ends: the engine sleeps until a doorbell or a
 * reset queues it again. A semaphore of a (context, core) pair can only be
 * changed by a job on that core, i.e. by this engine, which then goes
 * round again.
 *
 * The core may flag a job it has handed over as cancelled
 * (%TRN_HW_DESC_CANCEL in its descriptor) and ring the doorbell: the engine
 * looks at the flag when it reaches the job and before every slice of it,
 * and ends a flagged job at once with status ABORTED. A job made to hang
 * (debugfs hang_next) is stuck and does not look: only a reset ends it.
 *
 * The engine is the device, executing on the way to signalling fences: it
 * allocates nothing and waits for nothing while it runs, and tells lockdep
 * so (dma_fence_begin_signalling()).
 */

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/dma-fence.h>
#include <linux/dma-direct.h>
#include <linux/io.h>
#include <linux/limits.h>
#include <linux/lockdep.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include <asm/barrier.h>
#include <asm/byteorder.h>

#include <uapi/drm/trn_accel.h>

#include "../trn_hw.h"
#include "trn_sim.h"
#include "trn_sim_engine.h"
#include "trn_sim_isa.h"

/**
 * trn_sim_clock() - the device clock
 * @sdev: the device
 *
 * Return: nanoseconds since the device came up.
 */
u64 trn_sim_clock(struct trn_sim_dev *sdev)
{
	return ktime_get_ns() - sdev->clock_base;
}

static struct trn_sim_ring *to_trn_sim_ring(struct trn_sim_exec *x)
{
	return container_of(x, struct trn_sim_ring, exec);
}

static int trn_sim_ring_read(struct trn_sim_exec *x, u64 va, void *buf,
			     size_t len)
{
	struct trn_sim_ring *ring = to_trn_sim_ring(x);

	return trn_sim_tlb_rw(ring->core->sdev, &ring->tlb, ring->ctx, va, buf,
			      len, false, &x->fault_va);
}

static int trn_sim_ring_write(struct trn_sim_exec *x, u64 va,
			      const void *buf, size_t len)
{
	struct trn_sim_ring *ring = to_trn_sim_ring(x);

	return trn_sim_tlb_rw(ring->core->sdev, &ring->tlb, ring->ctx, va,
			      (void *)buf, len, true, &x->fault_va);
}

static int trn_sim_ring_copy(struct trn_sim_exec *x, u64 dst, u64 src,
			     size_t len)
{
	struct trn_sim_ring *ring = to_trn_sim_ring(x);

	return trn_sim_mmu_copy(ring->core->sdev, ring->ctx, dst, src, len,
				&x->fault_va);
}

static u64 trn_sim_ring_clock(struct trn_sim_exec *x)
{
	return trn_sim_clock(to_trn_sim_ring(x)->core->sdev);
}

/* How a ring's job, a user-mode queue's too, reaches memory: its context. */
const struct trn_sim_exec_ops trn_sim_ring_exec_ops = {
	.read = trn_sim_ring_read,
	.write = trn_sim_ring_write,
	.clock = trn_sim_ring_clock,
	.copy = trn_sim_ring_copy,
};

/**
 * trn_sim_dma_virt() - reach memory the core handed the device by address
 * @sdev: the device
 * @addr: DMA address of the memory (rings, completion records, doorbells)
 * @size: its size in bytes
 *
 * The memory the core allocated with the DMA API on our device. The
 * device has no IOMMU and a 64-bit mask, so its bus addresses are
 * dma-direct's: dma_to_phys() undoes them, and coherent memory of a
 * cache-coherent device is ordinary memory of the kernel's linear map.
 *
 * Return: the kernel address, or NULL if it is not ordinary memory.
 */
void *trn_sim_dma_virt(struct trn_sim_dev *sdev, dma_addr_t addr,
		       size_t size)
{
	phys_addr_t phys = dma_to_phys(&sdev->dev, addr);

	if (!size || !pfn_valid(PHYS_PFN(phys)) ||
	    !pfn_valid(PHYS_PFN(phys + size - 1)))
		return NULL;
	return phys_to_virt(phys);
}

static struct trn_sim_core *trn_sim_core_of(struct trn_sim_dev *sdev,
					    u32 index, u32 *queue)
{
	if (!sdev->cores ||
	    index >= sdev->num_cores * sdev->queues_per_core)
		return NULL;
	*queue = index % sdev->queues_per_core;
	return sdev->cores[index / sdev->queues_per_core];
}

/**
 * trn_sim_core_kick() - make an engine go round its rings (again)
 * @core: the engine
 *
 * Any context.
 */
void trn_sim_core_kick(struct trn_sim_core *core)
{
	unsigned long flags;

	spin_lock_irqsave(&core->lock, flags);
	if (!core->stopped)
		queue_work(core->sdev->engine_wq, &core->work);
	spin_unlock_irqrestore(&core->lock, flags);
}

static struct trn_hw_desc *trn_sim_ring_desc(struct trn_sim_ring *ring)
{
	return &ring->descs[ring->seqno & (ring->entries - 1)];
}

/* Whether the core flagged the job the ring is at as cancelled. */
static bool trn_sim_ring_cancelled(struct trn_sim_ring *ring)
{
	return le32_to_cpu(READ_ONCE(trn_sim_ring_desc(ring)->flags)) &
	       TRN_HW_DESC_CANCEL;
}

/* Fetch the next job if the doorbell covers it. */
static bool trn_sim_ring_fetch(struct trn_sim_ring *ring)
{
	struct trn_sim_core *core = ring->core;
	struct trn_sim_dev *sdev = core->sdev;
	struct trn_hw_desc *desc;
	unsigned long flags;
	u64 tail, va;
	u32 size;

	/* Acquires the descriptors the core wrote before the doorbell. */
	spin_lock_irqsave(&core->lock, flags);
	tail = ring->paused ? 0 : ring->tail;
	spin_unlock_irqrestore(&core->lock, flags);
	if (ring->seqno > tail)
		return false;

	desc = trn_sim_ring_desc(ring);
	va = le64_to_cpu(READ_ONCE(desc->cmd_va));
	size = le32_to_cpu(READ_ONCE(desc->cmd_size));
	ring->ctx = le32_to_cpu(READ_ONCE(desc->ctx));
	WRITE_ONCE(desc->start_ns, cpu_to_le64(trn_sim_clock(sdev)));

	/* A cancelled job ends before it starts, and takes no knob. */
	if (trn_sim_ring_cancelled(ring)) {
		ring->exec.sems = NULL;
		trn_sim_exec_start(&ring->exec, va, size);
		ring->state = TRN_SIM_RING_RUNNING;
		return true;
	}
	if (atomic_dec_if_positive(&sdev->hang_next) >= 0) {
		ring->state = TRN_SIM_RING_HUNG;
		return true;
	}
	ring->exec.sems = trn_sim_ctx_sems(sdev, ring->ctx, core->id);
	trn_sim_exec_start(&ring->exec, va, size);
	if (atomic_dec_if_positive(&sdev->late_next) >= 0)
		ring->state = TRN_SIM_RING_LATE;
	else
		ring->state = TRN_SIM_RING_RUNNING;
	return true;
}

/* A job the engine must leave alone until the ring is reset. */
static bool trn_sim_ring_stalled(const struct trn_sim_ring *ring)
{
	return ring->state == TRN_SIM_RING_HUNG ||
	       ring->state == TRN_SIM_RING_LATE;
}

/* Write the finished job back, then advance the completion record. */
static void trn_sim_ring_complete(struct trn_sim_ring *ring)
{
	struct trn_sim_exec *x = &ring->exec;
	struct trn_hw_desc *desc;

	desc = trn_sim_ring_desc(ring);
	WRITE_ONCE(desc->error_offset, cpu_to_le64(x->error_offset));
	WRITE_ONCE(desc->error_cmd_va, cpu_to_le64(x->error_cmd_va));
	WRITE_ONCE(desc->fault_va, cpu_to_le64(x->fault_va));
	WRITE_ONCE(desc->end_ns, cpu_to_le64(trn_sim_clock(ring->core->sdev)));
	WRITE_ONCE(desc->status, cpu_to_le32(x->status));

	ring->completed = ring->seqno++;
	ring->state = TRN_SIM_RING_IDLE;
	/* Pairs with the dma_rmb() after the core reads completed_seqno. */
	smp_store_release(&ring->status->completed_seqno,
			  cpu_to_le64(ring->completed));
	atomic64_inc(&ring->core->sdev->jobs_executed);
}

/*
 * Give @ring one slice. Returns whether anything changed that could let
 * another ring of the core proceed (or this one continue); sets @irq when
 * a job finished.
 */
static bool trn_sim_ring_step(struct trn_sim_ring *ring, bool *irq)
{
	long budget = TRN_SIM_SLICE_BUDGET;
	enum trn_sim_run run;
	u64 retired;

	lockdep_assert_held(&ring->core->exec_lock);
	if (trn_sim_ring_stalled(ring))
		return false;
	if (ring->state == TRN_SIM_RING_IDLE &&
	    (!trn_sim_ring_fetch(ring) || trn_sim_ring_stalled(ring)))
		return false;

	if (trn_sim_ring_cancelled(ring)) {
		/* Stopped at a command boundary, results so far kept. */
		trn_sim_exec_release(&ring->exec);
		ring->exec.status = DRM_TRN_STATUS_ABORTED;
		ring->exec.error_offset = 0;
		ring->exec.error_cmd_va = 0;
		ring->exec.fault_va = 0;
		trn_sim_ring_complete(ring);
		*irq = true;
		return true;
	}

	retired = ring->exec.retired;
	run = trn_sim_exec_run(&ring->exec, &budget);
	if (run == TRN_SIM_RUN_BLOCKED) {
		ring->state = TRN_SIM_RING_BLOCKED;
		/* Commands it ran before blocking may have signalled. */
		return ring->exec.retired != retired;
	}
	ring->state = TRN_SIM_RING_RUNNING;
	if (run == TRN_SIM_RUN_DONE) {
		trn_sim_ring_complete(ring);
		*irq = true;
	}
	return true;
}

static void trn_sim_core_work(struct work_struct *work)
{
	struct trn_sim_core *core = container_of(work, struct trn_sim_core,
						 work);
	struct trn_sim_dev *sdev = core->sdev;
	bool progress, cookie, done;
	unsigned int pass, q;

	cookie = dma_fence_begin_signalling();
	trn_sim_core_awake(core);
again:
	for (pass = 0; pass < TRN_SIM_PASSES; pass++) {
		progress = false;
		done = false;
		for (q = 0; q < sdev->queues_per_core; q++) {
			struct trn_sim_ring *ring;
			bool irq = false;
			u32 index = 0;

			mutex_lock(&core->exec_lock);
			ring = core->rings[q];
			if (ring) {
				progress |= trn_sim_ring_step(ring, &irq);
				/* Unmaps in its context wait no longer. */
				trn_sim_tlb_close(&ring->tlb);
				index = ring->index;
			}
			mutex_unlock(&core->exec_lock);

			/* The interrupt, with none of the engine's locks held. */
			if (irq)
				trn_device_ring_irq(sdev->tdev, index);
			done |= irq;
			cond_resched();
		}
		/* A completion may be what another ring waits for. */
		if (done)
			trn_sim_wake_waiters(sdev);
		progress |= trn_sim_core_user_pass(core);
		if (!progress)
			goto idle;
	}
	/* Still busy: continue after whatever else waits for a worker. */
	trn_sim_core_kick(core);
	goto out;
idle:
	/* User-mode queues: watch their doorbells for a while first. */
	if (trn_sim_core_watch(core))
		goto again;	/* at once: no trip through the workqueue */
out:
	dma_fence_end_signalling(cookie);
}

/* trn_hw_ops.ring_init */
int trn_sim_ring_init(struct trn_device *tdev, const struct trn_hw_ring *hw)
{
	struct trn_sim_dev *sdev = trn_device_hw_priv(tdev);
	struct trn_sim_core *core;
	struct trn_sim_ring *ring;
	unsigned long flags;
	int ret = 0;
	u32 q;

	core = trn_sim_core_of(sdev, hw->index, &q);
	if (!core || hw->entries < 16 || hw->entries > 65536 ||
	    !is_power_of_2(hw->entries))
		return -EINVAL;

	ring = kzalloc(sizeof(*ring), GFP_KERNEL);
	if (!ring)
		return -ENOMEM;
	ring->core = core;
	ring->index = hw->index;
	ring->entries = hw->entries;
	ring->descs = trn_sim_dma_virt(sdev, hw->desc_dma,
				       array_size(hw->entries,
						  sizeof(*ring->descs)));
	ring->status = trn_sim_dma_virt(sdev, hw->status_dma,
					sizeof(*ring->status));
	if (!ring->descs || !ring->status) {
		ret = -EINVAL;
		goto err_free;
	}
	ring->seqno = 1;
	ring->exec.ops = &trn_sim_ring_exec_ops;
	ring->exec.scratch = &core->scratch;
	ret = trn_sim_exec_init(&ring->exec);
	if (ret)
		goto err_free;
	WRITE_ONCE(ring->status->completed_seqno, cpu_to_le64(0));

	mutex_lock(&core->exec_lock);
	spin_lock_irqsave(&core->lock, flags);
	if (core->rings[q])
		ret = -EBUSY;
	else
		core->rings[q] = ring;
	spin_unlock_irqrestore(&core->lock, flags);
	mutex_unlock(&core->exec_lock);
	if (ret)
		goto err_exec;
	return 0;

err_exec:
	trn_sim_exec_fini(&ring->exec);
err_free:
	kfree(ring);
	return ret;
}

/* trn_hw_ops.ring_fini: once this returns the engine never sees the ring. */
void trn_sim_ring_fini(struct trn_device *tdev, u32 index)
{
	struct trn_sim_dev *sdev = trn_device_hw_priv(tdev);
	struct trn_sim_ring *ring;
	struct trn_sim_core *core;
	unsigned long flags;
	u32 q;

	core = trn_sim_core_of(sdev, index, &q);
	if (!core)
		return;
	/* The engine touches a ring only under exec_lock: wait for it. */
	mutex_lock(&core->exec_lock);
	spin_lock_irqsave(&core->lock, flags);
	ring = core->rings[q];
	core->rings[q] = NULL;
	spin_unlock_irqrestore(&core->lock, flags);
	if (ring)
		trn_sim_exec_release(&ring->exec);
	mutex_unlock(&core->exec_lock);
	if (ring)
		trn_sim_exec_fini(&ring->exec);
	kfree(ring);
}

/* trn_hw_ops.ring_doorbell: called under a spinlock; must not sleep. */
void trn_sim_ring_doorbell(struct trn_device *tdev, u32 index, u64 tail)
{
	struct trn_sim_dev *sdev = trn_device_hw_priv(tdev);
	struct trn_sim_ring *ring;
	struct trn_sim_core *core;
	unsigned long flags;
	u32 q;

	core = trn_sim_core_of(sdev, index, &q);
	if (!core)
		return;
	spin_lock_irqsave(&core->lock, flags);
	ring = core->rings[q];
	if (ring && !core->stopped) {
		ring->tail = max(ring->tail, tail);
		ring->paused = false;
		queue_work(sdev->engine_wq, &core->work);
	}
	spin_unlock_irqrestore(&core->lock, flags);
}

/*
 * A late job (debugfs late_next) finishes the moment its ring is reset, and
 * the ring's next job, if the doorbell covers it, starts before the reset
 * looks: it runs the smallest slice the engine gives, which is its first
 * command's first row or chunk (all of a one-row command). The race
 * between a timeout and a completion, made certain so that tests can show
 * nothing is abandoned or run twice.
 */
static void trn_sim_ring_finish_late(struct trn_sim_ring *ring)
{
	enum trn_sim_run run;
	long budget = LONG_MAX;

	lockdep_assert_held(&ring->core->exec_lock);
	if (trn_sim_exec_run(&ring->exec, &budget) != TRN_SIM_RUN_DONE) {
		ring->state = TRN_SIM_RING_BLOCKED;
		return;
	}
	trn_sim_ring_complete(ring);
	if (!trn_sim_ring_fetch(ring) || ring->state != TRN_SIM_RING_RUNNING)
		return;
	budget = 1;
	run = trn_sim_exec_run(&ring->exec, &budget);
	if (run == TRN_SIM_RUN_DONE)
		trn_sim_ring_complete(ring);
	else if (run == TRN_SIM_RUN_BLOCKED)
		ring->state = TRN_SIM_RING_BLOCKED;
}

/*
 * Stop @ring until the next doorbell and, unless job @seqno finished,
 * abandon it; under the core's exec_lock. Whether it was abandoned.
 */
static bool trn_sim_ring_abandon(struct trn_sim_ring *ring, u64 seqno)
{
	struct trn_sim_core *core = ring->core;
	unsigned long flags;

	/* The race a late job stands for happens before the reset looks. */
	if (ring->state == TRN_SIM_RING_LATE) {
		trn_sim_ring_finish_late(ring);
		trn_sim_tlb_close(&ring->tlb);
	}
	spin_lock_irqsave(&core->lock, flags);
	ring->paused = true;
	spin_unlock_irqrestore(&core->lock, flags);
	if (ring->completed >= seqno)
		return false;
	trn_sim_exec_release(&ring->exec);
	ring->completed = seqno;
	ring->seqno = seqno + 1;
	ring->state = TRN_SIM_RING_IDLE;
	/* As in trn_sim_ring_complete(), for the core's dma_rmb(). */
	smp_store_release(&ring->status->completed_seqno,
			  cpu_to_le64(ring->completed));
	return true;
}

/**
 * trn_sim_ring_reset() - trn_hw_ops.ring_reset of the simulator
 * @tdev: the device
 * @index: the ring
 * @seqno: the job to abandon, the oldest one the core has not retired
 *
 * If job @seqno has not finished, abandon it, started or not (its
 * descriptor is not written back), and continue with job @seqno + 1 once
 * the doorbell covers it. If it has finished, the job the ring runs now is
 * an innocent one: leave it running. The completion record never moves
 * backwards.
 *
 * Either way the ring fetches no further job until the next doorbell, so
 * that the core can flag the jobs it must skip first.
 *
 * With the debugfs knob reset_fail_next set, the reset fails instead
 * (-EIO, nothing changes), as a ring whose engine no longer responds would:
 * the core then resets the device (trn_sim_device_reset()).
 *
 * Return: 1 if job @seqno was abandoned, 0 if it had finished, -EIO.
 */
int trn_sim_ring_reset(struct trn_device *tdev, u32 index, u64 seqno)
{
	struct trn_sim_dev *sdev = trn_device_hw_priv(tdev);
	struct trn_sim_ring *ring;
	struct trn_sim_core *core;
	bool abandoned = false;
	u32 q;

	core = trn_sim_core_of(sdev, index, &q);
	if (!core)
		return 0;
	if (atomic_dec_if_positive(&sdev->reset_fail_next) >= 0)
		return -EIO;
	mutex_lock(&core->exec_lock);
	ring = core->rings[q];
	if (ring)
		abandoned = trn_sim_ring_abandon(ring, seqno);
	mutex_unlock(&core->exec_lock);
	if (ring)
		trn_sim_core_kick(core);
	return abandoned ? 1 : 0;
}

/**
 * trn_sim_device_reset() - trn_hw_ops.device_reset of the simulator
 * @tdev: the device, every ring held by the core
 *
 * Every ring abandons the job it fetched (running, waiting for a semaphore
 * or hung) and waits for the next doorbell; jobs not fetched yet run
 * afterwards. User-mode queues abandon theirs too (it completes as
 * aborted) and go on. Device memory, semaphores and MMU contexts are kept.
 *
 * Return: 0.
 */
int trn_sim_device_reset(struct trn_device *tdev)
{
	struct trn_sim_dev *sdev = trn_device_hw_priv(tdev);
	struct trn_sim_ring *ring;
	struct trn_sim_core *core;
	u32 i, q;

	for (i = 0; i < sdev->num_cores; i++) {
		core = sdev->cores[i];
		mutex_lock(&core->exec_lock);
		for (q = 0; q < sdev->queues_per_core; q++) {
			ring = core->rings[q];
			if (!ring)
				continue;
			/* A fetched job is @seqno; an idle ring has none. */
			trn_sim_ring_abandon(ring,
					     ring->state == TRN_SIM_RING_IDLE ?
					     ring->completed : ring->seqno);
		}
		trn_sim_urings_reset(core);
		mutex_unlock(&core->exec_lock);
		trn_sim_core_kick(core);
	}
	return 0;
}

static void trn_sim_cores_free(struct trn_sim_dev *sdev, u32 count)
{
	struct trn_sim_core *core;
	u32 i, q;

	for (i = 0; i < count; i++) {
		core = sdev->cores[i];
		/* Rings the core did not finish (it should have). */
		for (q = 0; q < sdev->queues_per_core; q++) {
			if (!core->rings[q])
				continue;
			trn_sim_exec_release(&core->rings[q]->exec);
			trn_sim_exec_fini(&core->rings[q]->exec);
			kfree(core->rings[q]);
		}
		trn_sim_urings_free(core);
		trn_sim_scratch_free(&core->scratch);
		mutex_destroy(&core->exec_lock);
		kfree(core);
	}
	kfree(sdev->cores);
	sdev->cores = NULL;
	kfree(sdev->urings);
	sdev->urings = NULL;
}

/**
 * trn_sim_engine_init() - create the engines of a device, all idle
 * @sdev: the device, not yet registered with the core
 *
 * Also starts the device clock.
 *
 * Return: 0 or -ENOMEM.
 */
int trn_sim_engine_init(struct trn_sim_dev *sdev)
{
	struct trn_sim_core *core;
	u32 i;

	sdev->clock_base = ktime_get_ns();
	atomic_set(&sdev->hang_next, 0);
	atomic_set(&sdev->late_next, 0);
	atomic_set(&sdev->reset_fail_next, 0);
	atomic64_set(&sdev->jobs_executed, 0);
	atomic_set(&sdev->waiting, 0);
	spin_lock_init(&sdev->uring_lock);

	sdev->engine_wq = alloc_workqueue("%s", WQ_UNBOUND, 0,
					  dev_name(&sdev->dev));
	if (!sdev->engine_wq)
		return -ENOMEM;
	sdev->urings = kcalloc(TRN_SIM_USER_QUEUES, sizeof(*sdev->urings),
			       GFP_KERNEL);
	if (!sdev->urings)
		goto err_wq;
	sdev->cores = kcalloc(sdev->num_cores, sizeof(*sdev->cores),
			      GFP_KERNEL);
	if (!sdev->cores)
		goto err_wq;
	for (i = 0; i < sdev->num_cores; i++) {
		core = kzalloc(struct_size(core, rings, sdev->queues_per_core),
			       GFP_KERNEL);
		if (!core)
			goto err_cores;
		core->sdev = sdev;
		core->id = i;
		INIT_WORK(&core->work, trn_sim_core_work);
		mutex_init(&core->exec_lock);
		spin_lock_init(&core->lock);
		sdev->cores[i] = core;
		if (trn_sim_scratch_init(&core->scratch) ||
		    trn_sim_urings_init(core)) {
			i++;
			goto err_cores;
		}
	}
	return 0;

err_cores:
	trn_sim_cores_free(sdev, i);
err_wq:
	kfree(sdev->urings);
	sdev->urings = NULL;
	destroy_workqueue(sdev->engine_wq);
	sdev->engine_wq = NULL;
	return -ENOMEM;
}

/**
 * trn_sim_engine_fini() - stop and free the engines of a device
 * @sdev: the device, unregistered from the core
 *
 * Stops every engine, whatever its rings hold (queued or hung jobs are
 * abandoned), and frees rings the core did not finish. Later ring
 * operations are ignored.
 */
void trn_sim_engine_fini(struct trn_sim_dev *sdev)
{
	struct trn_sim_core *core;
	unsigned long flags;
	u32 i;

	if (!sdev->cores)
		return;
	for (i = 0; i < sdev->num_cores; i++) {
		core = sdev->cores[i];
		spin_lock_irqsave(&core->lock, flags);
		core->stopped = true;
		spin_unlock_irqrestore(&core->lock, flags);
		/* Also waits for a run that requeues itself. */
		cancel_work_sync(&core->work);
		/* Which may have armed this; it kicks nothing now: stopped. */
		cancel_delayed_work_sync(&core->repoll);
	}
	trn_sim_cores_free(sdev, sdev->num_cores);
	destroy_workqueue(sdev->engine_wq);
	sdev->engine_wq = NULL;
}

/* A count knob in debugfs (hang_next, ...); @data is its atomic_t. */
static int trn_sim_knob_get(void *data, u64 *val)
{
	*val = atomic_read((atomic_t *)data);
	return 0;
}

static int trn_sim_knob_set(void *data, u64 val)
{
	if (val > INT_MAX)
		return -EINVAL;
	atomic_set((atomic_t *)data, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(trn_sim_knob_fops, trn_sim_knob_get,
			 trn_sim_knob_set, "%llu\n");

static int trn_sim_jobs_executed_get(void *data, u64 *val)
{
	struct trn_sim_dev *sdev = data;

	*val = atomic64_read(&sdev->jobs_executed);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(trn_sim_jobs_executed_fops,
			 trn_sim_jobs_executed_get, NULL, "%llu\n");

/**
 * trn_sim_engine_debugfs_init() - the engines' knobs and counters
 * @sdev: the device, whose debugfs directory exists
 */
void trn_sim_engine_debugfs_init(struct trn_sim_dev *sdev)
{
	debugfs_create_file_unsafe("hang_next", 0600, sdev->debugfs,
				   &sdev->hang_next, &trn_sim_knob_fops);
	debugfs_create_file_unsafe("late_next", 0600, sdev->debugfs,
				   &sdev->late_next, &trn_sim_knob_fops);
	debugfs_create_file_unsafe("reset_fail_next", 0600, sdev->debugfs,
				   &sdev->reset_fail_next, &trn_sim_knob_fops);
	debugfs_create_file_unsafe("jobs_executed", 0400, sdev->debugfs, sdev,
				   &trn_sim_jobs_executed_fops);
}
