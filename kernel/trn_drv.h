/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (c) 2026 The trn authors
 *
 * Private state of the trn core, shared by its files.
 */
#ifndef __TRN_DRV_H__
#define __TRN_DRV_H__

#include <linux/atomic.h>
#include <linux/dma-direction.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <drm/drm_device.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_mm.h>
#include <drm/gpu_scheduler.h>

#include <uapi/drm/trn_accel.h>

#include "trn_hw.h"

#define TRN_DRIVER_NAME		"trn"
#define TRN_DRIVER_DESC		"Trainium-class ML accelerators"
#define TRN_DRIVER_MAJOR	1
#define TRN_DRIVER_MINOR	0
#define TRN_DRIVER_PATCHLEVEL	0

struct dmem_cgroup_region;
struct trn_coredump;
struct trn_core_kobj;
struct dmem_cgroup_pool_state;
struct kmem_cache;
struct task_struct;
struct user_struct;
struct workqueue_struct;

/* A descriptor the device has not written back yet. */
#define TRN_DESC_STATUS_PENDING	0xffffffffU

/* Job statuses, DRM_TRN_STATUS_OK included. */
#define TRN_STATUS_COUNT	(DRM_TRN_STATUS_DEVICE_ERROR + 1)

/* Events a uevent tells about (TRN_EVENT=...), as bits of health.pending. */
enum trn_event {
	TRN_EVENT_RESET,
	TRN_EVENT_FAULT,
	TRN_EVENT_BAN,
	TRN_EVENT_HEALTH,
	TRN_EVENT_COUNT
};

enum trn_health {
	TRN_HEALTH_OK,
	TRN_HEALTH_DEGRADED,
	TRN_HEALTH_FAILED,
};

/* Trouble of the device itself, which degrades it for a while. */
enum trn_trouble {
	TRN_TROUBLE_DEVICE_RESET,
	TRN_TROUBLE_DEVICE_ERROR,
};

/**
 * struct trn_device - one accelerator, as seen by the core
 * @drm: the DRM device; its lifetime is the lifetime of this structure
 * @desc: the backend's description, copied at registration and immutable
 * @ops: the backend's hardware operations
 * @hw_priv: the backend's private data, passed back through the ops
 * @hbm_lock: protects @hbm_mm, @hbm_used and @hbm_stack_used
 * @hbm_mm: allocator of device memory; free memory always reads as zero
 * @hbm_used: bytes of device memory allocated
 * @hbm_stack_used: bytes allocated in each HBM stack, one count per stack of
 *                  &trn_device_desc.hbm_stacks
 * @dmem: the device memory as a region of the dmem cgroup controller, or
 *        NULL where the kernel has none
 * @host_pinned: bytes of host memory pinned for the device
 * @contexts: MMU context number -> &struct trn_ctx; allocates the numbers,
 *            and its lock orders fault reports against teardown
 * @import_lock: protects @imports and @dma_bos
 * @imports: buffers imported from other drivers' dma-bufs, so that every
 *           context importing one dma-buf shares one object (and one DMA
 *           mapping of it)
 * @dma_bos: host and user buffers, whose DMA side goes when the device
 *           does (trn_gem_unplug())
 * @rings: the hardware rings, num_cores * queues_per_core of them
 * @num_rings: entries of @rings
 * @next_ring: per NeuronCore, spreads new queues over its rings
 * @job_timeout_ms: how long a job may run before its ring is reset
 * @reset_wq: ordered workqueue running every ring's timeout handler, so
 *            that a device reset excludes the other rings' ring resets
 * @wedged: a device reset failed: jobs fail with -EIO from now on
 * @stats: job counters, for sysfs; @stats.failed_by counts failed jobs by
 *         their &enum drm_trn_job_status; @stats.coredumps counts the dumps
 *         devcoredump kept, @stats.coredumps_dropped the hangs that got
 *         none (one was still being written, devcoredump held an older
 *         one or refused it, or no memory)
 * @health: what operators are told (trn_health.c): @health.work sends the
 *          uevents of the %TRN_EVENT_* bits in @health.pending, at most
 *          every few jiffies after @health.sent; @health.trouble_at (0:
 *          never) and @health.trouble are the latest device trouble;
 *          @health.lost is set for good once the backend reported that
 *          the device stopped answering (trn_device_error());
 *          @health.reported is the state the last health uevent gave
 *          (only the work touches it)
 * @cores: per NeuronCore, its share of @stats (sysfs cores/<N>/)
 * @core_kobjs: the cores/<N>/ directories, while the node is registered
 * @cores_kobj: the cores/ directory
 * @coredump: post-mortem dumps (trn_coredump.c): @coredump.pending is the
 *            one snapshot waiting for @coredump.work to write it (NULL:
 *            none), set and taken with xchg(); @coredump.writer is the
 *            task in dev_coredumpm() on behalf of @coredump.work (NULL
 *            otherwise; read by the report's free callback), and
 *            @coredump.refused says devcoredump freed the report there
 *            (only that task touches it)
 * @uq_lock: serialises starting, stopping and removing user-mode queues
 *           on the device (trn_uqueue.c)
 * @uqs: the device's user-mode queue number -> &struct trn_uq while the
 *       device runs it; its lock (interrupts off) is held while an
 *       interrupt of the queue is handled
 */
