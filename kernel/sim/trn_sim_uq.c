// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * User-mode queues of the simulated device. Userspace writes descriptors
 * (&struct drm_trn_user_desc) into a ring in its own address space and
 * stores the new job's number in a doorbell page; no system call tells
 * the device. So the device watches: the engine of the queue's NeuronCore
 * reads the write pointers of its user-mode queues on every round, and
 * when a round finds nothing to do it keeps looking for doorbell_poll_us
 * (a module parameter) before it sleeps, as io_uring's SQPOLL thread does.
 * Before it sleeps it sets %DRM_TRN_DOORBELL_NEED_WAKEUP in every doorbell
 * page and looks once more (a submitter stores its write pointer, then
 * reads the flag, each after a full barrier: one of the two sees the
 * other), and a submitter that finds the flag calls DRM_IOCTL_TRN_QUEUE_WAKE.
 * A queue that keeps the device busy costs no system call at all; an idle
 * device costs no CPU.
 *
 * The device reads each descriptor through the MMU, in the queue's
 * context, once, when it starts the job; checks it as it checks a command;
 * runs it like a hardware ring's job (trn_sim_isa.c, several small jobs
 * per slice); and writes the outcome itself: a failure entry, the failure
 * count and the completed number into the queue's completion record, and
 * counters into the core's state page. It interrupts only when the core
 * asked for a job number (a fence waits for it) and after a failed job.
 *
 * A job whose descriptor asks to wait for a memory value starts once the
 * value is reached: the engine reads it again on every round, after any
 * job on the device completed (another queue's completion record is what
 * such a job usually waits for), and while it sleeps on a timer whose
 * interval doubles from one jiffy to TRN_SIM_REPOLL_MAX_MS, because the
 * CPU may write the value without telling anyone.
 */

#include <linux/atomic.h>
#include <linux/dma-fence.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include <asm/barrier.h>
#include <asm/byteorder.h>

#include <kunit/visibility.h>

#include <uapi/drm/trn_accel.h>

#include "../trn_hw.h"
#include "trn_sim.h"
#include "trn_sim_engine.h"
#include "trn_sim_isa.h"

static unsigned int doorbell_poll_us = 500;
module_param(doorbell_poll_us, uint, 0644);
MODULE_PARM_DESC(doorbell_poll_us,
		 "How long an idle engine keeps watching user-mode queue doorbells before it sleeps, in us (default 500)");

/* Work units a job costs on top of its commands: bounds jobs per slice. */
#define TRN_SIM_JOB_COST	SZ_4K

/* Longest interval of the memory-wait timer. */
#define TRN_SIM_REPOLL_MAX_MS	16

/* The write pointer, and (acquire) the descriptors written before it. */
static u64 trn_sim_uring_wptr(struct trn_sim_uring *ur)
{
	/* Pairs with the submitter's release store of the write pointer. */
	return smp_load_acquire(&ur->doorbell->wptr);
}

/*
 * Whether uq_stop came: read without the core's lock (a store to a bool),
 * checked before every job and slice, so a stop is seen at the next one.
 */
static bool trn_sim_uring_cancelled(struct trn_sim_uring *ur)
{
	return READ_ONCE(ur->cancelled);
}

/* A job the engine must leave alone until it is abandoned. */
static bool trn_sim_uring_stalled(const struct trn_sim_uring *ur)
{
	return ur->ring.state == TRN_SIM_RING_HUNG;
}

/*
 * Write job @ur->ring.seqno's outcome: for a failure, the entry, then the
 * count (the uAPI's order); the state page's counters; then the completed
 * number, in the completion record and in the state page. Returns whether
 * the core asked for an interrupt (a failure, or the job it waits for).
 */
