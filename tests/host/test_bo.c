// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * libtrnhal's buffer-object bookkeeping against a fake driver.
 *
 * The library is built with TRNHAL_TESTING: its ioctls go to fake_ioctl()
 * and its mmap()/munmap() to fake_mmap()/fake_munmap() below. The fake
 * plays one DRM file of the trn driver: GEM handles, objects, dma-bufs (file descriptors
 * of /dev/null remembered as belonging to an object) and the rule that
 * matters most here: importing a buffer the file already has a handle for
 * returns that same handle. It counts every misuse: closing a handle that
 * is not open, asking about one that is not open, double mappings.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xf86drm.h>

#include "trn_accel.h"
#include "trnhal.h"
#include "../../libhal/internal.h"
#include "check.h"

#define MAX_HANDLES	4096
#define MAX_OBJECTS	8192
#define MAX_FDS		1024
#define FAKE_PAGE	4096ULL

struct fake_obj {
	bool live;
	uint32_t handle;	/* in the one fake file; 0: none */
	uint32_t placement;
	uint32_t flags;
	uint64_t size;
	uint64_t va;
	unsigned int dmabufs;	/* dma-buf fds referring to it */
};

static struct {
	pthread_mutex_t lock;
	int dev_fd;			/* the device file the library opened */
	struct fake_obj objs[MAX_OBJECTS];
	int obj_of_handle[MAX_HANDLES];	/* -1: handle not open */
	int obj_of_fd[MAX_FDS];		/* -1: not a dma-buf */
	uint64_t next_va;
	/* misuse counters */
	unsigned int bad_close;
	unsigned int bad_info;
	unsigned int bad_mmap;
	/* traffic counters */
	unsigned int closes;
	unsigned int imports;
	unsigned int mmaps;
	unsigned int munmaps;
	unsigned int maps_live;
	/* fault injection */
	int fail_info;			/* errno for the next BO_INFO */
	int fail_import_info;		/* errno for BO_INFO of imports */
} fake = { .lock = PTHREAD_MUTEX_INITIALIZER };

static char root[64], sys_root[96], dev_root[96];

static int set_errno(int e)
{
	errno = e;
	return -1;
}

/*
 * Caller holds fake.lock. Handle numbers are handed out round-robin, not
 * lowest-free as the kernel's idr does: a closed number then stays dead for
 * a while, so a library that keeps using a handle it (or another thread)
 * closed is caught instead of being masked by the number's reuse.
 */
static uint32_t handle_new(int obj)
{
	static uint32_t next = 1;
	uint32_t i, h;

	for (i = 1; i < MAX_HANDLES; i++) {
		h = next;
		next = next + 1 < MAX_HANDLES ? next + 1 : 1;
		if (fake.obj_of_handle[h] < 0) {
			fake.obj_of_handle[h] = obj;
			fake.objs[obj].handle = h;
			return h;
		}
	}
	return 0;
}

/* Caller holds fake.lock. */
static int obj_new(uint64_t size, uint32_t placement, uint32_t flags)
{
	int i;

	for (i = 0; i < MAX_OBJECTS; i++)
		if (!fake.objs[i].live) {
			memset(&fake.objs[i], 0, sizeof(fake.objs[i]));
			fake.objs[i].live = true;
			fake.objs[i].size = (size + FAKE_PAGE - 1) & ~(FAKE_PAGE - 1);
			fake.objs[i].placement = placement;
			fake.objs[i].flags = flags;
			fake.objs[i].va = fake.next_va;
			fake.next_va += fake.objs[i].size + FAKE_PAGE;
			return i;
		}
	return -1;
}

static void obj_maybe_free(int obj)
{
	if (!fake.objs[obj].handle && !fake.objs[obj].dmabufs)
		fake.objs[obj].live = false;
}

