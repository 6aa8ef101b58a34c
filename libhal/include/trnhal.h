/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The trn authors
 *
 * trnhal.h - libtrnhal, the thin user-space library over the trn DRM accel
 * driver. See Documentation/libtrnhal.md for the full reference.
 *
 * Conventions: every function that can fail returns 0 (or a non-negative
 * value where documented) on success and a negative errno on failure;
 * trn_strerror() turns such a value into text.
 */
#ifndef TRNHAL_H
#define TRNHAL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque handle of an open device; shared by every opener in a process. */
typedef struct trn_device trn_device_t;

/* Opaque handle of a buffer object of a device (see trn_bo_create()). */
typedef struct trn_bo trn_bo_t;

/* Values of trn_device_info.generation (same as enum drm_trn_generation). */
#define TRN_GEN_SIM	1
#define TRN_GEN_TRN2	2
#define TRN_GEN_TRN3	3

/* Bits of trn_device_info.capabilities (same as DRM_TRN_CAP_*). */
#define TRN_CAP_SIMULATED	(1ULL << 0)
#define TRN_CAP_HBM_CPU_VISIBLE	(1ULL << 1)
/*
 * Opcodes the device executes beyond NOP, WRITE, FILL, COPY and CALL. A
 * driver before uAPI 1.4 executes all of them without saying so; for it
 * trn_device_info() sets the three bits itself.
 */
#define TRN_CAP_TIMESTAMP	(1ULL << 2)	/* TIMESTAMP */
#define TRN_CAP_SEMAPHORES	(1ULL << 3)	/* SEM_SIGNAL, SEM_WAIT */
#define TRN_CAP_COMPUTE		(1ULL << 4)	/* MATMUL, UNARY, BINARY, REDUCE */
#define TRN_CAP_EXEC_ALL	(TRN_CAP_TIMESTAMP | TRN_CAP_SEMAPHORES | \
				 TRN_CAP_COMPUTE)
/*
 * UNARY's LOG, ERF, GELU_ERF and GELU_ERF_GRAD (uAPI 1.5; never set for an
 * older driver, which fails them with TRN_STATUS_BAD_ARG).
 */
#define TRN_CAP_LOG_ERF		(1ULL << 5)
/*
 * User-mode queues: trn_queue_create() makes them where the device has
 * them, so that a submission is a few stores to memory, not a system call
 * (Documentation/libtrnhal.md, "User-mode queues").
 */
#define TRN_CAP_USER_QUEUES	(1ULL << 6)
/*
 * UNARY's TRN_ELEM_SRC_U8: an operand of bytes (uAPI 1.7; never set for an
 * older driver, which fails the flag with TRN_STATUS_BAD_ARG).
 */
#define TRN_CAP_SRC_U8		(1ULL << 7)

/*
 * Description of one device. New fields are only ever taken from the
 * reserved tail, so the size of the structure never changes.
 */
struct trn_device_info {
	unsigned int minor;		/* N of /dev/accel/accelN */
	char node[32];			/* "/dev/accel/accelN" */
	char driver_name[32];		/* DRM_IOCTL_VERSION name ("trn") */
	int driver_major;		/* DRM_IOCTL_VERSION version */
	int driver_minor;
	int driver_patchlevel;
	uint32_t uapi_major;		/* DRM_TRN_UAPI_* of the running driver */
	uint32_t uapi_minor;
	uint32_t generation;		/* TRN_GEN_* */
	uint32_t num_cores;		/* NeuronCores */
	uint32_t queues_per_core;	/* hardware queues per core */
	uint32_t device_id;		/* backend's id (simulator: its id) */
	uint64_t hbm_size;		/* device memory, bytes */
	uint64_t va_start;		/* first usable device VA of a context */
	uint64_t va_size;		/* size of a context's device VA range */
	uint64_t capabilities;		/* TRN_CAP_* */
	/* Policy of the driver; 0 from drivers before uAPI 1.3. */
	uint32_t queue_depth;		/* unfinished jobs a queue holds at most */
	uint32_t job_timeout_ms;	/* longest a job runs before it is stopped */
	uint32_t ban_faults;		/* MMU faults of a context that ban it */
	uint32_t user_queues;		/* user-mode queues of the device (1.6) */
	/*
	 * HBM stacks hbm_size is split into equally, stack n holding the
	 * offsets from n * hbm_size / hbm_stacks (TRN_BO_STACK()); 0 from
	 * drivers before uAPI 1.8, which cannot place a buffer on a stack.
	 */
	uint32_t hbm_stacks;
	uint32_t reserved0;		/* zero */
	uint64_t reserved[13];		/* zero; room for new fields */
};