static bool trn_sim_uring_complete(struct trn_sim_uring *ur, u32 status,
				   u64 error_offset, u64 error_cmd_va,
				   u64 fault_va)
{
	struct trn_sim_ring *ring = &ur->ring;
	struct trn_sim_core *core = ring->core;
	struct trn_hw_uq_state *st = ur->state;
	u64 seqno = ring->seqno, now, at;
	bool irq = false;

	lockdep_assert_held(&core->exec_lock);
	now = trn_sim_clock(core->sdev);
	if (ur->start_ns && now > ur->start_ns)
		ur->busy_ns += now - ur->start_ns;
	ur->start_ns = 0;
	if (status != DRM_TRN_STATUS_OK) {
		struct drm_trn_job_failure *f;

		f = &ur->page->failures[ur->failed %
					DRM_TRN_STATUS_PAGE_FAILURES];
		WRITE_ONCE(f->seqno, seqno);
		/* As the core writes it: a new error comes with a new number. */
		smp_wmb();
		WRITE_ONCE(f->error, -trn_hw_status_errno(status));
		WRITE_ONCE(f->status, status);
		ur->failed++;
		/* Readers that see the count see the entry. */
		smp_store_release(&ur->page->failed_count, ur->failed);

		WRITE_ONCE(st->failed_seqno, cpu_to_le64(seqno));
		WRITE_ONCE(st->status, cpu_to_le32(status));
		WRITE_ONCE(st->error_offset, cpu_to_le64(error_offset));
		WRITE_ONCE(st->error_cmd_va, cpu_to_le64(error_cmd_va));
		WRITE_ONCE(st->fault_va, cpu_to_le64(fault_va));
		if (status == DRM_TRN_STATUS_MMU_FAULT)
			WRITE_ONCE(st->fault_jobs, cpu_to_le64(++ur->faults));
		WRITE_ONCE(st->jobs_failed, cpu_to_le64(++ur->nr_failed));
		irq = true;
	} else {
		WRITE_ONCE(st->jobs_ok, cpu_to_le64(++ur->ok));
	}
	WRITE_ONCE(st->busy_ns, cpu_to_le64(ur->busy_ns));

	ring->completed = seqno;
	ring->seqno++;
	ring->state = TRN_SIM_RING_IDLE;
	/* Readers that see the job completed see everything above. */
	smp_store_release(&ur->page->completed_seqno, seqno);
	dma_wmb();
	WRITE_ONCE(st->completed_seqno, cpu_to_le64(seqno));
	atomic64_inc(&core->sdev->jobs_executed);

	/*
	 * The interrupt the core asked for, once. The completion before the
	 * look, as uq_irq_at stores before the core looks at the completion:
	 * either we see the request or the core sees the job done.
	 */
	smp_mb();
	at = READ_ONCE(ur->irq_at);
	while (seqno >= at) {
		u64 old = cmpxchg64(&ur->irq_at, at, U64_MAX);

		if (old == at) {
			irq = true;
			break;
		}
		at = old;	/* the core asked again meanwhile */
	}
	return irq;
}

/* End the fetched job at once with @status, its results so far kept. */
static bool trn_sim_uring_end(struct trn_sim_uring *ur, u32 status)
{
	if (ur->ring.state == TRN_SIM_RING_WAITING)
		atomic_dec(&ur->ring.core->sdev->waiting);
	trn_sim_exec_release(&ur->ring.exec);
	return trn_sim_uring_complete(ur, status, 0, 0, 0);
}

/**
 * trn_sim_udesc_check() - the device's check of a user-mode descriptor
 * @d: the descriptor, as read from the ring
 *
 * Return: %DRM_TRN_STATUS_OK if the job may run, else the status it fails
 * with (at offset 0).
 */
VISIBLE_IF_KUNIT u32 trn_sim_udesc_check(const struct drm_trn_user_desc *d)
{
	u32 flags = d->flags;

	if (flags & ~DRM_TRN_USER_DESC_WAIT)
		return DRM_TRN_STATUS_BAD_ARG;
	if (!(flags & DRM_TRN_USER_DESC_WAIT) && (d->wait_va || d->wait_value))
		return DRM_TRN_STATUS_BAD_ARG;
	if ((d->wait_va | d->cmd_va) & 7)
		return DRM_TRN_STATUS_BAD_ALIGN;
	if (!d->cmd_size || d->cmd_size & 7 ||
	    d->cmd_size > DRM_TRN_JOB_MAX_CMD_SIZE)
		return DRM_TRN_STATUS_BAD_SIZE;
	return DRM_TRN_STATUS_OK;
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_udesc_check);

/*
 * Fetch the next job if the write pointer announces it. Returns whether
 * anything happened; sets @irq if a job completed at once (cancelled, or a
 * bad descriptor) and the core wants to hear of it.
 */