static int fake_trn_ioctl(unsigned long request, void *arg)
{
	if (request == DRM_IOCTL_TRN_BO_CREATE) {
		struct drm_trn_bo_create *c = arg;
		int obj;

		if (c->pad || (c->placement != DRM_TRN_PLACEMENT_HBM &&
			       c->placement != DRM_TRN_PLACEMENT_HOST) || !c->size)
			return set_errno(EINVAL);
		if (c->size > (1ULL << 40))
			return set_errno(E2BIG);
		obj = obj_new(c->size, c->placement, c->flags);
		if (obj < 0)
			return set_errno(ENOMEM);
		c->handle = handle_new(obj);
		c->va = fake.objs[obj].va;
		return 0;
	}
	if (request == DRM_IOCTL_TRN_BO_USERPTR) {
		struct drm_trn_bo_userptr *u = arg;
		int obj;

		if ((u->addr | u->size) & (FAKE_PAGE - 1) || !u->size)
			return set_errno(EINVAL);
		obj = obj_new(u->size, DRM_TRN_PLACEMENT_USERPTR,
			      u->flags ? DRM_TRN_BO_DEVICE_READ_ONLY : 0);
		u->handle = handle_new(obj);
		u->va = fake.objs[obj].va;
		return 0;
	}
	if (request == DRM_IOCTL_TRN_BO_INFO) {
		struct drm_trn_bo_info *bi = arg;
		struct fake_obj *o;
		int obj;

		if (bi->handle >= MAX_HANDLES || fake.obj_of_handle[bi->handle] < 0) {
			fake.bad_info++;
			return set_errno(ENOENT);
		}
		obj = fake.obj_of_handle[bi->handle];
		o = &fake.objs[obj];
		if (fake.fail_info) {
			int e = fake.fail_info;

			fake.fail_info = 0;
			return set_errno(e);
		}
		if (o->placement == DRM_TRN_PLACEMENT_IMPORTED &&
		    fake.fail_import_info)
			return set_errno(fake.fail_import_info);
		bi->size = o->size;
		bi->va = o->va;
		bi->placement = o->placement;
		bi->bo_flags = o->flags;
		bi->mmap_offset = o->placement <= DRM_TRN_PLACEMENT_HOST ?
				  0x100000000ULL + (uint64_t)obj * 0x100000ULL : 0;
		return 0;
	}
	if (request == DRM_IOCTL_TRN_QUERY) {
		struct drm_trn_query *q = arg;

		if (q->query == DRM_TRN_QUERY_DEVICE_INFO) {
			struct drm_trn_device_info *di = (void *)(uintptr_t)q->data;

			memset(di, 0, sizeof(*di));
			di->uapi_major = DRM_TRN_UAPI_MAJOR;
			di->generation = DRM_TRN_GEN_SIM;
			di->hbm_size = 256ULL << 20;
			return 0;
		}
		if (q->query == DRM_TRN_QUERY_MEMORY &&
		    q->size == sizeof(struct drm_trn_memory_info)) {
			struct drm_trn_memory_info *mi = (void *)(uintptr_t)q->data;
			int h;

			memset(mi, 0, sizeof(*mi));
			mi->hbm_total = 256ULL << 20;
			for (h = 1; h < MAX_HANDLES; h++)
				if (fake.obj_of_handle[h] >= 0)
					mi->ctx_bos++;
			mi->hbm_used = 1;
			mi->host_pinned = 2;
			mi->ctx_hbm = 3;
			mi->ctx_pinned = 4;
			mi->max_ctx_bos = 5;
			mi->max_ctx_pinned = 6;
			return 0;
		}
		return set_errno(EINVAL);
	}
	if (request == DRM_IOCTL_GEM_CLOSE) {
		struct drm_gem_close *gc = arg;
		int obj;

		if (gc->handle >= MAX_HANDLES || fake.obj_of_handle[gc->handle] < 0) {
			fake.bad_close++;
			return set_errno(EINVAL);
		}
		obj = fake.obj_of_handle[gc->handle];
		fake.obj_of_handle[gc->handle] = -1;
		fake.objs[obj].handle = 0;
		fake.closes++;
		obj_maybe_free(obj);
		return 0;
	}
	if (request == DRM_IOCTL_PRIME_HANDLE_TO_FD) {
		struct drm_prime_handle *p = arg;
		int obj, fd;

		if (p->handle >= MAX_HANDLES || fake.obj_of_handle[p->handle] < 0)
			return set_errno(ENOENT);
		obj = fake.obj_of_handle[p->handle];
		if (fake.objs[obj].placement != DRM_TRN_PLACEMENT_HOST)
			return set_errno(EOPNOTSUPP);
		if (p->flags != (DRM_CLOEXEC | DRM_RDWR))
			return set_errno(EINVAL);
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fd >= MAX_FDS)
			return set_errno(EMFILE);
		fake.obj_of_fd[fd] = obj;
		fake.objs[obj].dmabufs++;
		p->fd = fd;
		return 0;
	}
	if (request == DRM_IOCTL_PRIME_FD_TO_HANDLE) {
		struct drm_prime_handle *p = arg;
		int obj;

		if (p->fd < 0 || p->fd >= MAX_FDS || fake.obj_of_fd[p->fd] < 0)
			return set_errno(EBADF);
		obj = fake.obj_of_fd[p->fd];
		fake.imports++;
		p->handle = fake.objs[obj].handle ? fake.objs[obj].handle :
			    handle_new(obj);
		return 0;
	}
	return set_errno(ENOTTY);
}

