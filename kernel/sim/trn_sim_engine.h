/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (c) 2026 The trn authors
 *
 * The engines of the simulated device, as trn_sim_engine.c (the engine of
 * each NeuronCore and its hardware rings) and trn_sim_uq.c (user-mode
 * queues, which the same engines run) share them.
 */
#ifndef __TRN_SIM_ENGINE_H__
#define __TRN_SIM_ENGINE_H__

#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "../trn_hw.h"
#include "trn_sim.h"
#include "trn_sim_isa.h"

/* Rounds over its rings one run of an engine's work item makes at most. */
#define TRN_SIM_PASSES		16

/**
 * enum trn_sim_ring_state - what a ring's engine is doing with it
 * @TRN_SIM_RING_IDLE: no job fetched; the next is &trn_sim_ring.seqno
 * @TRN_SIM_RING_RUNNING: a job is fetched and can run
 * @TRN_SIM_RING_BLOCKED: the job waits for a semaphore
 * @TRN_SIM_RING_HUNG: the job hangs (debugfs hang_next) until a reset
 * @TRN_SIM_RING_LATE: the job stalls (debugfs late_next) until a reset,
 *                     which finds it just finished
 * @TRN_SIM_RING_WAITING: a user-mode queue's job waits for its
 *                        descriptor's memory value before it starts
 */
enum trn_sim_ring_state {
	TRN_SIM_RING_IDLE,
	TRN_SIM_RING_RUNNING,
	TRN_SIM_RING_BLOCKED,
	TRN_SIM_RING_HUNG,
	TRN_SIM_RING_LATE,
	TRN_SIM_RING_WAITING,
};

/**
 * struct trn_sim_ring - one hardware ring, as the device sees it
 * @core: the engine serving it
 * @index: ring number, core * queues_per_core + queue
 * @entries: descriptors in the ring, a power of two
 * @descs: the descriptors (the core's coherent memory)
 * @status: the completion record (the core's coherent memory)
 * @tail: the doorbell: jobs up to this sequence number are valid;
 *        under &trn_sim_core.lock
 * @paused: a reset stopped the ring: no job is fetched until the next
 *          doorbell; under &trn_sim_core.lock
 * @seqno: the job running, or the next to fetch
 * @completed: the latest job finished or abandoned
 * @state: &enum trn_sim_ring_state
 * @ctx: MMU context of the job running
 * @exec: the job's execution state
 * @tlb: the translations its accesses keep during one slice (the engine
 *       closes it at the end of every slice)
 *
 * All but @tail are under &trn_sim_core.exec_lock. A user-mode queue is a
 * &struct trn_sim_uring around one of these, without @descs, @status and
 * @tail.
 */
struct trn_sim_ring {
	struct trn_sim_core *core;
	u32 index;
	u32 entries;
	struct trn_hw_desc *descs;
	struct trn_hw_ring_status *status;
	u64 tail;
	bool paused;
	u64 seqno;
	u64 completed;
	enum trn_sim_ring_state state;
	u32 ctx;
	struct trn_sim_exec exec;
	struct trn_sim_tlb tlb;
};

/**
 * struct trn_sim_uring - a user-mode queue, as the device sees it
 * @ring: its execution state, as a hardware ring's (@ring.ctx is the
 *        queue's context, fixed)
 * @id: the device's number of the queue
 * @ring_va: device address of its descriptors, read through the MMU
 * @doorbell: its doorbell page (a host page userspace writes)
 * @page: its completion record, which the device writes
 * @state: the core's report page, which the device writes
 * @sems: the semaphores of the queue's context on its core
 * @irq_at: interrupt once this job completes (U64_MAX: not asked); set
 *          by uq_irq_at, taken back with cmpxchg by the engine when it
 *          raises the interrupt
 * @cancelled: every job from now on completes as aborted; set once by
 *             uq_stop
 * @wait_va: the fetched job's memory wait (%TRN_SIM_RING_WAITING)
 * @wait_value: the value it waits for
 * @failed: failures written to @page
 * @ok: jobs that completed successfully
 * @nr_failed: jobs that failed
 * @faults: jobs that failed with an MMU fault
 * @busy_ns: device time of its jobs
 * @start_ns: when the fetched job started
 * @irq_pending: an interrupt is owed (a device reset completed a job)
 *
 * All but @irq_at and @cancelled are under &trn_sim_core.exec_lock.
 */
