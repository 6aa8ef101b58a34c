// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * libtrnhal enumeration and registry logic against a fake device tree.
 *
 * The library is built with TRNHAL_TESTING: its sysfs and /dev roots point
 * into a temporary directory and its ioctls go to fake_ioctl() below, which
 * plays the driver. A fake node is a regular file whose content says what
 * it is: the DRM driver name, optionally followed by "gone" (queries fail
 * with ENODEV, like an unplugged device), "uapi2" (a future major uAPI) or
 * "old" (a uAPI 1.2 driver, whose device info ends before queue_depth).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xf86drm.h>

#include "trn_accel.h"
#include "trnhal.h"
#include "../../libhal/internal.h"
#include "check.h"

static char root[64];
static char sys_root[96];
static char dev_root[96];

static int fake_ioctl(int fd, unsigned long request, void *arg)
{
	char link[64], path[PATH_MAX], content[64] = "";
	unsigned int minor;
	const char *base;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		return -1;
	path[n] = '\0';
	base = strrchr(path, '/');
	if (!base || sscanf(base, "/accel%u", &minor) != 1) {
		errno = ENOTTY;
		return -1;
	}
	n = pread(fd, content, sizeof(content) - 1, 0);
	if (n < 0)
		return -1;
	content[n] = '\0';

	if (request == DRM_IOCTL_VERSION) {
		struct drm_version *v = arg;
		size_t len = strcspn(content, " \n");

		/* Like drm_copy_field(): copy what fits, report the length. */
		memcpy(v->name, content, len < v->name_len ? len : v->name_len);
		v->name_len = len;
		v->version_major = 1;
		v->version_minor = 2;
		v->version_patchlevel = 3;
		return 0;
	}
	if (request == DRM_IOCTL_TRN_QUERY) {
		struct drm_trn_query *q = arg;
		struct drm_trn_device_info *di = (void *)(uintptr_t)q->data;
		struct drm_trn_device_info full;

		if (strstr(content, "gone")) {
			errno = ENODEV;
			return -1;
		}
		if (q->query != DRM_TRN_QUERY_DEVICE_INFO || q->flags ||
		    q->pad || q->size != sizeof(*di)) {
			errno = EINVAL;
			return -1;
		}
		memset(&full, 0, sizeof(full));
		full.uapi_major = strstr(content, "uapi2") ? 2 : 1;
		full.uapi_minor = strstr(content, "old") ? 2 : 4;
		full.generation = DRM_TRN_GEN_SIM;
		full.num_cores = minor + 1;
		full.queues_per_core = 4;
		full.device_id = minor + 100;
		full.hbm_size = (uint64_t)(minor + 1) << 20;
		full.va_start = 1ULL << 32;
		full.va_size = (1ULL << 48) - (1ULL << 32);
		full.capabilities = DRM_TRN_CAP_SIMULATED;
		full.queue_depth = 1024 + minor;
		full.job_timeout_ms = 5000 + minor;
		full.ban_faults = 16 + minor;
		/* Like the kernel: as much as both sides know. */
		q->size = strstr(content, "old") ?
			  offsetof(struct drm_trn_device_info, queue_depth) :
			  sizeof(full);
		memcpy(di, &full, q->size);
		return 0;
	}
	errno = ENOTTY;
	return -1;
}

static void make_dir(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (mkdir(path, 0755))
		perror(path), exit(1);
}

static void make_node(const char *name, const char *content)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dev_root, name);
	f = fopen(path, "w");
	if (!f)
		perror(path), exit(1);
	fputs(content, f);
	fclose(f);
}

static void setup_tree(void)
{
	static const char *const sys_entries[] = {
		"accel0", "accel1", "accel2", "accel3", "accel4", "accel10",
		"accel7",	/* no /dev node: vanished */
		"accel01", "accelX", "accel", "card0",	/* not accel minors */
	};
	size_t i;

	snprintf(root, sizeof(root), "/tmp/trnhal-test-XXXXXX");
	if (!mkdtemp(root))
		perror("mkdtemp"), exit(1);
	snprintf(sys_root, sizeof(sys_root), "%s/sys", root);
	snprintf(dev_root, sizeof(dev_root), "%s/dev", root);
	make_dir(root, "sys");
	make_dir(root, "dev");
	for (i = 0; i < sizeof(sys_entries) / sizeof(sys_entries[0]); i++)
		make_dir(sys_root, sys_entries[i]);
	make_node("accel0", "trn\n");
	make_node("accel1", "trn\n");
	make_node("accel2", "trn gone\n");
	make_node("accel3", "other\n");
	make_node("accel4", "trn uapi2\n");
	make_node("accel10", "trn\n");
	make_node("accel01", "trn\n");
	make_node("accelX", "trn\n");

	trnhal_test_sysfs_root = sys_root;
	trnhal_test_dev_root = dev_root;
	trnhal_test_ioctl = fake_ioctl;
}