static bool trn_sim_uring_fetch(struct trn_sim_uring *ur, bool *irq)
{
	struct trn_sim_ring *ring = &ur->ring;
	struct trn_sim_dev *sdev = ring->core->sdev;
	struct drm_trn_user_desc d;
	u64 va, fault_va = 0;
	u32 status;

	if (ring->seqno > trn_sim_uring_wptr(ur))
		return false;
	ur->start_ns = trn_sim_clock(sdev);
	if (trn_sim_uring_cancelled(ur)) {
		*irq |= trn_sim_uring_complete(ur, DRM_TRN_STATUS_ABORTED, 0, 0,
					       0);
		return true;
	}
	va = ur->ring_va + (ring->seqno & (ring->entries - 1)) * sizeof(d);
	if (trn_sim_tlb_rw(sdev, &ring->tlb, ring->ctx, va, &d, sizeof(d),
			   false, &fault_va)) {
		*irq |= trn_sim_uring_complete(ur, DRM_TRN_STATUS_MMU_FAULT, 0,
					       0, fault_va);
		return true;
	}
	status = trn_sim_udesc_check(&d);
	if (status != DRM_TRN_STATUS_OK) {
		*irq |= trn_sim_uring_complete(ur, status, 0, d.cmd_va, 0);
		return true;
	}
	if (atomic_dec_if_positive(&sdev->hang_next) >= 0) {
		ring->state = TRN_SIM_RING_HUNG;
		return true;
	}
	ring->exec.sems = ur->sems;
	trn_sim_exec_start(&ring->exec, d.cmd_va, d.cmd_size);
	if (d.flags & DRM_TRN_USER_DESC_WAIT) {
		ur->wait_va = d.wait_va;
		ur->wait_value = d.wait_value;
		ring->state = TRN_SIM_RING_WAITING;
		atomic_inc(&sdev->waiting);
	} else {
		ring->state = TRN_SIM_RING_RUNNING;
	}
	return true;
}

/*
 * Whether a waiting job's value is reached; a read that faults ends the
 * job (and sets @irq as the completion says).
 */
static bool trn_sim_uring_wait_done(struct trn_sim_uring *ur, bool *irq)
{
	struct trn_sim_ring *ring = &ur->ring;
	struct trn_sim_dev *sdev = ring->core->sdev;
	u64 fault_va = 0;
	__le64 val;

	if (trn_sim_tlb_rw(sdev, &ring->tlb, ring->ctx, ur->wait_va, &val,
			   sizeof(val), false, &fault_va)) {
		atomic_dec(&sdev->waiting);
		trn_sim_exec_release(&ring->exec);
		*irq |= trn_sim_uring_complete(ur, DRM_TRN_STATUS_MMU_FAULT, 0,
					       0, fault_va);
		return false;
	}
	if (le64_to_cpu(val) < ur->wait_value)
		return false;
	atomic_dec(&sdev->waiting);
	ring->state = TRN_SIM_RING_RUNNING;
	return true;
}

/*
 * Give @ur one slice: jobs in order until the slice's budget is spent,
 * one blocks, or none is announced. Returns whether anything changed;
 * sets @irq when the core wants an interrupt.
 */
static bool trn_sim_uring_step(struct trn_sim_uring *ur, bool *irq)
{
	struct trn_sim_ring *ring = &ur->ring;
	struct trn_sim_exec *x = &ring->exec;
	long budget = TRN_SIM_SLICE_BUDGET;
	bool progress = false;
	enum trn_sim_run run;
	u64 retired;

	lockdep_assert_held(&ring->core->exec_lock);
	while (budget > 0 && !trn_sim_uring_stalled(ur)) {
		if (ring->state == TRN_SIM_RING_IDLE) {
			if (!trn_sim_uring_fetch(ur, irq))
				break;
			progress = true;
			budget -= TRN_SIM_JOB_COST;
			continue;
		}
		if (ring->state == TRN_SIM_RING_WAITING) {
			if (trn_sim_uring_cancelled(ur)) {
				*irq |= trn_sim_uring_end(ur,
							  DRM_TRN_STATUS_ABORTED);
				progress = true;
				continue;
			}
			if (!trn_sim_uring_wait_done(ur, irq)) {
				progress |= ring->state == TRN_SIM_RING_IDLE;
				break;
			}
			progress = true;
		}
		if (trn_sim_uring_cancelled(ur)) {
			/* At a command boundary, what it wrote kept. */
			*irq |= trn_sim_uring_end(ur, DRM_TRN_STATUS_ABORTED);
			progress = true;
			continue;
		}
		retired = x->retired;
		run = trn_sim_exec_run(x, &budget);
		if (run == TRN_SIM_RUN_BLOCKED) {
			ring->state = TRN_SIM_RING_BLOCKED;
			progress |= x->retired != retired;
			break;
		}
		ring->state = TRN_SIM_RING_RUNNING;
		progress = true;
		if (run != TRN_SIM_RUN_DONE)
			break;
		*irq |= trn_sim_uring_complete(ur, x->status, x->error_offset,
					       x->error_cmd_va, x->fault_va);
	}
	return progress;
}

