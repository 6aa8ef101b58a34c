/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The trn authors
 *
 * trn_accel.h - userspace interface of the trn DRM accel driver for
 * Trainium-class ML accelerators and their simulated counterpart.
 */
#ifndef _UAPI_TRN_ACCEL_H_
#define _UAPI_TRN_ACCEL_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/**
 * DOC: trn uAPI conventions
 *
 * Every structure uses fixed-size types with natural alignment. Fields named
 * ``pad`` or ``reserved`` must be zero on input; the kernel rejects non-zero
 * values with -EINVAL so that they can be given a meaning later. Unknown
 * flags are rejected with -EINVAL. An ioctl that fails leaves no trace.
 *
 * Structures that will grow are reached through a pointer plus a size
 * (see &struct drm_trn_query): the kernel writes at most the size userspace
 * passed and reports how much it wrote, so old binaries keep working on new
 * kernels and new binaries can detect old kernels.
 */

/** @DRM_TRN_UAPI_MAJOR: incompatible uAPI changes bump this (never so far). */
#define DRM_TRN_UAPI_MAJOR	1
/** @DRM_TRN_UAPI_MINOR: bumped whenever an ioctl, query or field is added. */
#define DRM_TRN_UAPI_MINOR	8

#define DRM_TRN_QUERY		0x00
#define DRM_TRN_BO_CREATE	0x01
#define DRM_TRN_BO_INFO		0x02
#define DRM_TRN_BO_USERPTR	0x03
#define DRM_TRN_QUEUE_CREATE	0x04
#define DRM_TRN_QUEUE_DESTROY	0x05
#define DRM_TRN_SUBMIT		0x06
#define DRM_TRN_QUEUE_STATUS	0x07
#define DRM_TRN_QUEUE_FENCE	0x08
#define DRM_TRN_QUEUE_WAKE	0x09

#define DRM_IOCTL_TRN_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TRN_QUERY, struct drm_trn_query)
#define DRM_IOCTL_TRN_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TRN_BO_CREATE, struct drm_trn_bo_create)
#define DRM_IOCTL_TRN_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TRN_BO_INFO, struct drm_trn_bo_info)
#define DRM_IOCTL_TRN_BO_USERPTR \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TRN_BO_USERPTR, struct drm_trn_bo_userptr)
#define DRM_IOCTL_TRN_QUEUE_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TRN_QUEUE_CREATE, \
		 struct drm_trn_queue_create)
#define DRM_IOCTL_TRN_QUEUE_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_TRN_QUEUE_DESTROY, \
		struct drm_trn_queue_destroy)
/* Write-only: job numbers go back through the job array, never copied out. */
#define DRM_IOCTL_TRN_SUBMIT \
	DRM_IOW(DRM_COMMAND_BASE + DRM_TRN_SUBMIT, struct drm_trn_submit)
#define DRM_IOCTL_TRN_QUEUE_STATUS \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TRN_QUEUE_STATUS, \
		 struct drm_trn_queue_status)
#define DRM_IOCTL_TRN_QUEUE_FENCE \
	DRM_IOW(DRM_COMMAND_BASE + DRM_TRN_QUEUE_FENCE, \
		struct drm_trn_queue_fence)
#define DRM_IOCTL_TRN_QUEUE_WAKE \
	DRM_IOW(DRM_COMMAND_BASE + DRM_TRN_QUEUE_WAKE, \
		struct drm_trn_queue_wake)

/**
 * enum drm_trn_generation - hardware generation of a device
 * @DRM_TRN_GEN_SIM: the simulated device of trn_sim.ko
 * @DRM_TRN_GEN_TRN2: Trainium2
 * @DRM_TRN_GEN_TRN3: Trainium3
 */
enum drm_trn_generation {
	DRM_TRN_GEN_SIM = 1,
	DRM_TRN_GEN_TRN2 = 2,
	DRM_TRN_GEN_TRN3 = 3,
};

/**
 * enum drm_trn_query_id - what &struct drm_trn_query asks for
 * @DRM_TRN_QUERY_DEVICE_INFO: &struct drm_trn_device_info
 * @DRM_TRN_QUERY_MEMORY: &struct drm_trn_memory_info
 * @DRM_TRN_QUERY_HBM_STACKS: an array of &struct drm_trn_hbm_stack, one per
 *	HBM stack in stack order (uAPI 1.8); &drm_trn_query.size must be a
 *	multiple of the entry's size, and the kernel writes as many whole
 *	entries as fit
 */
enum drm_trn_query_id {
	DRM_TRN_QUERY_DEVICE_INFO = 1,
	DRM_TRN_QUERY_MEMORY = 2,
	DRM_TRN_QUERY_HBM_STACKS = 3,
};

/**
 * struct drm_trn_query - ask the driver for a block of information
 *
 * With @size zero the kernel only stores the full size of the answer in
 * @size. Otherwise @size must be at least the size of the first version of
 * the answer's structure; the kernel writes min(@size, its own size) bytes
 * to @data and stores that count in @size.
 */
