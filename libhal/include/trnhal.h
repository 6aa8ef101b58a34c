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

/* Text for a (negative) errno returned by this library; never NULL. */
const char *trn_strerror(int err);

/* "sim", "trn2", "trn3" or "unknown"; never NULL. */
const char *trn_generation_name(uint32_t generation);

#ifdef __cplusplus
}
#endif

#endif /* TRNHAL_H */