static int fake_ioctl(int fd, unsigned long request, void *arg)
{
	int ret;

	if (request == DRM_IOCTL_VERSION) {
		struct drm_version *v = arg;

		memcpy(v->name, "trn", v->name_len < 3 ? v->name_len : 3);
		v->name_len = 3;
		v->version_major = 1;
		return 0;
	}
	pthread_mutex_lock(&fake.lock);
	if (request == DRM_IOCTL_TRN_QUERY && fake.dev_fd < 0)
		fake.dev_fd = fd;
	if (fd != fake.dev_fd) {
		fprintf(stderr, "ioctl on fd %d, not the device %d\n", fd,
			fake.dev_fd);
		check_failures++;
	}
	ret = fake_trn_ioctl(request, arg);
	pthread_mutex_unlock(&fake.lock);
	return ret;
}

static void *fake_mmap(void *addr, size_t len, int prot, int flags, int fd,
		       off_t offset)
{
	void *p;

	pthread_mutex_lock(&fake.lock);
	if (addr || prot != (PROT_READ | PROT_WRITE) || flags != MAP_SHARED ||
	    fd != fake.dev_fd || offset < 0x100000000LL || !len)
		fake.bad_mmap++;
	fake.mmaps++;
	fake.maps_live++;
	pthread_mutex_unlock(&fake.lock);
	p = aligned_alloc(FAKE_PAGE, len);
	return p ? p : MAP_FAILED;
}

static int fake_munmap(void *addr, size_t len)
{
	pthread_mutex_lock(&fake.lock);
	fake.munmaps++;
	fake.maps_live--;
	pthread_mutex_unlock(&fake.lock);
	free(addr);
	return 0;
}

static unsigned int open_handles(void)
{
	unsigned int n = 0;
	int h;

	pthread_mutex_lock(&fake.lock);
	for (h = 1; h < MAX_HANDLES; h++)
		if (fake.obj_of_handle[h] >= 0)
			n++;
	pthread_mutex_unlock(&fake.lock);
	return n;
}

static bool handle_open(uint32_t h)
{
	bool open_;

	pthread_mutex_lock(&fake.lock);
	open_ = h && h < MAX_HANDLES && fake.obj_of_handle[h] >= 0;
	pthread_mutex_unlock(&fake.lock);
	return open_;
}

/* A dma-buf of another driver: /dev/null registered as a fake object. */
static int foreign_dmabuf(uint64_t size)
{
	int fd, obj;

	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fd >= MAX_FDS)
		perror("open /dev/null"), exit(1);
	pthread_mutex_lock(&fake.lock);
	obj = obj_new(size, DRM_TRN_PLACEMENT_IMPORTED, 0);
	fake.objs[obj].dmabufs = 1;
	fake.obj_of_fd[fd] = obj;
	pthread_mutex_unlock(&fake.lock);
	return fd;
}

static void dmabuf_close(int fd)
{
	pthread_mutex_lock(&fake.lock);
	if (fake.obj_of_fd[fd] >= 0) {
		int obj = fake.obj_of_fd[fd];

		fake.objs[obj].dmabufs--;
		fake.obj_of_fd[fd] = -1;
		obj_maybe_free(obj);
	}
	pthread_mutex_unlock(&fake.lock);
	close(fd);
}

static void setup(void)
{
	char path[PATH_MAX];
	FILE *f;
	int i;

	snprintf(root, sizeof(root), "/tmp/trnhal-bo-XXXXXX");
	if (!mkdtemp(root))
		perror("mkdtemp"), exit(1);
	snprintf(sys_root, sizeof(sys_root), "%s/sys", root);
	snprintf(dev_root, sizeof(dev_root), "%s/dev", root);
	snprintf(path, sizeof(path), "%s/accel0", sys_root);
	if (mkdir(sys_root, 0755) || mkdir(dev_root, 0755) || mkdir(path, 0755))
		perror("mkdir"), exit(1);
	snprintf(path, sizeof(path), "%s/accel0", dev_root);
	f = fopen(path, "w");
	if (!f)
		perror(path), exit(1);
	fputs("trn\n", f);
	fclose(f);

	for (i = 0; i < MAX_HANDLES; i++)
		fake.obj_of_handle[i] = -1;
	for (i = 0; i < MAX_FDS; i++)
		fake.obj_of_fd[i] = -1;
	fake.dev_fd = -1;
	fake.next_va = 1ULL << 32;
	trnhal_test_sysfs_root = sys_root;
	trnhal_test_dev_root = dev_root;
	trnhal_test_ioctl = fake_ioctl;
	trnhal_test_mmap = fake_mmap;
	trnhal_test_munmap = fake_munmap;
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", root);
}