struct drm_trn_query {
	/** @query: one of &enum drm_trn_query_id. */
	__u32 query;
	/** @size: in: bytes available at @data; out: bytes written (or needed). */
	__u32 size;
	/** @flags: must be zero. */
	__u32 flags;
	/** @pad: must be zero. */
	__u32 pad;
	/** @data: user pointer to the answer's structure. */
	__u64 data;
};

/** @DRM_TRN_CAP_SIMULATED: the device is simulated by trn_sim.ko. */
#define DRM_TRN_CAP_SIMULATED		(1ULL << 0)
/** @DRM_TRN_CAP_HBM_CPU_VISIBLE: device memory can be mapped by the CPU. */
#define DRM_TRN_CAP_HBM_CPU_VISIBLE	(1ULL << 1)
/*
 * What the device executes beyond NOP, WRITE, FILL, COPY and CALL, which
 * every device does (uAPI 1.4; a driver older than 1.4 executes all of it
 * and reports none of these bits). A job that uses an opcode whose bit is
 * clear fails with %DRM_TRN_STATUS_UNSUPPORTED at that command.
 */
/** @DRM_TRN_CAP_TIMESTAMP: TIMESTAMP, from a device clock. */
#define DRM_TRN_CAP_TIMESTAMP		(1ULL << 2)
/** @DRM_TRN_CAP_SEMAPHORES: SEM_SIGNAL and SEM_WAIT. */
#define DRM_TRN_CAP_SEMAPHORES		(1ULL << 3)
/** @DRM_TRN_CAP_COMPUTE: MATMUL, UNARY, BINARY and REDUCE. */
#define DRM_TRN_CAP_COMPUTE		(1ULL << 4)
/**
 * DRM_TRN_CAP_LOG_ERF - UNARY's LOG, ERF, GELU_ERF and GELU_ERF_GRAD
 * (uAPI 1.5; a driver before 1.5 fails them with %DRM_TRN_STATUS_BAD_ARG).
 */
#define DRM_TRN_CAP_LOG_ERF		(1ULL << 5)
/**
 * DRM_TRN_CAP_USER_QUEUES - user-mode queues (%DRM_TRN_QUEUE_USER_MODE),
 * up to &drm_trn_device_info.user_queues of them on the device (uAPI 1.6).
 */
#define DRM_TRN_CAP_USER_QUEUES		(1ULL << 6)
/**
 * DRM_TRN_CAP_SRC_U8 - UNARY's %TRN_ELEM_SRC_U8, an operand of bytes
 * (uAPI 1.7; a driver before 1.7 fails it with %DRM_TRN_STATUS_BAD_ARG).
 */
#define DRM_TRN_CAP_SRC_U8		(1ULL << 7)

/**
 * struct drm_trn_device_info - answer to %DRM_TRN_QUERY_DEVICE_INFO
 *
 * Fields are only ever appended. Userspace that passes a shorter (older)
 * structure gets the fields it knows about.
 */
struct drm_trn_device_info {
	/** @uapi_major: %DRM_TRN_UAPI_MAJOR of the running driver. */
	__u32 uapi_major;
	/** @uapi_minor: %DRM_TRN_UAPI_MINOR of the running driver. */
	__u32 uapi_minor;
	/** @generation: one of &enum drm_trn_generation. */
	__u32 generation;
	/** @num_cores: number of NeuronCores. */
	__u32 num_cores;
	/** @queues_per_core: hardware queues on each NeuronCore. */
	__u32 queues_per_core;
	/** @device_id: backend's identifier of the device (simulator: its id). */
	__u32 device_id;
	/** @hbm_size: bytes of device memory (HBM). */
	__u64 hbm_size;
	/** @va_start: first usable device virtual address of a context. */
	__u64 va_start;
	/** @va_size: size of a context's device virtual address range. */
	__u64 va_size;
	/** @capabilities: mask of DRM_TRN_CAP_* bits. */
	__u64 capabilities;
	/**
	 * @queue_depth: unfinished jobs a queue holds at most; a submission
	 * beyond it waits, or fails with -EAGAIN with
	 * %DRM_TRN_SUBMIT_NONBLOCK (uAPI 1.3).
	 */
	__u32 queue_depth;
	/**
	 * @job_timeout_ms: how long a job may run before its ring is reset
	 * and its context banned (uAPI 1.3).
	 */
	__u32 job_timeout_ms;
	/**
	 * @ban_faults: a context is banned each time its jobs have made this
	 * many more MMU faults (uAPI 1.3; one timeout bans it too).
	 */
	__u32 ban_faults;
	/**
	 * @user_queues: user-mode queues the device can run at once, all
	 * contexts together; 0 without %DRM_TRN_CAP_USER_QUEUES (uAPI 1.6;
	 * before, this was padding and read 0).
	 */
	__u32 user_queues;
	/**
	 * @hbm_stacks: HBM stacks the device memory is made of, at least 1;
	 * each holds @hbm_size / @hbm_stacks bytes, stack n the device memory
	 * offsets from n times that (uAPI 1.8; 0 from older drivers, which
	 * cannot place a buffer on a stack, see DRM_TRN_BO_STACK()).
	 */
	__u32 hbm_stacks;
	/** @reserved: zero. */
	__u32 reserved;
};