static void teardown_tree(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", root);
}

static void test_list(void)
{
	unsigned int minors[8];
	size_t count = 99;

	memset(minors, 0xff, sizeof(minors));
	CHECK_INT(trn_device_list(minors, 8, &count), 0);
	CHECK_INT(count, 5);
	CHECK_INT(minors[0], 0);
	CHECK_INT(minors[1], 1);
	CHECK_INT(minors[2], 2);
	CHECK_INT(minors[3], 4);
	CHECK_INT(minors[4], 10);
	CHECK_INT(minors[5], UINT_MAX);

	/* Too small an array: the lowest minors, and the full count. */
	memset(minors, 0xff, sizeof(minors));
	CHECK_INT(trn_device_list(minors, 2, &count), 0);
	CHECK_INT(count, 5);
	CHECK_INT(minors[0], 0);
	CHECK_INT(minors[1], 1);
	CHECK_INT(minors[2], UINT_MAX);

	CHECK_INT(trn_device_list(NULL, 0, &count), 0);
	CHECK_INT(count, 5);
	CHECK_INT(trn_device_list(NULL, 1, &count), -EINVAL);
	CHECK_INT(trn_device_list(minors, 8, NULL), -EINVAL);

	/* No accel class at all is not an error. */
	trnhal_test_sysfs_root = "/nonexistent/trn";
	count = 99;
	CHECK_INT(trn_device_list(minors, 8, &count), 0);
	CHECK_INT(count, 0);
	trnhal_test_sysfs_root = sys_root;
}

static void test_open_errors(void)
{
	trn_device_t *dev = (void *)1;

	CHECK_INT(trn_device_open(3, &dev), -ENODEV);	/* other driver */
	CHECK(dev == NULL);
	CHECK_INT(trn_device_open(7, &dev), -ENOENT);	/* no node */
	CHECK_INT(trn_device_open(99, &dev), -ENOENT);
	CHECK_INT(trn_device_open(4, &dev), -EPROTO);	/* uAPI 2.x */
	CHECK_INT(trn_device_open(0, NULL), -EINVAL);
	/* Query fails at open for an unplugged device. */
	CHECK_INT(trn_device_open(2, &dev), -ENODEV);
	CHECK_INT(trnhal_test_registry_size(), 0);

	CHECK_INT(trn_device_fd(NULL), -EINVAL);
	CHECK_INT(trn_device_info(NULL, NULL), -EINVAL);
	trn_device_close(NULL);
}

static void test_open_dedup(void)
{
	struct trn_device_info info;
	trn_device_t *a, *b, *c;
	char expect[PATH_MAX];
	int fd;

	CHECK_INT(trn_device_open(0, &a), 0);
	CHECK_INT(trn_device_open(0, &b), 0);
	CHECK(a == b);
	CHECK_INT(trn_device_open(10, &c), 0);
	CHECK(c != a);
	CHECK_INT(trnhal_test_registry_size(), 2);

	fd = trn_device_fd(a);
	CHECK(fd >= 0);
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);

	memset(&info, 0xaa, sizeof(info));
	CHECK_INT(trn_device_info(c, &info), 0);
	CHECK_INT(info.minor, 10);
	snprintf(expect, sizeof(expect), "%s/accel10", dev_root);
	expect[sizeof(info.node) - 1] = '\0';
	CHECK_STR(info.node, expect);	/* truncated: the fake root is long */
	CHECK_STR(info.driver_name, "trn");
	CHECK_INT(info.driver_major, 1);
	CHECK_INT(info.driver_minor, 2);
	CHECK_INT(info.driver_patchlevel, 3);
	CHECK_INT(info.uapi_major, 1);
	CHECK_INT(info.generation, TRN_GEN_SIM);
	CHECK_INT(info.num_cores, 11);
	CHECK_INT(info.queues_per_core, 4);
	CHECK_INT(info.device_id, 110);
	CHECK_INT(info.hbm_size, 11ULL << 20);
	CHECK_INT(info.va_start, 1ULL << 32);
	/* A uAPI 1.4 driver's execution bits are its own. */
	CHECK_INT(info.capabilities, TRN_CAP_SIMULATED);
	CHECK_INT(info.uapi_minor, 4);
	CHECK_INT(info.queue_depth, 1034);
	CHECK_INT(info.job_timeout_ms, 5010);
	CHECK_INT(info.ban_faults, 26);
	CHECK_INT(info.user_queues, 0);
	/* Nor does it know of HBM stacks (uAPI 1.8). */
	CHECK_INT(info.hbm_stacks, 0);
	CHECK_INT(info.reserved0, 0);
	CHECK_INT(info.reserved[0], 0);
	CHECK_INT(info.reserved[12], 0);
	/* The size never changes: new fields come out of reserved. */
	CHECK_INT(sizeof(info), 264);
	CHECK_INT(offsetof(struct trn_device_info, reserved) +
		  sizeof(info.reserved), 264);

	/* The first close keeps the shared handle alive. */
	trn_device_close(a);
	CHECK_INT(trnhal_test_registry_size(), 2);
	CHECK_INT(trn_device_fd(b), fd);
	CHECK_INT(trn_device_info(b, &info), 0);
	trn_device_close(b);
	CHECK_INT(trnhal_test_registry_size(), 1);
	CHECK(fcntl(fd, F_GETFD) < 0 && errno == EBADF);
	trn_device_close(c);
	CHECK_INT(trnhal_test_registry_size(), 0);

	/* A uAPI 1.2 driver answers without the policy fields: zero. */
	make_node("accel1", "trn old\n");
	CHECK_INT(trn_device_open(1, &a), 0);
	memset(&info, 0xaa, sizeof(info));
	CHECK_INT(trn_device_info(a, &info), 0);
	CHECK_INT(info.uapi_minor, 2);
	CHECK_INT(info.num_cores, 2);
	/* It executes every opcode without saying so. */
	CHECK_INT(info.capabilities, TRN_CAP_SIMULATED | TRN_CAP_EXEC_ALL);
	CHECK_INT(info.queue_depth, 0);
	CHECK_INT(info.job_timeout_ms, 0);
	CHECK_INT(info.ban_faults, 0);
	CHECK_INT(info.user_queues, 0);
	CHECK_INT(info.hbm_stacks, 0);
	CHECK_INT(info.reserved[12], 0);
	trn_device_close(a);
	make_node("accel1", "trn\n");

	/* A device that goes away under an open handle. */
	CHECK_INT(trn_device_open(1, &a), 0);
	make_node("accel1", "trn gone\n");
	CHECK_INT(trn_device_info(a, &info), -ENODEV);
	trn_device_close(a);
	make_node("accel1", "trn\n");
	CHECK_INT(trnhal_test_registry_size(), 0);
}