struct trn_device {
	struct drm_device drm;
	struct trn_device_desc desc;
	const struct trn_hw_ops *ops;
	void *hw_priv;

	/* Protects hbm_mm, hbm_used and hbm_stack_used. */
	struct mutex hbm_lock;
	struct drm_mm hbm_mm;
	u64 hbm_used;
	u64 *hbm_stack_used;
	struct dmem_cgroup_region *dmem;
	atomic64_t host_pinned;

	struct xarray contexts;

	/*
	 * Protects imports (buffers of other drivers, for reuse) and dma_bos
	 * (host and user buffers): the buffers whose DMA side goes when the
	 * device does (trn_gem_unplug()).
	 */
	struct mutex import_lock;
	struct list_head imports;
	struct list_head dma_bos;

	struct trn_ring *rings;
	u32 num_rings;
	atomic_t *next_ring;
	u32 job_timeout_ms;
	/* Every ring's timeout handler, one at a time: see trn_device_reset(). */
	struct workqueue_struct *reset_wq;
	bool wedged;
	struct {
		atomic64_t submitted;
		atomic64_t completed;
		atomic64_t failed;
		atomic64_t resets;
		atomic64_t device_resets;
		atomic64_t bans;
		atomic64_t mmu_faults;
		atomic64_t failed_by[TRN_STATUS_COUNT];
		atomic64_t coredumps;
		atomic64_t coredumps_dropped;
	} stats;
	struct trn_core_stats *cores;
	struct trn_core_kobj **core_kobjs;
	struct kobject *cores_kobj;
	struct {
		struct trn_coredump *pending;
		struct work_struct work;
		struct task_struct *writer;
		bool refused;
	} coredump;
	struct {
		struct delayed_work work;
		unsigned long pending;
		unsigned long sent;
		atomic64_t trouble_at;
		u32 trouble;
		bool lost;
		enum trn_health reported;
	} health;
	/* Serialises starting, stopping and removing user-mode queues. */
	struct mutex uq_lock;
	struct xarray uqs;
};

/**
 * struct trn_core_stats - what one NeuronCore did, for sysfs cores/<N>/
 * @completed: jobs that ran on it and succeeded
 * @failed: jobs that ran (or were queued) on it and failed
 * @timed_out: jobs on it abandoned after their timeout
 * @busy_ns: device time its jobs ran, in nanoseconds
 */
struct trn_core_stats {
	atomic64_t completed;
	atomic64_t failed;
	atomic64_t timed_out;
	atomic64_t busy_ns;
};

/* Retired jobs a ring remembers for post-mortem dumps. */
#define TRN_RING_HISTORY	8

/**
 * struct trn_ring_record - a retired job, as a post-mortem dump shows it
 * @ring_seqno: its ring sequence number
 * @seqno: its number on its queue
 * @ctx: its context
 * @queue: its queue's number in the context
 * @status: its &enum drm_trn_job_status
 * @run_ns: device time it ran
 */
struct trn_ring_record {
	u64 ring_seqno;
	u64 seqno;
	u32 ctx;
	u32 queue;
	u32 status;
	u64 run_ns;
};