/**
 * trn_sim_core_user_pass() - one round over an engine's user-mode queues
 * @core: the engine
 *
 * Gives each a slice, raising the interrupts the core asked for with none
 * of the engine's locks held.
 *
 * Return: whether anything changed.
 */
bool trn_sim_core_user_pass(struct trn_sim_core *core)
{
	struct trn_sim_dev *sdev = core->sdev;
	bool progress = false, done = false;
	struct trn_sim_uring *ur;
	u32 i, id;

	for (i = 0; ; i++) {
		bool irq = false, moved;

		mutex_lock(&core->exec_lock);
		if (i >= core->nr_urings) {
			mutex_unlock(&core->exec_lock);
			break;
		}
		ur = core->urings[i];
		id = ur->id;
		moved = trn_sim_uring_step(ur, &irq);
		/* Unmaps in its context wait no longer. */
		trn_sim_tlb_close(&ur->ring.tlb);
		/* Owed since a device reset. */
		irq |= ur->irq_pending;
		ur->irq_pending = false;
		if (moved) {
			core->busy_at = trn_sim_clock(sdev);
			core->repoll_jiffies = 1;
		}
		mutex_unlock(&core->exec_lock);

		if (irq)
			trn_device_uq_irq(sdev->tdev, id);
		progress |= moved;
		done |= moved;
		cond_resched();
	}
	if (done)
		trn_sim_wake_waiters(sdev);
	return progress;
}

/*
 * Whether one of the core's user-mode queues has something to do: a job
 * announced, or a waiting job whose value is reached. Under exec_lock.
 */
static bool trn_sim_urings_ready(struct trn_sim_core *core)
{
	struct trn_sim_uring *ur;
	u32 i;

	lockdep_assert_held(&core->exec_lock);
	for (i = 0; i < core->nr_urings; i++) {
		ur = core->urings[i];
		if (ur->ring.state == TRN_SIM_RING_IDLE &&
		    ur->ring.seqno <= trn_sim_uring_wptr(ur))
			return true;
		if (ur->ring.state == TRN_SIM_RING_WAITING) {
			__le64 val;
			u64 fault_va;

			/* A fault is something to do as well. */
			if (trn_sim_mmu_rw(core->sdev, ur->ring.ctx, ur->wait_va,
					   &val, sizeof(val), false, &fault_va) ||
			    le64_to_cpu(val) >= ur->wait_value)
				return true;
		}
	}
	return false;
}

static bool trn_sim_urings_waiting(struct trn_sim_core *core)
{
	u32 i;

	lockdep_assert_held(&core->exec_lock);
	for (i = 0; i < core->nr_urings; i++)
		if (core->urings[i]->ring.state == TRN_SIM_RING_WAITING)
			return true;
	return false;
}

/* Say in every doorbell page whether the engine is watching. */
static void trn_sim_urings_need_wakeup(struct trn_sim_core *core, bool need)
{
	struct drm_trn_doorbell *db;
	u32 i;

	lockdep_assert_held(&core->exec_lock);
	for (i = 0; i < core->nr_urings; i++) {
		db = core->urings[i]->doorbell;
		WRITE_ONCE(db->flags, need ? DRM_TRN_DOORBELL_NEED_WAKEUP : 0);
	}
	core->asleep = need;
}

/**
 * trn_sim_core_awake() - an engine starts a run: it watches its doorbells
 * @core: the engine
 */
void trn_sim_core_awake(struct trn_sim_core *core)
{
	mutex_lock(&core->exec_lock);
	if (core->asleep)
		trn_sim_urings_need_wakeup(core, false);
	core->busy_at = trn_sim_clock(core->sdev);
	mutex_unlock(&core->exec_lock);
}