/**
 * enum drm_trn_placement - where a buffer object's memory lives
 * @DRM_TRN_PLACEMENT_HBM: device memory; CPU-mappable where the device has
 *	%DRM_TRN_CAP_HBM_CPU_VISIBLE
 * @DRM_TRN_PLACEMENT_HOST: system memory, pinned and mapped for the device
 * @DRM_TRN_PLACEMENT_USERPTR: pinned pages of the caller's own memory
 *	(&struct drm_trn_bo_userptr); reported, never requested
 * @DRM_TRN_PLACEMENT_IMPORTED: memory of another driver, imported through
 *	a dma-buf; reported, never requested
 */
enum drm_trn_placement {
	DRM_TRN_PLACEMENT_HBM = 1,
	DRM_TRN_PLACEMENT_HOST = 2,
	DRM_TRN_PLACEMENT_USERPTR = 3,
	DRM_TRN_PLACEMENT_IMPORTED = 4,
};

/**
 * DRM_TRN_BO_HOST_WC - map a host buffer write-combined for the CPU
 *
 * Only with %DRM_TRN_PLACEMENT_HOST. Without it host buffers are mapped
 * cached. Device memory is mapped as the device dictates (write-combined
 * on real parts).
 */
#define DRM_TRN_BO_HOST_WC		(1U << 0)
/** DRM_TRN_BO_DEVICE_READ_ONLY - the device may read but not write */
#define DRM_TRN_BO_DEVICE_READ_ONLY	(1U << 1)
/**
 * DRM_TRN_BO_ON_STACK - place a device memory buffer wholly in the HBM
 * stack whose number the flags carry in DRM_TRN_BO_STACK_MASK (uAPI 1.8)
 *
 * Only with %DRM_TRN_PLACEMENT_HBM, and for a stack the device has
 * (&drm_trn_device_info.hbm_stacks). A buffer larger than one stack fails
 * with -E2BIG (as does one that its alignment leaves no room for in the
 * stack), one that does not fit in the stack's free memory now with
 * -ENOMEM, even where other stacks have room. Without the flag a buffer
 * goes wherever it fits and may span stacks. Use DRM_TRN_BO_STACK().
 */
#define DRM_TRN_BO_ON_STACK		(1U << 2)
/** DRM_TRN_BO_STACK_SHIFT - where the stack number sits in the flags */
#define DRM_TRN_BO_STACK_SHIFT		8
/** DRM_TRN_BO_STACK_MASK - the stack number; must be 0 without ON_STACK */
#define DRM_TRN_BO_STACK_MASK		(0xffU << DRM_TRN_BO_STACK_SHIFT)
/**
 * DRM_TRN_BO_STACK - the flags that place a buffer on one HBM stack
 * @n: the stack's number, below &drm_trn_device_info.hbm_stacks; the macro
 *     does not check it (from 256 to 2^24 - 1 it spills into flag bits that
 *     do not exist, -EINVAL; beyond, it is cut short)
 */
#define DRM_TRN_BO_STACK(n) \
	(DRM_TRN_BO_ON_STACK | ((__u32)(n) << DRM_TRN_BO_STACK_SHIFT))

/** DRM_TRN_BO_MAX_ALIGNMENT - largest alignment a buffer may ask for */
#define DRM_TRN_BO_MAX_ALIGNMENT	(1ULL << 30)

/**
 * struct drm_trn_bo_create - create a buffer object
 *
 * The buffer is zero-filled, mapped into the caller's device address space
 * and returned as a GEM handle (closed with DRM_IOCTL_GEM_CLOSE).
 */
struct drm_trn_bo_create {
	/** @size: bytes, at least 1; rounded up to the page size. */
	__u64 size;
	/**
	 * @alignment: 0 for page alignment, or a power of two up to
	 * %DRM_TRN_BO_MAX_ALIGNMENT applied to the device address and, in
	 * device memory, to the physical placement.
	 */
	__u64 alignment;
	/** @placement: %DRM_TRN_PLACEMENT_HBM or %DRM_TRN_PLACEMENT_HOST. */
	__u32 placement;
	/** @flags: DRM_TRN_BO_* flags. */
	__u32 flags;
	/** @handle: out: GEM handle. */
	__u32 handle;
	/** @pad: must be zero. */
	__u32 pad;
	/** @va: out: device virtual address in the caller's context. */
	__u64 va;
};

/**
 * struct drm_trn_bo_info - describe a buffer object of the caller
 */
struct drm_trn_bo_info {
	/** @handle: GEM handle. */
	__u32 handle;
	/** @flags: must be zero. */
	__u32 flags;
	/** @size: out: bytes (a multiple of the page size). */
	__u64 size;
	/** @va: out: device virtual address in the caller's context. */
	__u64 va;
	/**
	 * @mmap_offset: out: offset to mmap() on the device file for a CPU
	 * mapping; 0 if the buffer cannot be mapped that way (userptr and
	 * imported buffers: map their origin instead).
	 */
	__u64 mmap_offset;
	/** @placement: out: one of &enum drm_trn_placement. */
	__u32 placement;
	/** @bo_flags: out: DRM_TRN_BO_* flags the buffer was created with. */
	__u32 bo_flags;
};