/**
 * struct trn_ring - a hardware queue of a NeuronCore and its scheduler
 * @tdev: the device
 * @sched: the scheduler feeding the ring; one job takes one descriptor
 * @index: ring number, core * queues_per_core + queue
 * @core: the NeuronCore
 * @entries: descriptors in the ring, a power of two
 * @desc: the descriptors, in DMA-coherent memory
 * @desc_dma: their DMA address
 * @status: the completion record the device writes
 * @status_dma: its DMA address
 * @fence_context: fence context of the ring's hardware fences
 * @fence_lock: lock of those fences
 * @lock: protects @last_seqno, @pending, @resetting, @history,
 *        @history_next and the descriptors
 * @last_seqno: ring sequence number of the latest job written
 * @pending: jobs on the ring, oldest first
 * @resetting: a timeout is being handled: no doorbells meanwhile
 * @history: the latest retired jobs, @history_next % TRN_RING_HISTORY the
 *           slot of the next one
 * @history_next: jobs retired since the ring was set up
 * @name: scheduler name
 */
struct trn_ring {
	struct trn_device *tdev;
	struct drm_gpu_scheduler sched;
	u32 index;
	u32 core;
	u32 entries;
	struct trn_hw_desc *desc;
	dma_addr_t desc_dma;
	struct trn_hw_ring_status *status;
	dma_addr_t status_dma;
	u64 fence_context;
	/* Lock of the ring's hardware fences (dma_fence.lock). */
	spinlock_t fence_lock;

	/* Protects the fields below and the descriptors. */
	spinlock_t lock;
	u64 last_seqno;
	struct list_head pending;
	bool resetting;
	struct trn_ring_record history[TRN_RING_HISTORY];
	u64 history_next;

	char name[24];
};

/**
 * struct trn_usage - what one open file is charged for
 * @refcount: the file holds one reference, every buffer charged another,
 *            so that a buffer that outlives its creator's file (shared
 *            through a dma-buf) is uncharged when it is freed
 * @bos: buffers charged
 * @hbm_bytes: device memory charged
 * @pinned_bytes: host memory charged (host, user and imported buffers)
 *
 * A buffer is charged to the file that created it (for an imported
 * buffer: that first imported it) from its creation until it is freed,
 * whoever holds it last.
 */
struct trn_usage {
	struct kref refcount;
	atomic64_t bos;
	atomic64_t hbm_bytes;
	atomic64_t pinned_bytes;
};

/**
 * struct trn_ctx - a context: the device address space of an open file
 * @refcount: the file holds one reference, every queue and every mapping
 *            another; the device context lives until nothing of the file
 *            can still touch the device, so closing need not wait for it
 * @tdev: the device, referenced (drm_dev_get()), its backend module pinned
 * @id: number of the context's address space in the device MMU
 * @pid: thread group of the process that opened the file
 * @comm: its command name then, for post-mortem dumps
 * @va_lock: protects @va_mm and serialises MMU updates of this context
 * @va_mm: allocator of the context's device virtual addresses
 * @engine_ns: per NeuronCore, device time the context's jobs ran
 * @jobs_completed: jobs of the context that succeeded
 * @jobs_failed: jobs of the context that failed
 * @mmu_faults: device accesses of this context that faulted
 * @last_fault_va: device address of the latest of them
 * @bans: times the context was banned; a queue created before the latest
 *        ban is banned (&trn_queue.bans)
 * @faults: jobs that faulted, modulo TRN_BAN_FAULTS
 * @closed: the file is closed: every job of the context is cancelled
 * @on_hw: jobs of the context on the rings (run, not retired)
 * @cancel_work: flags the context's cancelled jobs on the rings, for
 *               paths that cannot take the rings' locks themselves
 */
struct trn_ctx {
	struct kref refcount;
	struct trn_device *tdev;
	u32 id;
	pid_t pid;
	char comm[TASK_COMM_LEN];

	/* Protects va_mm; serialises MMU updates of the context. */
	struct mutex va_lock;
	struct drm_mm va_mm;

	atomic64_t *engine_ns;
	atomic64_t jobs_completed;
	atomic64_t jobs_failed;
	atomic64_t mmu_faults;
	atomic64_t last_fault_va;

	atomic_t bans;
	atomic_t faults;
	bool closed;
	atomic_t on_hw;
	struct work_struct cancel_work;
};

