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
#define DRM_TRN_UAPI_MINOR	1

#define DRM_TRN_QUERY		0x00
#define DRM_TRN_BO_CREATE	0x01
#define DRM_TRN_BO_INFO		0x02
#define DRM_TRN_BO_USERPTR	0x03

#define DRM_IOCTL_TRN_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TRN_QUERY, struct drm_trn_query)
#define DRM_IOCTL_TRN_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TRN_BO_CREATE, struct drm_trn_bo_create)
#define DRM_IOCTL_TRN_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TRN_BO_INFO, struct drm_trn_bo_info)
#define DRM_IOCTL_TRN_BO_USERPTR \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TRN_BO_USERPTR, struct drm_trn_bo_userptr)

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
 */
enum drm_trn_query_id {
	DRM_TRN_QUERY_DEVICE_INFO = 1,
	DRM_TRN_QUERY_MEMORY = 2,
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

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_TRN_ACCEL_H_ */
