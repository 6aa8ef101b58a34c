/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The trn authors
 *
 * Helpers shared by the in-guest tests: driving trn_sim through sysfs,
 * finding a simulated device's accel node, raw ioctls, module loading.
 * Every helper returns 0 (or a value) on success and a negative errno on
 * failure, so tests can assert the exact error.
 */
#ifndef TRN_GUEST_TEST_H
#define TRN_GUEST_TEST_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/sync_file.h>

#include <xf86drm.h>

#include "trn_accel.h"
#include "trn_isa.h"

/*
 * The harness's 30 s per-test default is a hang detector tuned for native
 * runs; these tests run under software emulation, and on the debug lane
 * with KASAN and lockdep, where honest runs of a few tests came within a
 * second of it. A timeout must never be what decides a result, so the
 * default here is ten times that; tests that are long by design still name
 * their own (TEST_F_TIMEOUT), and run-suite bounds each binary as a whole.
 */
#ifdef TEST_TIMEOUT_DEFAULT
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300
#endif

#define SIM_BUS		"/sys/bus/trn_sim"
#define SIM_DEBUGFS	"/sys/kernel/debug/trn_sim"
#define ACCEL_CLASS	"/sys/class/accel"

/* Shape trn_sim gives a device when told only its id. */
#define SIM_DEFAULT_CORES	8
#define SIM_DEFAULT_HBM_MIB	256
#define SIM_DEFAULT_QUEUES	4
#define SIM_DEFAULT_STACKS	4
#define SIM_VA_START		0x100000000ULL

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* Write @buf to the sysfs file @path in one write(); 0 or -errno. */
static inline int sysfs_write(const char *path, const char *buf)
{
	ssize_t n;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, buf, strlen(buf));
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != strlen(buf))
		ret = -EIO;
	close(fd);
	return ret;
}

/* Read a small file into @buf (terminated); bytes read or -errno. */
static inline int read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

static inline int read_u64(const char *path, uint64_t *val)
{
	char buf[64], *end;
	int ret;

	ret = read_file(path, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	errno = 0;
	*val = strtoull(buf, &end, 0);
	if (errno || end == buf || (*end && *end != '\n'))
		return -EINVAL;
	return 0;
}

/* Raw command string to new_device, e.g. "10 8 256 4"; 0 or -errno. */
static inline int sim_new_raw(const char *cmd)
{
	return sysfs_write(SIM_BUS "/new_device", cmd);
}

static inline int sim_del_raw(const char *cmd)
{
	return sysfs_write(SIM_BUS "/del_device", cmd);
}

/* Create device @id; a zero @cores leaves the whole shape at its default. */
static inline int sim_new(unsigned int id, unsigned int cores,
			  unsigned int hbm_mib, unsigned int queues)
{
	char cmd[64];

	if (!cores)
		snprintf(cmd, sizeof(cmd), "%u", id);
	else
		snprintf(cmd, sizeof(cmd), "%u %u %u %u", id, cores, hbm_mib,
			 queues);
	return sim_new_raw(cmd);
}

static inline int sim_del(unsigned int id)
{
	char cmd[32];

	snprintf(cmd, sizeof(cmd), "%u", id);
	return sim_del_raw(cmd);
}

static inline bool sim_exists(unsigned int id)
{
	char path[128];

	snprintf(path, sizeof(path), SIM_BUS "/devices/trn_sim%u", id);
	return access(path, F_OK) == 0;
}

static inline bool sim_available(void)
{
	return access(SIM_BUS "/new_device", W_OK) == 0;
}

/* Parse "accelN" strictly. */
static inline bool parse_accel(const char *name, unsigned int *minor)
{
	char *end;
	unsigned long v;

	if (strncmp(name, "accel", 5) || name[5] < '0' || name[5] > '9')
		return false;
	v = strtoul(name + 5, &end, 10);
	if (*end || v > UINT_MAX)
		return false;
	*minor = (unsigned int)v;
	return true;
}

/* The accel minor of simulated device @id, from its sysfs directory. */
static inline int sim_minor(unsigned int id, unsigned int *minor)
{
	char path[128];
	struct dirent *de;
	int ret = -ENOENT;
	DIR *dir;

	*minor = UINT_MAX;
	snprintf(path, sizeof(path), SIM_BUS "/devices/trn_sim%u/accel", id);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir)))
		if (parse_accel(de->d_name, minor)) {
			ret = 0;
			break;
		}
	closedir(dir);
	return ret;
}

static inline void accel_node(unsigned int minor, char *buf, size_t size)
{
	snprintf(buf, size, "/dev/accel/accel%u", minor);
}