/** DRM_TRN_USERPTR_READ_ONLY - pin read-only; the device may only read */
#define DRM_TRN_USERPTR_READ_ONLY	(1U << 0)

/**
 * struct drm_trn_bo_userptr - wrap the caller's memory as a buffer object
 *
 * The pages of [@addr, @addr + @size) are pinned for the buffer's lifetime
 * and count against the caller's pinned-memory limit.
 */
struct drm_trn_bo_userptr {
	/** @addr: page-aligned start of the range. */
	__u64 addr;
	/** @size: page-aligned, non-zero length of the range. */
	__u64 size;
	/** @flags: DRM_TRN_USERPTR_* flags. */
	__u32 flags;
	/** @handle: out: GEM handle. */
	__u32 handle;
	/** @va: out: device virtual address in the caller's context. */
	__u64 va;
};

/**
 * struct drm_trn_memory_info - answer to %DRM_TRN_QUERY_MEMORY
 *
 * Device-wide figures first, then the caller's own, then its limits.
 */
struct drm_trn_memory_info {
	/** @hbm_total: bytes of device memory. */
	__u64 hbm_total;
	/** @hbm_used: bytes of device memory allocated, by anyone. */
	__u64 hbm_used;
	/** @host_pinned: bytes of host memory pinned for the device. */
	__u64 host_pinned;
	/** @ctx_hbm: device memory of buffers the caller created. */
	__u64 ctx_hbm;
	/** @ctx_pinned: host memory the caller's buffers pin. */
	__u64 ctx_pinned;
	/** @ctx_bos: buffers the caller created and still holds. */
	__u64 ctx_bos;
	/** @max_ctx_bos: limit on @ctx_bos. */
	__u64 max_ctx_bos;
	/** @max_ctx_pinned: limit on @ctx_pinned, in bytes. */
	__u64 max_ctx_pinned;
};

/**
 * struct drm_trn_hbm_stack - one HBM stack, in %DRM_TRN_QUERY_HBM_STACKS
 *
 * Buffers that span several stacks count in each for the bytes they have
 * there. All figures of all stacks are taken at one moment.
 */
struct drm_trn_hbm_stack {
	/** @size: bytes of the stack (&drm_trn_device_info.hbm_size / hbm_stacks). */
	__u64 size;
	/** @used: bytes of it allocated, by anyone. */
	__u64 used;
	/**
	 * @largest_free: bytes of its largest free range: a buffer of that
	 * size placed on the stack with &drm_trn_bo_create.alignment of a
	 * page fits now.
	 */
	__u64 largest_free;
	/** @reserved: 0; a later uAPI may give it a meaning. */
	__u64 reserved;
};

/**
 * enum drm_trn_priority - scheduling priority of a queue
 * @DRM_TRN_PRIORITY_LOW: runs when nothing of higher priority is ready
 * @DRM_TRN_PRIORITY_NORMAL: the default
 * @DRM_TRN_PRIORITY_HIGH: needs CAP_SYS_NICE
 */
enum drm_trn_priority {
	DRM_TRN_PRIORITY_LOW = 0,
	DRM_TRN_PRIORITY_NORMAL = 1,
	DRM_TRN_PRIORITY_HIGH = 2,
};

/** DRM_TRN_STATUS_PAGE_FAILURES - failures a status page remembers */
#define DRM_TRN_STATUS_PAGE_FAILURES	64

/**
 * struct drm_trn_job_failure - a failed job, in a status page
 * @seqno: the job's number
 * @error: positive errno its fences carry (see &struct drm_trn_job)
 * @status: &enum drm_trn_job_status
 */
struct drm_trn_job_failure {
	__u64 seqno;
	__u32 error;
	__u32 status;
};

/**
 * struct drm_trn_queue_status_page - a queue's completion record
 *
 * The kernel keeps one per queue in a host buffer that userspace maps
 * read-only (&drm_trn_queue_create.status_handle) to learn that jobs are
 * done without a system call. Jobs of a queue complete in submission order:
 * a job whose number is at most @completed_seqno has finished, its results
 * are in memory or it failed. The kernel records a failure in
 * @failures[@failed_count % %DRM_TRN_STATUS_PAGE_FAILURES] (the entry's
 * seqno before its error and status), then increments @failed_count, then
 * advances @completed_seqno, each store ordered after the previous one;
 * readers load in the opposite order.
 */
struct drm_trn_queue_status_page {
	/** @completed_seqno: number of the latest finished job. */
	__u64 completed_seqno;
	/** @failed_count: jobs of the queue that failed so far. */
	__u64 failed_count;
	/** @failures: the latest failures, a ring indexed as above. */
	struct drm_trn_job_failure failures[DRM_TRN_STATUS_PAGE_FAILURES];
	/**
	 * @state: a user-mode queue's DRM_TRN_QUEUE_* bits, as
	 * %DRM_IOCTL_TRN_QUEUE_STATUS reports them, set by the kernel as they
	 * become true, so that a submitter sees a ban without a system call
	 * (uAPI 1.6). 0 for other queues: their submissions say so.
	 */
	__u32 state;
	/** @pad: zero. */
	__u32 pad;
};

