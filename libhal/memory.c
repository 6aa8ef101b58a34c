// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * Buffer objects: creation, userptr, CPU mappings, dma-buf export and
 * import, and the per-device table that gives every GEM handle exactly one
 * trn_bo_t (the kernel returns the same handle for every import of one
 * buffer, so the handle may only be closed when the last user is done).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>

#include "trn_accel.h"
#include "trnhal.h"
#include "internal.h"

/* The public constants are the uAPI's, spelled without the DRM prefix. */
_Static_assert(TRN_PLACEMENT_HBM == DRM_TRN_PLACEMENT_HBM, "placement");
_Static_assert(TRN_PLACEMENT_HOST == DRM_TRN_PLACEMENT_HOST, "placement");
_Static_assert(TRN_PLACEMENT_USERPTR == DRM_TRN_PLACEMENT_USERPTR,
	       "placement");
_Static_assert(TRN_PLACEMENT_IMPORTED == DRM_TRN_PLACEMENT_IMPORTED,
	       "placement");
_Static_assert(TRN_BO_HOST_WC == DRM_TRN_BO_HOST_WC, "flag");
_Static_assert(TRN_BO_DEVICE_READ_ONLY == DRM_TRN_BO_DEVICE_READ_ONLY, "flag");
_Static_assert(TRN_BO_ON_STACK == DRM_TRN_BO_ON_STACK, "flag");
_Static_assert(TRN_BO_STACK_SHIFT == DRM_TRN_BO_STACK_SHIFT, "flag");
_Static_assert(TRN_BO_STACK_MASK == DRM_TRN_BO_STACK_MASK, "flag");
_Static_assert(TRN_BO_STACK(3) == DRM_TRN_BO_STACK(3), "flag");
_Static_assert(TRN_USERPTR_READ_ONLY == DRM_TRN_USERPTR_READ_ONLY, "flag");
_Static_assert(TRN_BO_MAX_ALIGNMENT == DRM_TRN_BO_MAX_ALIGNMENT, "alignment");
/* An element of the caller's array: its size is ABI. */
_Static_assert(sizeof(struct trn_hbm_stack) == 64, "trn_hbm_stack size");
_Static_assert(sizeof(struct trn_memory_stats) >=
	       sizeof(struct drm_trn_memory_info), "memory stats");

struct trn_bo {
	struct trn_bo *hnext;		/* hash chain of dev->bo_buckets */
	trn_device_t *dev;		/* holds a reference */
	unsigned int refs;		/* dev->bo_lock */
	uint32_t handle;
	uint32_t placement;
	uint32_t flags;
	uint64_t size;
	uint64_t va;

	pthread_mutex_t map_lock;	/* map, map_refs */
	void *map;
	unsigned int map_refs;
};

/* Caller holds dev->bo_lock. */
static trn_bo_t *table_find(trn_device_t *dev, uint32_t handle)
{
	trn_bo_t *bo;

	if (!dev->bo_nbuckets)
		return NULL;
	for (bo = dev->bo_buckets[handle & (dev->bo_nbuckets - 1)]; bo;
	     bo = bo->hnext)
		if (bo->handle == handle)
			return bo;
	return NULL;
}

/* Caller holds dev->bo_lock. Grows the table; -ENOMEM if it cannot. */
static int table_insert(trn_device_t *dev, trn_bo_t *bo)
{
	size_t i, mask;

	if (dev->bo_count >= dev->bo_nbuckets) {
		size_t n = dev->bo_nbuckets ? dev->bo_nbuckets * 2 : 64;
		trn_bo_t **buckets = calloc(n, sizeof(*buckets));

		if (!buckets)
			return -ENOMEM;
		for (i = 0; i < dev->bo_nbuckets; i++) {
			trn_bo_t *b = dev->bo_buckets[i], *next;

			for (; b; b = next) {
				next = b->hnext;
				b->hnext = buckets[b->handle & (n - 1)];
				buckets[b->handle & (n - 1)] = b;
			}
		}
		free(dev->bo_buckets);
		dev->bo_buckets = buckets;
		dev->bo_nbuckets = n;
	}
	mask = dev->bo_nbuckets - 1;
	bo->hnext = dev->bo_buckets[bo->handle & mask];
	dev->bo_buckets[bo->handle & mask] = bo;
	dev->bo_count++;
	return 0;
}