/*
 * Enumerate trn devices: fills @minors with up to @cap accel minors in
 * ascending order and stores the total number found in @count (which may
 * exceed @cap; call again with a bigger array). @minors may be NULL when
 * @cap is 0. Nodes that are not driven by trn are skipped.
 */
int trn_device_list(unsigned int *minors, size_t cap, size_t *count);

/*
 * Open /dev/accel/accel@minor. Opening a device that this process already
 * has open returns the same handle with its reference count raised; every
 * successful open must be paired with one trn_device_close().
 * Errors: -ENOENT no such node, -ENODEV not a trn device, -EPROTO the
 * driver speaks an incompatible uAPI major version, -EACCES, -ENOMEM.
 */
int trn_device_open(unsigned int minor, trn_device_t **out);

/*
 * Drop one reference; the file is closed with the last one (every queue
 * holds one, so by then each was destroyed, see trn_queue_destroy()). A
 * process that exits without closing has its unfinished jobs cancelled
 * by the kernel (-ESRCH). NULL is a no-op.
 */
void trn_device_close(trn_device_t *dev);

/* Query the device. -ENODEV once the device has been removed. */
int trn_device_info(trn_device_t *dev, struct trn_device_info *info);

/* The DRM file descriptor (owned by the handle: do not close it). */
int trn_device_fd(trn_device_t *dev);

/* Placements of a buffer (same as enum drm_trn_placement). */
#define TRN_PLACEMENT_HBM	1	/* device memory */
#define TRN_PLACEMENT_HOST	2	/* pinned host memory */
#define TRN_PLACEMENT_USERPTR	3	/* the caller's memory; reported only */
#define TRN_PLACEMENT_IMPORTED	4	/* a dma-buf; reported only */

/* Flags of trn_bo_create() (same as DRM_TRN_BO_*). */
#define TRN_BO_HOST_WC		(1U << 0)	/* HOST: CPU-map write-combined */
#define TRN_BO_DEVICE_READ_ONLY	(1U << 1)	/* the device may only read */
/*
 * HBM: the whole buffer in HBM stack n (below trn_device_info.hbm_stacks),
 * -E2BIG if larger than a stack, -ENOMEM if that stack has no room even
 * where others do. Without it a buffer goes wherever it fits.
 */
#define TRN_BO_ON_STACK		(1U << 2)
#define TRN_BO_STACK_SHIFT	8
#define TRN_BO_STACK_MASK	(0xffU << TRN_BO_STACK_SHIFT)
#define TRN_BO_STACK(n)		(TRN_BO_ON_STACK | ((uint32_t)(n) << TRN_BO_STACK_SHIFT))

/* Flags of trn_bo_userptr() (same as DRM_TRN_USERPTR_*). */
#define TRN_USERPTR_READ_ONLY	(1U << 0)	/* pin read-only; device reads */

/* Largest alignment trn_bo_create() accepts (DRM_TRN_BO_MAX_ALIGNMENT). */
#define TRN_BO_MAX_ALIGNMENT	(1ULL << 30)