/**
 * trn_sim_core_watch() - an engine found nothing to do: watch the
 * doorbells of its user-mode queues for a while before sleeping
 * @core: the engine
 *
 * Polls until doorbell_poll_us has passed since the last progress, a job
 * is announced, or the work item was queued again (a hardware ring's
 * doorbell, a reset). Before sleeping it asks for wake-ups
 * (%DRM_TRN_DOORBELL_NEED_WAKEUP) and looks once more, and arms the
 * memory-wait timer if a job waits for memory.
 *
 * Return: true if there is work: run again.
 */
bool trn_sim_core_watch(struct trn_sim_core *core)
{
	u64 poll_ns = (u64)READ_ONCE(doorbell_poll_us) * NSEC_PER_USEC;
	struct trn_sim_dev *sdev = core->sdev;
	unsigned long interval = 0;
	bool ready, waiting;

	for (;;) {
		mutex_lock(&core->exec_lock);
		if (!core->nr_urings) {
			/* A queue started from now on must ask for a wake-up. */
			core->asleep = true;
			mutex_unlock(&core->exec_lock);
			return false;
		}
		ready = trn_sim_urings_ready(core);
		if (ready || trn_sim_clock(sdev) - core->busy_at >= poll_ns)
			break;
		mutex_unlock(&core->exec_lock);
		/* Someone rang: the work item runs again anyway. */
		if (work_pending(&core->work))
			return false;
		cond_resched();
		cpu_relax();
	}
	if (!ready) {
		trn_sim_urings_need_wakeup(core, true);
		/* Pairs with the submitter's barrier between wptr and flags. */
		smp_mb();
		ready = trn_sim_urings_ready(core);
		if (ready)
			trn_sim_urings_need_wakeup(core, false);
	}
	waiting = !ready && trn_sim_urings_waiting(core);
	if (waiting) {
		interval = core->repoll_jiffies;
		core->repoll_jiffies = min(interval * 2,
					   msecs_to_jiffies(TRN_SIM_REPOLL_MAX_MS));
	}
	mutex_unlock(&core->exec_lock);
	if (waiting)
		queue_delayed_work(sdev->engine_wq, &core->repoll, interval);
	return ready;
}

/**
 * trn_sim_wake_waiters() - a job completed: engines with jobs waiting for
 * memory look again
 * @sdev: the device
 *
 * Any context.
 */
void trn_sim_wake_waiters(struct trn_sim_dev *sdev)
{
	u32 i;

	if (!atomic_read(&sdev->waiting))
		return;
	for (i = 0; i < sdev->num_cores; i++)
		trn_sim_core_kick(sdev->cores[i]);
}

static void trn_sim_repoll(struct work_struct *work)
{
	struct trn_sim_core *core = container_of(to_delayed_work(work),
						 struct trn_sim_core, repoll);

	trn_sim_core_kick(core);
}

/**
 * trn_sim_urings_reset() - a device reset: abandon user-mode queues' jobs
 * @core: the engine, its exec_lock held
 *
 * The job each queue fetched completes as aborted; the queues go on.
 */
void trn_sim_urings_reset(struct trn_sim_core *core)
{
	struct trn_sim_uring *ur;
	u32 i;

	lockdep_assert_held(&core->exec_lock);
	for (i = 0; i < core->nr_urings; i++) {
		ur = core->urings[i];
		if (ur->ring.state == TRN_SIM_RING_IDLE)
			continue;
		/* Raised by the next round, with no lock held. */
		ur->irq_pending |= trn_sim_uring_end(ur,
						     DRM_TRN_STATUS_ABORTED);
	}
}

/**
 * trn_sim_urings_init() - room for the user-mode queues of an engine
 * @core: the engine, new
 *
 * Return: 0 or -ENOMEM.
 */
int trn_sim_urings_init(struct trn_sim_core *core)
{
	INIT_DELAYED_WORK(&core->repoll, trn_sim_repoll);
	core->repoll_jiffies = 1;
	/* Not running: the first queue asks for a wake-up. */
	core->asleep = true;
	core->urings = kcalloc(TRN_SIM_USER_QUEUES, sizeof(*core->urings),
			       GFP_KERNEL);
	return core->urings ? 0 : -ENOMEM;
}

/**
 * trn_sim_urings_free() - free the user-mode queues an engine still has
 * @core: the engine, stopped
 */