/* Caller holds dev->bo_lock. */
static void table_remove(trn_device_t *dev, trn_bo_t *bo)
{
	trn_bo_t **p = &dev->bo_buckets[bo->handle & (dev->bo_nbuckets - 1)];

	for (; *p; p = &(*p)->hnext) {
		if (*p == bo) {
			*p = bo->hnext;
			dev->bo_count--;
			return;
		}
	}
}

void trn_bo_table_fini(trn_device_t *dev)
{
	free(dev->bo_buckets);
	dev->bo_buckets = NULL;
	dev->bo_nbuckets = 0;
	dev->bo_count = 0;
}

void trn_gem_close(trn_device_t *dev, uint32_t handle)
{
	struct drm_gem_close c;

	memset(&c, 0, sizeof(c));
	c.handle = handle;
	trn_ioctl(dev->fd, DRM_IOCTL_GEM_CLOSE, &c);
}

static int bo_query(trn_device_t *dev, uint32_t handle,
		    struct drm_trn_bo_info *bi)
{
	memset(bi, 0, sizeof(*bi));
	bi->handle = handle;
	return trn_ioctl_errno(dev->fd, DRM_IOCTL_TRN_BO_INFO, bi);
}

/* A new buffer object for @handle; the caller gave it a device reference. */
static trn_bo_t *bo_new(trn_device_t *dev, uint32_t handle, uint32_t placement,
			uint32_t flags, uint64_t size, uint64_t va)
{
	trn_bo_t *bo = calloc(1, sizeof(*bo));

	if (!bo)
		return NULL;
	bo->dev = dev;
	bo->refs = 1;
	bo->handle = handle;
	bo->placement = placement;
	bo->flags = flags;
	bo->size = size;
	bo->va = va;
	pthread_mutex_init(&bo->map_lock, NULL);
	return bo;
}

static void bo_destroy(trn_bo_t *bo)
{
	pthread_mutex_destroy(&bo->map_lock);
	free(bo);
}

/* Publish a buffer whose handle is new to the table, or undo everything. */
static int bo_publish(trn_device_t *dev, uint32_t handle, uint32_t placement,
		      uint32_t flags, uint64_t size, uint64_t va,
		      trn_bo_t **out)
{
	trn_bo_t *bo = bo_new(dev, handle, placement, flags, size, va);
	int ret = -ENOMEM;

	if (bo) {
		trn_device_get(dev);
		pthread_mutex_lock(&dev->bo_lock);
		ret = table_insert(dev, bo);
		pthread_mutex_unlock(&dev->bo_lock);
		if (!ret) {
			*out = bo;
			return 0;
		}
		bo_destroy(bo);
		trn_device_close(dev);
	}
	trn_gem_close(dev, handle);
	return ret;
}

static int check_dev(trn_device_t *dev, trn_bo_t **out)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!dev)
		return -EINVAL;
	if (trn_handle_stale(dev))
		return -ECHILD;
	return 0;
}

static uint64_t page_round(uint64_t size)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	return (size + page - 1) & ~(page - 1);
}

TRN_PUBLIC int trn_bo_create(trn_device_t *dev, uint64_t size,
			     uint32_t placement, uint32_t flags,
			     uint64_t alignment, trn_bo_t **out)
{
	struct drm_trn_bo_create c;
	int ret;

	ret = check_dev(dev, out);
	if (ret)
		return ret;
	memset(&c, 0, sizeof(c));
	c.size = size;
	c.alignment = alignment;
	c.placement = placement;
	c.flags = flags;
	ret = trn_ioctl_errno(dev->fd, DRM_IOCTL_TRN_BO_CREATE, &c);
	if (ret)
		return ret;
	/* The kernel rounds to its page size, which is ours. */
	return bo_publish(dev, c.handle, placement, flags, page_round(size),
			  c.va, out);
}