/* Description of a buffer; fixed size, new fields come from reserved. */
struct trn_bo_info {
	uint64_t size;			/* bytes, a multiple of the page size */
	uint64_t va;			/* device address in the device's context */
	uint32_t placement;		/* TRN_PLACEMENT_* */
	uint32_t flags;			/* TRN_BO_* */
	uint32_t handle;		/* GEM handle in trn_device_fd() */
	uint32_t reserved0;		/* zero */
	uint64_t reserved[6];		/* zero */
};

/* Memory of a device and of this process's context (DRM_TRN_QUERY_MEMORY). */
struct trn_memory_stats {
	uint64_t hbm_total;		/* device memory, bytes */
	uint64_t hbm_used;		/* allocated by anyone */
	uint64_t host_pinned;		/* host memory pinned for the device by anyone */
	uint64_t ctx_hbm;		/* device memory of this context's buffers */
	uint64_t ctx_pinned;		/* host memory this context's buffers pin */
	uint64_t ctx_bos;		/* buffers this context created and holds */
	uint64_t max_ctx_bos;		/* limit on ctx_bos (-EDQUOT beyond) */
	uint64_t max_ctx_pinned;	/* limit on ctx_pinned, bytes */
	uint64_t reserved[8];		/* zero */
};

/*
 * Create a buffer of at least @size bytes (rounded up to pages) in
 * @placement (TRN_PLACEMENT_HBM or _HOST) with TRN_BO_* @flags, mapped into
 * the device's address space at an address aligned to @alignment (0: the
 * kernel's default; else a power of two up to TRN_BO_MAX_ALIGNMENT). The
 * memory reads as zero. The buffer holds a reference to @dev.
 * Errors: -EINVAL, -E2BIG (more than the device could ever hold), -ENOMEM
 * (exhausted), -EDQUOT (beyond the context's limits), -ECHILD, -ENODEV.
 */
int trn_bo_create(trn_device_t *dev, uint64_t size, uint32_t placement,
		  uint32_t flags, uint64_t alignment, trn_bo_t **out);

/*
 * Wrap [@ptr, @ptr + @size) of the caller's memory (both page aligned) as
 * a buffer; TRN_USERPTR_READ_ONLY pins it read-only. The pages stay pinned
 * until the buffer is freed. -EFAULT for memory that is not mapped (or not
 * writable without READ_ONLY).
 */
int trn_bo_userptr(trn_device_t *dev, void *ptr, uint64_t size,
		   uint32_t flags, trn_bo_t **out);

/*
 * Drop one reference (trn_bo_create/userptr/import each give one); the
 * last one unmaps the CPU mapping and closes the GEM handle. NULL is a no-op.
 */
void trn_bo_free(trn_bo_t *bo);

/* Device address, 0 for NULL or a handle inherited over fork(). */
uint64_t trn_bo_va(trn_bo_t *bo);

/* Size in bytes, 0 for NULL or a handle inherited over fork(). */
uint64_t trn_bo_size(trn_bo_t *bo);

/* Describe the buffer; -ECHILD in a forked child. */
int trn_bo_info(trn_bo_t *bo, struct trn_bo_info *info);

/*
 * CPU mapping of an HBM (where CPU-visible) or HOST buffer, whole and
 * read-write. Refcounted: every call returns the same address and must be
 * paired with one trn_bo_unmap(). -EINVAL for buffers that cannot be mapped
 * through the device (userptr, imported, invisible device memory).
 */
int trn_bo_map(trn_bo_t *bo, void **ptr);

/* Drop one mapping reference; the last one unmaps. -EINVAL if not mapped. */
int trn_bo_unmap(trn_bo_t *bo);

/*
 * Export a HOST buffer as a dma-buf file descriptor (O_CLOEXEC, read-write),
 * owned by the caller. -EOPNOTSUPP for device memory and userptr buffers.
 */
int trn_bo_export(trn_bo_t *bo, int *dmabuf_fd);

/*
 * Import a dma-buf. Importing a buffer that this process already holds
 * on @dev (imported before, or exported from @dev) returns the same
 * trn_bo_t with its reference count raised. @dmabuf_fd stays the caller's.
 */