static trn_device_t *open_dev(void)
{
	trn_device_t *dev = NULL;

	CHECK_INT(trn_device_open(0, &dev), 0);
	if (!dev)
		exit(check_exit("test_bo"));
	return dev;
}

static void test_create_free(void)
{
	trn_device_t *dev = open_dev();
	struct trn_bo_info info;
	unsigned int closes = fake.closes;
	trn_bo_t *bo = (void *)1, *bo2;
	int fd = trn_device_fd(dev);

	CHECK_INT(trn_bo_create(dev, 4097, TRN_PLACEMENT_HBM, 0, 0, &bo), 0);
	CHECK(bo != NULL);
	CHECK_INT(trn_bo_size(bo), 8192);
	CHECK_INT(trn_bo_va(bo), 1ULL << 32);
	memset(&info, 0xaa, sizeof(info));
	CHECK_INT(trn_bo_info(bo, &info), 0);
	CHECK_INT(info.size, 8192);
	CHECK_INT(info.va, 1ULL << 32);
	CHECK_INT(info.placement, TRN_PLACEMENT_HBM);
	CHECK_INT(info.flags, 0);
	CHECK(handle_open(info.handle));
	CHECK_INT(info.reserved0, 0);
	CHECK_INT(info.reserved[5], 0);
	CHECK_INT(trnhal_test_bo_count(dev), 1);

	CHECK_INT(trn_bo_create(dev, 1, TRN_PLACEMENT_HOST,
				TRN_BO_HOST_WC | TRN_BO_DEVICE_READ_ONLY, 0,
				&bo2), 0);
	CHECK_INT(trn_bo_info(bo2, &info), 0);
	CHECK_INT(info.size, 4096);
	CHECK_INT(info.placement, TRN_PLACEMENT_HOST);
	CHECK_INT(info.flags, TRN_BO_HOST_WC | TRN_BO_DEVICE_READ_ONLY);
	CHECK_INT(trnhal_test_bo_count(dev), 2);
	CHECK_INT(open_handles(), 2);

	/* Buffers keep the device's file open after its last close. */
	trn_device_close(dev);
	CHECK(fcntl(fd, F_GETFD) >= 0);
	CHECK_INT(trnhal_test_registry_size(), 1);
	trn_bo_free(bo);
	CHECK_INT(fake.closes, closes + 1);
	CHECK_INT(open_handles(), 1);
	CHECK(fcntl(fd, F_GETFD) >= 0);
	trn_bo_free(bo2);
	CHECK_INT(fake.closes, closes + 2);
	CHECK_INT(open_handles(), 0);
	CHECK_INT(trnhal_test_registry_size(), 0);
	CHECK(fcntl(fd, F_GETFD) < 0 && errno == EBADF);
	trn_bo_free(NULL);
	CHECK_INT(fake.bad_close, 0);
}