/**
 * DRM_TRN_QUEUE_USER_MODE - a user-mode queue (%DRM_TRN_CAP_USER_QUEUES)
 *
 * The caller submits by writing &struct drm_trn_user_desc into the queue's
 * ring and storing the new job's number in &drm_trn_doorbell.wptr, both
 * mapped into its process; the device picks the job up without a system
 * call. The kernel validates nothing per job: every address a job uses is
 * translated by the device MMU in the caller's context. Such a queue takes
 * no %DRM_IOCTL_TRN_SUBMIT. Its completion record is the same
 * &struct drm_trn_queue_status_page, written by the device; its timeline
 * syncobj gets a point only through %DRM_IOCTL_TRN_QUEUE_FENCE.
 */
#define DRM_TRN_QUEUE_USER_MODE		(1U << 0)

/** DRM_TRN_USER_RING_DEFAULT - ring entries of a user-mode queue by default */
#define DRM_TRN_USER_RING_DEFAULT	1024
/** DRM_TRN_USER_RING_MIN - fewest ring entries of a user-mode queue */
#define DRM_TRN_USER_RING_MIN		16
/** DRM_TRN_USER_RING_MAX - most ring entries of a user-mode queue */
#define DRM_TRN_USER_RING_MAX		65536

/**
 * struct drm_trn_queue_create - create a queue of jobs on a NeuronCore
 *
 * Jobs submitted to one queue execute in order; jobs of different queues
 * are ordered only by the fences and device semaphores they name. Each queue
 * owns a timeline syncobj whose point N signals when the queue's job number
 * N (counted from 1) has finished; it works with every DRM syncobj ioctl
 * (waits on many queues, sync_file export for poll()). A user-mode queue's
 * points exist once %DRM_IOCTL_TRN_QUEUE_FENCE made them.
 */
struct drm_trn_queue_create {
	/** @core: NeuronCore, below &drm_trn_device_info.num_cores. */
	__u32 core;
	/** @priority: one of &enum drm_trn_priority. */
	__u32 priority;
	/** @flags: %DRM_TRN_QUEUE_USER_MODE or zero. */
	__u32 flags;
	/** @queue_id: out: the queue's identifier, never 0. */
	__u32 queue_id;
	/** @syncobj: out: handle of the queue's timeline syncobj. */
	__u32 syncobj;
	/**
	 * @status_handle: out: GEM handle of a host buffer holding the
	 * queue's &struct drm_trn_queue_status_page at offset 0.
	 */
	__u32 status_handle;
	/**
	 * @ring_entries: user-mode queue: in, descriptors in its ring, a
	 * power of two from %DRM_TRN_USER_RING_MIN to %DRM_TRN_USER_RING_MAX,
	 * or 0 for %DRM_TRN_USER_RING_DEFAULT; out, the number it got.
	 * Otherwise must be zero (uAPI 1.6; before, reserved).
	 */
	__u32 ring_entries;
	/**
	 * @ring_handle: out: user-mode queue: GEM handle of a host buffer
	 * holding its ring, @ring_entries &struct drm_trn_user_desc from
	 * offset 0; the caller maps it writable. Otherwise 0. Must be zero.
	 */
	__u32 ring_handle;
	/**
	 * @doorbell_handle: out: user-mode queue: GEM handle of a host page
	 * holding its &struct drm_trn_doorbell at offset 0; the caller maps
	 * it writable. Otherwise 0. Must be zero.
	 */
	__u32 doorbell_handle;
	/** @pad: must be zero. */
	__u32 pad;
};

/**
 * DRM_TRN_USER_DESC_WAIT - the job waits for a value in memory first
 *
 * The device starts the job only once the little-endian 64-bit value at
 * &drm_trn_user_desc.wait_va, read through the MMU in the queue's context,
 * is at least &drm_trn_user_desc.wait_value (unsigned). Pointed at
 * &drm_trn_queue_status_page.completed_seqno of another queue of the same
 * file (its status buffer's device address), it orders the job after that
 * queue's job @wait_value, however that job ended. A read that faults
 * fails the job with %DRM_TRN_STATUS_MMU_FAULT.
 */
#define DRM_TRN_USER_DESC_WAIT		(1U << 0)

/**
 * struct drm_trn_user_desc - one job in a user-mode queue's ring
 *
 * Job number S (counted from 1) sits in slot S % ring_entries. Userspace
 * writes the descriptor, then stores S in &drm_trn_doorbell.wptr (release
 * order). A slot may be rewritten once its job has completed
 * (&drm_trn_queue_status_page.completed_seqno); the device reads a
 * descriptor once, when it starts the job. The device checks each
 * descriptor as it would a command: a job with an unknown flag, non-zero
 * wait fields without %DRM_TRN_USER_DESC_WAIT, a misaligned @wait_va or
 * a bad @cmd_va / @cmd_size (as &struct drm_trn_job) fails with
 * %DRM_TRN_STATUS_BAD_ARG, %DRM_TRN_STATUS_BAD_ALIGN or
 * %DRM_TRN_STATUS_BAD_SIZE at offset 0, and the queue goes on.
 */