/*
 * MMU faults that ban a context (trn_ctx.c). A fault ends only the faulting
 * job, so it costs the others nothing; a context that keeps faulting is
 * broken or probing, and after this many it loses its queues.
 */
#define TRN_BAN_FAULTS	16

/* Timeline points a queue keeps to start collections from (trn_job.c). */
#define TRN_QUEUE_GC_POINTS	16

/**
 * struct trn_queue - a queue of jobs of one context on one ring
 * @refcount: the file's queue table holds one reference, each job another
 * @ctx: the context, referenced
 * @ring: the ring its jobs run on
 * @id: its number in the context's queue table
 * @bans: &trn_ctx.bans when the queue was created; the queue is banned
 *        once the context's count moves past it
 * @destroyed: destroyed or its file closed: its unfinished jobs are
 *             cancelled
 * @entity: the scheduler entity; jobs run in the order it got them
 * @syncobj: timeline syncobj, point N signals with job N
 * @status_bo: host buffer holding the completion record userspace maps
 *              (&struct drm_trn_queue_status_page)
 * @status_handle: its handle in the creating file
 * @space: submitters waiting for room below the queue's depth
 * @release_work: destroys the entity once the last reference is gone
 * @submit_lock: protects @submitted and the @gc_* fields, and orders
 *               pushes to @entity with their numbers
 * @submitted: number of the latest job submitted
 * @gc_points: references to points of @syncobj's timeline, oldest first
 *             from @gc_first, where collections of signalled points start
 * @gc_first: index of the oldest of @gc_points
 * @gc_count: how many of @gc_points are held
 * @status_lock: protects @completed, @failed, @last_failure, @state and
 *               @resets, and orders the writes to the completion record
 * @completed: number of the latest job finished
 * @failed: jobs that failed
 * @last_failure: the latest failed job's outcome
 * @state: DRM_TRN_QUEUE_* bits (but %DRM_TRN_QUEUE_BANNED, from @bans)
 * @resets: resets its jobs caused
 * @uq: the user-mode side of a user-mode queue, NULL otherwise; such a
 *      queue has no @ring, @entity or jobs, and only @ctx, @id, @bans,
 *      @syncobj, @status_bo, @status_handle, @refcount, @state and
 *      @resets of the rest
 */
struct trn_queue {
	struct kref refcount;
	struct trn_ctx *ctx;
	struct trn_ring *ring;
	u32 id;
	int bans;
	bool destroyed;
	struct drm_sched_entity entity;
	struct drm_syncobj *syncobj;
	struct trn_bo *status_bo;
	u32 status_handle;
	wait_queue_head_t space;
	struct work_struct release_work;

	/* Protects submitted and gc_*; orders pushes to entity. */
	struct mutex submit_lock;
	u64 submitted;
	struct dma_fence *gc_points[TRN_QUEUE_GC_POINTS];
	u32 gc_first;
	u32 gc_count;

	/* Protects the fields below; orders the completion record's writes. */
	spinlock_t status_lock;
	u64 completed;
	u64 failed;
	struct {
		u64 seqno;
		u64 error_offset;
		u64 error_cmd_va;
		u64 fault_va;
		u32 error;
		u32 status;
	} last_failure;
	u32 state;
	u32 resets;

	struct trn_uq *uq;
};

/**
 * struct trn_uq - the user-mode side of a queue (trn_uqueue.c)
 * @queue: its queue
 * @tdev: the device
 * @hw_id: the device's number for it, its index in &trn_device.uqs
 * @core: the NeuronCore that runs it
 * @entries: descriptors in its ring
 * @ring_bo: the ring, a host buffer the caller maps writable and the
 *           device reads through the MMU
 * @ring_map: the ring's mapping in the context, referenced for as long
 *            as the device may read it
 * @ring_handle: the ring's handle in the creating file
 * @doorbell_bo: the doorbell page, a host buffer the caller maps writable
 * @doorbell_handle: its handle in the creating file
 * @state: what the device reports (&struct trn_hw_uq_state), coherent
 *         memory of the backend's device; NULL once freed at unplug
 * @state_dma: its DMA address
 * @fence_context: fence context of the queue's fences
 * @id_held: @hw_id is the queue's in &trn_device.uqs (reserved or
 *           published); under &trn_device.uq_lock once running
 * @running: the device runs the queue (uq_init done, uq_fini not yet);
 *           under &trn_device.uq_lock
 * @stopped: uq_stop was called (a ban or a hang); under
 *           &trn_device.uq_lock
 * @lock: protects the fields below
 * @fences: pending fences, by ascending job number
 * @nr_fences: entries of @fences
 * @failed_all: the device stopped or is gone: new fences fail at once
 *              with @fail_error
 * @fail_error: the errno new fences fail with
 * @progress_seqno: completed_seqno when the watchdog last saw it move
 * @progress_at: when that was, in jiffies
 * @seen: counters of @state already accounted for (trn_uq_harvest())
 * @watchdog: bounds the time of pending fences (trn_uq_watchdog())
 * @timeline_lock: serialises points added to the queue's syncobj
 * @timeline_point: the latest point added there
 */