TRN_PUBLIC int trn_bo_userptr(trn_device_t *dev, void *ptr, uint64_t size,
			      uint32_t flags, trn_bo_t **out)
{
	struct drm_trn_bo_userptr u;
	int ret;

	ret = check_dev(dev, out);
	if (ret)
		return ret;
	memset(&u, 0, sizeof(u));
	u.addr = (uintptr_t)ptr;
	u.size = size;
	u.flags = flags;
	ret = trn_ioctl_errno(dev->fd, DRM_IOCTL_TRN_BO_USERPTR, &u);
	if (ret)
		return ret;
	return bo_publish(dev, u.handle, TRN_PLACEMENT_USERPTR,
			  flags & TRN_USERPTR_READ_ONLY ?
			  TRN_BO_DEVICE_READ_ONLY : 0, size, u.va, out);
}

TRN_PUBLIC int trn_bo_import(trn_device_t *dev, int dmabuf_fd, trn_bo_t **out)
{
	struct drm_trn_bo_info bi;
	struct drm_prime_handle p;
	trn_bo_t *bo, *fresh;
	int ret;

	ret = check_dev(dev, out);
	if (ret)
		return ret;
	if (dmabuf_fd < 0)
		return -EBADF;
	/*
	 * Allocated up front: nothing that takes the registry lock may run
	 * under bo_lock (fork handlers take the registry lock first).
	 */
	fresh = bo_new(dev, 0, 0, 0, 0, 0);
	if (!fresh)
		return -ENOMEM;
	trn_device_get(dev);

	/*
	 * bo_lock is held across the import so that the handle the kernel
	 * returns cannot be closed by a concurrent trn_bo_free() of the same
	 * buffer between the ioctl and the table lookup.
	 */
	pthread_mutex_lock(&dev->bo_lock);
	memset(&p, 0, sizeof(p));
	p.fd = dmabuf_fd;
	ret = trn_ioctl_errno(dev->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);
	if (ret)
		goto out_unlock;
	bo = table_find(dev, p.handle);
	if (bo) {
		bo->refs++;
		*out = bo;
		goto out_unlock;
	}
	ret = bo_query(dev, p.handle, &bi);
	if (!ret) {
		fresh->handle = p.handle;
		fresh->placement = bi.placement;
		fresh->flags = bi.bo_flags;
		fresh->size = bi.size;
		fresh->va = bi.va;
		ret = table_insert(dev, fresh);
	}
	if (ret) {
		/* The handle is new (not in the table): it is ours to close. */
		trn_gem_close(dev, p.handle);
		goto out_unlock;
	}
	*out = fresh;
	fresh = NULL;

out_unlock:
	pthread_mutex_unlock(&dev->bo_lock);
	if (fresh) {
		bo_destroy(fresh);
		trn_device_close(dev);
	}
	return ret;
}

TRN_PUBLIC void trn_bo_free(trn_bo_t *bo)
{
	trn_device_t *dev;
	void *map;

	if (!bo)
		return;
	dev = bo->dev;

	if (trn_handle_stale(dev)) {
		/*
		 * A forked child's copy: the GEM handle belongs to the
		 * parent's file, which the child's descriptor still shares,
		 * so it must not be closed. Only the child's memory goes.
		 */
		if (--bo->refs)
			return;
		if (bo->map)
			trn_munmap(bo->map, bo->size);
		free(bo);
		trn_device_close(dev);
		return;
	}

	pthread_mutex_lock(&dev->bo_lock);
	if (--bo->refs) {
		pthread_mutex_unlock(&dev->bo_lock);
		return;
	}
	table_remove(dev, bo);
	/* Under bo_lock: a concurrent import must not get this handle. */
	pthread_mutex_lock(&bo->map_lock);
	map = bo->map;
	bo->map = NULL;
	bo->map_refs = 0;
	pthread_mutex_unlock(&bo->map_lock);
	if (map)
		trn_munmap(map, bo->size);
	trn_gem_close(dev, bo->handle);
	pthread_mutex_unlock(&dev->bo_lock);

	bo_destroy(bo);
	trn_device_close(dev);
}