/* Open the accel node of @minor; fd or -errno. */
static inline int open_minor(unsigned int minor)
{
	char path[64];
	int fd;

	accel_node(minor, path, sizeof(path));
	fd = open(path, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Open the accel node of simulated device @id; fd or -errno. */
static inline int sim_open(unsigned int id)
{
	unsigned int minor;
	int ret;

	ret = sim_minor(id, &minor);
	if (ret)
		return ret;
	return open_minor(minor);
}

/*
 * The device a device-agnostic test runs on: simulated device 0, or with
 * TRN_TEST_DEVICE=part in the environment (the pci lane) the first trn
 * device that is not simulated, a part bound to trn_pci. Its minor, or
 * -ENOENT. Tests then skip what the device's capability bits exclude.
 */
static inline bool dut_is_part(void)
{
	const char *e = getenv("TRN_TEST_DEVICE");

	return e && !strcmp(e, "part");
}

/*
 * The minor of the @nth (from 0) trn device on PCI, a part bound to
 * trn_pci, in the order of their minors; -ENOENT if there are fewer.
 */
static inline int part_minor(unsigned int nth, unsigned int *minor)
{
	unsigned int found[64], n = 0, i, k;
	struct dirent *de;
	DIR *dir;

	*minor = UINT_MAX;
	dir = opendir(ACCEL_CLASS);
	if (!dir)
		return -errno;
	while ((de = readdir(dir)) && n < ARRAY_SIZE(found)) {
		char path[320], link[256];
		unsigned int m;
		ssize_t len;

		if (!parse_accel(de->d_name, &m))
			continue;
		/* A part's accel node hangs off a PCI device. */
		snprintf(path, sizeof(path), ACCEL_CLASS "/%s/device/subsystem",
			 de->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (!strstr(link, "/bus/pci"))
			continue;
		/* Insertion sort: a handful of parts. */
		for (k = n++; k && found[k - 1] > m; k--)
			found[k] = found[k - 1];
		found[k] = m;
	}
	closedir(dir);
	for (i = 0; i < n; i++)
		if (i == nth) {
			*minor = found[i];
			return 0;
		}
	return -ENOENT;
}

static inline int dut_minor(unsigned int *minor)
{
	*minor = UINT_MAX;
	if (!dut_is_part())
		return sim_minor(0, minor);
	return part_minor(0, minor);
}

/* Whether the device under test can be had: trn_sim loaded, or a part. */
static inline bool dut_available(void)
{
	unsigned int minor;

	return dut_is_part() ? dut_minor(&minor) == 0 :
			       access(SIM_BUS "/new_device", W_OK) == 0;
}

/*
 * In a kselftest test or fixture setup: skip unless the device under test
 * can be had, saying which is missing.
 */
#define SKIP_UNLESS_DUT()						\
	do {								\
		if (!dut_available())					\
			SKIP(return, "%s", dut_is_part() ?		\
			     "no part is bound to trn_pci" :		\
			     "trn_sim is not loaded");			\
	} while (0)

/*
 * In a kselftest test of a binary that also runs on a part: skip it there,
 * saying what of the simulator it needs (@why, a string literal).
 */
#define SIMULATOR_ONLY(why)						\
	do {								\
		if (dut_is_part())					\
			SKIP(return, "simulator only: " why);		\
	} while (0)

/* Open the device under test's accel node; fd or -errno. */
static inline int dut_open(void)
{
	unsigned int minor;
	int ret = dut_minor(&minor);

	return ret ? ret : open_minor(minor);
}

/* A number in the device under test's accel sysfs directory. */
static inline int dut_accel_u64(const char *attr, uint64_t *val)
{
	unsigned int minor;
	char path[128];
	int ret = dut_minor(&minor);

	if (ret)
		return ret;
	snprintf(path, sizeof(path), ACCEL_CLASS "/accel%u/%s", minor, attr);
	return read_u64(path, val);
}

/* ioctl() returning 0 or -errno (no retry: tests want the raw result). */
static inline int raw_ioctl(int fd, unsigned long request, void *arg)
{
	return ioctl(fd, request, arg) ? -errno : 0;
}

static inline int query_info(int fd, struct drm_trn_device_info *info)
{
	struct drm_trn_query q = {
		.query = DRM_TRN_QUERY_DEVICE_INFO,
		.size = sizeof(*info),
		.data = (uintptr_t)info,
	};

	memset(info, 0, sizeof(*info));
	return raw_ioctl(fd, DRM_IOCTL_TRN_QUERY, &q);
}

/* DRM driver name of @fd into @name; 0 or -errno. */
static inline int drm_driver_name(int fd, char *name, size_t size,
				  int *major, int *minor, int *patch)
{
	struct drm_version v;
	int ret;

	memset(&v, 0, sizeof(v));
	memset(name, 0, size);
	v.name = name;
	v.name_len = size - 1;
	ret = raw_ioctl(fd, DRM_IOCTL_VERSION, &v);
	if (ret)
		return ret;
	if (v.name_len >= size)
		return -ENAMETOOLONG;
	if (major) {
		*major = v.version_major;
		*minor = v.version_minor;
		*patch = v.version_patchlevel;
	}
	return 0;
}

/* Whether /dev/accel/accel@minor is driven by trn. */
static inline bool minor_is_trn(unsigned int minor)
{
	char name[32];
	int fd, ret;

	fd = open_minor(minor);
	if (fd < 0)
		return false;
	ret = drm_driver_name(fd, name, sizeof(name), NULL, NULL, NULL);
	close(fd);
	return !ret && !strcmp(name, "trn");
}

/* Count accel devices driven by trn (independently of libtrnhal). */
static inline int count_trn_devices(void)
{
	struct dirent *de;
	unsigned int minor;
	int n = 0;
	DIR *dir;

	dir = opendir(ACCEL_CLASS);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(dir)))
		if (parse_accel(de->d_name, &minor) && minor_is_trn(minor))
			n++;
	closedir(dir);
	return n;
}

/* Make sure debugfs is mounted; 0 or -errno. */
static inline int debugfs_ready(void)
{
	if (access(SIM_DEBUGFS, F_OK) == 0)
		return 0;
	if (mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) &&
	    errno != EBUSY)
		return -errno;
	return access(SIM_DEBUGFS, F_OK) ? -errno : 0;
}