static void test_errors(void)
{
	trn_device_t *dev = open_dev();
	struct trn_memory_stats st;
	struct trn_bo_info info;
	trn_bo_t *bo = (void *)1, *hbm;
	void *p = (void *)1;
	int dfd = 7;

	/* Errors of the kernel come back as they are; nothing is left. */
	CHECK_INT(trn_bo_create(dev, 4096, 9, 0, 0, &bo), -EINVAL);
	CHECK(bo == NULL);
	CHECK_INT(trn_bo_create(dev, 0, TRN_PLACEMENT_HBM, 0, 0, &bo), -EINVAL);
	CHECK_INT(trn_bo_create(dev, 1ULL << 41, TRN_PLACEMENT_HBM, 0, 0, &bo),
		  -E2BIG);
	CHECK_INT(trn_bo_userptr(dev, (void *)4097, 4096, 0, &bo), -EINVAL);
	CHECK_INT(open_handles(), 0);
	CHECK_INT(trnhal_test_bo_count(dev), 0);

	/* Bad arguments of the library's own. */
	CHECK_INT(trn_bo_create(NULL, 4096, TRN_PLACEMENT_HBM, 0, 0, &bo), -EINVAL);
	CHECK_INT(trn_bo_create(dev, 4096, TRN_PLACEMENT_HBM, 0, 0, NULL), -EINVAL);
	CHECK_INT(trn_bo_userptr(NULL, NULL, 4096, 0, &bo), -EINVAL);
	CHECK_INT(trn_bo_import(NULL, 3, &bo), -EINVAL);
	CHECK_INT(trn_bo_import(dev, -1, &bo), -EBADF);
	CHECK_INT(trn_bo_import(dev, 3, NULL), -EINVAL);
	CHECK_INT(trn_bo_info(NULL, &info), -EINVAL);
	CHECK_INT(trn_bo_map(NULL, &p), -EINVAL);
	CHECK_INT(trn_bo_unmap(NULL), -EINVAL);
	CHECK_INT(trn_bo_export(NULL, &dfd), -EINVAL);
	CHECK_INT(dfd, -1);
	CHECK_INT(trn_bo_va(NULL), 0);
	CHECK_INT(trn_bo_size(NULL), 0);
	CHECK_INT(trn_device_memory_stats(NULL, &st), -EINVAL);
	CHECK_INT(trn_device_memory_stats(dev, NULL), -EINVAL);

	/* Device memory cannot be exported: the kernel's answer. */
	CHECK_INT(trn_bo_create(dev, 4096, TRN_PLACEMENT_HBM, 0, 0, &hbm), 0);
	CHECK_INT(trn_bo_export(hbm, &dfd), -EOPNOTSUPP);
	CHECK_INT(dfd, -1);
	CHECK_INT(trn_bo_info(hbm, NULL), -EINVAL);
	CHECK_INT(trn_bo_map(hbm, NULL), -EINVAL);
	trn_bo_free(hbm);

	memset(&st, 0xaa, sizeof(st));
	CHECK_INT(trn_device_memory_stats(dev, &st), 0);
	CHECK_INT(st.hbm_total, 256ULL << 20);
	CHECK_INT(st.hbm_used, 1);
	CHECK_INT(st.host_pinned, 2);
	CHECK_INT(st.ctx_hbm, 3);
	CHECK_INT(st.ctx_pinned, 4);
	CHECK_INT(st.ctx_bos, 0);
	CHECK_INT(st.max_ctx_bos, 5);
	CHECK_INT(st.max_ctx_pinned, 6);
	CHECK_INT(st.reserved[0], 0);
	CHECK_INT(st.reserved[7], 0);

	CHECK_INT(open_handles(), 0);
	trn_device_close(dev);
	CHECK_INT(trnhal_test_registry_size(), 0);
}

static void test_userptr(void)
{
	trn_device_t *dev = open_dev();
	struct trn_bo_info info;
	trn_bo_t *bo, *ro;
	void *mem = aligned_alloc(4096, 8192), *p;

	CHECK_INT(trn_bo_userptr(dev, mem, 8192, 0, &bo), 0);
	CHECK_INT(trn_bo_info(bo, &info), 0);
	CHECK_INT(info.placement, TRN_PLACEMENT_USERPTR);
	CHECK_INT(info.size, 8192);
	CHECK_INT(info.flags, 0);
	CHECK_INT(trn_bo_userptr(dev, mem, 4096, TRN_USERPTR_READ_ONLY, &ro), 0);
	CHECK_INT(trn_bo_info(ro, &info), 0);
	CHECK_INT(info.flags, TRN_BO_DEVICE_READ_ONLY);
	/* Userptr buffers are the caller's memory already: no mapping. */
	CHECK_INT(trn_bo_map(bo, &p), -EINVAL);
	CHECK(p == NULL);
	CHECK_INT(fake.mmaps, 0);
	trn_bo_free(bo);
	trn_bo_free(ro);
	CHECK_INT(open_handles(), 0);
	trn_device_close(dev);
	free(mem);
}

