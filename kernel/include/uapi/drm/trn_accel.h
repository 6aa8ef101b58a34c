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
#define DRM_TRN_UAPI_MINOR	0

#define DRM_TRN_QUERY		0x00

#define DRM_IOCTL_TRN_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TRN_QUERY, struct drm_trn_query)

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
 */
enum drm_trn_query_id {
	DRM_TRN_QUERY_DEVICE_INFO = 1,
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

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_TRN_ACCEL_H_ */