struct trn_uq {
	struct trn_queue *queue;
	struct trn_device *tdev;
	u32 hw_id;
	u32 core;
	u32 entries;
	struct trn_bo *ring_bo;
	struct trn_mapping *ring_map;
	u32 ring_handle;
	struct trn_bo *doorbell_bo;
	u32 doorbell_handle;
	struct trn_hw_uq_state *state;
	dma_addr_t state_dma;
	u64 fence_context;
	bool id_held;
	bool running;
	bool stopped;

	/* Protects the fields below. */
	spinlock_t lock;
	struct list_head fences;
	u32 nr_fences;
	bool failed_all;
	int fail_error;
	u64 progress_seqno;
	unsigned long progress_at;
	struct {
		u64 ok;
		u64 failed;
		u64 faults;
		u64 busy_ns;
		u64 failures;
	} seen;
	struct delayed_work watchdog;

	/* Serialises points added to the queue's timeline syncobj. */
	struct mutex timeline_lock;
	u64 timeline_point;
};

/**
 * struct trn_job_out - a syncobj point a job signals
 * @syncobj: the syncobj
 * @chain: preallocated timeline node, NULL for a binary syncobj, until
 *         the job is armed and the syncobj takes it
 * @point_fence: once armed, a reference to that node in the timeline (if
 *               it was still there), so that a failure reaches the point
 * @point: the point, 0 for a binary syncobj
 */
struct trn_job_out {
	struct drm_syncobj *syncobj;
	struct dma_fence_chain *chain;
	struct dma_fence *point_fence;
	u64 point;
};

/* Buffers a job lists without a separate allocation (most list one). */
#define TRN_JOB_INLINE_BOS	4

/**
 * struct trn_job - one submitted job
 * @base: the scheduler job
 * @queue: its queue, referenced
 * @ring: the queue's ring
 * @seqno: its number on the queue
 * @cmd_va: device address of its commands
 * @cmd_size: bytes of commands
 * @bos: buffers it keeps alive, referenced: @bos_inline or an allocation
 * @maps: the mappings of @bos in the job's context, referenced, so that
 *        closing a handle never unmaps what a job still uses
 * @bos_inline: room for the first TRN_JOB_INLINE_BOS buffers
 * @maps_inline: room for their mappings
 * @bo_count: entries of @bos and @maps
 * @outs: syncobj points it signals
 * @out_count: entries of @outs
 * @queue_chain: preallocated node for the queue's own syncobj; once armed,
 *               a reference to it in the queue's timeline
 * @hw_fence: preallocated hardware fence, until run_job initialises it
 * @free_node: entry in trn_job.c's list of jobs to free
 * @link: entry in &trn_ring.pending while on the ring
 * @ring_seqno: ring sequence number, once on the ring
 * @cancel_error: the job is cancelled: its descriptor carries
 *                %TRN_HW_DESC_CANCEL and it fails with this errno
 * @armed: the job has its scheduler fence and is in the syncobjs
 * @dma_sync: one of @bos needs DMA syncs (trn_bo_dma_begin())
 * @timed_out: the job was abandoned by a ring reset after its timeout
 * @dma_begun: its buffers were handed to the device (trn_bo_dma_begin())
 * @retired: the job's outcome was recorded (it ran, or could not run)
 * @hw: what the device reported, and the hardware fence once initialised
 */