void trn_sim_urings_free(struct trn_sim_core *core)
{
	u32 i;

	if (!core->urings)
		return;
	/* Queues the core did not stop (it should have). */
	for (i = 0; i < core->nr_urings; i++) {
		trn_sim_exec_release(&core->urings[i]->ring.exec);
		trn_sim_exec_fini(&core->urings[i]->ring.exec);
		kfree(core->urings[i]);
	}
	kfree(core->urings);
	core->urings = NULL;
}

/* The running queue @id, under &trn_sim_dev.uring_lock. */
static struct trn_sim_uring *trn_sim_uring_of(struct trn_sim_dev *sdev,
					      u32 id)
{
	lockdep_assert_held(&sdev->uring_lock);
	if (!sdev->urings || id >= TRN_SIM_USER_QUEUES)
		return NULL;
	return sdev->urings[id];
}

/*
 * The running queue @id, for uq_fini and uq_stop: the core calls neither
 * concurrently with uq_fini of the same queue, so it stays valid.
 */
static struct trn_sim_uring *trn_sim_uring_find(struct trn_sim_dev *sdev,
						u32 id)
{
	struct trn_sim_uring *ur;
	unsigned long flags;

	spin_lock_irqsave(&sdev->uring_lock, flags);
	ur = trn_sim_uring_of(sdev, id);
	spin_unlock_irqrestore(&sdev->uring_lock, flags);
	return ur;
}

/**
 * trn_sim_uq_init() - trn_hw_ops.uq_init of the simulator
 * @tdev: the device
 * @hw: the queue
 *
 * Return: 0; -EINVAL for a queue the device cannot run; -EBUSY if its
 * number runs already; -ENOMEM.
 */
int trn_sim_uq_init(struct trn_device *tdev, const struct trn_hw_uq *hw)
{
	struct trn_sim_dev *sdev = trn_device_hw_priv(tdev);
	struct trn_sim_uring *ur;
	struct trn_sim_core *core;
	unsigned long flags;
	int ret;

	if (!sdev->cores || !sdev->urings || hw->core >= sdev->num_cores ||
	    hw->id >= TRN_SIM_USER_QUEUES || !is_power_of_2(hw->entries))
		return -EINVAL;
	core = sdev->cores[hw->core];

	ur = kzalloc(sizeof(*ur), GFP_KERNEL);
	if (!ur)
		return -ENOMEM;
	ur->id = hw->id;
	ur->ring_va = hw->ring_va;
	ur->ring.core = core;
	ur->ring.index = U32_MAX;
	ur->ring.entries = hw->entries;
	ur->ring.ctx = hw->ctx;
	/* The context outlives its queues: look its semaphores up once. */
	ur->sems = trn_sim_ctx_sems(sdev, hw->ctx, core->id);
	ur->ring.seqno = 1;
	ur->ring.exec.ops = &trn_sim_ring_exec_ops;
	ur->ring.exec.scratch = &core->scratch;
	ur->irq_at = U64_MAX;
	ur->doorbell = trn_sim_dma_virt(sdev, hw->doorbell_dma,
					sizeof(*ur->doorbell));
	ur->page = trn_sim_dma_virt(sdev, hw->page_dma, sizeof(*ur->page));
	ur->state = trn_sim_dma_virt(sdev, hw->state_dma, sizeof(*ur->state));
	if (!ur->doorbell || !ur->page || !ur->state) {
		ret = -EINVAL;
		goto err_free;
	}
	ret = trn_sim_exec_init(&ur->ring.exec);
	if (ret)
		goto err_free;

	/* What the device reports starts from nothing. */
	memset(ur->state, 0, sizeof(*ur->state));
	mutex_lock(&core->exec_lock);
	spin_lock_irqsave(&sdev->uring_lock, flags);
	if (sdev->urings[hw->id]) {
		ret = -EBUSY;
	} else {
		sdev->urings[hw->id] = ur;
		spin_lock(&core->lock);
		core->urings[core->nr_urings++] = ur;
		spin_unlock(&core->lock);
	}
	spin_unlock_irqrestore(&sdev->uring_lock, flags);
	/* A sleeping engine asks this queue for wake-ups too. */
	WRITE_ONCE(ur->doorbell->flags,
		   core->asleep ? DRM_TRN_DOORBELL_NEED_WAKEUP : 0);
	mutex_unlock(&core->exec_lock);
	if (ret)
		goto err_exec;
	return 0;

err_exec:
	trn_sim_exec_fini(&ur->ring.exec);
err_free:
	kfree(ur);
	return ret;
}