static inline int sim_debugfs_u64(unsigned int id, const char *file,
				  uint64_t *val)
{
	char path[128];

	snprintf(path, sizeof(path), SIM_DEBUGFS "/trn_sim%u/%s", id, file);
	return read_u64(path, val);
}

/* Reference count of a loaded module, from sysfs; -errno if not loaded. */
static inline long module_refcnt(const char *name)
{
	char path[128];
	uint64_t v;
	int ret;

	snprintf(path, sizeof(path), "/sys/module/%s/refcnt", name);
	ret = read_u64(path, &v);
	return ret ? ret : (long)v;
}

static inline bool module_loaded(const char *name)
{
	char path[128];

	/* initstate exists only for loadable modules that are live. */
	snprintf(path, sizeof(path), "/sys/module/%s/initstate", name);
	return access(path, F_OK) == 0;
}

/* finit_module() @dir/@name.ko with @params; 0 or -errno. */
static inline int module_load(const char *dir, const char *name,
			      const char *params)
{
	char path[PATH_MAX];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s.ko", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, params, 0))
		ret = -errno;
	close(fd);
	return ret;
}

/* delete_module() without waiting for users; 0 or -errno. */
static inline int module_unload(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
}

/* --- Buffer objects, memory accounting, the simulator's MMU hook --- */

/* Whether all @len bytes at @p equal @c. */
static inline bool all_bytes(const void *p, int c, size_t len)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != (unsigned char)c)
			return false;
	return true;
}

#define TEST_PAGE	4096ULL

static inline uint64_t page_up(uint64_t size)
{
	return (size + TEST_PAGE - 1) & ~(TEST_PAGE - 1);
}

/* BO_CREATE; 0 or -errno; @handle and @va may be NULL. */
static inline int bo_create(int fd, uint64_t size, uint32_t placement,
			    uint32_t flags, uint64_t align, uint32_t *handle,
			    uint64_t *va)
{
	struct drm_trn_bo_create c = {
		.size = size,
		.alignment = align,
		.placement = placement,
		.flags = flags,
	};
	int ret = raw_ioctl(fd, DRM_IOCTL_TRN_BO_CREATE, &c);

	if (!ret && handle)
		*handle = c.handle;
	if (!ret && va)
		*va = c.va;
	return ret;
}

static inline int bo_userptr(int fd, const void *addr, uint64_t size,
			     uint32_t flags, uint32_t *handle, uint64_t *va)
{
	struct drm_trn_bo_userptr u = {
		.addr = (uintptr_t)addr,
		.size = size,
		.flags = flags,
	};
	int ret = raw_ioctl(fd, DRM_IOCTL_TRN_BO_USERPTR, &u);

	if (!ret && handle)
		*handle = u.handle;
	if (!ret && va)
		*va = u.va;
	return ret;
}

static inline int bo_info(int fd, uint32_t handle, struct drm_trn_bo_info *bi)
{
	memset(bi, 0, sizeof(*bi));
	bi->handle = handle;
	return raw_ioctl(fd, DRM_IOCTL_TRN_BO_INFO, bi);
}

static inline int gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	return raw_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

/* mmap the whole buffer @handle of @fd read-write; MAP_FAILED on error. */
static inline void *bo_mmap(int fd, uint32_t handle, uint64_t size)
{
	struct drm_trn_bo_info bi;

	if (bo_info(fd, handle, &bi) || !bi.mmap_offset)
		return MAP_FAILED;
	return mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    (off_t)bi.mmap_offset);
}

static inline int query_memory(int fd, struct drm_trn_memory_info *mi)
{
	struct drm_trn_query q = {
		.query = DRM_TRN_QUERY_MEMORY,
		.size = sizeof(*mi),
		.data = (uintptr_t)mi,
	};

	memset(mi, 0, sizeof(*mi));
	return raw_ioctl(fd, DRM_IOCTL_TRN_QUERY, &q);
}

/*
 * Value of fdinfo key @key of @fd in process @pid (0: ourselves), with the
 * drm-usage-stats units (KiB, MiB, GiB) applied; 0 or -errno (-ENOENT for a
 * missing key).
 */
static inline int fdinfo_u64_pid(pid_t pid, int fd, const char *key,
				 uint64_t *val)
{
	char path[64], buf[4096], *p, *end;
	size_t klen = strlen(key);
	int ret;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	else
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	ret = read_file(path, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, klen) || p[klen] != ':')
			continue;
		p += klen + 1;
		errno = 0;
		*val = strtoull(p, &end, 0);
		if (errno || end == p)
			return -EINVAL;
		if (!strncmp(end, " KiB", 4))
			*val <<= 10;
		else if (!strncmp(end, " MiB", 4))
			*val <<= 20;
		else if (!strncmp(end, " GiB", 4))
			*val <<= 30;
		return 0;
	}
	return -ENOENT;
}

static inline int fdinfo_u64(int fd, const char *key, uint64_t *val)
{
	return fdinfo_u64_pid(0, fd, key, val);
}

/* The MMU context number of @fd (fdinfo trn-context); 0 on error. */
static inline unsigned int fd_context(int fd)
{
	uint64_t v = 0;

	return fdinfo_u64(fd, "trn-context", &v) ? 0 : (unsigned int)v;
}