int trn_bo_import(trn_device_t *dev, int dmabuf_fd, trn_bo_t **out);

/* Memory figures of the device and of the process's context. */
int trn_device_memory_stats(trn_device_t *dev, struct trn_memory_stats *stats);

/* One HBM stack of a device (DRM_TRN_QUERY_HBM_STACKS); fixed size. */
struct trn_hbm_stack {
	uint64_t size;			/* bytes */
	uint64_t used;			/* allocated by anyone */
	/* Its largest free range: a page-aligned buffer this big fits now. */
	uint64_t largest_free;
	uint64_t reserved[5];		/* zero */
};

/*
 * The device's HBM stacks in order (TRN_BO_STACK() numbers them): fills
 * @stacks with up to @cap of them and stores how many the device has in
 * @count (at most 256; @stacks may be NULL when @cap is 0). A buffer that
 * spans several stacks counts in each for its bytes there; the figures of
 * all stacks are one moment's. -EOPNOTSUPP from drivers before uAPI 1.8.
 */
int trn_device_hbm_stacks(trn_device_t *dev, struct trn_hbm_stack *stacks,
			  size_t cap, size_t *count);

/*
 * Execution: queues, command buffers, jobs and fences.
 * See Documentation/libtrnhal.md, Documentation/execution.md and
 * Documentation/isa.md.
 *
 * The ISA constants below (TRN_UNARY_*, TRN_BINARY_*, TRN_REDUCE_*, the
 * command flags, TRN_NUM_SEMAPHORES, TRN_ISA_MAX_DIM) carry the same names
 * and values as in the uAPI header trn_isa.h, where they are macros with
 * the same definitions: a file may include both, in either order.
 */

/* Opaque handle of a queue of jobs on one NeuronCore. */
typedef struct trn_queue trn_queue_t;

/* Opaque handle of a command buffer being built (a host buffer). */
typedef struct trn_cmdbuf trn_cmdbuf_t;

/* Priorities of trn_queue_create() (same as enum drm_trn_priority). */
#define TRN_PRIORITY_LOW	0
#define TRN_PRIORITY_NORMAL	1
#define TRN_PRIORITY_HIGH	2	/* needs CAP_SYS_NICE */

/*
 * A fence: job number @seqno of @queue. Plain value, copy freely; valid
 * while the queue exists. Jobs are numbered from 1; {queue, 0} is a fence
 * that is always signalled.
 */
struct trn_fence {
	trn_queue_t *queue;
	uint64_t seqno;
};

/*
 * Create a queue on NeuronCore @core with TRN_PRIORITY_* @priority.
 * The queue holds a reference to @dev. All queue, submission and fence
 * functions are thread-safe (many threads may submit to one queue).
 * Where the device offers user-mode queues (TRN_CAP_USER_QUEUES) this is
 * one, unless the environment has TRNHAL_USER_QUEUES=0 or the device runs
 * as many as it can (then it is a kernel queue).
 * Errors: -EINVAL, -EACCES (HIGH without CAP_SYS_NICE), -ENOMEM, -ENODEV,
 * -ECHILD.
 */
int trn_queue_create(trn_device_t *dev, uint32_t core, uint32_t priority,
		     trn_queue_t **out);

/* Flags of trn_queue_create_flags(). */
#define TRN_QUEUE_CREATE_KERNEL	(1U << 0)	/* a kernel queue */
#define TRN_QUEUE_CREATE_USER	(1U << 1)	/* a user-mode queue */

/*
 * trn_queue_create() with a choice: TRN_QUEUE_CREATE_KERNEL for a queue
 * whose jobs go through the kernel (DRM_IOCTL_TRN_SUBMIT), whatever the
 * device offers; TRN_QUEUE_CREATE_USER for a user-mode queue or
 * -EOPNOTSUPP (the device has none) or -ENOSPC (it runs as many as it
 * can); 0 as trn_queue_create(). Both flags: -EINVAL.
 */