static void test_map(void)
{
	trn_device_t *dev = open_dev();
	unsigned int mmaps = fake.mmaps, munmaps = fake.munmaps;
	trn_bo_t *bo, *bo2;
	void *p, *q;

	CHECK_INT(trn_bo_create(dev, 8192, TRN_PLACEMENT_HOST, 0, 0, &bo), 0);
	CHECK_INT(trn_bo_unmap(bo), -EINVAL);		/* not mapped */
	CHECK_INT(trn_bo_map(bo, &p), 0);
	CHECK(p != NULL);
	CHECK_INT(trn_bo_map(bo, &q), 0);
	CHECK(p == q);
	CHECK_INT(fake.mmaps, mmaps + 1);
	CHECK_INT(trnhal_test_bo_map_refs(bo), 2);
	CHECK_INT(trn_bo_unmap(bo), 0);
	CHECK_INT(fake.munmaps, munmaps);
	CHECK_INT(trn_bo_unmap(bo), 0);
	CHECK_INT(fake.munmaps, munmaps + 1);
	CHECK_INT(trn_bo_unmap(bo), -EINVAL);
	CHECK_INT(fake.munmaps, munmaps + 1);

	/* Mapping again after the last unmap maps again. */
	CHECK_INT(trn_bo_map(bo, &p), 0);
	CHECK_INT(fake.mmaps, mmaps + 2);
	/* Freeing a buffer that is still mapped unmaps it. */
	trn_bo_free(bo);
	CHECK_INT(fake.munmaps, munmaps + 2);
	CHECK_INT(fake.maps_live, 0);

	/* A failing BO_INFO (for the mmap offset) fails the map cleanly. */
	CHECK_INT(trn_bo_create(dev, 4096, TRN_PLACEMENT_HBM, 0, 0, &bo2), 0);
	fake.fail_info = ENODEV;
	CHECK_INT(trn_bo_map(bo2, &p), -ENODEV);
	CHECK(p == NULL);
	CHECK_INT(trnhal_test_bo_map_refs(bo2), 0);
	CHECK_INT(trn_bo_map(bo2, &p), 0);
	CHECK_INT(trn_bo_unmap(bo2), 0);
	trn_bo_free(bo2);
	CHECK_INT(fake.bad_mmap, 0);
	CHECK_INT(fake.maps_live, 0);
	CHECK_INT(open_handles(), 0);
	trn_device_close(dev);
}

static void test_import(void)
{
	trn_device_t *dev = open_dev();
	unsigned int closes = fake.closes;
	trn_bo_t *host, *a, *b, *c, *d;
	struct trn_bo_info info;
	int dfd, dfd2, foreign;

	/* A buffer exported and imported again is the same trn_bo_t. */
	CHECK_INT(trn_bo_create(dev, 4096, TRN_PLACEMENT_HOST, 0, 0, &host), 0);
	CHECK_INT(trn_bo_export(host, &dfd), 0);
	CHECK(dfd >= 0);
	CHECK_INT(trn_bo_import(dev, dfd, &a), 0);
	CHECK(a == host);
	CHECK_INT(trnhal_test_bo_refs(host), 2);
	CHECK_INT(trn_bo_export(host, &dfd2), 0);
	CHECK_INT(trn_bo_import(dev, dfd2, &b), 0);
	CHECK(b == host);
	CHECK_INT(trnhal_test_bo_refs(host), 3);
	CHECK_INT(trnhal_test_bo_count(dev), 1);
	trn_bo_free(a);
	trn_bo_free(b);
	CHECK_INT(fake.closes, closes);		/* still one reference */
	CHECK_INT(trn_bo_info(host, &info), 0);
	CHECK(handle_open(info.handle));
	trn_bo_free(host);
	CHECK_INT(fake.closes, closes + 1);
	CHECK(!handle_open(info.handle));

	/* The dma-buf outlives the handle: importing it again is a new bo. */
	CHECK_INT(trn_bo_import(dev, dfd, &a), 0);
	CHECK_INT(trn_bo_info(a, &info), 0);
	CHECK_INT(info.placement, TRN_PLACEMENT_HOST);
	CHECK_INT(trnhal_test_bo_refs(a), 1);
	trn_bo_free(a);
	dmabuf_close(dfd);
	dmabuf_close(dfd2);

	/* Another driver's buffer, imported twice and freed twice. */
	foreign = foreign_dmabuf(3 * 4096);
	CHECK_INT(trn_bo_import(dev, foreign, &c), 0);
	CHECK_INT(trn_bo_import(dev, foreign, &d), 0);
	CHECK(c == d);
	CHECK_INT(trn_bo_info(c, &info), 0);
	CHECK_INT(info.placement, TRN_PLACEMENT_IMPORTED);
	CHECK_INT(info.size, 3 * 4096);
	CHECK_INT(trn_bo_size(c), 3 * 4096);
	CHECK(trn_bo_va(c) >= 1ULL << 32);
	CHECK_INT(trn_bo_map(c, (void **)&a), -EINVAL);
	closes = fake.closes;
	trn_bo_free(c);
	CHECK_INT(fake.closes, closes);
	CHECK(handle_open(info.handle));
	trn_bo_free(d);
	CHECK_INT(fake.closes, closes + 1);

	/* Import errors: a bad fd leaves nothing; a failed BO_INFO closes. */
	CHECK_INT(trn_bo_import(dev, 0, &a), -EBADF);
	CHECK(a == NULL);
	fake.fail_import_info = EIO;
	CHECK_INT(trn_bo_import(dev, foreign, &a), -EIO);
	CHECK(a == NULL);
	fake.fail_import_info = 0;
	CHECK_INT(fake.closes, closes + 2);
	CHECK_INT(open_handles(), 0);
	CHECK_INT(trnhal_test_bo_count(dev), 0);

	/* A failed import of a handle already held changes nothing. */
	CHECK_INT(trn_bo_import(dev, foreign, &c), 0);
	fake.fail_import_info = EIO;
	CHECK_INT(trn_bo_import(dev, foreign, &d), 0);	/* no BO_INFO needed */
	fake.fail_import_info = 0;
	CHECK(c == d);
	trn_bo_free(d);
	trn_bo_free(c);
	dmabuf_close(foreign);

	CHECK_INT(open_handles(), 0);
	CHECK_INT(trnhal_test_bo_count(dev), 0);
	CHECK_INT(fake.bad_close, 0);
	CHECK_INT(fake.bad_info, 0);
	trn_device_close(dev);
	CHECK_INT(trnhal_test_registry_size(), 0);
}