struct trn_job {
	struct drm_sched_job base;
	struct trn_queue *queue;
	struct trn_ring *ring;
	u64 seqno;
	u64 cmd_va;
	u32 cmd_size;
	struct drm_gem_object **bos;
	struct trn_mapping **maps;
	struct drm_gem_object *bos_inline[TRN_JOB_INLINE_BOS];
	struct trn_mapping *maps_inline[TRN_JOB_INLINE_BOS];
	u32 bo_count;
	u32 out_count;
	struct trn_job_out *outs;
	struct dma_fence_chain *queue_chain;
	struct dma_fence *hw_fence;
	struct llist_node free_node;

	struct list_head link;
	u64 ring_seqno;
	int cancel_error;
	bool armed;
	bool dma_sync;
	bool timed_out;
	bool dma_begun;
	bool retired;
	struct {
		struct dma_fence *fence;
		u32 status;
		u64 error_offset;
		u64 error_cmd_va;
		u64 fault_va;
		u64 start_ns;
		u64 end_ns;
	} hw;
};

/**
 * struct trn_file - one open file
 * @tdev: the device
 * @ctx: its context (address space), referenced
 * @usage: what it is charged for, referenced
 * @queue_lock: protects @queues against concurrent create and destroy
 * @queues: queue number -> &struct trn_queue
 */
struct trn_file {
	struct trn_device *tdev;
	struct trn_ctx *ctx;
	struct trn_usage *usage;

	/* Serialises queue creation and destruction. */
	struct mutex queue_lock;
	struct xarray queues;
};

/**
 * struct trn_mapping - a buffer object mapped into one context
 * @refcount: the handle of the context holds one reference, and every job
 *            of the context that lists the buffer another; the last one
 *            unmaps
 * @link: entry in &trn_bo.mappings while the context has a handle
 * @ctx: the context, referenced
 * @bo: the buffer, referenced
 * @node: the virtual range, which ends with an unmapped guard page
 */
struct trn_mapping {
	struct kref refcount;
	struct list_head link;
	struct trn_ctx *ctx;
	struct trn_bo *bo;
	struct drm_mm_node node;
};

/**
 * struct trn_bo - a buffer object
 * @base: the GEM object
 * @placement: one of &enum drm_trn_placement
 * @flags: DRM_TRN_BO_* creation flags
 * @align: alignment of its device addresses
 * @usage: what it is charged to, referenced, from creation (import: first
 *         handle) until it is freed; protected by @lock until set
 * @charged_pinned: host bytes charged to @usage
 * @user: the user whose locked memory a userptr buffer counts against,
 *        referenced
 * @dmem_pool: the dmem cgroup pool its device memory is charged to
 * @hbm: its device memory, for %DRM_TRN_PLACEMENT_HBM
 * @pages: its pinned pages, for host and userptr buffers
 * @page_dma: for host buffers, the device address of each of @pages (host
 *            memory comes from the DMA API and is never bounced), or
 *            %DMA_MAPPING_ERROR for a page that replaced it at unplug
 * @sgt: its memory as the device reaches it, for host, userptr and
 *       imported buffers; NULL once the device is gone
 * @dma_dir: direction of that mapping
 * @dma_sync: the mapping needs explicit syncs (bounce buffers, a
 *            non-coherent device): trn_bo_dma_begin() and _end() do them;
 *            cleared under @sync_lock when the mapping goes at unplug
 * @sync_lock: protects @dev_users, @dma_sync once set, and the kernel's
 *             writes to a completion record's page; orders the syncs
 * @dev_users: jobs that have handed the buffer to the device and not
 *             finished
 * @lock: protects @mappings and, until set, @usage; held by the CPU fault
 *        handler of host buffers and while their pages are replaced
 * @mappings: &struct trn_mapping of every context that has a handle
 * @import_link: entry in &trn_device.imports, for imported buffers
 * @dma_link: entry in &trn_device.dma_bos, for host and userptr buffers
 * @cpu_read_only: userspace may map it only read-only (queue completion
 *                 records, which the kernel writes)
 * @queue_owned: a queue's completion record, ring or doorbell: never
 *               exported
 * @wc: its pages are write-combined in the kernel's map (x86)
 * @in_host_pinned: its size counts in &trn_device.host_pinned
 */
