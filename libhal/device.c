// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * Device enumeration and the per-process registry of open devices.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <xf86drm.h>

#include "trn_accel.h"
#include "trnhal.h"
#include "internal.h"

/* The public constants are the uAPI's, spelled without the DRM prefix. */
_Static_assert(TRN_GEN_SIM == DRM_TRN_GEN_SIM, "generation");
_Static_assert(TRN_GEN_TRN2 == DRM_TRN_GEN_TRN2, "generation");
_Static_assert(TRN_GEN_TRN3 == DRM_TRN_GEN_TRN3, "generation");
_Static_assert(TRN_CAP_SIMULATED == DRM_TRN_CAP_SIMULATED, "capability");
_Static_assert(TRN_CAP_HBM_CPU_VISIBLE == DRM_TRN_CAP_HBM_CPU_VISIBLE,
	       "capability");
_Static_assert(TRN_CAP_TIMESTAMP == DRM_TRN_CAP_TIMESTAMP, "capability");
_Static_assert(TRN_CAP_SEMAPHORES == DRM_TRN_CAP_SEMAPHORES, "capability");
_Static_assert(TRN_CAP_COMPUTE == DRM_TRN_CAP_COMPUTE, "capability");
_Static_assert(TRN_CAP_LOG_ERF == DRM_TRN_CAP_LOG_ERF, "capability");
_Static_assert(TRN_CAP_USER_QUEUES == DRM_TRN_CAP_USER_QUEUES, "capability");
_Static_assert(TRN_CAP_SRC_U8 == DRM_TRN_CAP_SRC_U8, "capability");
/* New fields come out of the reserved tail: size and layout never change. */
_Static_assert(sizeof(struct trn_device_info) == 264, "trn_device_info size");
_Static_assert(offsetof(struct trn_device_info, queue_depth) == 136 &&
	       offsetof(struct trn_device_info, hbm_stacks) == 152 &&
	       offsetof(struct trn_device_info, reserved) == 160,
	       "trn_device_info layout");

/*
 * The registry: one handle per open minor. Protects devices, and refs and
 * next of every device on the list.
 */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct trn_device *devices;
/*
 * Bumped in a forked child, so handles opened before fork() are recognised
 * as stale without a getpid() system call on every use.
 */
static unsigned long fork_gen;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/*
 * Lock order: registry_lock, then the bo_lock of each registered device.
 * Holding them all across fork() gives the child consistent buffer tables.
 */
static void atfork_prepare(void)
{
	trn_device_t *dev;

	pthread_mutex_lock(&registry_lock);
	for (dev = devices; dev; dev = dev->next)
		pthread_mutex_lock(&dev->bo_lock);
}

static void atfork_parent(void)
{
	trn_device_t *dev;

	for (dev = devices; dev; dev = dev->next)
		pthread_mutex_unlock(&dev->bo_lock);
	pthread_mutex_unlock(&registry_lock);
}

static void atfork_child(void)
{
	trn_device_t *dev;

	/*
	 * The child owns copies of the parent's handles. Forget them so that
	 * the child's own opens get fresh files; the copies stay allocated so
	 * that using one returns -ECHILD instead of touching freed memory.
	 */
	for (dev = devices; dev; dev = dev->next)
		pthread_mutex_unlock(&dev->bo_lock);
	devices = NULL;
	__atomic_store_n(&fork_gen, fork_gen + 1, __ATOMIC_RELAXED);
	pthread_mutex_init(&registry_lock, NULL);
}