/*
 * Run a DMA copy on simulated device @id in context @ctx through the
 * simulator's debugfs hook; 0 or -errno (-EFAULT for an MMU fault). The
 * copy is no job: nothing is synced around it, so under bounce buffering
 * (the 6.12-swiotlb lane) it reads and writes only the device's copy of a
 * user or imported buffer, never what the CPU sees. Tests of the MMU itself
 * (faults, isolation, context numbers) use it; tests that check data
 * through the CPU use dev_copy().
 */
static inline int sim_dma_copy(unsigned int id, unsigned int ctx, uint64_t dst,
			       uint64_t src, uint64_t len)
{
	char path[128], cmd[128];

	snprintf(path, sizeof(path), SIM_DEBUGFS "/trn_sim%u/dma_copy", id);
	snprintf(cmd, sizeof(cmd), "%u %llx %llx %llu", ctx,
		 (unsigned long long)dst, (unsigned long long)src,
		 (unsigned long long)len);
	return sysfs_write(path, cmd);
}

/*
 * The device under test (dut_minor()) where a helper takes a simulated
 * device's id: sim_accel_u64() and what is built on it (sim_counters(),
 * exec_counters(), ...) read the part's sysfs under TRN_TEST_DEVICE=part.
 */
#define DUT_ID	UINT_MAX

/* /sys/class/accel/accel<minor of device @id>/@attr */
static inline int sim_accel_u64(unsigned int id, const char *attr,
				uint64_t *val)
{
	unsigned int minor;
	char path[128];
	int ret;

	if (id == DUT_ID)
		return dut_accel_u64(attr, val);
	ret = sim_minor(id, &minor);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), ACCEL_CLASS "/accel%u/%s", minor, attr);
	return read_u64(path, val);
}

/* Device-wide counters of simulated device @id. */
struct sim_counters {
	uint64_t hbm_used;
	uint64_t host_pinned;
};

static inline int sim_counters(unsigned int id, struct sim_counters *c)
{
	int ret = sim_accel_u64(id, "hbm_used", &c->hbm_used);

	return ret ? ret : sim_accel_u64(id, "host_pinned", &c->host_pinned);
}

/*
 * Counters drop when a dying process's files are released, which may lag
 * its exit a little (the final fput runs from task work / a workqueue):
 * wait up to ~5 s for them to reach @want. 0 when they did.
 */
static inline int sim_counters_wait(unsigned int id,
				    const struct sim_counters *want,
				    struct sim_counters *now)
{
	int i, ret = 0;

	for (i = 0; i < 500; i++) {
		ret = sim_counters(id, now);
		if (ret)
			return ret;
		if (now->hbm_used == want->hbm_used &&
		    now->host_pinned == want->host_pinned)
			return 0;
		usleep(10000);
	}
	return -ETIMEDOUT;
}

/* Read or write a module parameter of trn. */
static inline int trn_param_get(const char *name, uint64_t *val)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/trn/parameters/%s", name);
	return read_u64(path, val);
}

static inline int trn_param_set(const char *name, uint64_t val)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), "/sys/module/trn/parameters/%s", name);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)val);
	return sysfs_write(path, buf);
}

/*
 * Create simulated device @id as sim_new() does, with trn's
 * job_timeout_ms at @timeout_ms for it: the parameter is read when a
 * device is added, and is put back right after. 0 or -errno.
 */
static inline int sim_new_timeout(unsigned int id, unsigned int cores,
				  unsigned int hbm_mib, unsigned int queues,
				  uint64_t timeout_ms)
{
	uint64_t old;
	int ret, put;

	ret = trn_param_get("job_timeout_ms", &old);
	if (ret)
		return ret;
	ret = trn_param_set("job_timeout_ms", timeout_ms);
	if (!ret)
		ret = sim_new(id, cores, hbm_mib, queues);
	put = trn_param_set("job_timeout_ms", old);
	return ret ? ret : put;
}

/* --- Execution: queues, jobs, syncobjs, raw command streams --- */

/* CLOCK_MONOTONIC in ns (what DRM syncobj timeouts are measured against). */
static inline int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* QUEUE_CREATE; the whole answer goes to @qc (may be NULL). 0 or -errno. */
static inline int queue_create(int fd, uint32_t core, uint32_t priority,
			       struct drm_trn_queue_create *qc)
{
	struct drm_trn_queue_create c = { .core = core, .priority = priority };
	int ret = raw_ioctl(fd, DRM_IOCTL_TRN_QUEUE_CREATE, &c);

	if (!ret && qc)
		*qc = c;
	return ret;
}

static inline int queue_destroy(int fd, uint32_t queue_id)
{
	struct drm_trn_queue_destroy d = { .queue_id = queue_id };

	return raw_ioctl(fd, DRM_IOCTL_TRN_QUEUE_DESTROY, &d);
}

static inline int queue_status(int fd, uint32_t queue_id,
			       struct drm_trn_queue_status *st)
{
	memset(st, 0, sizeof(*st));
	st->queue_id = queue_id;
	return raw_ioctl(fd, DRM_IOCTL_TRN_QUEUE_STATUS, st);
}

/* submitted_seqno of a queue, or UINT64_MAX if the status call fails. */
static inline uint64_t queue_submitted(int fd, uint32_t queue_id)
{
	struct drm_trn_queue_status st;

	return queue_status(fd, queue_id, &st) ? UINT64_MAX : st.submitted_seqno;
}