struct thread_arg {
	trn_device_t *shared;
	int errors;
};

static void *opener(void *p)
{
	struct thread_arg *arg = p;
	struct trn_device_info info;
	trn_device_t *dev;
	int i;

	for (i = 0; i < 2000; i++) {
		unsigned int minor = (i & 1) ? 0 : 1;

		if (trn_device_open(minor, &dev)) {
			arg->errors++;
			continue;
		}
		if (minor == 0 && dev != arg->shared)
			arg->errors++;
		if (trn_device_info(dev, &info) || info.minor != minor)
			arg->errors++;
		trn_device_close(dev);
	}
	return NULL;
}

static void test_threads(void)
{
	struct thread_arg args[8];
	pthread_t threads[8];
	trn_device_t *shared;
	int i;

	/* Main holds minor 0, so every thread must get this very handle. */
	CHECK_INT(trn_device_open(0, &shared), 0);
	for (i = 0; i < 8; i++) {
		args[i].shared = shared;
		args[i].errors = 0;
		CHECK_INT(pthread_create(&threads[i], NULL, opener, &args[i]), 0);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(threads[i], NULL);
		CHECK_INT(args[i].errors, 0);
	}
	CHECK_INT(trnhal_test_registry_size(), 1);
	trn_device_close(shared);
	CHECK_INT(trnhal_test_registry_size(), 0);
}

static int child_checks(trn_device_t *inherited)
{
	struct trn_device_info info;
	trn_device_t *own;

	CHECK_INT(trn_device_fd(inherited), -ECHILD);
	CHECK_INT(trn_device_info(inherited, &info), -ECHILD);
	/* The child's registry starts empty: its own open is a new handle. */
	CHECK_INT(trnhal_test_registry_size(), 0);
	CHECK_INT(trn_device_open(0, &own), 0);
	CHECK(own != inherited);
	CHECK_INT(trn_device_info(own, &info), 0);
	CHECK_INT(info.minor, 0);
	CHECK_INT(trnhal_test_registry_size(), 1);
	trn_device_close(own);
	trn_device_close(inherited);
	CHECK_INT(trnhal_test_registry_size(), 0);
	return check_failures ? 1 : 0;
}

static void test_fork(void)
{
	struct trn_device_info info;
	trn_device_t *dev;
	int status = -1;
	pid_t pid;

	CHECK_INT(trn_device_open(0, &dev), 0);
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(child_checks(dev));
	CHECK(pid > 0);
	CHECK_INT(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* The parent's handle is untouched by the child. */
	CHECK(trn_device_fd(dev) >= 0);
	CHECK_INT(trn_device_info(dev, &info), 0);
	CHECK_INT(trnhal_test_registry_size(), 1);
	trn_device_close(dev);
	CHECK_INT(trnhal_test_registry_size(), 0);
}

int main(void)
{
	setup_tree();
	test_list();
	test_open_errors();
	test_open_dedup();
	test_threads();
	test_fork();
	teardown_tree();
	return check_exit("test_registry");
}
