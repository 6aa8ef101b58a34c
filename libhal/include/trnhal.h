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
	uint64_t reserved[16];		/* zero; room for new fields */
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

/* Drop one reference; the file is closed with the last one. NULL is a no-op. */
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

/* Text for a (negative) errno returned by this library; never NULL. */
const char *trn_strerror(int err);

/* "sim", "trn2", "trn3" or "unknown"; never NULL. */
const char *trn_generation_name(uint32_t generation);

#ifdef __cplusplus
}
#endif

#endif /* TRNHAL_H */
