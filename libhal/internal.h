/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The trn authors
 *
 * Internal declarations of libtrnhal. The host unit tests build the library
 * with TRNHAL_TESTING, which points the sysfs and /dev roots at a fake tree
 * and routes every ioctl through replaceable functions.
 */
#ifndef TRNHAL_INTERNAL_H
#define TRNHAL_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trnhal.h"

#define TRN_PUBLIC __attribute__((visibility("default")))

/*
 * trn_ioctl() is drmIoctl(), which restarts on EINTR and EAGAIN;
 * trn_ioctl_raw() is one ioctl(), for the submission, whose EAGAIN means
 * "queue full" (queue.c restarts it itself).
 */

#ifdef TRNHAL_TESTING
#include <sys/types.h>
extern const char *trnhal_test_sysfs_root;
extern const char *trnhal_test_dev_root;
/* drmIoctl(), and the single ioctl() that trn_ioctl_raw() stands for. */
extern int (*trnhal_test_ioctl)(int fd, unsigned long request, void *arg);
extern int (*trnhal_test_raw_ioctl)(int fd, unsigned long request, void *arg);
extern void *(*trnhal_test_mmap)(void *addr, size_t len, int prot, int flags,
				 int fd, off_t offset);
extern int (*trnhal_test_munmap)(void *addr, size_t len);
size_t trnhal_test_registry_size(void);
/* Spin budget of trn_fence_wait() before it sleeps (TRN_FENCE_SPIN_NS). */
extern int64_t trnhal_test_spin_ns;
/* Imported syncobjs a queue's cross-device cache holds. */
size_t trnhal_test_queue_imports(trn_queue_t *queue);
/* Buffers in @dev's handle table (distinct trn_bo_t objects). */
size_t trnhal_test_bo_count(trn_device_t *dev);
/* References of @bo, and of its CPU mapping. */
unsigned int trnhal_test_bo_refs(trn_bo_t *bo);
unsigned int trnhal_test_bo_map_refs(trn_bo_t *bo);

#define TRN_SYSFS_ACCEL		trnhal_test_sysfs_root
#define TRN_DEV_ACCEL		trnhal_test_dev_root
#define trn_ioctl(fd, req, arg)	trnhal_test_ioctl(fd, req, arg)
#define trn_ioctl_raw(fd, req, arg) trnhal_test_raw_ioctl(fd, req, arg)
#define trn_mmap(a, l, p, f, fd, o) trnhal_test_mmap(a, l, p, f, fd, o)
#define trn_munmap(a, l)	trnhal_test_munmap(a, l)
#else
#define TRN_SYSFS_ACCEL		"/sys/class/accel"
#define TRN_DEV_ACCEL		"/dev/accel"
#define trn_ioctl(fd, req, arg)	drmIoctl(fd, req, arg)
#define trn_ioctl_raw(fd, req, arg) ioctl(fd, req, arg)
#define trn_mmap(a, l, p, f, fd, o) mmap(a, l, p, f, fd, o)
#define trn_munmap(a, l)	munmap(a, l)
#endif

/*
 * An open device (trn_device_t). Shared between device.c (the registry)
 * and memory.c (the buffers of the device's file).
 */
struct trn_device {
	struct trn_device *next;	/* registry list */
	unsigned int refs;		/* openers and live buffers; registry_lock */
	unsigned long fork_gen;		/* registry generation at open */
	unsigned int minor;
	int fd;
	char node[PATH_MAX];
	char driver_name[32];
	int driver_major;
	int driver_minor;
	int driver_patchlevel;
	uint32_t uapi_minor;		/* DRM_TRN_UAPI_MINOR of the driver */
	uint64_t capabilities;		/* DRM_TRN_CAP_* at open */
	uint32_t queue_depth;		/* 0 before uAPI 1.3 */

	/*
	 * The buffers of this file, by GEM handle: the kernel gives the same
	 * handle for every import of one buffer, so the library must give
	 * the same trn_bo_t. bo_lock protects the table and the refs of
	 * every buffer in it, and is held across the ioctls that create or
	 * close a handle that may be in it (import, GEM_CLOSE).
	 */
	pthread_mutex_t bo_lock;
	struct trn_bo **bo_buckets;
	size_t bo_nbuckets;		/* a power of two, or 0 */
	size_t bo_count;
};

/*
 * trn_fence_wait() first polls the mapped status page for this long: a
 * short job finishes within tens of microseconds, and a syscall plus a
 * wake-up of a sleeping thread costs more than that (trn-bench measured a
 * round trip of 90 us under emulation, and latency fell by two thirds when
 * the spin covered the job). After TRN_FENCE_SPIN_PAUSE_NS the poll yields
 * the CPU between looks, so a spinning waiter does not starve whatever
 * completes the job on an oversubscribed machine. Beyond it all the caller
 * sleeps in the kernel.
 */
#define TRN_FENCE_SPIN_NS	100000
#define TRN_FENCE_SPIN_PAUSE_NS	5000

#ifdef TRNHAL_TESTING
#define TRN_SPIN_NS		trnhal_test_spin_ns
#else
#define TRN_SPIN_NS		TRN_FENCE_SPIN_NS
#endif

struct drm_trn_queue_status_page;