int trn_queue_create_flags(trn_device_t *dev, uint32_t core,
			   uint32_t priority, uint32_t flags, trn_queue_t **out);

/* 1 for a user-mode queue, 0 for a kernel queue (or NULL). */
int trn_queue_is_user_mode(trn_queue_t *queue);

/*
 * Destroy a queue without waiting: its unfinished jobs are cancelled with
 * -ESRCH. Those not started never run; a running one is stopped by the
 * device at its next command boundary (what it wrote stays written), so
 * it may still be running its current command when this returns. Call
 * trn_queue_wait_idle() first if they must finish. Fences of the queue
 * become invalid (sync_files and signal syncobjs of the cancelled jobs
 * still signal, with -ESRCH). NULL is a no-op.
 */
void trn_queue_destroy(trn_queue_t *queue);

/* The device of a queue. */
trn_device_t *trn_queue_device(trn_queue_t *queue);

/* Number of the latest job submitted to @queue (0 before the first). */
uint64_t trn_queue_last_seqno(trn_queue_t *queue);

/*
 * Wait until every job submitted to @queue so far has finished: 0 (even if
 * some failed: fences and trn_queue_status() tell), -ETIME on timeout.
 */
int trn_queue_wait_idle(trn_queue_t *queue, int64_t abs_timeout_ns);

/* Values of trn_queue_status.status (same as enum drm_trn_job_status). */
#define TRN_STATUS_OK		0
#define TRN_STATUS_BAD_OPCODE	1
#define TRN_STATUS_BAD_SIZE	2
#define TRN_STATUS_BAD_ALIGN	3
#define TRN_STATUS_BAD_ARG	4
#define TRN_STATUS_CALL_DEPTH	5
#define TRN_STATUS_MMU_FAULT	6
#define TRN_STATUS_TIMEOUT	7
#define TRN_STATUS_ABORTED	8
#define TRN_STATUS_UNSUPPORTED	9	/* opcode without its TRN_CAP_* bit */
#define TRN_STATUS_DEVICE_ERROR	10	/* the device's DMA failed (-EIO) */

/* Bits of trn_queue_status.state (same as DRM_TRN_QUEUE_*). */
#define TRN_QUEUE_GUILTY	(1U << 0)	/* caused a reset */
#define TRN_QUEUE_FAULTED	(1U << 1)	/* made an MMU fault */
/*
 * The context (the device's file, shared by the whole process) was banned
 * since the queue was created: a job of it timed out, or its jobs made
 * another trn_device_info.ban_faults MMU faults. The queue
 * refuses jobs (-ECANCELED) and its unfinished jobs were cancelled with
 * -ECANCELED; destroy it, queues created afterwards work.
 */
#define TRN_QUEUE_BANNED	(1U << 2)

/*
 * State of a queue (DRM_IOCTL_TRN_QUEUE_STATUS): counters and where its
 * latest failed job failed; fixed size, new fields come from reserved.
 */
struct trn_queue_status {
	uint64_t submitted_seqno;
	uint64_t completed_seqno;
	uint64_t jobs_failed;
	uint64_t failed_seqno;		/* latest failed job, or 0 */
	int32_t error;			/* its negative errno, or 0 */
	uint32_t status;		/* its TRN_STATUS_* */
	uint64_t error_offset;		/* failing command's offset in its buffer */
	uint64_t error_cmd_va;		/* failing command's device address */
	uint64_t fault_va;		/* faulting address (MMU faults) */
	uint32_t state;			/* TRN_QUEUE_* */
	uint32_t resets;		/* resets the queue's jobs caused */
	uint64_t reserved[6];
};

/* Ask the kernel for the state of @queue (a system call). */
int trn_queue_status(trn_queue_t *queue, struct trn_queue_status *status);

/*
 * Create a command buffer able to hold @capacity bytes of commands (rounded
 * up to pages; 0 picks 64 KiB; -E2BIG above 16 MiB, the most one job
 * runs), in a host buffer the device reads. Holds a reference to @dev.
 * A command buffer is recorded by one thread at a time
 * (no lock: recording is a few stores); in a forked child the trn_cmd_*
 * functions return -ECHILD (its memory is still the parent's).
 */