static inline void job_init(struct drm_trn_job *j, uint64_t cmd_va,
			    uint32_t cmd_size)
{
	memset(j, 0, sizeof(*j));
	j->cmd_va = cmd_va;
	j->cmd_size = cmd_size;
}

/* SUBMIT @count jobs of the current size; seqnos land in jobs[i].seqno. */
static inline int submit_jobs(int fd, uint32_t queue_id,
			      struct drm_trn_job *jobs, uint32_t count)
{
	struct drm_trn_submit s = {
		.queue_id = queue_id,
		.jobs = (uintptr_t)jobs,
		.job_count = count,
		.job_size = sizeof(*jobs),
	};

	return raw_ioctl(fd, DRM_IOCTL_TRN_SUBMIT, &s);
}

/* One job of [@cmd_va, +@cmd_size) listing buffer @bo (0: none). */
static inline int submit_one(int fd, uint32_t queue_id, uint64_t cmd_va,
			     uint32_t cmd_size, uint32_t bo, uint64_t *seqno)
{
	struct drm_trn_job j;
	int ret;

	job_init(&j, cmd_va, cmd_size);
	if (bo) {
		j.bo_handles = (uintptr_t)&bo;
		j.bo_count = 1;
	}
	ret = submit_jobs(fd, queue_id, &j, 1);
	if (!ret && seqno)
		*seqno = j.seqno;
	return ret;
}

static inline int syncobj_create(int fd, uint32_t flags, uint32_t *handle)
{
	struct drm_syncobj_create c = { .flags = flags };
	int ret = raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);

	if (!ret)
		*handle = c.handle;
	return ret;
}

static inline int syncobj_destroy(int fd, uint32_t handle)
{
	struct drm_syncobj_destroy d = { .handle = handle };

	return raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
}

/*
 * Make the next queue created on @core of @fd's device land on the ring
 * of the queue created there just before, by any file: the driver deals a
 * core's queues to its queues_per_core rings round robin (execution.md),
 * so queues_per_core - 1 queues are created (and destroyed) in between.
 * Nothing on a device of one ring per core. Nobody else may create queues
 * on the device meanwhile. 0 or -errno.
 */
static inline int next_queue_on_same_ring(int fd, uint32_t core)
{
	struct drm_trn_device_info info;
	struct drm_trn_queue_create q;
	unsigned int i;
	int ret = query_info(fd, &info);

	for (i = 1; !ret && i < info.queues_per_core; i++) {
		ret = queue_create(fd, core, DRM_TRN_PRIORITY_NORMAL, &q);
		if (!ret)
			ret = queue_destroy(fd, q.queue_id);
		if (!ret)
			ret = syncobj_destroy(fd, q.syncobj);
	}
	return ret;
}

/*
 * Wait for @point of timeline syncobj @handle (0: a binary syncobj) for up
 * to @timeout_ms (0: only look). 0 when signalled, -ETIME when not.
 */
static inline int syncobj_wait_point(int fd, uint32_t handle, uint64_t point,
				     int64_t timeout_ms)
{
	struct drm_syncobj_timeline_wait w = {
		.handles = (uintptr_t)&handle,
		.points = (uintptr_t)&point,
		.timeout_nsec = timeout_ms ? mono_ns() + timeout_ms * 1000000 :
					     0,
		.count_handles = 1,
		.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL,
	};

	return raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w);
}

/* The latest signalled point of a timeline syncobj. */
static inline int syncobj_query(int fd, uint32_t handle, uint64_t *point)
{
	struct drm_syncobj_timeline_array a = {
		.handles = (uintptr_t)&handle,
		.points = (uintptr_t)point,
		.count_handles = 1,
	};

	return raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_QUERY, &a);
}

/* Export the fence of binary syncobj @handle as a sync_file; fd or -errno. */
static inline int syncobj_export_sync_file(int fd, uint32_t handle)
{
	struct drm_syncobj_handle h = {
		.handle = handle,
		.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
		.fd = -1,
	};
	int ret = raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h);

	return ret ? ret : h.fd;
}

static inline int syncobj_import_sync_file(int fd, uint32_t handle,
					   int sync_fd)
{
	struct drm_syncobj_handle h = {
		.handle = handle,
		.flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE,
		.fd = sync_fd,
	};

	return raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &h);
}

/* Copy @point of @src (0: its fence) into binary syncobj @dst. */
static inline int syncobj_transfer(int fd, uint32_t dst, uint32_t src,
				   uint64_t point)
{
	struct drm_syncobj_transfer t = {
		.src_handle = src,
		.dst_handle = dst,
		.src_point = point,
	};

	return raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_TRANSFER, &t);
}

/*
 * Status of the fence in binary syncobj @handle, read through a sync_file:
 * 1 signalled without error, 0 pending, a negative errno if it signalled
 * with that error; or the failure of a step, as -1000 - errno.
 */
static inline int syncobj_fence_status(int fd, uint32_t handle)
{
	struct sync_fence_info fi[4];
	struct sync_file_info info;
	int sfd, ret, i;

	sfd = syncobj_export_sync_file(fd, handle);
	if (sfd < 0)
		return -1000 + sfd;
	memset(&info, 0, sizeof(info));
	memset(fi, 0, sizeof(fi));
	info.num_fences = 4;
	info.sync_fence_info = (uintptr_t)fi;
	ret = ioctl(sfd, SYNC_IOC_FILE_INFO, &info) ? -1000 - errno : 0;
	close(sfd);
	if (ret)
		return ret;
	/* The job's own fence, and its error, whatever wraps it. */
	for (i = 0; i < (int)info.num_fences && i < 4; i++)
		if (fi[i].status < 0)
			return fi[i].status;
	return info.status;
}