/* Threads import and free one dma-buf while others create and free. */
struct worker {
	trn_device_t *dev;
	int dmabuf;
	int n;
	int errors;
};

static void *importer(void *p)
{
	struct worker *w = p;
	struct trn_bo_info info;
	trn_bo_t *bo;
	int i;

	for (i = 0; i < w->n; i++) {
		if (trn_bo_import(w->dev, w->dmabuf, &bo)) {
			w->errors++;
			continue;
		}
		/* Our reference: the handle must stay open until we free. */
		if (trn_bo_info(bo, &info) || !handle_open(info.handle) ||
		    info.placement != TRN_PLACEMENT_IMPORTED)
			w->errors++;
		if (i % 3 == 0)
			sched_yield();
		if (!handle_open(info.handle))
			w->errors++;
		trn_bo_free(bo);
	}
	return NULL;
}

static void *creator(void *p)
{
	struct worker *w = p;
	trn_bo_t *bo;
	void *m1, *m2;
	int i;

	for (i = 0; i < w->n; i++) {
		if (trn_bo_create(w->dev, 4096, TRN_PLACEMENT_HOST, 0, 0, &bo)) {
			w->errors++;
			continue;
		}
		if (trn_bo_map(bo, &m1) || trn_bo_map(bo, &m2) || m1 != m2)
			w->errors++;
		if (trn_bo_unmap(bo))
			w->errors++;
		trn_bo_free(bo);	/* the second mapping goes with it */
	}
	return NULL;
}

static void test_threads(void)
{
	trn_device_t *dev = open_dev();
	struct worker w[8];
	pthread_t t[8];
	int foreign = foreign_dmabuf(4096);
	int i;

	for (i = 0; i < 8; i++) {
		w[i].dev = dev;
		w[i].dmabuf = foreign;
		w[i].n = 3000;
		w[i].errors = 0;
		CHECK_INT(pthread_create(&t[i], NULL, i < 6 ? importer : creator,
					 &w[i]), 0);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		CHECK_INT(w[i].errors, 0);
	}
	CHECK_INT(open_handles(), 0);
	CHECK_INT(trnhal_test_bo_count(dev), 0);
	CHECK_INT(fake.bad_close, 0);
	CHECK_INT(fake.bad_info, 0);
	CHECK_INT(fake.maps_live, 0);
	dmabuf_close(foreign);
	trn_device_close(dev);
	CHECK_INT(trnhal_test_registry_size(), 0);
}