int trn_cmdbuf_create(trn_device_t *dev, size_t capacity, trn_cmdbuf_t **out);

/* Free a command buffer; jobs that use it must have finished. NULL: no-op. */
void trn_cmdbuf_destroy(trn_cmdbuf_t *cb);

/*
 * Forget the commands recorded so far, to record new ones from the start.
 * Jobs that use the old commands must have finished.
 */
void trn_cmdbuf_reset(trn_cmdbuf_t *cb);

/* Bytes recorded since creation or the last reset, and the capacity. */
size_t trn_cmdbuf_size(const trn_cmdbuf_t *cb);
size_t trn_cmdbuf_capacity(const trn_cmdbuf_t *cb);

/* Device address of the first command, and of the next one to be recorded. */
uint64_t trn_cmdbuf_va(const trn_cmdbuf_t *cb);
uint64_t trn_cmdbuf_tail_va(const trn_cmdbuf_t *cb);

/* The buffer behind the command buffer (for job buffer lists). */
trn_bo_t *trn_cmdbuf_bo(trn_cmdbuf_t *cb);

/* Device semaphores per context and core, largest dimension (ISA limits). */
#define TRN_NUM_SEMAPHORES	256
#define TRN_ISA_MAX_DIM		(1U << 16)

/*
 * One function per ISA operation (Documentation/isa.md). Each appends one
 * command and returns 0, -ENOSPC when it does not fit (nothing appended),
 * or -EINVAL for arguments the ISA can never accept: unknown op or flags,
 * a semaphore >= TRN_NUM_SEMAPHORES, a dimension of 0 or above
 * TRN_ISA_MAX_DIM, a matmul B operand above the ISA's limit (k * n * 4
 * bytes), a CALL of 0 bytes, not a multiple of 8 or not 8-byte aligned.
 * The device checks the rest (addresses, pitches, sizes) when it runs the
 * job. trn_cmd_copy() is trn_cmd_copy2d() with one row and both pitches
 * equal to @size.
 */
int trn_cmd_nop(trn_cmdbuf_t *cb);
int trn_cmd_write32(trn_cmdbuf_t *cb, uint64_t dst, uint32_t value);
int trn_cmd_write64(trn_cmdbuf_t *cb, uint64_t dst, uint64_t value);
int trn_cmd_fill(trn_cmdbuf_t *cb, uint64_t dst, uint32_t pattern,
		 uint64_t size);
int trn_cmd_copy(trn_cmdbuf_t *cb, uint64_t dst, uint64_t src, uint64_t size);
int trn_cmd_copy2d(trn_cmdbuf_t *cb, uint64_t dst, uint64_t dst_pitch,
		   uint64_t src, uint64_t src_pitch, uint64_t width,
		   uint64_t height);
int trn_cmd_timestamp(trn_cmdbuf_t *cb, uint64_t dst);
int trn_cmd_sem_signal(trn_cmdbuf_t *cb, uint32_t sem, uint64_t value);
int trn_cmd_sem_wait(trn_cmdbuf_t *cb, uint32_t sem, uint64_t value);
int trn_cmd_call(trn_cmdbuf_t *cb, uint64_t va, uint64_t size);

/* Operand description of trn_cmd_matmul(); pitches in bytes. */
struct trn_matmul {
	uint32_t m, n, k;
	uint32_t flags;			/* TRN_MATMUL_* */
	uint64_t a, lda;		/* A[m][k], f32 or bf16 */
	uint64_t b, ldb;		/* B[k][n], f32 or bf16 */
	uint64_t c, ldc;		/* C[m][n], f32 */
};
#define TRN_MATMUL_BF16		(1U << 0)	/* A and B are bf16 */
#define TRN_MATMUL_ACCUMULATE	(1U << 1)	/* C += A * B */
#define TRN_MATMUL_TRANSPOSE_A	(1U << 2)	/* A stored as [k][m] */
#define TRN_MATMUL_TRANSPOSE_B	(1U << 3)	/* B stored as [n][k] */
int trn_cmd_matmul(trn_cmdbuf_t *cb, const struct trn_matmul *mm);