/* Status of the fence of @point of timeline syncobj @timeline (see above). */
static inline int timeline_fence_status(int fd, uint32_t timeline,
					uint64_t point)
{
	uint32_t tmp;
	int ret;

	ret = syncobj_create(fd, 0, &tmp);
	if (ret)
		return -1000 + ret;
	ret = syncobj_transfer(fd, tmp, timeline, point);
	ret = ret ? -1000 + ret : syncobj_fence_status(fd, tmp);
	syncobj_destroy(fd, tmp);
	return ret;
}

/* A host buffer mapped for the CPU. */
struct host_bo {
	uint32_t handle;
	uint64_t va;
	uint64_t size;
	void *map;
};

static inline int host_bo_new(int fd, uint64_t size, struct host_bo *b)
{
	int ret;

	memset(b, 0, sizeof(*b));
	b->size = page_up(size);
	ret = bo_create(fd, b->size, DRM_TRN_PLACEMENT_HOST, 0, 0, &b->handle,
			&b->va);
	if (ret)
		return ret;
	b->map = bo_mmap(fd, b->handle, b->size);
	if (b->map == MAP_FAILED) {
		ret = -errno;
		gem_close(fd, b->handle);
		b->map = NULL;
		return ret ? ret : -EIO;
	}
	return 0;
}

static inline void host_bo_free(int fd, struct host_bo *b)
{
	if (b->map)
		munmap(b->map, b->size);
	if (b->handle)
		gem_close(fd, b->handle);
	memset(b, 0, sizeof(*b));
}

/* Read-only CPU mapping of a queue's status page; NULL on error. */
static inline const volatile struct drm_trn_queue_status_page *
status_page_map(int fd, uint32_t status_handle)
{
	struct drm_trn_bo_info bi;
	void *p;

	if (bo_info(fd, status_handle, &bi) || !bi.mmap_offset)
		return NULL;
	p = mmap(NULL, bi.size, PROT_READ, MAP_SHARED, fd,
		 (off_t)bi.mmap_offset);
	return p == MAP_FAILED ? NULL : p;
}

/*
 * A command stream recorded with the ISA structures of trn_isa.h into
 * CPU-mapped memory whose device address is @va.
 */
struct cmds {
	unsigned char *map;
	uint64_t va;
	size_t cap;		/* bytes */
	size_t len;		/* bytes recorded */
};

static inline void cmds_init(struct cmds *c, void *map, uint64_t va,
			     size_t cap)
{
	c->map = map;
	c->va = va;
	c->cap = cap;
	c->len = 0;
}

static inline uint64_t cmds_tail_va(const struct cmds *c)
{
	return c->va + c->len;
}

/* Append @bytes (a multiple of 8) of a command; -ENOSPC if full. */
static inline int cmds_raw(struct cmds *c, const void *cmd, size_t bytes)
{
	if (bytes % 8 || c->len + bytes > c->cap)
		return -ENOSPC;
	memcpy(c->map + c->len, cmd, bytes);
	c->len += bytes;
	return 0;
}

#define CMD_WORDS(type)		(sizeof(type) / 8)

static inline int cmds_nop(struct cmds *c)
{
	struct trn_cmd_nop n = {
		.header = TRN_CMD_HEADER(TRN_OP_NOP, 0, 1),
	};

	return cmds_raw(c, &n, sizeof(n));
}

static inline int cmds_write32(struct cmds *c, uint64_t dst, uint32_t value)
{
	struct trn_cmd_write w = {
		.header = TRN_CMD_HEADER(TRN_OP_WRITE, 0,
					 CMD_WORDS(struct trn_cmd_write)),
		.dst = dst,
		.value = value,
	};

	return cmds_raw(c, &w, sizeof(w));
}

static inline int cmds_write64(struct cmds *c, uint64_t dst, uint64_t value)
{
	struct trn_cmd_write w = {
		.header = TRN_CMD_HEADER(TRN_OP_WRITE, TRN_WRITE_64,
					 CMD_WORDS(struct trn_cmd_write)),
		.dst = dst,
		.value = value,
	};

	return cmds_raw(c, &w, sizeof(w));
}

static inline int cmds_fill(struct cmds *c, uint64_t dst, uint32_t pattern,
			    uint64_t size)
{
	struct trn_cmd_fill f = {
		.header = TRN_CMD_HEADER(TRN_OP_FILL, 0,
					 CMD_WORDS(struct trn_cmd_fill)),
		.pattern = pattern,
		.dst = dst,
		.size = size,
	};

	return cmds_raw(c, &f, sizeof(f));
}

static inline int cmds_copy(struct cmds *c, uint64_t dst, uint64_t src,
			    uint64_t size)
{
	struct trn_cmd_copy k = {
		.header = TRN_CMD_HEADER(TRN_OP_COPY, 0,
					 CMD_WORDS(struct trn_cmd_copy)),
		.dst = dst,
		.src = src,
		.width = size,
		.height = 1,
		.dst_pitch = size,
		.src_pitch = size,
	};

	return cmds_raw(c, &k, sizeof(k));
}