struct drm_trn_user_desc {
	/** @cmd_va: device address of the command stream, 8-byte aligned. */
	__u64 cmd_va;
	/** @cmd_size: as &drm_trn_job.cmd_size. */
	__u32 cmd_size;
	/** @flags: %DRM_TRN_USER_DESC_WAIT or zero. */
	__u32 flags;
	/** @wait_va: with %DRM_TRN_USER_DESC_WAIT, 8-byte aligned; else 0. */
	__u64 wait_va;
	/** @wait_value: with %DRM_TRN_USER_DESC_WAIT; else 0. */
	__u64 wait_value;
};

/**
 * DRM_TRN_DOORBELL_NEED_WAKEUP - the device stopped watching the doorbell
 *
 * The device watches a user-mode queue's write pointer while work keeps
 * arriving and stops after an idle period, setting this flag first. A
 * submitter that stored a new @wptr, then (after a full memory barrier)
 * finds the flag set calls %DRM_IOCTL_TRN_QUEUE_WAKE. The device clears it
 * when it watches again.
 */
#define DRM_TRN_DOORBELL_NEED_WAKEUP	(1U << 0)

/**
 * struct drm_trn_doorbell - a user-mode queue's write pointer
 *
 * At offset 0 of the queue's doorbell page, which the caller maps
 * writable. The device reads it and never trusts it: a @wptr that goes
 * backwards is not looked at until it passes the last job the device
 * started, one that runs ahead of the ring makes the device run whatever
 * the slots hold (in the caller's own context).
 */
struct drm_trn_doorbell {
	/** @wptr: written by userspace: the number of the latest job. */
	__u64 wptr;
	/** @flags: written by the device: DRM_TRN_DOORBELL_* bits. */
	__u32 flags;
	/** @pad: zero. */
	__u32 pad;
};

/**
 * struct drm_trn_queue_destroy - destroy a queue
 *
 * The call waits for nothing: every job of the queue that has not finished
 * is cancelled with -ESRCH, in order, and appears as a failure in the
 * queue's status page. Jobs on the hardware are stopped by the device at
 * their next command boundary (what they wrote before stays written);
 * jobs not there yet (waiting for their turn or for in-fences) never run.
 * Wait for the queue's jobs first if they must finish. The queue's status
 * buffer handle is closed (a CPU mapping of it stays valid until unmapped,
 * and shows the cancelled jobs); its syncobj handle stays valid until
 * closed.
 *
 * Closing the file (or the death of its process) does the same to all its
 * queues. Nothing waits for the cancelled jobs: they keep what they use
 * (buffers, mappings, the address space) until they are done.
 */
struct drm_trn_queue_destroy {
	/** @queue_id: the queue. */
	__u32 queue_id;
	/** @flags: must be zero. */
	__u32 flags;
};

/** DRM_TRN_SUBMIT_MAX_JOBS - most jobs one DRM_IOCTL_TRN_SUBMIT takes */
#define DRM_TRN_SUBMIT_MAX_JOBS		256
/** DRM_TRN_JOB_MAX_BOS - most buffers one job lists */
#define DRM_TRN_JOB_MAX_BOS		4096
/** DRM_TRN_JOB_MAX_FENCES - most in-fences, and most out-fences, of a job */
#define DRM_TRN_JOB_MAX_FENCES		64
/** DRM_TRN_JOB_MAX_CMD_SIZE - largest top-level command buffer, in bytes */
#define DRM_TRN_JOB_MAX_CMD_SIZE	(1U << 24)

/**
 * struct drm_trn_sync - a syncobj and a point on it
 *
 * With @point zero the syncobj is used as a binary syncobj: as an in-fence
 * its current fence is waited for, as an out-fence the job's fence replaces
 * it. Otherwise it is a timeline syncobj: as an in-fence the job waits for
 * @point (which must have a fence already), as an out-fence the job's fence
 * is added at @point.
 */
struct drm_trn_sync {
	/** @handle: syncobj handle. */
	__u32 handle;
	/** @flags: must be zero. */
	__u32 flags;
	/** @point: timeline point, or 0. */
	__u64 point;
};

/**
 * struct drm_trn_job - one job of a submission
 *
 * The device executes the command stream at [@cmd_va, @cmd_va + @cmd_size)
 * of the caller's address space (Documentation/isa.md). A job that
 * fails signals its fences with an error: -EILSEQ for a malformed command,
 * -EFAULT for a device access outside the caller's mappings, -ETIMEDOUT when
 * it ran longer than the driver's timeout and the queue was reset, -ENODEV
 * when the device went away, -ECANCELED when its context was banned (see
 * %DRM_TRN_QUEUE_BANNED), -ESRCH when it was cancelled because its queue was
 * destroyed or its file closed (see &struct drm_trn_queue_destroy). Its
 * timeline out-points carry the error too. DRM_IOCTL_TRN_QUEUE_STATUS says
 * where it failed.
 */