/*
 * A syncobj of one queue imported into another device's file, for jobs of
 * that device waiting on the queue's fences (queue.c).
 */
struct trn_queue_import {
	struct trn_queue_import *next;
	trn_device_t *dev;		/* holds a reference */
	uint32_t handle;		/* in dev->fd */
};

struct drm_trn_doorbell;
struct drm_trn_queue_create;
struct drm_trn_user_desc;

/* A buffer kept alive for a job of a user-mode queue (uqueue.c). */
struct trn_hold {
	uint64_t seqno;			/* until this job completed */
	trn_bo_t *bo;			/* one reference */
};

/*
 * The user-mode side of a queue (uqueue.c): the ring and doorbell mapped
 * writable, and what the kernel no longer does for its jobs.
 */
struct trn_uq {
	struct drm_trn_user_desc *ring;	/* entries descriptors */
	size_t ring_size;
	struct drm_trn_doorbell *db;
	uint32_t entries;		/* a power of two */
	uint32_t depth;			/* most unfinished jobs */
	uint64_t timeline_max;		/* atomic: latest point made (FENCE) */

	/* submit_lock orders descriptors and the write pointer; and: */
	pthread_mutex_t submit_lock;
	uint64_t wptr;			/* latest job written */
	struct trn_hold *holds;		/* a ring of nholds from hold_first */
	size_t hold_cap, hold_first, nholds;
	trn_bo_t *nop;			/* a NOP, for jobs with many waits */
};

/* A queue (trn_queue_t); shared by queue.c (submission) and fence.c. */
struct trn_queue {
	trn_device_t *dev;		/* holds a reference */
	uint32_t id;
	uint32_t syncobj;		/* timeline: point N = job N done */
	uint32_t status_handle;		/* GEM handle of the status page */
	const struct drm_trn_queue_status_page *page;	/* mapped read-only */
	size_t page_size;
	uint64_t status_va;		/* device address of the status page */
	uint64_t last_seqno;		/* atomic; max of every seqno handed out */
	struct trn_uq *uq;		/* user-mode queue, else NULL */

	/* lock protects the lazily made objects below. */
	pthread_mutex_t lock;
	uint32_t binary_syncobj;	/* for sync_file export */
	bool have_binary_syncobj;	/* (0 is a valid handle on 7.x) */
	struct trn_queue_import *imports;
};

/*
 * uAPI 1.3: bounded queues (DRM_TRN_SUBMIT_NONBLOCK), and QUEUE_DESTROY
 * closes the status buffer handle itself. Older drivers' queues are
 * unbounded and leave the handle to userspace.
 */
#define TRN_UAPI_MINOR_BOUNDED	3
/* 1.4: capability bits for TIMESTAMP, semaphores and compute. */
#define TRN_UAPI_MINOR_CAPS	4
/* 1.6: user-mode queues (DRM_TRN_CAP_USER_QUEUES says whether). */
#define TRN_UAPI_MINOR_USER_QUEUES	6
/* 1.8: HBM stacks (DRM_TRN_QUERY_HBM_STACKS, DRM_TRN_BO_STACK()). */
#define TRN_UAPI_MINOR_HBM_STACKS	8

/* memory.c: close a GEM handle of @dev's file (errors are not reported). */
void trn_gem_close(trn_device_t *dev, uint32_t handle);

/* device.c */
bool trn_handle_stale(const trn_device_t *dev);
void trn_device_get(trn_device_t *dev);
int trn_ioctl_errno(int fd, unsigned long request, void *arg);

/* memory.c: the device's last reference is gone; free its table. */
void trn_bo_table_fini(trn_device_t *dev);
/* memory.c: @bo's device and GEM handle, for job buffer lists. */
trn_device_t *trn_bo_device(const trn_bo_t *bo);
uint32_t trn_bo_handle(const trn_bo_t *bo);
/* memory.c: take @n references, one on each of @bos (one lock). */
void trn_bo_ref_many(trn_bo_t *const *bos, size_t n);

/* uqueue.c: user-mode queues. */
int trn_uq_open(trn_queue_t *q, const struct drm_trn_queue_create *c);
void trn_uq_close(trn_queue_t *q, bool stale);
/* A wait saw jobs of @q complete: let go of their buffers if unlocked. */
void trn_uq_reap(trn_queue_t *q);
int trn_uq_submit(trn_queue_t *q, const struct trn_job *jobs, size_t count,
		  struct trn_fence *fences, bool nonblock);
/*
 * fence.c/uqueue.c: make sure the queue's timeline syncobj has a point
 * for job @seqno (a user-mode queue's points exist only once asked for);
 * 0 or -errno. Wakes the device for the queue.
 */
int trn_queue_need_point(trn_queue_t *q, uint64_t seqno);

/* fence.c: trn_fence_status() of job @seqno of @queue from its status page. */
int trn_queue_page_status(const trn_queue_t *queue, uint64_t seqno);
/*
 * fence.c: wait until job @seqno of @queue has finished, however it ended:
 * 0, -ETIME, or the error of the wait itself.
 */
int trn_queue_wait_point(trn_queue_t *queue, uint64_t seqno,
			 int64_t abs_timeout_ns);

#endif /* TRNHAL_INTERNAL_H */