static inline int cmds_sem(struct cmds *c, bool wait, uint32_t sem,
			   uint64_t value)
{
	struct trn_cmd_sem s = {
		.header = TRN_CMD_HEADER(wait ? TRN_OP_SEM_WAIT :
					 TRN_OP_SEM_SIGNAL, 0,
					 CMD_WORDS(struct trn_cmd_sem)),
		.sem = sem,
		.value = value,
	};

	return cmds_raw(c, &s, sizeof(s));
}

static inline int cmds_call(struct cmds *c, uint64_t va, uint64_t size)
{
	struct trn_cmd_call k = {
		.header = TRN_CMD_HEADER(TRN_OP_CALL, 0,
					 CMD_WORDS(struct trn_cmd_call)),
		.va = va,
		.size = size,
	};

	return cmds_raw(c, &k, sizeof(k));
}

static inline int cmds_timestamp(struct cmds *c, uint64_t dst)
{
	struct trn_cmd_timestamp k = {
		.header = TRN_CMD_HEADER(TRN_OP_TIMESTAMP, 0,
					 CMD_WORDS(struct trn_cmd_timestamp)),
		.dst = dst,
	};

	return cmds_raw(c, &k, sizeof(k));
}

/*
 * Whether the kernel bounces every streaming DMA mapping (booted with
 * "swiotlb=...,force", the 6.12-swiotlb lane): then a device works on
 * copies of user and imported memory that only syncs bring up to date.
 */