struct drm_trn_job {
	/** @cmd_va: device address of the command stream, 8-byte aligned. */
	__u64 cmd_va;
	/**
	 * @cmd_size: bytes of commands, a non-zero multiple of 8 up to
	 * %DRM_TRN_JOB_MAX_CMD_SIZE.
	 */
	__u32 cmd_size;
	/** @flags: must be zero. */
	__u32 flags;
	/**
	 * @bo_handles: user pointer to @bo_count __u32 GEM handles of buffers
	 * the job uses: they stay allocated and mapped until it finishes, even
	 * if their handles are closed meanwhile. A buffer may appear once.
	 */
	__u64 bo_handles;
	/** @bo_count: up to %DRM_TRN_JOB_MAX_BOS. */
	__u32 bo_count;
	/** @in_count: entries at @in_syncs, up to %DRM_TRN_JOB_MAX_FENCES. */
	__u32 in_count;
	/** @in_syncs: user pointer to &struct drm_trn_sync to wait for. */
	__u64 in_syncs;
	/** @out_syncs: user pointer to &struct drm_trn_sync to signal. */
	__u64 out_syncs;
	/** @out_count: entries at @out_syncs, up to %DRM_TRN_JOB_MAX_FENCES. */
	__u32 out_count;
	/** @pad: must be zero. */
	__u32 pad;
	/** @seqno: out: the job's number on its queue. */
	__u64 seqno;
};

/**
 * DRM_TRN_SUBMIT_NONBLOCK - fail with -EAGAIN rather than wait for room
 *
 * A queue holds at most &drm_trn_device_info.queue_depth unfinished jobs.
 * A submission that would exceed it waits (interruptibly: -EINTR, or a
 * restart) until enough jobs finished, or with this flag fails at once
 * with -EAGAIN.
 */
#define DRM_TRN_SUBMIT_NONBLOCK		(1U << 0)

/**
 * struct drm_trn_submit - submit jobs to a queue
 *
 * Every job of the array is checked before any is queued: either all are
 * queued, in array order, with consecutive numbers written back to their
 * @seqno fields, or the call fails and queues nothing (and writes no
 * @seqno, unless a page of the array went away while the call ran: see
 * Documentation/uapi.md). The structure itself is only read. A queue of a
 * banned context refuses jobs with -ECANCELED.
 */
struct drm_trn_submit {
	/** @queue_id: the queue. */
	__u32 queue_id;
	/** @flags: DRM_TRN_SUBMIT_* flags. */
	__u32 flags;
	/** @jobs: user pointer to an array of @job_count jobs. */
	__u64 jobs;
	/** @job_count: 1 to %DRM_TRN_SUBMIT_MAX_JOBS. */
	__u32 job_count;
	/**
	 * @job_size: sizeof(&struct drm_trn_job) as the caller knows it, the
	 * array's stride; at least the first version's size (64 bytes). Bytes
	 * the kernel does not know must be zero.
	 */
	__u32 job_size;
};

/** DRM_TRN_QUEUE_GUILTY - a job of this queue hung and caused a reset */
#define DRM_TRN_QUEUE_GUILTY		(1U << 0)
/** DRM_TRN_QUEUE_FAULTED - a job of this queue made an MMU fault */
#define DRM_TRN_QUEUE_FAULTED		(1U << 1)
/**
 * DRM_TRN_QUEUE_BANNED - the queue's context was banned after the queue
 * was created: it refuses jobs with -ECANCELED and its unfinished jobs
 * were cancelled with -ECANCELED. A context is banned when one of its jobs
 * times out, and each time its jobs have made another
 * &drm_trn_device_info.ban_faults MMU faults; queues it creates afterwards
 * work.
 */
#define DRM_TRN_QUEUE_BANNED		(1U << 2)

/**
 * enum drm_trn_job_status - why the device failed a job
 * @DRM_TRN_STATUS_OK: no failure
 * @DRM_TRN_STATUS_BAD_OPCODE: unknown opcode
 * @DRM_TRN_STATUS_BAD_SIZE: a command's size is wrong for its opcode, or it
 *	runs past the end of its buffer
 * @DRM_TRN_STATUS_BAD_ALIGN: a command or operand is misaligned
 * @DRM_TRN_STATUS_BAD_ARG: an argument is out of its documented range
 * @DRM_TRN_STATUS_CALL_DEPTH: CALL nested deeper than %TRN_ISA_MAX_CALL_DEPTH
 * @DRM_TRN_STATUS_MMU_FAULT: access outside the context's mappings or
 *	against their rights; &drm_trn_queue_status.fault_va says where
 * @DRM_TRN_STATUS_TIMEOUT: the job exceeded the timeout and was reset
 * @DRM_TRN_STATUS_ABORTED: the device went away or the job was cancelled
 *	(its context banned, its queue destroyed, its file closed)
 * @DRM_TRN_STATUS_UNSUPPORTED: a valid command this device does not execute:
 *	its &drm_trn_device_info.capabilities bit is clear (uAPI 1.4)
 * @DRM_TRN_STATUS_DEVICE_ERROR: the device's DMA failed (a part's engine
 *	stopped on an error); the device recovered, the queue goes on
 *	(uAPI 1.4)
 */