struct trn_bo {
	struct drm_gem_object base;
	u32 placement;
	u32 flags;
	u64 align;
	struct trn_usage *usage;
	u64 charged_pinned;
	struct user_struct *user;
	struct dmem_cgroup_pool_state *dmem_pool;
	struct drm_mm_node hbm;
	struct page **pages;
	dma_addr_t *page_dma;
	struct sg_table *sgt;
	enum dma_data_direction dma_dir;
	bool dma_sync;

	/* Protects dev_users; orders the syncs of the mapping. */
	spinlock_t sync_lock;
	u32 dev_users;

	/* Protects mappings and, until it is set, usage. */
	struct mutex lock;
	struct list_head mappings;
	struct list_head import_link;
	struct list_head dma_link;
	bool cpu_read_only;
	bool queue_owned;
	bool wc;
	bool in_host_pinned;
};

static inline struct trn_device *to_trn_device(struct drm_device *drm)
{
	return container_of(drm, struct trn_device, drm);
}

static inline struct trn_bo *to_trn_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct trn_bo, base);
}

extern const struct drm_driver trn_drm_driver;

/* trn_drv.c */
extern struct workqueue_struct *trn_wq;
extern struct kmem_cache *trn_job_cache;
u64 trn_max_bos_per_file(void);
u64 trn_max_pinned_per_file(void);
u32 trn_queue_depth(void);

/* trn_health.c */
const char *trn_health_name(enum trn_health health);
enum trn_health trn_health(struct trn_device *tdev, char *reason,
			   size_t size);
void trn_event(struct trn_device *tdev, enum trn_event ev);
void trn_health_trouble(struct trn_device *tdev, enum trn_trouble trouble);
void trn_health_init(struct trn_device *tdev);
void trn_health_fini(struct trn_device *tdev);

/* trn_coredump.c */
const char *trn_status_name(u32 status);
struct trn_coredump *trn_coredump_capture(struct trn_ring *ring,
					  struct trn_job *bad);
void trn_coredump_submit(struct trn_coredump *dump, const char *outcome);
void trn_coredump_discard(struct trn_coredump *dump);
void trn_coredump_init(struct trn_device *tdev);
void trn_coredump_fini(struct trn_device *tdev);

/* trn_query.c */
int trn_ioctl_query(struct drm_device *drm, void *data, struct drm_file *file);

/* trn_hbm.c */
int trn_hbm_init(struct trn_device *tdev);
/* trn_hbm_alloc()'s @stack for a range that may lie anywhere. */
#define TRN_HBM_ANY_STACK	(-1)
int trn_hbm_alloc(struct trn_device *tdev, struct drm_mm_node *node,
		  u64 size, u64 align, int stack);
u64 trn_hbm_stack_size(const struct trn_device *tdev);
bool trn_hbm_could_fit(const struct trn_device *tdev, u64 size, u64 align,
		       int stack);
void trn_hbm_free(struct trn_device *tdev, struct drm_mm_node *node);
u64 trn_hbm_used(struct trn_device *tdev);
void trn_hbm_stacks_usage(struct trn_device *tdev, u64 *used,
			  u64 *largest_free);
int trn_dmem_charge(struct trn_device *tdev, u64 size,
		    struct dmem_cgroup_pool_state **pool);
void trn_dmem_uncharge(struct dmem_cgroup_pool_state *pool, u64 size);

/* trn_ctx.c */
struct trn_ctx *trn_ctx_create(struct trn_device *tdev);
void trn_ctx_put(struct trn_ctx *ctx);
void trn_ctx_close(struct trn_ctx *ctx);
void trn_ctx_job_hung(struct trn_ctx *ctx);
void trn_ctx_job_faulted(struct trn_ctx *ctx);
bool trn_queue_banned(const struct trn_queue *queue);
int trn_job_cancel_error(const struct trn_job *job);

static inline struct trn_ctx *trn_ctx_get(struct trn_ctx *ctx)
{
	kref_get(&ctx->refcount);
	return ctx;
}

/* trn_vm.c */
int trn_vm_init(struct trn_ctx *ctx);
void trn_vm_fini(struct trn_ctx *ctx);
struct trn_mapping *trn_vm_map(struct trn_ctx *ctx, struct trn_bo *bo);
void trn_mapping_put(struct trn_mapping *mapping);

/* trn_gem.c */
struct trn_usage *trn_usage_create(void);
void trn_usage_put(struct trn_usage *usage);
struct drm_gem_object *trn_gem_prime_import(struct drm_device *drm,
					    struct dma_buf *dma_buf);