/**
 * trn_sim_uq_fini() - trn_hw_ops.uq_fini of the simulator
 * @tdev: the device
 * @id: the queue
 *
 * Once this returns the engine never looks at the queue again; a job it
 * ran is abandoned, nothing of it written back.
 */
void trn_sim_uq_fini(struct trn_device *tdev, u32 id)
{
	struct trn_sim_dev *sdev = trn_device_hw_priv(tdev);
	struct trn_sim_uring *ur = trn_sim_uring_find(sdev, id);
	struct trn_sim_core *core;
	unsigned long flags;
	u32 i;

	if (!ur)
		return;
	core = ur->ring.core;

	/* The engine touches a queue only under exec_lock: wait for it. */
	mutex_lock(&core->exec_lock);
	spin_lock_irqsave(&sdev->uring_lock, flags);
	sdev->urings[id] = NULL;
	spin_lock(&core->lock);
	for (i = 0; i < core->nr_urings; i++) {
		if (core->urings[i] == ur) {
			core->urings[i] = core->urings[--core->nr_urings];
			core->urings[core->nr_urings] = NULL;
			break;
		}
	}
	spin_unlock(&core->lock);
	spin_unlock_irqrestore(&sdev->uring_lock, flags);
	if (ur->ring.state == TRN_SIM_RING_WAITING)
		atomic_dec(&sdev->waiting);
	trn_sim_exec_release(&ur->ring.exec);
	mutex_unlock(&core->exec_lock);

	trn_sim_exec_fini(&ur->ring.exec);
	kfree(ur);
}

/**
 * trn_sim_uq_wake() - trn_hw_ops.uq_wake of the simulator
 * @tdev: the device
 * @id: the queue
 *
 * Any context.
 */
void trn_sim_uq_wake(struct trn_device *tdev, u32 id)
{
	struct trn_sim_dev *sdev = trn_device_hw_priv(tdev);
	struct trn_sim_uring *ur;
	unsigned long flags;

	spin_lock_irqsave(&sdev->uring_lock, flags);
	ur = trn_sim_uring_of(sdev, id);
	if (ur)
		trn_sim_core_kick(ur->ring.core);
	spin_unlock_irqrestore(&sdev->uring_lock, flags);
}

/**
 * trn_sim_uq_irq_at() - trn_hw_ops.uq_irq_at of the simulator
 * @tdev: the device
 * @id: the queue
 * @seqno: interrupt once this job completed; U64_MAX: never
 *
 * Any context.
 */
void trn_sim_uq_irq_at(struct trn_device *tdev, u32 id, u64 seqno)
{
	struct trn_sim_dev *sdev = trn_device_hw_priv(tdev);
	struct trn_sim_uring *ur;
	unsigned long flags;

	spin_lock_irqsave(&sdev->uring_lock, flags);
	ur = trn_sim_uring_of(sdev, id);
	if (ur) {
		WRITE_ONCE(ur->irq_at, seqno);
		/* Before the caller looks at the completion again. */
		smp_mb();
	}
	spin_unlock_irqrestore(&sdev->uring_lock, flags);
}

/**
 * trn_sim_uq_stop() - trn_hw_ops.uq_stop of the simulator
 * @tdev: the device
 * @id: the queue
 * @abandon: abandon the job it runs now (%DRM_TRN_STATUS_TIMEOUT)
 *
 * From now on every job completes as aborted without running; a job
 * running ends at its next command boundary, or now with @abandon.
 */
void trn_sim_uq_stop(struct trn_device *tdev, u32 id, bool abandon)
{
	struct trn_sim_dev *sdev = trn_device_hw_priv(tdev);
	struct trn_sim_uring *ur = trn_sim_uring_find(sdev, id);
	struct trn_sim_core *core;
	bool irq = false;

	if (!ur)
		return;
	core = ur->ring.core;

	/* The queue stays until uq_fini, which only the caller makes. */
	mutex_lock(&core->exec_lock);
	WRITE_ONCE(ur->cancelled, true);
	if (abandon && ur->ring.state != TRN_SIM_RING_IDLE)
		irq = trn_sim_uring_end(ur, DRM_TRN_STATUS_TIMEOUT);
	mutex_unlock(&core->exec_lock);
	if (irq)
		trn_device_uq_irq(tdev, id);
	trn_sim_core_kick(core);
}