struct trn_sim_uring {
	struct trn_sim_ring ring;
	u32 id;
	u64 ring_va;
	u64 *sems;
	struct drm_trn_doorbell *doorbell;
	struct drm_trn_queue_status_page *page;
	struct trn_hw_uq_state *state;
	u64 irq_at;
	bool cancelled;
	u64 wait_va;
	u64 wait_value;
	u64 failed;
	u64 ok;
	u64 nr_failed;
	u64 faults;
	u64 busy_ns;
	u64 start_ns;
	bool irq_pending;
};

/**
 * struct trn_sim_core - the engine of one NeuronCore
 * @sdev: the device
 * @id: the NeuronCore's number
 * @work: runs the engine on &trn_sim_dev.engine_wq
 * @exec_lock: held by the engine while it works on a ring, and by
 *             ring_init, ring_fini and ring_reset to exclude it
 * @lock: doorbell state, taken with interrupts off, inside @exec_lock
 * @stopped: the device is going away; no more queueing of @work
 * @scratch: bounce buffer of the rings' executions
 * @urings: the user-mode queues the core runs, @nr_urings of them
 * @nr_urings: entries of @urings
 * @busy_at: device clock when a user-mode queue last made progress
 * @asleep: the engine stopped watching the doorbells of its user-mode
 *          queues (they say so: %DRM_TRN_DOORBELL_NEED_WAKEUP)
 * @repoll: runs the engine again while user-mode jobs wait for memory
 *          that may change without a doorbell
 * @repoll_jiffies: the current interval of @repoll, doubling while
 *                  nothing changes
 * @rings: the core's rings by queue number, NULL where not initialised
 */
struct trn_sim_core {
	struct trn_sim_dev *sdev;
	u32 id;
	struct work_struct work;

	/*
	 * Protects the execution state of every ring of the core (all of
	 * struct trn_sim_ring but tail, user-mode queues included), @scratch,
	 * @urings, @busy_at, @asleep, @repoll_jiffies, and the semaphores of every
	 * context on this core; @rings and @urings are written under both
	 * locks.
	 */
	struct mutex exec_lock;

	/* Protects the rings' tail, @stopped; @rings may be read under it. */
	spinlock_t lock;
	bool stopped;

	struct trn_sim_scratch scratch;
	struct trn_sim_uring **urings;
	u32 nr_urings;
	u64 busy_at;
	bool asleep;
	struct delayed_work repoll;
	unsigned long repoll_jiffies;
	struct trn_sim_ring *rings[];
};

/* trn_sim_engine.c */
u64 trn_sim_clock(struct trn_sim_dev *sdev);
void trn_sim_core_kick(struct trn_sim_core *core);
void *trn_sim_dma_virt(struct trn_sim_dev *sdev, dma_addr_t addr,
		       size_t size);
extern const struct trn_sim_exec_ops trn_sim_ring_exec_ops;

/* trn_sim_uq.c */
bool trn_sim_core_user_pass(struct trn_sim_core *core);
bool trn_sim_core_watch(struct trn_sim_core *core);
void trn_sim_core_awake(struct trn_sim_core *core);
void trn_sim_urings_reset(struct trn_sim_core *core);
void trn_sim_urings_free(struct trn_sim_core *core);
int trn_sim_urings_init(struct trn_sim_core *core);
void trn_sim_wake_waiters(struct trn_sim_dev *sdev);

#endif /* __TRN_SIM_ENGINE_H__ */