static int child_checks(trn_device_t *dev, trn_bo_t *bo, trn_bo_t *shared)
{
	unsigned int closes = fake.closes, munmaps = fake.munmaps;
	struct trn_memory_stats st;
	struct trn_bo_info info;
	trn_device_t *own;
	trn_bo_t *mine;
	void *p;
	int dfd;

	CHECK_INT(trn_bo_va(bo), 0);
	CHECK_INT(trn_bo_size(bo), 0);
	CHECK_INT(trn_bo_info(bo, &info), -ECHILD);
	CHECK_INT(trn_bo_map(bo, &p), -ECHILD);
	CHECK_INT(trn_bo_unmap(bo), -ECHILD);
	CHECK_INT(trn_bo_export(bo, &dfd), -ECHILD);
	CHECK_INT(trn_bo_create(dev, 4096, TRN_PLACEMENT_HOST, 0, 0, &mine),
		  -ECHILD);
	CHECK_INT(trn_bo_import(dev, 3, &mine), -ECHILD);
	CHECK_INT(trn_device_memory_stats(dev, &st), -ECHILD);

	/* Freeing never closes the parent's handles, but drops our maps. */
	trn_bo_free(bo);
	trn_bo_free(shared);
	CHECK_INT(fake.closes, closes);
	CHECK_INT(fake.munmaps, munmaps + 1);	/* bo was mapped */
	trn_bo_free(shared);			/* the second reference */
	CHECK_INT(fake.closes, closes);
	trn_device_close(dev);

	/* The child's own device and buffers work. */
	fake.dev_fd = -1;
	CHECK_INT(trn_device_open(0, &own), 0);
	CHECK(trn_device_fd(own) >= 0);	/* (dev is freed: own may reuse it) */
	CHECK_INT(trn_bo_create(own, 4096, TRN_PLACEMENT_HOST, 0, 0, &mine), 0);
	trn_bo_free(mine);
	CHECK_INT(fake.closes, closes + 1);
	trn_device_close(own);
	CHECK_INT(trnhal_test_registry_size(), 0);
	return check_failures ? 1 : 0;
}

static void test_fork(void)
{
	trn_device_t *dev = open_dev();
	trn_bo_t *bo, *shared, *again;
	int foreign = foreign_dmabuf(4096);
	int status = -1;
	void *p;
	pid_t pid;

	CHECK_INT(trn_bo_create(dev, 4096, TRN_PLACEMENT_HOST, 0, 0, &bo), 0);
	CHECK_INT(trn_bo_map(bo, &p), 0);
	CHECK_INT(trn_bo_import(dev, foreign, &shared), 0);
	CHECK_INT(trn_bo_import(dev, foreign, &again), 0);
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(child_checks(dev, bo, shared));
	CHECK(pid > 0);
	CHECK_INT(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* The parent's buffers are untouched. */
	CHECK(trn_bo_va(bo) != 0);
	CHECK_INT(trnhal_test_bo_refs(shared), 2);
	CHECK_INT(trnhal_test_bo_map_refs(bo), 1);
	CHECK_INT(trn_bo_unmap(bo), 0);
	trn_bo_free(bo);
	trn_bo_free(shared);
	trn_bo_free(again);
	dmabuf_close(foreign);
	CHECK_INT(open_handles(), 0);
	trn_device_close(dev);
	CHECK_INT(trnhal_test_registry_size(), 0);
}

/* Many buffers: the table grows and every handle is found again. */
static void test_many(void)
{
	enum { N = 3000 };
	trn_device_t *dev = open_dev();
	static trn_bo_t *bos[N];
	struct trn_bo_info info;
	int i, dfd;
	trn_bo_t *again;

	for (i = 0; i < N; i++)
		CHECK_INT(trn_bo_create(dev, 4096, TRN_PLACEMENT_HOST, 0, 0,
					&bos[i]), 0);
	CHECK_INT(trnhal_test_bo_count(dev), N);
	for (i = 0; i < N; i += 97) {
		CHECK_INT(trn_bo_export(bos[i], &dfd), 0);
		CHECK_INT(trn_bo_import(dev, dfd, &again), 0);
		CHECK(again == bos[i]);
		trn_bo_free(again);
		dmabuf_close(dfd);
	}
	for (i = 0; i < N; i += 2)
		trn_bo_free(bos[i]);
	CHECK_INT(trnhal_test_bo_count(dev), N / 2);
	for (i = 1; i < N; i += 2) {
		CHECK_INT(trn_bo_info(bos[i], &info), 0);
		CHECK(handle_open(info.handle));
		trn_bo_free(bos[i]);
	}
	CHECK_INT(trnhal_test_bo_count(dev), 0);
	CHECK_INT(open_handles(), 0);
	CHECK_INT(fake.bad_close, 0);
	trn_device_close(dev);
}

int main(void)
{
	setup();
	test_create_free();
	fake.dev_fd = -1;
	test_errors();
	fake.dev_fd = -1;
	test_userptr();
	fake.dev_fd = -1;
	test_map();
	fake.dev_fd = -1;
	test_import();
	fake.dev_fd = -1;
	test_threads();
	fake.dev_fd = -1;
	test_fork();
	fake.dev_fd = -1;
	test_many();
	teardown();
	return check_exit("test_bo");
}