void trn_bo_ref_many(trn_bo_t *const *bos, size_t n)
{
	size_t i;

	if (!n)
		return;
	/* Buffers of one device: one lock for all (callers check). */
	pthread_mutex_lock(&bos[0]->dev->bo_lock);
	for (i = 0; i < n; i++)
		bos[i]->refs++;
	pthread_mutex_unlock(&bos[0]->dev->bo_lock);
}

trn_device_t *trn_bo_device(const trn_bo_t *bo)
{
	return bo->dev;
}

uint32_t trn_bo_handle(const trn_bo_t *bo)
{
	return bo->handle;
}

TRN_PUBLIC uint64_t trn_bo_va(trn_bo_t *bo)
{
	if (!bo || trn_handle_stale(bo->dev))
		return 0;
	return bo->va;
}

TRN_PUBLIC uint64_t trn_bo_size(trn_bo_t *bo)
{
	if (!bo || trn_handle_stale(bo->dev))
		return 0;
	return bo->size;
}

TRN_PUBLIC int trn_bo_info(trn_bo_t *bo, struct trn_bo_info *info)
{
	if (!bo || !info)
		return -EINVAL;
	if (trn_handle_stale(bo->dev))
		return -ECHILD;
	memset(info, 0, sizeof(*info));
	info->size = bo->size;
	info->va = bo->va;
	info->placement = bo->placement;
	info->flags = bo->flags;
	info->handle = bo->handle;
	return 0;
}

TRN_PUBLIC int trn_bo_map(trn_bo_t *bo, void **ptr)
{
	struct drm_trn_bo_info bi;
	void *p;
	int ret = 0;

	if (!bo || !ptr)
		return -EINVAL;
	*ptr = NULL;
	if (trn_handle_stale(bo->dev))
		return -ECHILD;

	pthread_mutex_lock(&bo->map_lock);
	if (bo->map) {
		bo->map_refs++;
		*ptr = bo->map;
		goto out;
	}
	if (bo->placement != TRN_PLACEMENT_HBM &&
	    bo->placement != TRN_PLACEMENT_HOST) {
		ret = -EINVAL;
		goto out;
	}
	/* The offset is created on first use by the kernel: ask now. */
	ret = bo_query(bo->dev, bo->handle, &bi);
	if (ret)
		goto out;
	if (!bi.mmap_offset) {
		ret = -EINVAL;	/* device memory the CPU cannot see */
		goto out;
	}
	p = trn_mmap(NULL, bo->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		     bo->dev->fd, (off_t)bi.mmap_offset);
	if (p == MAP_FAILED) {
		ret = errno ? -errno : -ENOMEM;
		goto out;
	}
	bo->map = p;
	bo->map_refs = 1;
	*ptr = p;
out:
	pthread_mutex_unlock(&bo->map_lock);
	return ret;
}

TRN_PUBLIC int trn_bo_unmap(trn_bo_t *bo)
{
	void *map = NULL;
	int ret = 0;

	if (!bo)
		return -EINVAL;
	if (trn_handle_stale(bo->dev))
		return -ECHILD;
	pthread_mutex_lock(&bo->map_lock);
	if (!bo->map_refs)
		ret = -EINVAL;
	else if (!--bo->map_refs) {
		map = bo->map;
		bo->map = NULL;
	}
	pthread_mutex_unlock(&bo->map_lock);
	if (map)
		trn_munmap(map, bo->size);
	return ret;
}

TRN_PUBLIC int trn_bo_export(trn_bo_t *bo, int *dmabuf_fd)
{
	struct drm_prime_handle p;
	int ret;

	if (!dmabuf_fd)
		return -EINVAL;
	*dmabuf_fd = -1;
	if (!bo)
		return -EINVAL;
	if (trn_handle_stale(bo->dev))
		return -ECHILD;
	memset(&p, 0, sizeof(p));
	p.handle = bo->handle;
	p.flags = DRM_CLOEXEC | DRM_RDWR;
	p.fd = -1;
	ret = trn_ioctl_errno(bo->dev->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);
	if (ret)
		return ret;
	*dmabuf_fd = p.fd;
	return 0;
}