/* Element-wise and reduction operations (same as enum trn_*_op). */
#define TRN_UNARY_COPY		0
#define TRN_UNARY_NEG		1
#define TRN_UNARY_ABS		2
#define TRN_UNARY_RELU		3
#define TRN_UNARY_GELU		4
#define TRN_UNARY_EXP		5
#define TRN_UNARY_RECIP		6
#define TRN_UNARY_SQRT		7
#define TRN_UNARY_TANH		8
#define TRN_UNARY_RELU_GRAD	9
#define TRN_UNARY_LOG		10	/* these four: TRN_CAP_LOG_ERF */
#define TRN_UNARY_ERF		11
#define TRN_UNARY_GELU_ERF	12
#define TRN_UNARY_GELU_ERF_GRAD	13
#define TRN_BINARY_ADD		0
#define TRN_BINARY_SUB		1
#define TRN_BINARY_MUL		2
#define TRN_BINARY_DIV		3
#define TRN_BINARY_MAX		4
#define TRN_BINARY_MIN		5
#define TRN_REDUCE_SUM		0
#define TRN_REDUCE_MAX		1
#define TRN_ELEM_DST_BF16	(1U << 0)	/* store results as bf16 */
#define TRN_BINARY_B_PER_ROW	(1U << 1)	/* b: one value per row */
/* UNARY: src holds bytes, each the f32 of its value (TRN_CAP_SRC_U8) */
#define TRN_ELEM_SRC_U8		(1U << 2)

/* Pitches in bytes; a pitch of 0 for a source repeats its first row. */
int trn_cmd_unary(trn_cmdbuf_t *cb, uint32_t op, uint32_t flags,
		  uint32_t rows, uint32_t cols, uint64_t dst, uint64_t dst_pitch,
		  uint64_t src, uint64_t src_pitch);
int trn_cmd_binary(trn_cmdbuf_t *cb, uint32_t op, uint32_t flags,
		   uint32_t rows, uint32_t cols, uint64_t dst,
		   uint64_t dst_pitch, uint64_t a, uint64_t a_pitch,
		   uint64_t b, uint64_t b_pitch);
int trn_cmd_reduce(trn_cmdbuf_t *cb, uint32_t op, uint32_t rows,
		   uint32_t cols, uint64_t dst, uint64_t src,
		   uint64_t src_pitch);

/*
 * A job for trn_submit(): the commands at [cmd_va, cmd_va + cmd_size) (for
 * a command buffer: trn_cmdbuf_va() and trn_cmdbuf_size()), buffers of the
 * queue's device kept alive while it runs (list the command buffer's own
 * trn_cmdbuf_bo() too), fences to wait for (any queue of any device; those
 * with seqno 0 are skipped) and raw syncobjs of the device to wait for or
 * signal (point 0: binary syncobj).
 */
struct trn_syncobj_point {
	uint32_t handle;		/* syncobj handle in trn_device_fd() */
	uint32_t reserved;		/* zero */
	uint64_t point;			/* timeline point, 0 for binary */
};

struct trn_job {
	uint64_t cmd_va;
	uint32_t cmd_size;
	uint32_t flags;			/* zero */
	trn_bo_t *const *bos;
	uint32_t bo_count;
	uint32_t wait_count;
	const struct trn_fence *waits;
	const struct trn_syncobj_point *wait_syncobjs;
	uint32_t wait_syncobj_count;
	uint32_t signal_syncobj_count;
	const struct trn_syncobj_point *signal_syncobjs;
	uint64_t reserved[4];		/* zero */
};