static void atfork_register(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

bool trn_handle_stale(const trn_device_t *dev)
{
	return dev->fork_gen != __atomic_load_n(&fork_gen, __ATOMIC_RELAXED);
}

int trn_ioctl_errno(int fd, unsigned long request, void *arg)
{
	if (trn_ioctl(fd, request, arg) == 0)
		return 0;
	return errno ? -errno : -EIO;
}

/* Another reference, taken by every buffer of the device. */
void trn_device_get(trn_device_t *dev)
{
	pthread_mutex_lock(&registry_lock);
	dev->refs++;
	pthread_mutex_unlock(&registry_lock);
}

/* Fetch the DRM driver name and version of @fd. */
static int query_version(int fd, char *name, size_t name_size,
			 int *major, int *minor, int *patchlevel)
{
	struct drm_version v;
	int ret;

	memset(&v, 0, sizeof(v));
	memset(name, 0, name_size);
	v.name = name;
	v.name_len = name_size - 1;
	ret = trn_ioctl_errno(fd, DRM_IOCTL_VERSION, &v);
	if (ret)
		return ret;
	/* The kernel reports the full length; it copied at most name_len. */
	if (v.name_len >= name_size)
		name[name_size - 1] = '\0';
	else
		name[v.name_len] = '\0';
	if (major) {
		*major = v.version_major;
		*minor = v.version_minor;
		*patchlevel = v.version_patchlevel;
	}
	return 0;
}

static int query_device_info(int fd, struct drm_trn_device_info *di)
{
	struct drm_trn_query q;

	memset(di, 0, sizeof(*di));
	memset(&q, 0, sizeof(q));
	q.query = DRM_TRN_QUERY_DEVICE_INFO;
	q.size = sizeof(*di);
	q.data = (uintptr_t)di;
	return trn_ioctl_errno(fd, DRM_IOCTL_TRN_QUERY, &q);
}

/* Copy @src into @dst, truncating; @dst is always terminated. */
static void copy_string(char *dst, size_t size, const char *src)
{
	size_t len = strnlen(src, size - 1);

	memcpy(dst, src, len);
	dst[len] = '\0';
}

static int node_path(unsigned int minor, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/accel%u", TRN_DEV_ACCEL, minor);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* Open the node of @minor and check it is driven by trn. */
static int open_trn_node(unsigned int minor, char *path, size_t path_size,
			 char *name, size_t name_size,
			 int *major, int *min, int *patchlevel)
{
	int fd, ret;

	ret = node_path(minor, path, path_size);
	if (ret)
		return ret;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = query_version(fd, name, name_size, major, min, patchlevel);
	if (ret == -ENOTTY || ret == -EINVAL || (!ret && strcmp(name, "trn")))
		ret = -ENODEV;	/* some other driver, or not DRM at all */
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

/* Parse "accelN" strictly; returns false for anything else. */
static bool parse_accel_name(const char *s, unsigned int *minor)
{
	unsigned long v = 0;

	if (strncmp(s, "accel", 5))
		return false;
	s += 5;
	if (*s < '0' || *s > '9' || (s[0] == '0' && s[1]))
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > UINT_MAX)
			return false;
	}
	*minor = (unsigned int)v;
	return true;
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a;
	unsigned int y = *(const unsigned int *)b;

	return x < y ? -1 : x > y;
}

TRN_PUBLIC int trn_device_list(unsigned int *minors, size_t cap, size_t *count)
{
	unsigned int *found = NULL, *grown;
	size_t n = 0, alloc = 0;
	int first_err = 0;
	struct dirent *de;
	DIR *dir;

	if (!count || (cap && !minors))
		return -EINVAL;
	*count = 0;

	dir = opendir(TRN_SYSFS_ACCEL);
	if (!dir)
		/* No accel subsystem (or no device ever): nothing to list. */
		return errno == ENOENT ? 0 : -errno;

	while ((de = readdir(dir))) {
		char path[PATH_MAX], name[32];
		unsigned int minor;
		int fd;

		if (!parse_accel_name(de->d_name, &minor))
			continue;
		fd = open_trn_node(minor, path, sizeof(path), name,
				   sizeof(name), NULL, NULL, NULL);
		if (fd < 0) {
			/*
			 * A node that vanished or is not ours is simply not
			 * a trn device; other failures (permissions) are
			 * reported if nothing at all could be listed.
			 */
			if (fd != -ENOENT && fd != -ENODEV && fd != -ENXIO &&
			    !first_err)
				first_err = fd;
			continue;
		}
		close(fd);
		if (n == alloc) {
			alloc = alloc ? alloc * 2 : 16;
			grown = realloc(found, alloc * sizeof(*found));
			if (!grown) {
				free(found);
				closedir(dir);
				return -ENOMEM;
			}
			found = grown;
		}
		found[n++] = minor;
	}
	closedir(dir);

	if (!n) {
		free(found);
		return first_err;
	}
	qsort(found, n, sizeof(*found), cmp_uint);
	if (cap)	/* minors may be NULL with cap 0: no memcpy(NULL) */
		memcpy(minors, found, (n < cap ? n : cap) * sizeof(*found));
	free(found);
	*count = n;
	return 0;
}

/* Caller holds registry_lock. */
static trn_device_t *registry_find(unsigned int minor)
{
	trn_device_t *dev;

	for (dev = devices; dev; dev = dev->next)
		if (dev->minor == minor)
			return dev;
	return NULL;
}

TRN_PUBLIC int trn_device_open(unsigned int minor, trn_device_t **out)
{
	struct drm_trn_device_info di;
	trn_device_t *dev, *other;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	pthread_once(&atfork_once, atfork_register);

	pthread_mutex_lock(&registry_lock);
	dev = registry_find(minor);
	if (dev) {
		dev->refs++;
		pthread_mutex_unlock(&registry_lock);
		*out = dev;
		return 0;
	}
	pthread_mutex_unlock(&registry_lock);

	/* Open without the lock held: opening a node may sleep. */
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->minor = minor;
	dev->refs = 1;
	pthread_mutex_init(&dev->bo_lock, NULL);
	dev->fd = open_trn_node(minor, dev->node, sizeof(dev->node),
				dev->driver_name, sizeof(dev->driver_name),
				&dev->driver_major, &dev->driver_minor,
				&dev->driver_patchlevel);
	if (dev->fd < 0) {
		ret = dev->fd;
		pthread_mutex_destroy(&dev->bo_lock);
		free(dev);
		return ret;
	}
	ret = query_device_info(dev->fd, &di);
	if (!ret && di.uapi_major != DRM_TRN_UAPI_MAJOR)
		ret = -EPROTO;
	/* What a driver of uAPI 1.x does differs by minor (internal.h). */
	dev->uapi_minor = di.uapi_minor;
	dev->capabilities = di.capabilities;
	dev->queue_depth = di.queue_depth;
	if (ret) {
		close(dev->fd);
		pthread_mutex_destroy(&dev->bo_lock);
		free(dev);
		return ret;
	}

	pthread_mutex_lock(&registry_lock);
	/* Another thread may have opened the same minor meanwhile. */
	other = registry_find(minor);
	if (other) {
		other->refs++;
	} else {
		dev->fork_gen = __atomic_load_n(&fork_gen, __ATOMIC_RELAXED);
		dev->next = devices;
		devices = dev;
	}
	pthread_mutex_unlock(&registry_lock);

	if (other) {
		close(dev->fd);
		pthread_mutex_destroy(&dev->bo_lock);
		free(dev);
		dev = other;
	}
	*out = dev;
	return 0;
}

TRN_PUBLIC void trn_device_close(trn_device_t *dev)
{
	trn_device_t **p;

	if (!dev)
		return;

	pthread_mutex_lock(&registry_lock);
	if (--dev->refs) {
		pthread_mutex_unlock(&registry_lock);
		return;
	}
	/* A handle inherited over fork() is no longer on the list. */
	if (!trn_handle_stale(dev)) {
		for (p = &devices; *p; p = &(*p)->next) {
			if (*p == dev) {
				*p = dev->next;
				break;
			}
		}
	}
	pthread_mutex_unlock(&registry_lock);

	/* No buffer is left: each holds a reference. */
	trn_bo_table_fini(dev);
	close(dev->fd);
	free(dev);
}

TRN_PUBLIC int trn_device_fd(trn_device_t *dev)
{
	if (!dev)
		return -EINVAL;
	if (trn_handle_stale(dev))
		return -ECHILD;
	return dev->fd;
}

TRN_PUBLIC int trn_device_info(trn_device_t *dev, struct trn_device_info *info)
{
	struct drm_trn_device_info di;
	int ret;

	if (!dev || !info)
		return -EINVAL;
	if (trn_handle_stale(dev))
		return -ECHILD;

	/* Ask every time: it is cheap and notices an unplugged device. */
	ret = query_device_info(dev->fd, &di);
	if (ret)
		return ret;

	memset(info, 0, sizeof(*info));
	info->minor = dev->minor;
	copy_string(info->node, sizeof(info->node), dev->node);
	copy_string(info->driver_name, sizeof(info->driver_name),
		    dev->driver_name);
	info->driver_major = dev->driver_major;
	info->driver_minor = dev->driver_minor;
	info->driver_patchlevel = dev->driver_patchlevel;
	info->uapi_major = di.uapi_major;
	info->uapi_minor = di.uapi_minor;
	info->generation = di.generation;
	info->num_cores = di.num_cores;
	info->queues_per_core = di.queues_per_core;
	info->device_id = di.device_id;
	info->hbm_size = di.hbm_size;
	info->va_start = di.va_start;
	info->va_size = di.va_size;
	info->capabilities = di.capabilities;
	/* Before uAPI 1.4 every device executed every opcode, unsaid. */
	if (di.uapi_minor < TRN_UAPI_MINOR_CAPS)
		info->capabilities |= TRN_CAP_EXEC_ALL;
	/* Zero from drivers before uAPI 1.3: they write a shorter answer. */
	info->queue_depth = di.queue_depth;
	info->job_timeout_ms = di.job_timeout_ms;
	info->ban_faults = di.ban_faults;
	info->user_queues = di.user_queues;
	info->hbm_stacks = di.hbm_stacks;
	return 0;
}

#ifdef TRNHAL_TESTING
const char *trnhal_test_sysfs_root = "/sys/class/accel";
const char *trnhal_test_dev_root = "/dev/accel";
int (*trnhal_test_ioctl)(int fd, unsigned long request, void *arg) = drmIoctl;

static int raw_ioctl(int fd, unsigned long request, void *arg)
{
	return ioctl(fd, request, arg);
}

int (*trnhal_test_raw_ioctl)(int fd, unsigned long request, void *arg) =
	raw_ioctl;

size_t trnhal_test_registry_size(void)
{
	trn_device_t *dev;
	size_t n = 0;

	pthread_mutex_lock(&registry_lock);
	for (dev = devices; dev; dev = dev->next)
		n++;
	pthread_mutex_unlock(&registry_lock);
	return n;
}
#endif