struct drm_gem_object *
trn_gem_prime_import_sg_table(struct drm_device *drm,
			      struct dma_buf_attachment *attach,
			      struct sg_table *sgt);
int trn_ioctl_bo_create(struct drm_device *drm, void *data,
			struct drm_file *file);
int trn_ioctl_bo_info(struct drm_device *drm, void *data,
		      struct drm_file *file);
int trn_ioctl_bo_userptr(struct drm_device *drm, void *data,
			 struct drm_file *file);
void trn_gem_show_fdinfo(struct drm_printer *p, struct drm_file *file);
struct trn_bo *trn_bo_create_status(struct drm_file *file);
struct trn_bo *trn_bo_create_uq(struct drm_file *file, u64 size);
struct trn_mapping *trn_bo_mapping_get(struct trn_bo *bo, struct trn_ctx *ctx);
void trn_bo_dma_begin(struct trn_bo *bo);
void trn_bo_dma_end(struct trn_bo *bo);
void trn_gem_unplug(struct trn_device *tdev);

/* trn_ring.c */
int trn_rings_init(struct trn_device *tdev);
int trn_rings_start(struct trn_device *tdev);
void trn_rings_stop(struct trn_device *tdev);
struct trn_ring *trn_ring_pick(struct trn_device *tdev, u32 core);
void trn_rings_cancel(struct trn_device *tdev, struct trn_ctx *ctx);

/* trn_queue.c */
int trn_queues_init(struct trn_file *tfile);
void trn_queues_close(struct trn_file *tfile);
void trn_queues_fini(struct trn_file *tfile);
struct trn_queue *trn_queue_lookup(struct trn_file *tfile, u32 id);
void trn_queue_put(struct trn_queue *queue);
void trn_queue_job_done(struct trn_queue *queue, struct trn_job *job,
			int error);
int trn_ioctl_queue_create(struct drm_device *drm, void *data,
			   struct drm_file *file);
int trn_ioctl_queue_destroy(struct drm_device *drm, void *data,
			    struct drm_file *file);
int trn_ioctl_queue_status(struct drm_device *drm, void *data,
			   struct drm_file *file);

/* trn_job.c */
int trn_ioctl_submit(struct drm_device *drm, void *data,
		     struct drm_file *file);
void trn_job_retire(struct trn_job *job, int error);
void trn_job_fail_unrun(struct trn_job *job, int error);
void trn_job_free(struct trn_job *job);
void trn_jobs_flush(void);
void trn_job_show_fdinfo(struct drm_printer *p, struct trn_file *tfile);
void trn_job_count_failure(struct trn_device *tdev, u32 status);

/* trn_uqueue.c */
int trn_uq_create(struct trn_queue *queue, struct drm_file *file, u32 core,
		  u32 entries);
int trn_uq_start(struct trn_queue *queue, struct drm_file *file);
void trn_uq_stop(struct trn_queue *queue, int error);
void trn_uq_free(struct trn_queue *queue);
void trn_uq_close_handles(struct trn_queue *queue, struct drm_file *file);
void trn_uq_status(struct trn_queue *queue, struct drm_trn_queue_status *st);
void trn_uq_harvest(struct trn_uq *uq);
void trn_uqs_harvest(struct trn_device *tdev);
void trn_uqs_cancel(struct trn_device *tdev, struct trn_ctx *ctx);
void trn_uqs_unplug(struct trn_device *tdev);
void trn_uqs_init(struct trn_device *tdev);
int trn_ioctl_queue_fence(struct drm_device *drm, void *data,
			  struct drm_file *file);
int trn_ioctl_queue_wake(struct drm_device *drm, void *data,
			 struct drm_file *file);

/* trn_sysfs.c */
extern const struct attribute_group *trn_attr_groups[];
int trn_sysfs_cores_init(struct trn_device *tdev);
void trn_sysfs_cores_fini(struct trn_device *tdev);

#if IS_ENABLED(CONFIG_KUNIT)
struct drm_trn_query;
int trn_query_copy_out(struct drm_trn_query *args, const void *answer,
		       u32 size, u32 min_size);
int trn_desc_validate(struct device *parent,
		      const struct trn_device_desc *desc);
#endif

#endif /* __TRN_DRV_H__ */