/* Most jobs of one trn_submit_batch() or trn_try_submit_batch(). */
#define TRN_SUBMIT_MAX_JOBS	256

/*
 * Submit one job, or @count (1 to TRN_SUBMIT_MAX_JOBS) jobs in one system
 * call (all or none are queued, in order). @fences (may be NULL) receives
 * each job's fence. A queue holds at most trn_device_info.queue_depth
 * unfinished jobs: beyond that these wait in the kernel until enough
 * jobs have finished (signals do not interrupt the wait).
 * Errors: -EINVAL (NULL queue, job or arrays with counts, @count 0 or too
 * big, non-zero reserved fields), -EXDEV (a buffer of another device),
 * -ECHILD, and the kernel's: -ECANCELED (the queue's context was banned,
 * see TRN_QUEUE_BANNED), -EINVAL, -ENOENT for a bad handle, -EFAULT,
 * -ENOMEM, -ENODEV. Nothing is queued on error, but on a user-mode queue
 * a failing QUEUE_FENCE or QUEUE_WAKE, returned after the jobs were
 * queued (Documentation/libtrnhal.md).
 */
int trn_submit(trn_queue_t *queue, const struct trn_job *job,
	       struct trn_fence *fence);
int trn_submit_batch(trn_queue_t *queue, const struct trn_job *jobs,
		     size_t count, struct trn_fence *fences);

/*
 * The same without waiting: -EAGAIN at once, with nothing queued, when the
 * queue has no room for all the jobs (try again once some have finished,
 * e.g. after trn_fence_wait() on an older fence).
 */
int trn_try_submit(trn_queue_t *queue, const struct trn_job *job,
		   struct trn_fence *fence);
int trn_try_submit_batch(trn_queue_t *queue, const struct trn_job *jobs,
			 size_t count, struct trn_fence *fences);

/*
 * Fence state without a system call: 1 while pending, 0 when the job
 * finished successfully, a negative errno when it failed (-EILSEQ bad
 * command, -EFAULT MMU fault, -ETIMEDOUT ran too long, -ENODEV device
 * gone, -ECANCELED cancelled because its context was banned, see
 * TRN_QUEUE_BANNED). -ERANGE when the job finished but whether it failed
 * is no longer known (more than 64 failures since). -EINVAL for a fence
 * without a queue or with a seqno never handed out, -ECHILD.
 */
int trn_fence_status(const struct trn_fence *fence);

/*
 * Wait for a fence until CLOCK_MONOTONIC @abs_timeout_ns (INT64_MAX:
 * forever). Spins briefly on the mapped completion record, then sleeps in
 * the kernel. Returns what trn_fence_status() returns once the fence is
 * finished, or -ETIME on timeout.
 */
int trn_fence_wait(const struct trn_fence *fence, int64_t abs_timeout_ns);

/*
 * Wait for @count fences (any queues of one device, else -EXDEV): all of
 * them, or with @wait_any the first to finish, whose index goes to @first
 * (may be NULL; untouched without @wait_any). Returns 0 when the condition
 * holds (check each with trn_fence_status()), -ETIME on timeout.
 */
int trn_fence_wait_many(const struct trn_fence *fences, size_t count,
			int wait_any, int64_t abs_timeout_ns, size_t *first);

/*
 * A sync_file for the fence: a pollable fd (POLLIN when finished,
 * O_CLOEXEC), owned by the caller, usable with other drivers. A fence with
 * seqno 0 gives a signalled sync_file (it still needs its queue).
 */
int trn_fence_sync_file(const struct trn_fence *fence, int *fd);

/* CLOCK_MONOTONIC now, in ns, for absolute timeouts. */
int64_t trn_now_ns(void);

/* Text for a (negative) errno returned by this library; never NULL. */
const char *trn_strerror(int err);

/* "sim", "trn2", "trn3" or "unknown"; never NULL. */
const char *trn_generation_name(uint32_t generation);

#ifdef __cplusplus
}
#endif

#endif /* TRNHAL_H */