TRN_PUBLIC int trn_device_memory_stats(trn_device_t *dev,
				       struct trn_memory_stats *stats)
{
	struct drm_trn_memory_info mi;
	struct drm_trn_query q;
	int ret;

	if (!dev || !stats)
		return -EINVAL;
	if (trn_handle_stale(dev))
		return -ECHILD;
	memset(&mi, 0, sizeof(mi));
	memset(&q, 0, sizeof(q));
	q.query = DRM_TRN_QUERY_MEMORY;
	q.size = sizeof(mi);
	q.data = (uintptr_t)&mi;
	ret = trn_ioctl_errno(dev->fd, DRM_IOCTL_TRN_QUERY, &q);
	if (ret)
		return ret;
	memset(stats, 0, sizeof(*stats));
	stats->hbm_total = mi.hbm_total;
	stats->hbm_used = mi.hbm_used;
	stats->host_pinned = mi.host_pinned;
	stats->ctx_hbm = mi.ctx_hbm;
	stats->ctx_pinned = mi.ctx_pinned;
	stats->ctx_bos = mi.ctx_bos;
	stats->max_ctx_bos = mi.max_ctx_bos;
	stats->max_ctx_pinned = mi.max_ctx_pinned;
	return 0;
}

#ifdef TRNHAL_TESTING
void *(*trnhal_test_mmap)(void *addr, size_t len, int prot, int flags,
			  int fd, off_t offset) = mmap;
int (*trnhal_test_munmap)(void *addr, size_t len) = munmap;

size_t trnhal_test_bo_count(trn_device_t *dev)
{
	size_t n;

	pthread_mutex_lock(&dev->bo_lock);
	n = dev->bo_count;
	pthread_mutex_unlock(&dev->bo_lock);
	return n;
}

unsigned int trnhal_test_bo_refs(trn_bo_t *bo)
{
	unsigned int n;

	pthread_mutex_lock(&bo->dev->bo_lock);
	n = bo->refs;
	pthread_mutex_unlock(&bo->dev->bo_lock);
	return n;
}

unsigned int trnhal_test_bo_map_refs(trn_bo_t *bo)
{
	unsigned int n;

	pthread_mutex_lock(&bo->map_lock);
	n = bo->map_refs;
	pthread_mutex_unlock(&bo->map_lock);
	return n;
}
#endif

TRN_PUBLIC int trn_device_hbm_stacks(trn_device_t *dev,
				     struct trn_hbm_stack *stacks, size_t cap,
				     size_t *count)
{
	struct drm_trn_hbm_stack *got;
	struct drm_trn_query q;
	size_t n, i;
	int ret;

	if (!dev || !count || (cap && !stacks))
		return -EINVAL;
	if (trn_handle_stale(dev))
		return -ECHILD;
	if (dev->uapi_minor < TRN_UAPI_MINOR_HBM_STACKS)
		return -EOPNOTSUPP;
	/* How many, then as many of them as the caller has room for. */
	memset(&q, 0, sizeof(q));
	q.query = DRM_TRN_QUERY_HBM_STACKS;
	ret = trn_ioctl_errno(dev->fd, DRM_IOCTL_TRN_QUERY, &q);
	if (ret)
		return ret;
	n = q.size / sizeof(*got);
	if (cap > n)
		cap = n;
	if (cap) {
		got = calloc(cap, sizeof(*got));
		if (!got)
			return -ENOMEM;
		q.size = (uint32_t)(cap * sizeof(*got));
		q.data = (uintptr_t)got;
		ret = trn_ioctl_errno(dev->fd, DRM_IOCTL_TRN_QUERY, &q);
		for (i = 0; !ret && i < q.size / sizeof(*got); i++) {
			memset(&stacks[i], 0, sizeof(stacks[i]));
			stacks[i].size = got[i].size;
			stacks[i].used = got[i].used;
			stacks[i].largest_free = got[i].largest_free;
		}
		free(got);
		if (ret)
			return ret;
	}
	*count = n;
	return 0;
}