enum drm_trn_job_status {
	DRM_TRN_STATUS_OK = 0,
	DRM_TRN_STATUS_BAD_OPCODE = 1,
	DRM_TRN_STATUS_BAD_SIZE = 2,
	DRM_TRN_STATUS_BAD_ALIGN = 3,
	DRM_TRN_STATUS_BAD_ARG = 4,
	DRM_TRN_STATUS_CALL_DEPTH = 5,
	DRM_TRN_STATUS_MMU_FAULT = 6,
	DRM_TRN_STATUS_TIMEOUT = 7,
	DRM_TRN_STATUS_ABORTED = 8,
	DRM_TRN_STATUS_UNSUPPORTED = 9,
	DRM_TRN_STATUS_DEVICE_ERROR = 10,
};

/**
 * struct drm_trn_queue_status - state of a queue
 */
struct drm_trn_queue_status {
	/** @queue_id: the queue. */
	__u32 queue_id;
	/** @flags: in: must be zero. */
	__u32 flags;
	/** @submitted_seqno: out: number of the latest job submitted. */
	__u64 submitted_seqno;
	/** @completed_seqno: out: number of the latest job finished. */
	__u64 completed_seqno;
	/** @jobs_failed: out: jobs of the queue that failed. */
	__u64 jobs_failed;
	/** @failed_seqno: out: the latest of them, or 0. */
	__u64 failed_seqno;
	/** @error: out: its positive errno. */
	__u32 error;
	/** @status: out: its &enum drm_trn_job_status. */
	__u32 status;
	/**
	 * @error_offset: out: byte offset of the failing command within the
	 * command buffer that holds it (the job's own, or a CALLed one).
	 */
	__u64 error_offset;
	/** @error_cmd_va: out: device address of the failing command. */
	__u64 error_cmd_va;
	/** @fault_va: out: device address that faulted, for MMU faults. */
	__u64 fault_va;
	/** @state: out: DRM_TRN_QUEUE_* bits. */
	__u32 state;
	/** @resets: out: resets this queue's jobs caused. */
	__u32 resets;
	/** @reserved: out: zero. */
	__u64 reserved[2];
};

/**
 * DRM_TRN_QUEUE_FENCE_OWN_TIMELINE - add the fence to the queue's own
 * timeline syncobj at point @seqno (@syncobj and @point must be zero);
 * nothing is added when the timeline has that point or a later one already
 */
#define DRM_TRN_QUEUE_FENCE_OWN_TIMELINE	(1U << 0)

/**
 * struct drm_trn_queue_fence - a fence for a job of a user-mode queue
 *
 * Makes a DMA fence that signals when job @seqno of the user-mode queue
 * @queue_id has completed, carrying its error if it failed (the errno of
 * &struct drm_trn_job), and puts it into a syncobj: the queue's own
 * timeline (%DRM_TRN_QUEUE_FENCE_OWN_TIMELINE), or @syncobj, replacing its
 * fence (@point 0) or adding it at timeline @point. This is how jobs of a
 * user-mode queue reach waits that sleep, other queues' in-fences, other
 * drivers and sync_file.
 *
 * Only submitted work gets a fence: @seqno must be at most the doorbell's
 * write pointer when the call is made. Every such fence signals in bounded
 * time: if the queue completes nothing for
 * &drm_trn_device_info.job_timeout_ms while a fence of it is pending, the
 * device abandons the job it runs (%DRM_TRN_STATUS_TIMEOUT), the context is
 * banned (&DRM_TRN_QUEUE_BANNED) and every pending fence of the queue
 * signals with -ETIMEDOUT. The call also wakes the device up for the
 * queue, as %DRM_IOCTL_TRN_QUEUE_WAKE does.
 */
struct drm_trn_queue_fence {
	/** @queue_id: a user-mode queue of the caller. */
	__u32 queue_id;
	/** @flags: DRM_TRN_QUEUE_FENCE_* bits. */
	__u32 flags;
	/** @seqno: the job, from 1 to the doorbell's write pointer. */
	__u64 seqno;
	/** @syncobj: syncobj handle, unless the queue's own timeline. */
	__u32 syncobj;
	/** @pad: must be zero. */
	__u32 pad;
	/** @point: timeline point of @syncobj, or 0 to replace its fence. */
	__u64 point;
};

/**
 * struct drm_trn_queue_wake - ring a user-mode queue's doorbell
 *
 * Makes the device look at the queue's write pointer again; for a
 * submitter that found %DRM_TRN_DOORBELL_NEED_WAKEUP set. Cheap, and
 * harmless when the device was watching anyway.
 */
struct drm_trn_queue_wake {
	/** @queue_id: a user-mode queue of the caller. */
	__u32 queue_id;
	/** @flags: must be zero. */
	__u32 flags;
};

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_TRN_ACCEL_H_ */