static inline bool dma_bounces(void)
{
	char buf[4096], *tok, *save = NULL;

	if (read_file("/proc/cmdline", buf, sizeof(buf)) < 0)
		return false;
	for (tok = strtok_r(buf, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		char *opt, *osave = NULL;

		if (strncmp(tok, "swiotlb=", 8))
			continue;
		for (opt = strtok_r(tok + 8, ",", &osave); opt;
		     opt = strtok_r(NULL, ",", &osave))
			if (!strcmp(opt, "force"))
				return true;
	}
	return false;
}

/*
 * Copy @len bytes from @src_va to @dst_va in the address space of @fd with
 * a real job: one COPY in a command buffer of @fd, on a queue of @fd made
 * for it, the job listing the @n buffers @handles (those the copy reads or
 * writes; a handle given twice is listed once) and the command buffer.
 * Listing them is what makes the core sync user and imported buffers at the
 * job's boundaries (memory.md, "DMA"): under bounce buffering a copy outside
 * a job, like sim_dma_copy(), works on the device's copy alone and never
 * reaches or leaves what the CPU sees. Waits for the job's timeline point,
 * then destroys the queue, its syncobj and the command buffer, and waits
 * until the job is freed too (the file's trn-buffers is back where it was:
 * the queue, and with it its status buffer, goes with the job's last
 * reference, after the job let go of the buffers it listed), so that, as
 * after sim_dma_copy(), nothing of the copy is left: closing a listed
 * buffer's last handle afterwards frees it at once, and the counters show
 * it. 0 when the job succeeded, -EFAULT when it faulted (an access outside
 * the mappings or against their rights, as sim_dma_copy() reports it), the
 * job's other error (-EILSEQ, -ETIMEDOUT, ...), or the -errno of the step
 * that failed (-ETIME: the job did not finish in DEV_COPY_WAIT_MS; -EBUSY:
 * it was not freed in DEV_COPY_FREE_MS).
 */
#define DEV_COPY_MAX_BOS	8

static inline bool ranges_meet(uint64_t a, uint64_t alen, uint64_t b,
			       uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

/* Whether [@va, @va + @size) meets one of a copy's ranges. */
static inline bool copy_meets(uint64_t va, uint64_t size, uint64_t dst_va,
			      uint64_t src_va, uint64_t len)
{
	return ranges_meet(va, size, dst_va, len) ||
	       ranges_meet(va, size, src_va, len);
}

/*
 * dev_copy()'s command buffer and queue (whose status buffer is mapped in
 * the context too), never at the copy's own addresses: a test that copies
 * from an address it expects unmapped (a freed buffer's, say) must fault
 * there, not find dev_copy()'s own buffers in the freed hole. Holes that
 * would take the command buffer are held by spare buffers until both have
 * their places; -EADDRINUSE if that is not enough.
 */
static inline int dev_copy_place(int fd, uint64_t dst_va, uint64_t src_va,
				 uint64_t len, struct host_bo *cmd,
				 struct drm_trn_queue_create *qc)
{
	struct drm_trn_bo_info bi;
	struct host_bo spare[8];
	unsigned int n = 0, i;
	int ret;

	for (;;) {
		ret = host_bo_new(fd, TEST_PAGE, cmd);
		if (ret || !copy_meets(cmd->va, cmd->size, dst_va, src_va, len))
			break;
		if (n == ARRAY_SIZE(spare)) {
			host_bo_free(fd, cmd);
			ret = -EADDRINUSE;
			break;
		}
		spare[n++] = *cmd;
	}
	if (!ret) {
		ret = queue_create(fd, 0, DRM_TRN_PRIORITY_NORMAL, qc);
		if (!ret) {
			ret = bo_info(fd, qc->status_handle, &bi);
			if (!ret && copy_meets(bi.va, bi.size, dst_va, src_va,
					       len))
				ret = -EADDRINUSE;
			if (ret) {
				queue_destroy(fd, qc->queue_id);
				syncobj_destroy(fd, qc->syncobj);
			}
		}
		if (ret)
			host_bo_free(fd, cmd);
	}
	for (i = 0; i < n; i++)
		host_bo_free(fd, &spare[i]);
	return ret;
}

#define DEV_COPY_WAIT_MS	120000
#define DEV_COPY_FREE_MS	10000

static inline int dev_copy(int fd, uint64_t dst_va, uint64_t src_va,
			   uint64_t len, const uint32_t *handles, unsigned int n)
{
	uint32_t bos[DEV_COPY_MAX_BOS + 1];
	struct drm_trn_queue_create qc = { 0 };
	unsigned int i, k, count = 0;
	uint64_t bufs0, bufs;
	struct drm_trn_job j;
	struct host_bo cmd;
	int64_t deadline;
	struct cmds c;
	int ret, st;

	if (n > DEV_COPY_MAX_BOS)
		return -E2BIG;
	ret = fdinfo_u64(fd, "trn-buffers", &bufs0);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		for (k = 0; k < count && bos[k] != handles[i]; k++)
			;
		if (k == count)
			bos[count++] = handles[i];
	}
	ret = dev_copy_place(fd, dst_va, src_va, len, &cmd, &qc);
	if (ret)
		return ret;
	bos[count++] = cmd.handle;
	cmds_init(&c, cmd.map, cmd.va, cmd.size);
	ret = cmds_copy(&c, dst_va, src_va, len);
	if (ret)
		goto out_queue;
	job_init(&j, c.va, (uint32_t)c.len);
	j.bo_handles = (uintptr_t)bos;
	j.bo_count = count;
	ret = submit_jobs(fd, qc.queue_id, &j, 1);
	if (!ret)
		ret = syncobj_wait_point(fd, qc.syncobj, j.seqno,
					 DEV_COPY_WAIT_MS);
	if (!ret) {
		st = timeline_fence_status(fd, qc.syncobj, j.seqno);
		if (st == 1)
			ret = 0;		/* signalled, no error */
		else if (st == 0)
			ret = -ETIME;		/* cannot be after the wait */
		else if (st <= -1000)
			ret = st + 1000;	/* a step of the look failed */
		else
			ret = st;		/* the job's own error */
	}
out_queue:
	queue_destroy(fd, qc.queue_id);	/* the status buffer goes with it */
	syncobj_destroy(fd, qc.syncobj);
	host_bo_free(fd, &cmd);
	deadline = mono_ns() + (int64_t)DEV_COPY_FREE_MS * 1000000;
	for (;;) {
		if (fdinfo_u64(fd, "trn-buffers", &bufs) || bufs <= bufs0)
			break;
		if (mono_ns() > deadline) {
			fprintf(stderr, "# dev_copy: the job was not freed in %d ms (trn-buffers %llu, was %llu)\n",
				DEV_COPY_FREE_MS, (unsigned long long)bufs,
				(unsigned long long)bufs0);
			return ret ? ret : -EBUSY;
		}
		usleep(1000);
	}
	return ret;
}

/*
 * A copy in the context of @fd on the device under test, for tests of what
 * the context reaches: on a simulated device through the debugfs dma_copy
 * hook (sim_dma_copy(), outside jobs), on a part, which has no such hook,
 * as a COPY job (dev_copy(), listing no buffers: the part resolves every
 * address in the context's own mappings when the job runs). 0, or -EFAULT
 * for an access outside the context's mappings or against their rights
 * (counted in the file's trn-mmu-faults either way).
 */
static inline int dut_copy(int fd, uint64_t dst, uint64_t src, uint64_t len)
{
	if (!dut_is_part())
		return sim_dma_copy(0, fd_context(fd), dst, src, len);
	return dev_copy(fd, dst, src, len, NULL, 0);
}

/* /sys/class/accel/accelN execution counters of simulated device @id. */
struct exec_counters {
	uint64_t submitted;
	uint64_t completed;
	uint64_t failed;
	uint64_t resets;
};

static inline int exec_counters(unsigned int id, struct exec_counters *c)
{
	int ret;

	ret = sim_accel_u64(id, "jobs_submitted", &c->submitted);
	if (!ret)
		ret = sim_accel_u64(id, "jobs_completed", &c->completed);
	if (!ret)
		ret = sim_accel_u64(id, "jobs_failed", &c->failed);
	if (!ret)
		ret = sim_accel_u64(id, "resets", &c->resets);
	return ret;
}

/*
 * Wait up to @timeout_ms for device @id to be idle: every job submitted so
 * far completed or failed. 0 when it is, -ETIMEDOUT otherwise.
 */
static inline int exec_counters_idle(unsigned int id, int timeout_ms,
				     struct exec_counters *c)
{
	int64_t end = mono_ns() + (int64_t)timeout_ms * 1000000;
	int ret;

	do {
		ret = exec_counters(id, c);
		if (ret)
			return ret;
		if (c->submitted == c->completed + c->failed)
			return 0;
		usleep(10000);
	} while (mono_ns() < end);
	return -ETIMEDOUT;
}

/* Path of trn_sim debugfs file @file of device @id. */
static inline void sim_debugfs_path(unsigned int id, const char *file,
				    char *buf, size_t size)
{
	snprintf(buf, size, SIM_DEBUGFS "/trn_sim%u/%s", id, file);
}

#endif /* TRN_GUEST_TEST_H */
