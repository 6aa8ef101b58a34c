// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * Failure paths: every ioctl and every device add/remove path with one
 * allocation (or user copy) failing at each point it reaches, in turn.
 *
 * The per-task fault injection of CONFIG_FAULT_INJECTION does the work:
 * writing N to /proc/thread-self/fail-nth makes the N-th fault point this
 * thread reaches fail (failslab, fail_page_alloc, fail_usercopy; only this
 * thread, whatever task-filter says). For N = 1, 2, ... each operation runs
 * with the N-th point failing, until a run ends without reaching N points:
 * then every point has been covered. Each run must either fail with a
 * clean errno and leave the system exactly as it was (same devices, accel
 * nodes, debugfs directories, module references, open files, buffers,
 * handles), or succeed where the failure was absorbed; and afterwards the
 * operation must work normally. kmemleak and the kernel log are checked by
 * the lane afterwards.
 *
 * With TRN_TEST_DEVICE=part (the pci-debug lane) the ioctl tests run on
 * the Trn2 that trn_pci drives, the tests of simulated devices and of
 * trn_sim's loading skip, and two tests of the part's own take their
 * place: binding the Trn3 (trn_pci's probe and its unwinding) and
 * unbinding it with a file open (its remove).
 *
 * Kernels without fault injection (Debian's) SKIP every test. Devices used
 * here have ids 950..954. TRN_FAULTS_MAX_NTH caps N (default 2000);
 * TRN_FAULTS_VERBOSE prints each N before it is tried (a kernel crash then
 * names it), TRN_FAULTS_FIRST starts at N (to replay one point, with
 * -t TEST); TRN_FAULTS_KNOWN_BUGS=1 stops keeping the known kernel bugs
 * below out of the injection; TRN_FAULTS_EVERY_POINT=1 runs the part's
 * bind and unbind at every fault point, not only trn_pci's.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "trn_test.h"

#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define DEBUGFS		"/sys/kernel/debug"
#define FIRST_ID	950
#define LAST_ID		954
#define NODE_COPY	"/tmp/trn-faults-node"
#define MODULE_COPY	"/tmp/trn-faults-modules"
#define PCI_DRIVER	"/sys/bus/pci/drivers/trn_pci"
#define MAX_NTH		2000
#define MAX_SAVED	48

/* ---- fault injection ---- */

struct fault_setting {
	char path[128];
	char old[32];
};

/*
 * failslab and fail_page_alloc skip sleeping allocations, highmem and
 * order-0 pages by default; aim them at everything. task-filter keeps any
 * probability-based injection someone else configured away from other
 * tasks (fail-nth ignores it), and verbose 0 keeps stack traces out of the
 * log the lane checks.
 */
static const struct {
	const char *file;
	const char *value;
} fault_config[] = {
	{ "failslab/ignore-gfp-wait", "N" },
	{ "failslab/task-filter", "Y" },
	{ "fail_page_alloc/ignore-gfp-wait", "N" },
	{ "fail_page_alloc/ignore-gfp-highmem", "N" },
	{ "fail_page_alloc/min-order", "0" },
	{ "fail_page_alloc/task-filter", "Y" },
};

static int save_and_set(struct fault_setting *saved, unsigned int *n,
			const char *path, const char *value)
{
	struct fault_setting *s;
	int ret;

	if (*n == MAX_SAVED)
		return -ENOSPC;
	s = &saved[*n];
	snprintf(s->path, sizeof(s->path), "%s", path);
	ret = read_file(path, s->old, sizeof(s->old));
	if (ret < 0)
		return ret;
	ret = sysfs_write(path, value);
	if (ret)
		return ret;
	(*n)++;
	return 0;
}

/*
 * Set every fault_config[] file and every fail*\/verbose to @verbose: 0,
 * or 2 to have each injected failure logged with its stack (for debugging
 * only: the stacks fail the lane's log check).
 */
static int configure_faults(struct fault_setting *saved, unsigned int *n,
			    const char *verbose)
{
	char path[320];
	struct dirent *de;
	unsigned int i;
	int ret = 0;
	DIR *dir;

	for (i = 0; i < ARRAY_SIZE(fault_config); i++) {
		snprintf(path, sizeof(path), DEBUGFS "/%s", fault_config[i].file);
		if (access(path, F_OK))
			continue;	/* e.g. no fail_page_alloc */
		ret = save_and_set(saved, n, path, fault_config[i].value);
		if (ret)
			return ret;
	}
	dir = opendir(DEBUGFS);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, "fail", 4))
			continue;
		snprintf(path, sizeof(path), DEBUGFS "/%s/verbose", de->d_name);
		if (access(path, W_OK))
			continue;
		ret = save_and_set(saved, n, path, verbose);
		if (ret)
			break;
	}
	closedir(dir);
	return ret > 0 ? 0 : ret;
}

/*
 * Known kernel bugs on failure paths, kept out of the injection with the
 * stack-trace filter (CONFIG_FAULT_INJECTION_STACKTRACE_FILTER): a fault
 * point with the function on its stack is neither counted nor failed. The
 * filter has one range, so each test names the one bug its path reaches.
 * TRN_FAULTS_KNOWN_BUGS=1 lets them fail, to check a fixed kernel.
 *
 * Linux 6.12's drm_minor_alloc() leaves minor->kdev an ERR_PTR when
 * drm_sysfs_minor_alloc() fails, and drm_minor_alloc_release() then calls
 * put_device() on it: a general protection fault while a device is being
 * created, with trn_sim's lock held for good.
 */
#define BUG_DRM_MINOR		"drm_sysfs_minor_alloc"
/*
 * Linux 6.12's bus_register() fails before lockdep_register_key() and
 * unwinds into bus_release(), which unregisters the key anyway: a lockdep
 * WARNING when trn_sim's bus cannot be registered.
 */
#define BUG_BUS_REGISTER	"bus_register"

/* Whether kallsyms line @line is a text symbol: its address, type, name. */
static bool text_symbol(const char *line, unsigned long *addr, char *sym)
{
	char type;

	return sscanf(line, "%lx %c %255s", addr, &type, sym) == 3 &&
	       (type == 't' || type == 'T');
}

/*
 * [start, end) of the text of kernel function @name, from kallsyms, with
 * the parts the compiler split off it next to it ("name.part.0", which it
 * may jump to, leaving no frame of its own).
 */
static int symbol_range(const char *name, unsigned long *start,
			unsigned long *end)
{
	unsigned long addr, starts[16], ends[16], s = 0, e = 0;
	char line[512], sym[256];
	size_t len = strlen(name);
	unsigned int n = 0, i;
	bool grew = true;
	FILE *f;

	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return -errno;
	/* The function, and as many of its pieces as fit beside it. */
	while (fgets(line, sizeof(line), f))
		if (text_symbol(line, &addr, sym) && !strncmp(sym, name, len)) {
			if (!sym[len])
				s = addr;
			else if (sym[len] == '.' && n < ARRAY_SIZE(starts) - 1)
				starts[n++] = addr;
		}
	if (!s) {
		fclose(f);
		return -ENOENT;
	}
	starts[n++] = s;
	/*
	 * Each one ends where the next function begins, or the padding
	 * before it (CALL_PADDING's __pfx_ and CFI's __cfi_ symbols), so that
	 * pieces side by side meet.
	 */
	for (i = 0; i < n; i++) {
		ends[i] = ULONG_MAX;
		rewind(f);	/* module symbols are not in address order */
		while (fgets(line, sizeof(line), f))
			if (text_symbol(line, &addr, sym) &&
			    strncmp(sym, "__pfx_", 6) &&
			    strncmp(sym, "__cfi_", 6) && addr > starts[i] &&
			    addr < ends[i])
				ends[i] = addr;
	}
	fclose(f);
	e = ends[n - 1];
	if (e == ULONG_MAX)
		return -ENOENT;
	while (grew) {
		grew = false;
		for (i = 0; i < n; i++) {
			if (ends[i] == s) {
				s = starts[i];
				grew = true;
			} else if (starts[i] == e && ends[i] != ULONG_MAX) {
				e = ends[i];
				grew = true;
			}
		}
	}
	*start = s;
	*end = e;
	return 0;
}

/*
 * Count only fault points with kernel function @fn on their stack
 * (@which "require"), or none of them ("reject"); 0, or -errno.
 */
static int aim_at_function(struct fault_setting *saved, unsigned int *n,
			   const char *which, const char *fn)
{
	static const char *const attrs[] = {
		"failslab", "fail_page_alloc", "fail_usercopy",
	};
	unsigned long start = 0, end = 0;
	char path[128], val[32];
	unsigned int i;
	int ret;

	if (access(DEBUGFS "/failslab/reject-start", W_OK))
		return -EOPNOTSUPP;
	ret = symbol_range(fn, &start, &end);
	if (ret)
		return ret;
	for (i = 0; i < ARRAY_SIZE(attrs); i++) {
		snprintf(path, sizeof(path), DEBUGFS "/%s/%s-end", attrs[i],
			 which);
		if (access(path, W_OK))
			continue;
		snprintf(val, sizeof(val), "%#lx", end);
		ret = save_and_set(saved, n, path, val);
		if (ret)
			return ret;
		snprintf(path, sizeof(path), DEBUGFS "/%s/%s-start", attrs[i],
			 which);
		snprintf(val, sizeof(val), "%#lx", start);
		ret = save_and_set(saved, n, path, val);
		if (ret)
			return ret;
	}
	return 0;
}

/* Reject fault points under kernel function @fn; 0, or -errno. */
static int exclude_known_bug(struct fault_setting *saved, unsigned int *n,
			     const char *fn)
{
	return aim_at_function(saved, n, "reject", fn);
}

/*
 * Only fault points with module code (trn's, trn_sim's) on their stack
 * count: loading a module, the loader's own allocations are not ours, and
 * its vmalloc() failures log stack traces. On x86-64 the module area runs
 * from a 512 MiB boundary at or below trn's text to MODULES_END.
 */
#define MODULES_END_X86	0xffffffffff000000ul

static int focus_on_modules(struct fault_setting *saved, unsigned int *n)
{
	static const char *const attrs[] = {
		"failslab", "fail_page_alloc", "fail_usercopy",
	};
	char path[128], val[32];
	unsigned long start;
	unsigned int i;
	uint64_t text;
	int ret;

	if (access(DEBUGFS "/failslab/require-start", W_OK))
		return -EOPNOTSUPP;
	ret = read_u64("/sys/module/trn/sections/.text", &text);
	if (ret)
		return ret;
	start = (unsigned long)text & ~((512ul << 20) - 1);
	for (i = 0; i < ARRAY_SIZE(attrs); i++) {
		snprintf(path, sizeof(path), DEBUGFS "/%s/require-start",
			 attrs[i]);
		if (access(path, W_OK))
			continue;
		snprintf(val, sizeof(val), "%#lx", start);
		ret = save_and_set(saved, n, path, val);
		if (ret)
			return ret;
		snprintf(path, sizeof(path), DEBUGFS "/%s/require-end",
			 attrs[i]);
		snprintf(val, sizeof(val), "%#lx", MODULES_END_X86);
		ret = save_and_set(saved, n, path, val);
		if (ret)
			return ret;
	}
	return 0;
}

static void restore_faults(struct fault_setting *saved, unsigned int n)
{
	while (n--)
		sysfs_write(saved[n].path, saved[n].old);
}

/* The N-th fault point this thread reaches from now on fails. */
static int fault_arm(int fd, unsigned int nth)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", nth);

	return write(fd, buf, (size_t)len) == len ? 0 : -errno;
}

/*
 * Whether the armed fault was injected, and disarm. The read itself copies
 * to user memory, a fault point too: if it fails there, the operation did
 * not reach N points.
 */
static bool fault_consumed(int fd)
{
	bool consumed = false;
	char buf[16];
	ssize_t n;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n > 0) {
		buf[n] = '\0';
		consumed = strtoul(buf, NULL, 10) == 0;
	}
	if (write(fd, "0", 1) != 1)
		consumed = false;
	return consumed;
}

/* ---- what must not change ---- */

struct snapshot {
	char devices[1024];	/* /sys/bus/trn_sim/devices */
	char pci_bound[512];	/* /sys/bus/pci/drivers/trn_pci */
	char accel[512];	/* /sys/class/accel */
	char sim_debugfs[1024];	/* /sys/kernel/debug/trn_sim */
	char accel_debugfs[512]; /* /sys/kernel/debug/accel */
	char fds[512];		/* /proc/self/fd */
	long trn_refs;
	long sim_refs;
	long pci_refs;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names in @path, blank-separated; "-" if it does not exist. */
static void list_dir(const char *path, char *out, size_t size)
{
	char names[128][64], *sorted[128];
	unsigned int n = 0, i;
	struct dirent *de;
	size_t len = 0;
	DIR *dir;

	dir = opendir(path);
	if (!dir) {
		snprintf(out, size, "-");
		return;
	}
	while ((de = readdir(dir)) && n < ARRAY_SIZE(names)) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(names[n], sizeof(names[n]), "%.63s", de->d_name);
		sorted[n] = names[n];
		n++;
	}
	closedir(dir);
	qsort(sorted, n, sizeof(sorted[0]), cmp_str);
	out[0] = '\0';
	for (i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s",
					i ? " " : "", sorted[i]);
}

static void snapshot(struct snapshot *s)
{
	list_dir(SIM_BUS "/devices", s->devices, sizeof(s->devices));
	list_dir(PCI_DRIVER, s->pci_bound, sizeof(s->pci_bound));
	list_dir(ACCEL_CLASS, s->accel, sizeof(s->accel));
	list_dir(SIM_DEBUGFS, s->sim_debugfs, sizeof(s->sim_debugfs));
	list_dir(DEBUGFS "/accel", s->accel_debugfs, sizeof(s->accel_debugfs));
	list_dir("/proc/self/fd", s->fds, sizeof(s->fds));
	s->trn_refs = module_refcnt("trn");
	s->sim_refs = module_refcnt("trn_sim");
	s->pci_refs = module_refcnt("trn_pci");
}

/* 0 if equal, else what differs in @why. */
static int snapshot_diff(const struct snapshot *a, const struct snapshot *b,
			 char *why, size_t size)
{
	if (strcmp(a->devices, b->devices))
		snprintf(why, size, "devices [%s] became [%s]", a->devices,
			 b->devices);
	else if (strcmp(a->pci_bound, b->pci_bound))
		snprintf(why, size, "trn_pci's devices [%s] became [%s]",
			 a->pci_bound, b->pci_bound);
	else if (strcmp(a->accel, b->accel))
		snprintf(why, size, "accel nodes [%s] became [%s]", a->accel,
			 b->accel);
	else if (strcmp(a->sim_debugfs, b->sim_debugfs))
		snprintf(why, size, "trn_sim debugfs [%s] became [%s]",
			 a->sim_debugfs, b->sim_debugfs);
	else if (strcmp(a->accel_debugfs, b->accel_debugfs))
		snprintf(why, size, "accel debugfs [%s] became [%s]",
			 a->accel_debugfs, b->accel_debugfs);
	else if (strcmp(a->fds, b->fds))
		snprintf(why, size, "open files [%s] became [%s]", a->fds,
			 b->fds);
	else if (a->trn_refs != b->trn_refs || a->sim_refs != b->sim_refs ||
		 a->pci_refs != b->pci_refs)
		snprintf(why, size,
			 "module references (trn/trn_sim/trn_pci) %ld/%ld/%ld became %ld/%ld/%ld",
			 a->trn_refs, a->sim_refs, a->pci_refs, b->trn_refs,
			 b->sim_refs, b->pci_refs);
	else
		return 0;
	return -1;
}

/*
 * Like snapshot(), for comparing with @want once an operation was undone:
 * the references a closed file's last jobs hold on trn and its backend go
 * when the jobs are freed, a moment after their fences signalled (the
 * driver frees them from a worker), so differing module references are
 * looked at again for up to SETTLE_MS: a bound on a worker that must run,
 * not a guess at how long it takes, so it is generous (a debug kernel under
 * TCG beside a second guest can leave a worker waiting for seconds).
 */
#define SETTLE_MS	20000

static void snapshot_settled(const struct snapshot *want, struct snapshot *s)
{
	int64_t deadline = mono_ns() + SETTLE_MS * 1000000ll;

	snapshot(s);
	while ((s->trn_refs != want->trn_refs ||
		s->sim_refs != want->sim_refs ||
		s->pci_refs != want->pci_refs) && mono_ns() < deadline) {
		usleep(1000);
		s->trn_refs = module_refcnt("trn");
		s->sim_refs = module_refcnt("trn_sim");
		s->pci_refs = module_refcnt("trn_pci");
	}
}

/* ---- operations ---- */

struct exec_state;

/* State shared by an operation's callbacks. */
struct op_state {
	unsigned int id;		/* device the operation works on */
	unsigned int minor;
	char node[64];
	int fd;				/* a device file, if the op needs one */
	int fd2;			/* another one */
	int sysfs_fd;			/* new_device / del_device */
	const char *cmd;		/* what is written there */
	const char *module_dir;
	struct drm_trn_query query;	/* the query to run */
	unsigned char buf[4096];
	struct drm_trn_memory_info mem;	/* the file's charges before */
	uint32_t handle;		/* made by the operation */
	uint32_t handle2;		/* made in prepare */
	int out_fd;			/* made by the operation */
	uint64_t mmap_offset;
	void *map;
	size_t map_len;
	unsigned char *up;		/* userptr memory */
	uint32_t first_handle;		/* what a clean run is given */
	unsigned int no_node;		/* devices made without /dev node */
	char pci_addr[32];		/* the part bound and unbound */
	struct exec_state *x;		/* the execution ops' */
};

struct fault_op {
	const char *name;
	/* What the operation returns without a fault: 0 or -errno. */
	int expect;
	/* Errnos an injected fault may turn into; 0 ends the list. */
	int allowed[6];
	/* Outside injection, before each run; 0 or -errno. */
	int (*prepare)(struct op_state *s);
	/* Under injection: the operation itself, 0 or -errno. */
	int (*run)(struct op_state *s);
	/* It succeeded: is the result right? 0 or -1 with @why. */
	int (*check_ok)(struct op_state *s, char *why, size_t size);
	/* It failed: is everything as before? 0 or -1 with @why. */
	int (*check_failed)(struct op_state *s, char *why, size_t size);
	/* Undo what prepare and a successful run made. */
	void (*undo)(struct op_state *s, int ret);
	/*
	 * After EFAULT: remove what the call made if it did all its work and
	 * only the copy of its argument back to user memory failed (DRM
	 * copies it back after the handler returns, so the object exists and
	 * userspace never hears of it). 1 if there was such a thing, else 0.
	 */
	int (*copyback)(struct op_state *s);
	/*
	 * Stop once the operation failed cleanly this many times (0: try
	 * every fault point; the loop fails if there are more than
	 * TRN_FAULTS_MAX_NTH). The points it passed on the way, absorbed,
	 * are checked as always.
	 */
	unsigned int failures;
	/*
	 * Module references may stay up until undo: a failed PRIME export
	 * leaves its dma-buf cached in the GEM object (obj->dma_buf, which
	 * holds trn), for the next export to return, until the last handle
	 * goes.
	 */
	bool cached_refs;
};

static int open_device(struct op_state *s, unsigned int id)
{
	int ret;

	s->id = id;
	ret = sim_minor(id, &s->minor);
	if (ret)
		return ret;
	accel_node(s->minor, s->node, sizeof(s->node));
	return 0;
}

/* The device under test: simulated device 0, or the part (dut_minor()). */
static int open_dut(struct op_state *s)
{
	int ret;

	if (!dut_is_part())
		return open_device(s, 0);
	s->id = DUT_ID;
	ret = dut_minor(&s->minor);
	if (ret)
		return ret;
	accel_node(s->minor, s->node, sizeof(s->node));
	return 0;
}

/* The file's charges and the device's usage are what they were. */
static int same_memory(struct op_state *s, char *why, size_t size)
{
	struct drm_trn_memory_info now;
	int ret = query_memory(s->fd, &now);

	if (ret) {
		snprintf(why, size, "QUERY_MEMORY: %s", strerror(-ret));
		return -1;
	}
	if (now.ctx_bos != s->mem.ctx_bos || now.ctx_hbm != s->mem.ctx_hbm ||
	    now.ctx_pinned != s->mem.ctx_pinned ||
	    now.hbm_used != s->mem.hbm_used ||
	    now.host_pinned != s->mem.host_pinned) {
		snprintf(why, size,
			 "charges bos/hbm/pinned %llu/%llu/%llu, device %llu/%llu became %llu/%llu/%llu, %llu/%llu",
			 (unsigned long long)s->mem.ctx_bos,
			 (unsigned long long)s->mem.ctx_hbm,
			 (unsigned long long)s->mem.ctx_pinned,
			 (unsigned long long)s->mem.hbm_used,
			 (unsigned long long)s->mem.host_pinned,
			 (unsigned long long)now.ctx_bos,
			 (unsigned long long)now.ctx_hbm,
			 (unsigned long long)now.ctx_pinned,
			 (unsigned long long)now.hbm_used,
			 (unsigned long long)now.host_pinned);
		return -1;
	}
	return 0;
}

/* open() + close() of device 0's node. */
static int run_open_close(struct op_state *s)
{
	int fd = open(s->node, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* The ioctls below run on a file of device 0 opened by prepare. */
static int prepare_fd(struct op_state *s)
{
	s->fd = open(s->node, O_RDWR | O_CLOEXEC);
	if (s->fd < 0)
		return -errno;
	return query_memory(s->fd, &s->mem);
}

static void undo_fd(struct op_state *s, int ret)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

static int run_query(struct op_state *s)
{
	struct drm_trn_query q = s->query;

	return raw_ioctl(s->fd, DRM_IOCTL_TRN_QUERY, &q);
}

static int run_version(struct op_state *s)
{
	char name[16], date[16], desc[128];
	struct drm_version v = {
		.name = name, .name_len = sizeof(name),
		.date = date, .date_len = sizeof(date),
		.desc = desc, .desc_len = sizeof(desc),
	};

	return raw_ioctl(s->fd, DRM_IOCTL_VERSION, &v);
}

static int run_get_cap(struct op_state *s)
{
	struct drm_get_cap c = { .capability = DRM_CAP_SYNCOBJ_TIMELINE };

	return raw_ioctl(s->fd, DRM_IOCTL_GET_CAP, &c);
}

/* Handles are the lowest free number: a leaked one shows. */
static int run_syncobj_create(struct op_state *s)
{
	struct drm_syncobj_create c = { .flags = DRM_SYNCOBJ_CREATE_SIGNALED };
	int ret = raw_ioctl(s->fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);

	s->handle = ret ? 0 : c.handle;
	return ret;
}

static int check_syncobj_failed(struct op_state *s, char *why, size_t size)
{
	struct drm_syncobj_create c = { 0 };
	struct drm_syncobj_destroy d = { 0 };
	int ret = raw_ioctl(s->fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);

	if (ret) {
		snprintf(why, size, "SYNCOBJ_CREATE after: %s", strerror(-ret));
		return -1;
	}
	d.handle = c.handle;
	raw_ioctl(s->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
	if (c.handle != 1) {
		snprintf(why, size, "next syncobj handle is %u: one leaked",
			 c.handle);
		return -1;
	}
	return 0;
}

static int copyback_syncobj(struct op_state *s)
{
	struct drm_syncobj_destroy d = { .handle = 1 };

	return !raw_ioctl(s->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
}

static void undo_syncobj(struct op_state *s, int ret)
{
	struct drm_syncobj_destroy d = { .handle = s->handle };

	if (s->handle)
		raw_ioctl(s->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
	s->handle = 0;
	undo_fd(s, ret);
}

/* GEM_CLOSE of a handle, if there is one. */
static void put_handle(int fd, uint32_t handle)
{
	if (handle)
		gem_close(fd, handle);
}

static int op_bo_create(struct op_state *s, uint32_t placement, uint64_t size,
		     uint32_t *handle)
{
	struct drm_trn_bo_create c = {
		.size = size,
		.placement = placement,
	};
	int ret = raw_ioctl(s->fd, DRM_IOCTL_TRN_BO_CREATE, &c);

	*handle = ret ? 0 : c.handle;
	return ret;
}

static int run_bo_create_hbm(struct op_state *s)
{
	return op_bo_create(s, DRM_TRN_PLACEMENT_HBM, 64 << 10, &s->handle);
}

static int run_bo_create_host(struct op_state *s)
{
	return op_bo_create(s, DRM_TRN_PLACEMENT_HOST, 64 << 10, &s->handle);
}

static int run_bo_userptr(struct op_state *s)
{
	struct drm_trn_bo_userptr c = {
		.addr = (uintptr_t)s->up,
		.size = 4 * (uint64_t)sysconf(_SC_PAGESIZE),
	};
	int ret = raw_ioctl(s->fd, DRM_IOCTL_TRN_BO_USERPTR, &c);

	s->handle = ret ? 0 : c.handle;
	return ret;
}

/* A new buffer is charged; gone, the charges are back. */
static int check_bo_ok(struct op_state *s, char *why, size_t size)
{
	struct drm_trn_bo_info info = { .handle = s->handle };
	int ret = raw_ioctl(s->fd, DRM_IOCTL_TRN_BO_INFO, &info);

	if (ret) {
		snprintf(why, size, "BO_INFO of the new buffer: %s",
			 strerror(-ret));
		return -1;
	}
	if (!info.va || !info.size) {
		snprintf(why, size, "new buffer without address or size");
		return -1;
	}
	return 0;
}

static int check_bo_failed(struct op_state *s, char *why, size_t size)
{
	uint32_t handle;
	int ret;

	if (same_memory(s, why, size))
		return -1;
	/* No handle was taken: a clean buffer gets the first number. */
	ret = op_bo_create(s, DRM_TRN_PLACEMENT_HBM, 4096, &handle);
	if (ret) {
		snprintf(why, size, "BO_CREATE after: %s", strerror(-ret));
		return -1;
	}
	gem_close(s->fd, handle);
	if (handle != s->first_handle) {
		snprintf(why, size, "next buffer handle is %u, not %u: one leaked",
			 handle, s->first_handle);
		return -1;
	}
	return 0;
}

/* The buffer made by a call that then failed to report it. */
static int copyback_bo(struct op_state *s)
{
	return !gem_close(s->fd, s->first_handle);
}

static void undo_bo(struct op_state *s, int ret)
{
	put_handle(s->fd, s->handle);
	put_handle(s->fd, s->handle2);
	s->handle = s->handle2 = 0;
	if (s->out_fd >= 0)
		close(s->out_fd);
	s->out_fd = -1;
	if (s->map)
		munmap(s->map, s->map_len);
	s->map = NULL;
	undo_fd(s, ret);
}

/* A host buffer to look at, export or map. */
static int prepare_host_bo(struct op_state *s)
{
	int ret = prepare_fd(s);

	if (!ret)
		ret = op_bo_create(s, DRM_TRN_PLACEMENT_HOST, 64 << 10,
				&s->handle2);
	if (!ret)
		ret = query_memory(s->fd, &s->mem);
	return ret;
}

/* BO_INFO makes the mmap offset on first use. */
static int run_bo_info(struct op_state *s)
{
	struct drm_trn_bo_info info = { .handle = s->handle2 };
	int ret = raw_ioctl(s->fd, DRM_IOCTL_TRN_BO_INFO, &info);

	s->mmap_offset = ret ? 0 : info.mmap_offset;
	return ret;
}

static int check_bo_info_ok(struct op_state *s, char *why, size_t size)
{
	if (!s->mmap_offset) {
		snprintf(why, size, "host buffer without mmap offset");
		return -1;
	}
	return 0;
}

static int check_same_memory(struct op_state *s, char *why, size_t size)
{
	return same_memory(s, why, size);
}

static int run_prime_export(struct op_state *s)
{
	struct drm_prime_handle p = {
		.handle = s->handle2,
		.flags = DRM_CLOEXEC | DRM_RDWR,
		.fd = -1,
	};
	int ret = raw_ioctl(s->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);

	s->out_fd = ret ? -1 : p.fd;
	return ret;
}

/* Import into a second file of the same device: a new handle there. */
static int prepare_import(struct op_state *s)
{
	int ret = prepare_host_bo(s);

	if (!ret)
		ret = run_prime_export(s);
	if (!ret) {
		s->fd2 = open(s->node, O_RDWR | O_CLOEXEC);
		if (s->fd2 < 0)
			ret = -errno;
	}
	return ret;
}

static int run_prime_import(struct op_state *s)
{
	struct drm_prime_handle p = { .fd = s->out_fd };
	int ret = raw_ioctl(s->fd2, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);

	s->handle = ret ? 0 : p.handle;
	return ret;
}

static int check_import_failed(struct op_state *s, char *why, size_t size)
{
	struct drm_prime_handle p = { .fd = s->out_fd };
	int ret = raw_ioctl(s->fd2, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);

	if (ret) {
		snprintf(why, size, "import after: %s", strerror(-ret));
		return -1;
	}
	gem_close(s->fd2, p.handle);
	if (p.handle != 1) {
		snprintf(why, size, "import got handle %u: one leaked",
			 p.handle);
		return -1;
	}
	return 0;
}

static int copyback_import(struct op_state *s)
{
	return !gem_close(s->fd2, 1);
}

/* The dma-buf descriptor installed by an export that then failed. */
static int copyback_export(struct op_state *s)
{
	char path[64], link[128];
	int fd, found = 0;
	ssize_t n;

	for (fd = 3; fd < 1024; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strstr(link, "dmabuf")) {
			close(fd);
			found = 1;
		}
	}
	return found;
}

static void undo_import(struct op_state *s, int ret)
{
	put_handle(s->fd2, s->handle);
	s->handle = 0;
	if (s->fd2 >= 0)
		close(s->fd2);
	s->fd2 = -1;
	undo_bo(s, ret);
}

static int prepare_mmap(struct op_state *s)
{
	int ret = prepare_host_bo(s);

	if (!ret)
		ret = run_bo_info(s);
	s->map_len = 64 << 10;
	return ret;
}

static int run_mmap(struct op_state *s)
{
	void *p = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       s->fd, (off_t)s->mmap_offset);

	if (p == MAP_FAILED)
		return -errno;
	s->map = p;
	return 0;
}

/* The mapping works (touched outside injection). */
static int check_mmap_ok(struct op_state *s, char *why, size_t size)
{
	unsigned char *p = s->map;

	p[0] = 0xa5;
	if (p[0] != 0xa5 || p[4096]) {
		snprintf(why, size, "mapping does not read back");
		return -1;
	}
	return 0;
}

/* new_device "ID 2 16 2". */
static int prepare_new(struct op_state *s)
{
	s->sysfs_fd = open(SIM_BUS "/new_device", O_WRONLY | O_CLOEXEC);
	return s->sysfs_fd < 0 ? -errno : 0;
}

static int run_sysfs_write(struct op_state *s)
{
	ssize_t n = write(s->sysfs_fd, s->cmd, strlen(s->cmd));

	if (n < 0)
		return -errno;
	return (size_t)n == strlen(s->cmd) ? 0 : -EIO;
}

/* A device that was created works and has the shape asked for. */
static int device_works(unsigned int id, unsigned int cores, char *why,
			size_t size)
{
	struct drm_trn_device_info info;
	int fd, ret;

	fd = sim_open(id);
	if (fd < 0) {
		snprintf(why, size, "opening device %u: %s", id,
			 strerror(-fd));
		return -1;
	}
	ret = query_info(fd, &info);
	close(fd);
	if (ret || info.device_id != id || info.num_cores != cores) {
		snprintf(why, size, "device %u answers %s, id %u, %u cores", id,
			 strerror(-ret), info.device_id, info.num_cores);
		return -1;
	}
	return 0;
}

/* What there is of a device that does not work, for the log. */
static void describe_device(unsigned int id, char *why, size_t size)
{
	char path[128], list[512], accel[256];
	size_t len = strlen(why);

	snprintf(path, sizeof(path), SIM_BUS "/devices/trn_sim%u", id);
	list_dir(path, list, sizeof(list));
	snprintf(path, sizeof(path), SIM_BUS "/devices/trn_sim%u/accel", id);
	list_dir(path, accel, sizeof(accel));
	snprintf(why + len, size - len, "; trn_sim%u: [%s], its accel: [%s]",
		 id, list, accel);
}

/*
 * devtmpfs makes /dev/accel/accelN from the device's uevent and ignores
 * its own allocation failures (device_get_devnode()): the device is there,
 * only its node is missing, which udev would make. Open it through a node
 * made from /sys/class/accel/accelN/dev instead.
 */
static int device_works_without_node(unsigned int id, unsigned int cores,
				     char *why, size_t size)
{
	struct drm_trn_device_info info;
	char path[128], dev[32];
	unsigned int minor, maj, min;
	int fd, ret;

	if (sim_minor(id, &minor))
		return -1;
	snprintf(path, sizeof(path), ACCEL_CLASS "/accel%u/dev", minor);
	if (read_file(path, dev, sizeof(dev)) < 0 ||
	    sscanf(dev, "%u:%u", &maj, &min) != 2)
		return -1;
	unlink(NODE_COPY);
	if (mknod(NODE_COPY, S_IFCHR | 0600, makedev(maj, min)))
		return -1;
	fd = open(NODE_COPY, O_RDWR | O_CLOEXEC);
	unlink(NODE_COPY);
	if (fd < 0)
		return -1;
	ret = query_info(fd, &info);
	close(fd);
	if (ret || info.device_id != id || info.num_cores != cores) {
		snprintf(why, size, "device %u without a node answers %s", id,
			 strerror(-ret));
		return -1;
	}
	return 0;
}

static int check_new_ok(struct op_state *s, char *why, size_t size)
{
	if (!device_works(s->id, 2, why, size))
		return 0;
	if (!device_works_without_node(s->id, 2, why, size)) {
		s->no_node++;
		return 0;
	}
	describe_device(s->id, why, size);
	return -1;
}

static void undo_new(struct op_state *s, int ret)
{
	if (s->sysfs_fd >= 0)
		close(s->sysfs_fd);
	s->sysfs_fd = -1;
	if (sim_exists(s->id))
		sim_del(s->id);
}

/* del_device of a device made for it, with or without an open file. */
static int prepare_del(struct op_state *s)
{
	int ret = sim_new(s->id, 2, 16, 2);

	if (ret)
		return ret;
	s->sysfs_fd = open(SIM_BUS "/del_device", O_WRONLY | O_CLOEXEC);
	return s->sysfs_fd < 0 ? -errno : 0;
}

static int check_del_ok(struct op_state *s, char *why, size_t size)
{
	if (sim_exists(s->id)) {
		snprintf(why, size, "device %u still exists", s->id);
		return -1;
	}
	return 0;
}

static int check_del_failed(struct op_state *s, char *why, size_t size)
{
	return device_works(s->id, 2, why, size);
}

static int prepare_del_open(struct op_state *s)
{
	struct drm_trn_device_info info;
	int ret = prepare_del(s);

	if (ret)
		return ret;
	s->fd = sim_open(s->id);
	if (s->fd < 0)
		return s->fd;
	return query_info(s->fd, &info);
}

static int check_del_open_ok(struct op_state *s, char *why, size_t size)
{
	struct drm_trn_device_info info;
	int ret = query_info(s->fd, &info);

	if (check_del_ok(s, why, size))
		return -1;
	if (ret != -ENODEV) {
		snprintf(why, size, "the file of a removed device answers %s",
			 strerror(-ret));
		return -1;
	}
	return 0;
}

static int check_del_open_failed(struct op_state *s, char *why, size_t size)
{
	struct drm_trn_device_info info;
	int ret = query_info(s->fd, &info);

	if (ret) {
		snprintf(why, size, "the open file answers %s", strerror(-ret));
		return -1;
	}
	return check_del_failed(s, why, size);
}

static void undo_del_open(struct op_state *s, int ret)
{
	undo_fd(s, ret);
	undo_new(s, ret);
}

/* Open through a copy of the node of a device that is unplugged. */
static int run_open_copy(struct op_state *s)
{
	int fd = open(NODE_COPY, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/*
 * A copy of a module on tmpfs: loading from the 9p share would put the
 * share's own allocations (and their EIO) in every run.
 */
static int copy_module(const char *dir, const char *name, char *out,
		       size_t size)
{
	char src[PATH_MAX], buf[65536];
	int in, fd, ret = 0;
	ssize_t n;

	snprintf(src, sizeof(src), "%s/%s.ko", dir, name);
	snprintf(out, size, "%s/%s.ko", MODULE_COPY, name);
	if (mkdir(MODULE_COPY, 0700) && errno != EEXIST)
		return -errno;
	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		close(in);
		return -errno;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n) {
			ret = -EIO;
			break;
		}
	if (n < 0)
		ret = -errno;
	close(in);
	close(fd);
	return ret;
}

static int run_module_load(struct op_state *s)
{
	return module_load(s->module_dir, "trn_sim", s->cmd);
}

static int check_module_ok(struct op_state *s, char *why, size_t size)
{
	if (!strcmp(s->cmd, "num_devices=0")) {
		if (!access(SIM_BUS "/new_device", W_OK))
			return 0;
		snprintf(why, size, "trn_sim loaded without new_device");
		return -1;
	}
	if (!sim_exists(0) || !sim_exists(1)) {
		snprintf(why, size, "trn_sim loaded without its devices");
		return -1;
	}
	return device_works(1, SIM_DEFAULT_CORES, why, size);
}

static int check_module_failed(struct op_state *s, char *why, size_t size)
{
	if (module_loaded("trn_sim") || !access(SIM_BUS, F_OK)) {
		snprintf(why, size, "a failed load left trn_sim behind");
		return -1;
	}
	return 0;
}

static void undo_module_load(struct op_state *s, int ret)
{
	if (module_loaded("trn_sim"))
		module_unload("trn_sim");
}

static int prepare_module_unload(struct op_state *s)
{
	return module_load(s->module_dir, "trn_sim", "num_devices=2");
}

static int run_module_unload(struct op_state *s)
{
	return module_unload("trn_sim");
}

static int check_unload_failed(struct op_state *s, char *why, size_t size)
{
	if (!module_loaded("trn_sim")) {
		snprintf(why, size, "a failed unload took trn_sim away");
		return -1;
	}
	return device_works(1, SIM_DEFAULT_CORES, why, size);
}

/* ---- execution: queues, jobs, closing a file with jobs in flight ---- */

#define EXEC_WAIT_MS	20000	/* for a job that can run: generous */
#define EXEC_MAGIC	0x7e570000u
#define IN_POINT	3	/* the signalled point of the timeline in-sync */
#define OUT_POINT	7	/* the point the timeline out-sync gets */
#define MAX_JOBS	4
#define FILL_WORD	0x5a5a5a5au
#define CLOSE_SEM	5	/* semaphore of the close test's second file */
#define RELEASE_MS	30	/* its helper waits this long, then releases */
/* syncobj_fence_status() of a binary syncobj without a fence */
#define NO_FENCE	(-1000 - EINVAL)

struct exec_state {
	struct drm_trn_queue_create q;	/* the queue the op works on */
	struct drm_trn_queue_status st;	/* QUEUE_STATUS's answer */
	struct host_bo cmd, data;
	uint32_t bos[2];		/* cmd, data */
	uint32_t in_bin, in_tl;		/* signalled; point IN_POINT signalled */
	uint32_t out_bin, out_tl;	/* without fence, without points */
	struct drm_trn_sync in[2], out[2];
	struct drm_trn_job jobs[MAX_JOBS];
	unsigned int njobs;
	bool batch;
	struct exec_counters ctr;	/* the device's, idle, before the run */
	unsigned int seqno_written;	/* failed SUBMITs that wrote seqnos */
	/* Closing a file (A, s->fd) whose jobs wait for file B's (s->fd2). */
	struct drm_trn_queue_create qb1, qb2;
	struct host_bo bcmd, shared;	/* B's; A imports shared */
	uint32_t shared_a;
	uint64_t shared_va;		/* in A */
	pthread_t helper;
	bool helper_running;
	int helper_ret;
	unsigned int in_flight;		/* closes with A's jobs unfinished */
	unsigned int waited;		/* closes that waited for them */
	unsigned int cancelled;		/* closes that cancelled some */
	struct sim_counters mem;	/* the device's memory before */
};

static uint32_t *words(const struct host_bo *b)
{
	return b->map;
}

/* Forget the last run, keep the statistics. */
static void exec_reset(struct exec_state *x)
{
	struct exec_state keep = *x;

	memset(x, 0, sizeof(*x));
	x->batch = keep.batch;
	x->seqno_written = keep.seqno_written;
	x->in_flight = keep.in_flight;
	x->waited = keep.waited;
	x->cancelled = keep.cancelled;
	x->mem = keep.mem;
}

static void unmap_bo(struct host_bo *b)
{
	if (b->map)
		munmap(b->map, b->size);
	b->map = NULL;
}

/* Everything goes with the file: unmap first, or it stays open. */
static void undo_exec(struct op_state *s, int ret)
{
	struct exec_state *x = s->x;

	if (x->helper_running)
		pthread_join(x->helper, NULL);
	unmap_bo(&x->cmd);
	unmap_bo(&x->data);
	unmap_bo(&x->bcmd);
	unmap_bo(&x->shared);
	if (s->fd2 >= 0)
		close(s->fd2);
	s->fd2 = -1;
	undo_fd(s, ret);
	exec_reset(x);
}

/* Timeline syncobj @handle gets a signalled fence at @point. */
static int timeline_signal(int fd, uint32_t handle, uint64_t point)
{
	struct drm_syncobj_timeline_array a = {
		.handles = (uintptr_t)&handle,
		.points = (uintptr_t)&point,
		.count_handles = 1,
	};

	return raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &a);
}

/*
 * Once the device is idle, its counters moved by @submitted and
 * @completed since prepare, and no job failed.
 */
static int counters_moved(struct op_state *s, uint64_t submitted,
			  uint64_t completed, char *why, size_t size)
{
	const struct exec_counters *a = &s->x->ctr;
	struct exec_counters b;
	int ret = exec_counters_idle(s->id, EXEC_WAIT_MS, &b);

	if (ret) {
		snprintf(why, size,
			 "device not idle: %s (jobs_submitted %llu, jobs_completed %llu, jobs_failed %llu)",
			 strerror(-ret), (unsigned long long)b.submitted,
			 (unsigned long long)b.completed,
			 (unsigned long long)b.failed);
		return -1;
	}
	if (b.submitted - a->submitted != submitted ||
	    b.completed - a->completed != completed || b.failed != a->failed) {
		snprintf(why, size,
			 "jobs_submitted/completed/failed went %llu/%llu/%llu -> %llu/%llu/%llu, want +%llu/+%llu/+0",
			 (unsigned long long)a->submitted,
			 (unsigned long long)a->completed,
			 (unsigned long long)a->failed,
			 (unsigned long long)b.submitted,
			 (unsigned long long)b.completed,
			 (unsigned long long)b.failed,
			 (unsigned long long)submitted,
			 (unsigned long long)completed);
		return -1;
	}
	return 0;
}

/*
 * A WRITE job runs on queue @q: it is the queue's next number, its point
 * signals without error, its data lands.
 */
static int queue_runs(struct op_state *s, const struct drm_trn_queue_create *q,
		      char *why, size_t size)
{
	uint64_t sub = queue_submitted(s->fd, q->queue_id), seqno = 0;
	int ret, status = 0;
	struct host_bo b;
	struct cmds c;

	ret = host_bo_new(s->fd, 4096, &b);
	if (ret) {
		snprintf(why, size, "host buffer for a job: %s",
			 strerror(-ret));
		return -1;
	}
	cmds_init(&c, b.map, b.va, 2048);
	cmds_write32(&c, b.va + 2048, EXEC_MAGIC);
	ret = submit_one(s->fd, q->queue_id, c.va, (uint32_t)c.len, b.handle,
			 &seqno);
	if (!ret)
		ret = syncobj_wait_point(s->fd, q->syncobj, seqno,
					 EXEC_WAIT_MS);
	if (!ret)
		status = timeline_fence_status(s->fd, q->syncobj, seqno);
	if (ret || seqno != sub + 1 || status != 1 ||
	    words(&b)[512] != EXEC_MAGIC) {
		snprintf(why, size,
			 "a job on queue %u: %s, seqno %llu after %llu, fence status %d, data %#x",
			 q->queue_id, strerror(-ret),
			 (unsigned long long)seqno, (unsigned long long)sub,
			 status, words(&b)[512]);
		ret = -1;
	}
	host_bo_free(s->fd, &b);
	return ret ? -1 : 0;
}

/* A file, its charges, the device idle and its counters. */
static int prepare_exec_fd(struct op_state *s)
{
	int ret = prepare_fd(s);

	if (!ret)
		ret = exec_counters_idle(s->id, EXEC_WAIT_MS, &s->x->ctr);
	return ret;
}

/* ... and a queue on core 0. */
static int prepare_queue(struct op_state *s)
{
	int ret = prepare_exec_fd(s);

	if (!ret)
		ret = queue_create(s->fd, 0, DRM_TRN_PRIORITY_NORMAL, &s->x->q);
	if (!ret)
		ret = query_memory(s->fd, &s->mem);
	return ret;
}

/* QUEUE_CREATE in a fresh file: queue 1, syncobj 1, status buffer 1. */
static int run_queue_create(struct op_state *s)
{
	struct drm_trn_queue_create c = {
		.core = 1,
		.priority = DRM_TRN_PRIORITY_NORMAL,
	};
	int ret = raw_ioctl(s->fd, DRM_IOCTL_TRN_QUEUE_CREATE, &c);

	if (!ret)
		s->x->q = c;
	return ret;
}

static int check_queue_create_ok(struct op_state *s, char *why, size_t size)
{
	const struct drm_trn_queue_create *q = &s->x->q;
	const volatile struct drm_trn_queue_status_page *page;
	struct drm_trn_queue_status st;
	uint64_t point = 1, completed;
	int ret;

	if (q->queue_id != 1 || q->syncobj != 1 || q->status_handle != 1) {
		snprintf(why, size,
			 "first queue of a file got id %u, syncobj %u, status buffer %u, not 1/1/1",
			 q->queue_id, q->syncobj, q->status_handle);
		return -1;
	}
	ret = queue_status(s->fd, q->queue_id, &st);
	if (!ret)
		ret = syncobj_query(s->fd, q->syncobj, &point);
	if (ret || st.submitted_seqno || st.completed_seqno || point) {
		snprintf(why, size,
			 "new queue: QUEUE_STATUS/SYNCOBJ_QUERY %s, submitted %llu, completed %llu, point %llu",
			 strerror(-ret), (unsigned long long)st.submitted_seqno,
			 (unsigned long long)st.completed_seqno,
			 (unsigned long long)point);
		return -1;
	}
	if (queue_runs(s, q, why, size))
		return -1;
	page = status_page_map(s->fd, q->status_handle);
	if (!page) {
		snprintf(why, size, "cannot map the status page");
		return -1;
	}
	completed = page->completed_seqno;
	munmap((void *)page, 4096);
	if (completed != 1) {
		snprintf(why, size, "status page says %llu completed, not 1",
			 (unsigned long long)completed);
		return -1;
	}
	return 0;
}

/* No queue, no syncobj, no status buffer left; the next queue is 1. */
static int check_queue_create_failed(struct op_state *s, char *why,
				     size_t size)
{
	struct drm_trn_queue_create c;
	struct drm_trn_queue_status st;
	struct drm_trn_bo_info bi;
	int ret;

	if (same_memory(s, why, size))
		return -1;
	ret = queue_status(s->fd, 1, &st);
	if (ret != -ENOENT) {
		snprintf(why, size, "QUEUE_STATUS of queue 1 answers %s",
			 strerror(-ret));
		return -1;
	}
	ret = bo_info(s->fd, 1, &bi);
	if (!ret) {
		snprintf(why, size, "GEM handle 1 exists: a status buffer leaked");
		return -1;
	}
	if (check_syncobj_failed(s, why, size))
		return -1;
	ret = queue_create(s->fd, 1, DRM_TRN_PRIORITY_NORMAL, &c);
	if (ret) {
		snprintf(why, size, "QUEUE_CREATE after: %s", strerror(-ret));
		return -1;
	}
	queue_destroy(s->fd, c.queue_id);
	syncobj_destroy(s->fd, c.syncobj);
	gem_close(s->fd, c.status_handle);
	if (c.queue_id != 1 || c.syncobj != 1 || c.status_handle != 1) {
		snprintf(why, size,
			 "next queue got id %u, syncobj %u, status buffer %u: something leaked",
			 c.queue_id, c.syncobj, c.status_handle);
		return -1;
	}
	return 0;
}

/* The queue made by a QUEUE_CREATE that then failed to report it. */
static int copyback_queue(struct op_state *s)
{
	if (queue_destroy(s->fd, 1))
		return 0;
	syncobj_destroy(s->fd, 1);
	gem_close(s->fd, 1);
	return 1;
}

static int run_queue_destroy(struct op_state *s)
{
	return queue_destroy(s->fd, s->x->q.queue_id);
}

/*
 * Gone, and its status buffer with it (the handle too); its syncobj
 * handle stays; the next queue takes its number and works.
 */
static int check_queue_destroy_ok(struct op_state *s, char *why, size_t size)
{
	const struct drm_trn_queue_create *q = &s->x->q;
	struct drm_trn_queue_create c = { 0 };
	struct drm_trn_queue_status st;
	struct drm_trn_bo_info bi;
	uint64_t point;
	int ret;

	ret = queue_status(s->fd, q->queue_id, &st);
	if (ret != -ENOENT) {
		snprintf(why, size, "QUEUE_STATUS of the destroyed queue: %s",
			 strerror(-ret));
		return -1;
	}
	if (syncobj_query(s->fd, q->syncobj, &point)) {
		snprintf(why, size, "the destroyed queue's syncobj handle is gone");
		return -1;
	}
	ret = bo_info(s->fd, q->status_handle, &bi);
	if (ret != -ENOENT) {
		snprintf(why, size, "the destroyed queue's status handle: %s",
			 strerror(-ret));
		return -1;
	}
	ret = queue_create(s->fd, 0, DRM_TRN_PRIORITY_NORMAL, &c);
	if (ret || c.queue_id != q->queue_id) {
		snprintf(why, size, "next QUEUE_CREATE: %s, id %u, not %u",
			 strerror(-ret), c.queue_id, q->queue_id);
		return -1;
	}
	return queue_runs(s, &c, why, size);
}

static int check_queue_works(struct op_state *s, char *why, size_t size)
{
	return queue_runs(s, &s->x->q, why, size);
}

/* A queue that ran one job. */
static int prepare_queue_ran(struct op_state *s)
{
	char why[512];
	int ret = prepare_queue(s);

	if (ret)
		return ret;
	if (queue_runs(s, &s->x->q, why, sizeof(why))) {
		fprintf(stderr, "# %s\n", why);
		return -EIO;
	}
	return exec_counters_idle(s->id, EXEC_WAIT_MS, &s->x->ctr);
}

static int run_queue_status(struct op_state *s)
{
	return queue_status(s->fd, s->x->q.queue_id, &s->x->st);
}

static int check_queue_status_ok(struct op_state *s, char *why, size_t size)
{
	const struct drm_trn_queue_status *st = &s->x->st;

	if (st->queue_id != s->x->q.queue_id || st->submitted_seqno != 1 ||
	    st->completed_seqno != 1 || st->jobs_failed || st->state ||
	    st->reserved[0] || st->reserved[1]) {
		snprintf(why, size,
			 "queue %u: submitted %llu, completed %llu, failed %llu, state %#x; want 1/1/0/0",
			 st->queue_id, (unsigned long long)st->submitted_seqno,
			 (unsigned long long)st->completed_seqno,
			 (unsigned long long)st->jobs_failed, st->state);
		return -1;
	}
	return 0;
}

/*
 * SUBMIT: job i writes EXEC_MAGIC + i to data[i]. One job lists both
 * buffers, waits for a signalled binary syncobj and a signalled timeline
 * point, and signals an empty binary syncobj and a timeline point. A batch
 * spreads the same over four jobs (one of them also FILLs data[256..511]):
 * both buffers and both in-syncs; the data buffer only; both buffers and
 * the binary out-sync; no buffers, the timeline in- and out-sync.
 */
static int prepare_submit(struct op_state *s)
{
	struct exec_state *x = s->x;
	struct cmds c;
	unsigned int i;
	int ret;

	ret = prepare_queue(s);
	if (!ret)
		ret = host_bo_new(s->fd, 16 << 10, &x->cmd);
	if (!ret)
		ret = host_bo_new(s->fd, 4096, &x->data);
	if (!ret)
		ret = syncobj_create(s->fd, DRM_SYNCOBJ_CREATE_SIGNALED,
				     &x->in_bin);
	if (!ret)
		ret = syncobj_create(s->fd, 0, &x->in_tl);
	if (!ret)
		ret = timeline_signal(s->fd, x->in_tl, IN_POINT);
	if (!ret)
		ret = syncobj_create(s->fd, 0, &x->out_bin);
	if (!ret)
		ret = syncobj_create(s->fd, 0, &x->out_tl);
	if (ret)
		return ret;
	x->bos[0] = x->cmd.handle;
	x->bos[1] = x->data.handle;
	x->in[0].handle = x->in_bin;
	x->in[1].handle = x->in_tl;
	x->in[1].point = IN_POINT;
	x->out[0].handle = x->out_bin;
	x->out[1].handle = x->out_tl;
	x->out[1].point = OUT_POINT;

	x->njobs = x->batch ? MAX_JOBS : 1;
	cmds_init(&c, x->cmd.map, x->cmd.va, x->cmd.size);
	for (i = 0; i < x->njobs; i++) {
		size_t off = c.len;

		ret = cmds_write32(&c, x->data.va + 4 * i, EXEC_MAGIC + i);
		if (!ret && x->batch && i == 1)
			ret = cmds_fill(&c, x->data.va + 1024, FILL_WORD, 1024);
		if (ret)
			return ret;
		job_init(&x->jobs[i], c.va + off, (uint32_t)(c.len - off));
	}
	if (!x->batch) {
		x->jobs[0].bo_handles = (uintptr_t)x->bos;
		x->jobs[0].bo_count = 2;
		x->jobs[0].in_syncs = (uintptr_t)x->in;
		x->jobs[0].in_count = 2;
		x->jobs[0].out_syncs = (uintptr_t)x->out;
		x->jobs[0].out_count = 2;
	} else {
		x->jobs[0].bo_handles = (uintptr_t)x->bos;
		x->jobs[0].bo_count = 2;
		x->jobs[0].in_syncs = (uintptr_t)x->in;
		x->jobs[0].in_count = 2;
		x->jobs[1].bo_handles = (uintptr_t)&x->bos[1];
		x->jobs[1].bo_count = 1;
		x->jobs[2].bo_handles = (uintptr_t)x->bos;
		x->jobs[2].bo_count = 2;
		x->jobs[2].out_syncs = (uintptr_t)x->out;
		x->jobs[2].out_count = 1;
		x->jobs[3].in_syncs = (uintptr_t)&x->in[1];
		x->jobs[3].in_count = 1;
		x->jobs[3].out_syncs = (uintptr_t)&x->out[1];
		x->jobs[3].out_count = 1;
	}
	ret = query_memory(s->fd, &s->mem);
	if (!ret)
		ret = exec_counters_idle(s->id, EXEC_WAIT_MS, &x->ctr);
	return ret;
}

static int run_submit(struct op_state *s)
{
	return submit_jobs(s->fd, s->x->q.queue_id, s->x->jobs, s->x->njobs);
}

/* Numbers 1..n, every job done without error, data, out-syncs, counters. */
static int check_submit_ok(struct op_state *s, char *why, size_t size)
{
	struct exec_state *x = s->x;
	uint32_t *d = words(&x->data);
	struct drm_trn_queue_status st;
	uint64_t n = x->njobs, point = 0;
	int ret, status, bin;
	unsigned int i;

	for (i = 0; i < x->njobs; i++)
		if (x->jobs[i].seqno != i + 1) {
			snprintf(why, size, "job %u got seqno %llu", i,
				 (unsigned long long)x->jobs[i].seqno);
			return -1;
		}
	ret = syncobj_wait_point(s->fd, x->q.syncobj, n, EXEC_WAIT_MS);
	if (ret) {
		snprintf(why, size, "waiting for job %llu: %s",
			 (unsigned long long)n, strerror(-ret));
		return -1;
	}
	for (i = 0; i < x->njobs; i++) {
		status = timeline_fence_status(s->fd, x->q.syncobj, i + 1);
		if (status != 1 || d[i] != EXEC_MAGIC + i) {
			snprintf(why, size, "job %u: fence status %d, data %#x",
				 i + 1, status, d[i]);
			return -1;
		}
	}
	if (x->batch && !all_bytes(d + 256, 0x5a, 1024)) {
		snprintf(why, size, "the FILL of job 2 did not land");
		return -1;
	}
	bin = syncobj_fence_status(s->fd, x->out_bin);
	ret = syncobj_query(s->fd, x->out_tl, &point);
	if (bin != 1 || ret || point != OUT_POINT) {
		snprintf(why, size,
			 "out-syncs: binary status %d, timeline point %llu (%s)",
			 bin, (unsigned long long)point, strerror(-ret));
		return -1;
	}
	ret = queue_status(s->fd, x->q.queue_id, &st);
	if (ret || st.submitted_seqno != n || st.completed_seqno != n ||
	    st.jobs_failed) {
		snprintf(why, size,
			 "QUEUE_STATUS %s: submitted %llu, completed %llu, failed %llu",
			 strerror(-ret), (unsigned long long)st.submitted_seqno,
			 (unsigned long long)st.completed_seqno,
			 (unsigned long long)st.jobs_failed);
		return -1;
	}
	return counters_moved(s, n, n, why, size);
}

/*
 * Nothing queued: the queue's numbers, its timeline and the out-syncs are
 * as before, nothing ran, charges and counters are back; then the same
 * submission, uninjected, gets numbers from 1 and works.
 */
static int check_submit_failed(struct op_state *s, char *why, size_t size)
{
	struct exec_state *x = s->x;
	uint64_t qpoint = 1, tpoint = 1;
	struct drm_trn_queue_status st;
	unsigned int i;
	bool wrote = false;
	int ret, bin;

	ret = queue_status(s->fd, x->q.queue_id, &st);
	if (ret || st.submitted_seqno) {
		snprintf(why, size,
			 "QUEUE_STATUS %s: submitted_seqno %llu, job seqnos %llu..%llu: the failed call queued its jobs",
			 strerror(-ret), (unsigned long long)st.submitted_seqno,
			 (unsigned long long)x->jobs[0].seqno,
			 (unsigned long long)x->jobs[x->njobs - 1].seqno);
		return -1;
	}
	bin = syncobj_fence_status(s->fd, x->out_bin);
	ret = syncobj_query(s->fd, x->q.syncobj, &qpoint);
	if (!ret)
		ret = syncobj_query(s->fd, x->out_tl, &tpoint);
	if (bin != NO_FENCE || ret || qpoint || tpoint) {
		snprintf(why, size,
			 "a fence appeared: binary out-sync status %d (want %d: none), queue point %llu, timeline out-sync point %llu (%s)",
			 bin, NO_FENCE, (unsigned long long)qpoint,
			 (unsigned long long)tpoint, strerror(-ret));
		return -1;
	}
	if (counters_moved(s, 0, 0, why, size))
		return -1;
	if (!all_bytes(x->data.map, 0, 4096)) {
		snprintf(why, size, "a job ran: data[0] %#x",
			 words(&x->data)[0]);
		return -1;
	}
	if (same_memory(s, why, size))
		return -1;
	/* Not promised either way; reported. */
	for (i = 0; i < x->njobs; i++) {
		wrote |= x->jobs[i].seqno != 0;
		x->jobs[i].seqno = 0;
	}
	x->seqno_written += wrote;

	ret = run_submit(s);
	if (ret) {
		snprintf(why, size, "SUBMIT after: %s", strerror(-ret));
		return -1;
	}
	return check_submit_ok(s, why, size);
}

/*
 * Close of a file A with jobs in flight. A's queue runs a batch: the first
 * job at once, the other three wait for job 1 of a second file B, which
 * waits on a device semaphore that a helper thread (not injected) releases
 * from another queue of B RELEASE_MS after the test closes A. Closing
 * waits for nothing and cancels A's unfinished jobs: the three behind B's
 * never write into the buffer of B that A imported, where the test checks
 * once A is gone (the first may have run before the close).
 */
static void *close_helper(void *arg)
{
	struct op_state *s = arg;
	struct exec_state *x = s->x;
	struct cmds c;

	usleep(RELEASE_MS * 1000);
	cmds_init(&c, (unsigned char *)x->bcmd.map + 512, x->bcmd.va + 512,
		  512);
	cmds_sem(&c, false, CLOSE_SEM, 1);
	x->helper_ret = submit_one(s->fd2, x->qb2.queue_id, c.va,
				   (uint32_t)c.len, x->bcmd.handle, NULL);
	return NULL;
}

static int prepare_close(struct op_state *s)
{
	struct exec_state *x = s->x;
	struct drm_trn_queue_status st;
	struct sim_counters now = { 0 };
	uint32_t tmp = 0, bos[2];
	struct drm_prime_handle p;
	struct drm_trn_bo_info bi;
	struct cmds c;
	unsigned int i;
	int ret, sfd;

	/* Every earlier file's memory came back. */
	ret = sim_counters_wait(s->id, &x->mem, &now);
	if (ret) {
		fprintf(stderr,
			"# device memory hbm_used %llu host_pinned %llu, was %llu %llu\n",
			(unsigned long long)now.hbm_used,
			(unsigned long long)now.host_pinned,
			(unsigned long long)x->mem.hbm_used,
			(unsigned long long)x->mem.host_pinned);
		return ret;
	}
	ret = prepare_exec_fd(s);
	if (ret)
		return ret;
	s->fd2 = open(s->node, O_RDWR | O_CLOEXEC);
	if (s->fd2 < 0)
		return -errno;

	/* B: job 1 waits for the semaphore; its point goes to A. */
	ret = queue_create(s->fd2, 0, DRM_TRN_PRIORITY_NORMAL, &x->qb1);
	if (!ret)
		ret = queue_create(s->fd2, 0, DRM_TRN_PRIORITY_NORMAL, &x->qb2);
	if (!ret)
		ret = host_bo_new(s->fd2, 4096, &x->bcmd);
	if (!ret)
		ret = host_bo_new(s->fd2, 4096, &x->shared);
	if (ret)
		return ret;
	cmds_init(&c, x->bcmd.map, x->bcmd.va, 512);
	cmds_sem(&c, true, CLOSE_SEM, 1);
	ret = submit_one(s->fd2, x->qb1.queue_id, c.va, (uint32_t)c.len,
			 x->bcmd.handle, NULL);
	if (!ret)
		ret = syncobj_create(s->fd2, 0, &tmp);
	if (!ret)
		ret = syncobj_transfer(s->fd2, tmp, x->qb1.syncobj, 1);
	if (ret)
		return ret;
	sfd = syncobj_export_sync_file(s->fd2, tmp);
	if (sfd < 0)
		return sfd;
	ret = syncobj_create(s->fd, 0, &x->in_bin);
	if (!ret)
		ret = syncobj_import_sync_file(s->fd, x->in_bin, sfd);
	close(sfd);
	if (ret)
		return ret;

	/* A imports B's buffer. */
	memset(&p, 0, sizeof(p));
	p.handle = x->shared.handle;
	p.flags = DRM_CLOEXEC | DRM_RDWR;
	ret = raw_ioctl(s->fd2, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);
	if (ret)
		return ret;
	sfd = p.fd;
	memset(&p, 0, sizeof(p));
	p.fd = sfd;
	ret = raw_ioctl(s->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);
	close(sfd);
	if (!ret)
		ret = bo_info(s->fd, p.handle, &bi);
	if (ret)
		return ret;
	x->shared_a = p.handle;
	x->shared_va = bi.va;

	/* A: four WRITEs into it, three of them behind B's job. */
	ret = queue_create(s->fd, 1, DRM_TRN_PRIORITY_NORMAL, &x->q);
	if (!ret)
		ret = host_bo_new(s->fd, 4096, &x->cmd);
	if (ret)
		return ret;
	bos[0] = x->cmd.handle;
	bos[1] = x->shared_a;
	memcpy(x->bos, bos, sizeof(bos));
	x->in[0].handle = x->in_bin;
	x->njobs = MAX_JOBS;
	cmds_init(&c, x->cmd.map, x->cmd.va, x->cmd.size);
	for (i = 0; i < MAX_JOBS; i++) {
		size_t off = c.len;

		cmds_write32(&c, x->shared_va + 4 * i, EXEC_MAGIC + i);
		job_init(&x->jobs[i], c.va + off, (uint32_t)(c.len - off));
		x->jobs[i].bo_handles = (uintptr_t)x->bos;
		x->jobs[i].bo_count = 2;
		if (i) {
			x->jobs[i].in_syncs = (uintptr_t)x->in;
			x->jobs[i].in_count = 1;
		}
	}
	/* A's mapping would keep A's file open past close(). */
	unmap_bo(&x->cmd);
	ret = submit_jobs(s->fd, x->q.queue_id, x->jobs, MAX_JOBS);
	if (ret)
		return ret;
	ret = pthread_create(&x->helper, NULL, close_helper, s);
	if (ret)
		return -ret;
	x->helper_running = true;
	if (!queue_status(s->fd, x->q.queue_id, &st) &&
	    st.completed_seqno < MAX_JOBS)
		x->in_flight++;
	return 0;
}

static int run_close(struct op_state *s)
{
	int64_t start = mono_ns();
	int ret = close(s->fd) ? -errno : 0;

	/* The release runs before close() returns, in this thread. */
	if (mono_ns() - start >= RELEASE_MS / 2 * 1000000LL)
		s->x->waited++;
	s->fd = -1;
	return ret;
}

/*
 * Every job of A either ran before the close (and wrote) or was cancelled
 * by it (and did not, even though what it waited for finished after the
 * close): the jobs that ran are a prefix of A's queue. B's ran. Every job
 * is accounted for, as completed or failed.
 */
static int check_close_ok(struct op_state *s, char *why, size_t size)
{
	struct exec_state *x = s->x;
	const struct exec_counters *a = &x->ctr;
	uint32_t *d = words(&x->shared);
	struct exec_counters b;
	unsigned int i, ran;
	int ret;

	pthread_join(x->helper, NULL);
	x->helper_running = false;
	if (x->helper_ret) {
		snprintf(why, size, "the helper's SUBMIT: %s",
			 strerror(-x->helper_ret));
		return -1;
	}
	ret = syncobj_wait_point(s->fd2, x->qb2.syncobj, 1, EXEC_WAIT_MS);
	if (!ret)
		ret = syncobj_wait_point(s->fd2, x->qb1.syncobj, 1,
					 EXEC_WAIT_MS);
	if (ret) {
		snprintf(why, size, "file B's jobs: %s", strerror(-ret));
		return -1;
	}
	ret = exec_counters_idle(s->id, EXEC_WAIT_MS, &b);
	if (ret) {
		snprintf(why, size, "device not idle: %s", strerror(-ret));
		return -1;
	}
	for (ran = 0; ran < MAX_JOBS && d[ran] == EXEC_MAGIC + ran; ran++)
		;
	for (i = ran; i < MAX_JOBS; i++)
		if (d[i]) {
			snprintf(why, size,
				 "job %u of the closed file wrote %#x after job %u did not",
				 i + 1, d[i], ran + 1);
			return -1;
		}
	if (ran < MAX_JOBS)
		x->cancelled++;
	if (b.submitted - a->submitted != MAX_JOBS + 2 ||
	    b.completed - a->completed != 2 + ran ||
	    b.failed - a->failed != MAX_JOBS - ran) {
		snprintf(why, size,
			 "jobs_submitted/completed/failed moved +%llu/+%llu/+%llu, want +%u/+%u/+%u",
			 (unsigned long long)(b.submitted - a->submitted),
			 (unsigned long long)(b.completed - a->completed),
			 (unsigned long long)(b.failed - a->failed),
			 MAX_JOBS + 2, 2 + ran, MAX_JOBS - ran);
		return -1;
	}
	return 0;
}

/* ---- a part's bind and unbind (trn_pci, TRN_TEST_DEVICE=part) ---- */

#define TRN3_DEVICE	0x7564	/* the QEMU-mode Trn3 the pci lanes model */
#define TRN3_CORES	8

/* The PCI address of the Trn3 in @addr; 0 or -ENOENT. */
static int trn3_addr(char *addr, size_t size)
{
	char path[320], val[16];
	struct dirent *de;
	int ret = -ENOENT;
	DIR *dir;

	dir = opendir("/sys/bus/pci/devices");
	if (!dir)
		return -errno;
	while (ret && (de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor",
			 de->d_name);
		if (read_file(path, val, sizeof(val)) < 0 ||
		    strtoul(val, NULL, 0) != 0x1d0f)
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device",
			 de->d_name);
		if (read_file(path, val, sizeof(val)) < 0 ||
		    strtoul(val, NULL, 0) != TRN3_DEVICE)
			continue;
		if (strlen(de->d_name) >= size)
			continue;
		memcpy(addr, de->d_name, strlen(de->d_name) + 1);
		ret = 0;
	}
	closedir(dir);
	return ret;
}

/* Whether PCI device @addr has a driver (any). */
static bool pci_has_driver(const char *addr)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver", addr);
	return access(path, F_OK) == 0;
}

/* Whether PCI device @addr is bound to trn_pci. */
static bool pci_bound_to_trn(const char *addr)
{
	char path[128];

	snprintf(path, sizeof(path), PCI_DRIVER "/%s", addr);
	return access(path, F_OK) == 0;
}

/* Bind the Trn3 to trn_pci unless it is; 0 or -errno. */
static int part_rebind(void)
{
	char addr[32];
	int ret = trn3_addr(addr, sizeof(addr));

	if (ret || pci_bound_to_trn(addr))
		return ret;
	return sysfs_write(PCI_DRIVER "/bind", addr);
}

/* The minor of the accel node of the part at @addr; 0 or -ENOENT. */
static int part_accel_minor(const char *addr, unsigned int *minor)
{
	char path[128];
	struct dirent *de;
	int ret = -ENOENT;
	DIR *dir;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/accel", addr);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while (ret && (de = readdir(dir)))
		if (parse_accel(de->d_name, minor))
			ret = 0;
	closedir(dir);
	return ret;
}

/*
 * Open accel minor @minor: through its /dev node, or (an absorbed fault
 * in devtmpfs, device_works_without_node()) through a node made from its
 * sysfs dev. fd or -errno; @no_node counts the second way.
 */
static int open_minor_anyhow(unsigned int minor, unsigned int *no_node)
{
	char path[128], dev[32];
	unsigned int maj, min;
	int fd = open_minor(minor);

	if (fd != -ENOENT)
		return fd;
	snprintf(path, sizeof(path), ACCEL_CLASS "/accel%u/dev", minor);
	if (read_file(path, dev, sizeof(dev)) < 0 ||
	    sscanf(dev, "%u:%u", &maj, &min) != 2)
		return -ENOENT;
	unlink(NODE_COPY);
	if (mknod(NODE_COPY, S_IFCHR | 0600, makedev(maj, min)))
		return -errno;
	fd = open(NODE_COPY, O_RDWR | O_CLOEXEC);
	unlink(NODE_COPY);
	if (fd < 0)
		return -errno;
	(*no_node)++;
	return fd;
}

/*
 * The Trn3 is bound to trn_pci and works: its node answers with its
 * identity, and a job runs on one of its queues. Its file is closed after.
 */
static int part_works(struct op_state *s, char *why, size_t size)
{
	struct drm_trn_device_info info;
	struct drm_trn_queue_create q;
	int ret;

	if (!pci_bound_to_trn(s->pci_addr)) {
		snprintf(why, size, "%s is not bound to trn_pci", s->pci_addr);
		return -1;
	}
	ret = part_accel_minor(s->pci_addr, &s->minor);
	if (ret) {
		snprintf(why, size, "%s is bound but has no accel node: %s",
			 s->pci_addr, strerror(-ret));
		return -1;
	}
	s->fd = open_minor_anyhow(s->minor, &s->no_node);
	if (s->fd < 0) {
		snprintf(why, size, "opening accel%u: %s", s->minor,
			 strerror(-s->fd));
		return -1;
	}
	ret = query_info(s->fd, &info);
	if (ret || info.device_id != TRN3_DEVICE ||
	    info.num_cores != TRN3_CORES) {
		snprintf(why, size, "accel%u answers %s, device %#x, %u cores",
			 s->minor, strerror(-ret), info.device_id,
			 info.num_cores);
		ret = -1;
	}
	if (!ret) {
		ret = queue_create(s->fd, 0, DRM_TRN_PRIORITY_NORMAL, &q);
		if (ret)
			snprintf(why, size, "QUEUE_CREATE on accel%u: %s",
				 s->minor, strerror(-ret));
	}
	if (!ret)
		ret = queue_runs(s, &q, why, size);
	close(s->fd);
	s->fd = -1;
	return ret ? -1 : 0;
}

/* Binding the unbound Trn3: trn_pci's probe, its way into the core. */
static int prepare_bind(struct op_state *s)
{
	s->cmd = s->pci_addr;
	s->sysfs_fd = open(PCI_DRIVER "/bind", O_WRONLY | O_CLOEXEC);
	return s->sysfs_fd < 0 ? -errno : 0;
}

/* A probe that failed left the part without a driver, and nothing of it. */
static int check_bind_failed(struct op_state *s, char *why, size_t size)
{
	if (pci_has_driver(s->pci_addr)) {
		snprintf(why, size, "%s has a driver after a failed bind",
			 s->pci_addr);
		return -1;
	}
	return 0;
}

static void undo_bind(struct op_state *s, int ret)
{
	if (s->sysfs_fd >= 0)
		close(s->sysfs_fd);
	s->sysfs_fd = -1;
	if (pci_bound_to_trn(s->pci_addr))
		sysfs_write(PCI_DRIVER "/unbind", s->pci_addr);
}

/*
 * Unbinding the Trn3 while a file of it holds an HBM buffer, a host
 * buffer and a queue: trn_pci's remove, with the core unplugging the
 * device under the file.
 */
static int prepare_unbind_open(struct op_state *s)
{
	struct drm_trn_queue_create q;
	uint32_t handle;
	int ret = part_rebind();

	if (!ret)
		ret = part_accel_minor(s->pci_addr, &s->minor);
	if (ret)
		return ret;
	s->fd = open_minor(s->minor);
	if (s->fd < 0)
		return s->fd;
	ret = bo_create(s->fd, 1 << 20, DRM_TRN_PLACEMENT_HBM, 0, 0, &handle,
			NULL);
	if (!ret)
		ret = bo_create(s->fd, 64 << 10, DRM_TRN_PLACEMENT_HOST, 0, 0,
				&handle, NULL);
	if (!ret)
		ret = queue_create(s->fd, 1, DRM_TRN_PRIORITY_NORMAL, &q);
	if (ret)
		return ret;
	s->cmd = s->pci_addr;
	s->sysfs_fd = open(PCI_DRIVER "/unbind", O_WRONLY | O_CLOEXEC);
	return s->sysfs_fd < 0 ? -errno : 0;
}

/* Unbound: no accel node, and the open file is told the device is gone. */
static int check_unbind_open_ok(struct op_state *s, char *why, size_t size)
{
	struct drm_trn_device_info info;
	char path[128];
	int ret;

	if (pci_has_driver(s->pci_addr)) {
		snprintf(why, size, "%s still has a driver", s->pci_addr);
		return -1;
	}
	snprintf(path, sizeof(path), ACCEL_CLASS "/accel%u", s->minor);
	if (!access(path, F_OK)) {
		snprintf(why, size, "accel%u is still there", s->minor);
		return -1;
	}
	ret = query_info(s->fd, &info);
	if (ret != -ENODEV) {
		snprintf(why, size, "the file of an unbound part answers %s",
			 strerror(-ret));
		return -1;
	}
	return 0;
}

/* Still bound, the open file still answers. */
static int check_unbind_open_failed(struct op_state *s, char *why,
				    size_t size)
{
	struct drm_trn_device_info info;
	int ret = query_info(s->fd, &info);

	if (ret || !pci_bound_to_trn(s->pci_addr)) {
		snprintf(why, size, "%s: bound %d, the open file answers %s",
			 s->pci_addr, pci_bound_to_trn(s->pci_addr),
			 strerror(-ret));
		return -1;
	}
	return 0;
}

/* The file goes first, so that the part gets its minor back. */
static void undo_unbind_open(struct op_state *s, int ret)
{
	undo_fd(s, ret);
	if (s->sysfs_fd >= 0)
		close(s->sysfs_fd);
	s->sysfs_fd = -1;
	part_rebind();
}

/* ---- the loop ---- */

struct fault_result {
	unsigned int points;		/* fault points the operation has */
	unsigned int failed;		/* runs that failed cleanly */
	unsigned int absorbed;		/* runs that succeeded anyway */
	unsigned int copyback;		/* EFAULT with the object made */
	unsigned int copyback_nth;	/* at which point, the last time */
	unsigned int errnos[140];
};

static void prefault_stack(void)
{
	volatile char pad[128 << 10];
	size_t i;

	for (i = 0; i < sizeof(pad); i += 4096)
		pad[i] = 0;
}

static void errno_summary(const struct fault_result *r, char *buf,
			  size_t size)
{
	size_t len = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 1; i < ARRAY_SIZE(r->errnos) && len < size; i++)
		if (r->errnos[i])
			len += (size_t)snprintf(buf + len, size - len,
						"%s%s %u", len ? ", " : "",
						strerrorname_np((int)i),
						r->errnos[i]);
	if (!len)
		snprintf(buf, size, "none");
}

static bool allowed(const struct fault_op *op, int ret)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(op->allowed) && op->allowed[i]; i++)
		if (ret == -op->allowed[i])
			return true;
	return false;
}

/*
 * debugfs mounted, for a part's tests: debugfs_ready() looks for trn_sim's
 * directory, which the pci lanes' run of the part's binaries does not have
 * (trn_sim is not loaded then).
 */
static int fault_debugfs_ready(void)
{
	if (!access(DEBUGFS "/failslab", F_OK))
		return 0;
	if (mount("debugfs", DEBUGFS, "debugfs", 0, NULL) && errno != EBUSY)
		return -errno;
	return 0;
}

FIXTURE(faults)
{
	struct fault_setting saved[MAX_SAVED];
	unsigned int nsaved;
	unsigned int first_nth;
	unsigned int max_nth;
	bool verbose;
	bool configured;
	/* TRN_FAULTS_KNOWN_BUGS=1: let the known bugs' points fail too. */
	bool known_bugs;
	/* TRN_FAULTS_EVERY_POINT=1: the part's tests at every point. */
	bool every_point;
	const char *module_dir;
	unsigned char *up;
};

/* Undoes what a test may have left: runs in the parent, even after a crash. */
static void cleanup_devices(void)
{
	unsigned int id;

	for (id = FIRST_ID; id <= LAST_ID; id++)
		if (sim_exists(id))
			sim_del(id);
	unlink(NODE_COPY);
}

FIXTURE_SETUP(faults)
{
	const char *env = getenv("TRN_FAULTS_MAX_NTH");
	int ret;

	SKIP_UNLESS_DUT();
	ret = dut_is_part() ? fault_debugfs_ready() : debugfs_ready();
	if (ret)
		SKIP(return, "no debugfs: %s", strerror(-ret));
	if (access(FAIL_NTH, W_OK))
		SKIP(return, "no %s: kernel without CONFIG_FAULT_INJECTION",
		     FAIL_NTH);
	if (access(DEBUGFS "/failslab", F_OK))
		SKIP(return, "no failslab in debugfs (CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_DEBUG_FS)");

	self->max_nth = env ? (unsigned int)strtoul(env, NULL, 0) : MAX_NTH;
	if (!self->max_nth)
		self->max_nth = MAX_NTH;
	env = getenv("TRN_FAULTS_FIRST");
	self->first_nth = env ? (unsigned int)strtoul(env, NULL, 0) : 1;
	if (!self->first_nth)
		self->first_nth = 1;
	self->module_dir = getenv("TRN_MODULE_DIR");
	self->verbose = getenv("TRN_FAULTS_VERBOSE") != NULL;
	cleanup_devices();

	/* No page faults under injection: they would fail as OOM. */
	prefault_stack();
	self->up = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->up);
	ASSERT_EQ(0, mlockall(MCL_CURRENT | MCL_FUTURE));

	env = getenv("TRN_FAULTS_VERBOSE");
	ret = configure_faults(self->saved, &self->nsaved,
			       env && !strcmp(env, "2") ? "2" : "0");
	if (ret)
		restore_faults(self->saved, self->nsaved);
	ASSERT_EQ(0, ret) TH_LOG("configuring fault injection: %s",
				 strerror(-ret));
	self->configured = true;
	env = getenv("TRN_FAULTS_KNOWN_BUGS");
	self->known_bugs = env && !strcmp(env, "1");
	env = getenv("TRN_FAULTS_EVERY_POINT");
	self->every_point = env && !strcmp(env, "1");
}

/* Keep the known bug under @fn out of this test, or skip it. */
#define AVOID_KNOWN_BUG(fn) do { \
	int _ret = self->known_bugs ? 0 : \
		   exclude_known_bug(self->saved, &self->nsaved, fn); \
	if (_ret) \
		SKIP(return, "cannot keep the known bug under %s out (%s): set TRN_FAULTS_KNOWN_BUGS=1 to run anyway", \
		     fn, strerror(-_ret)); \
} while (0)

FIXTURE_TEARDOWN_PARENT(faults)
{
	if (!self->configured)
		return;
	restore_faults(self->saved, self->nsaved);
	if (dut_is_part()) {
		/* A part test that died may leave the Trn3 unbound. */
		EXPECT_EQ(0, part_rebind());
		return;
	}
	cleanup_devices();
	/* A module test that died leaves trn_sim unloaded: put it back. */
	if (self->module_dir && !module_loaded("trn_sim"))
		module_load(self->module_dir, "trn_sim", "num_devices=1");
	EXPECT_TRUE(sim_exists(0));
}

/*
 * Run @op with its 1st, 2nd, ... fault point failing until it passes
 * without reaching the armed one. Checks the state after every run.
 */
static bool fault_loop(struct __test_metadata *_metadata,
		       FIXTURE_DATA(faults) *self, const struct fault_op *op,
		       struct op_state *s, struct fault_result *r)
{
	int start_code = _metadata->exit_code;
	struct snapshot base, prepared, now;
	char why[4096], errs[256];
	unsigned int nth;
	bool consumed;
	int nth_fd, ret;

	memset(r, 0, sizeof(*r));
	nth_fd = open(FAIL_NTH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, nth_fd) TH_LOG("%s: %s", FAIL_NTH, strerror(errno));
	snapshot(&base);

	for (nth = self->first_nth; nth <= self->max_nth; nth++) {
		if (op->failures && r->failed == op->failures)
			break;
		if (op->prepare) {
			ret = op->prepare(s);
			ASSERT_EQ(0, ret) TH_LOG("%s: prepare: %s", op->name,
						 strerror(-ret));
		}
		snapshot(&prepared);

		if (self->verbose) {
			fprintf(stderr, "# %s: fault %u\n", op->name, nth);
			fflush(stderr);
		}
		ASSERT_EQ(0, fault_arm(nth_fd, nth));
		ret = op->run(s);
		consumed = fault_consumed(nth_fd);

		if (!consumed) {
			/* Fewer points than @nth: every one was covered. */
			EXPECT_EQ(op->expect, ret)
				TH_LOG("%s without a fault: %s", op->name,
				       strerror(-ret));
			if (!ret && op->check_ok)
				EXPECT_EQ(0, op->check_ok(s, why, sizeof(why)))
					TH_LOG("%s: %s", op->name, why);
			if (op->undo)
				op->undo(s, ret);
			r->points = nth - 1;
			break;
		}

		if (ret == op->expect) {
			r->absorbed++;
			if (!ret && op->check_ok)
				EXPECT_EQ(0, op->check_ok(s, why, sizeof(why)))
					TH_LOG("%s, fault %u absorbed: %s",
					       op->name, nth, why);
		} else if (allowed(op, ret)) {
			r->failed++;
			if (-ret < (int)ARRAY_SIZE(r->errnos))
				r->errnos[-ret]++;
			if (ret == -EFAULT && op->copyback && op->copyback(s)) {
				r->copyback++;
				r->copyback_nth = nth;
			}
			/* Nothing half-made. */
			snapshot(&now);
			if (op->cached_refs) {
				now.trn_refs = prepared.trn_refs;
				now.sim_refs = prepared.sim_refs;
			}
			EXPECT_EQ(0, snapshot_diff(&prepared, &now, why,
						   sizeof(why)))
				TH_LOG("%s, fault %u (%s): %s", op->name, nth,
				       strerrorname_np(-ret), why);
			if (op->check_failed)
				EXPECT_EQ(0, op->check_failed(s, why,
							      sizeof(why)))
					TH_LOG("%s, fault %u (%s): %s",
					       op->name, nth,
					       strerrorname_np(-ret), why);
		} else {
			EXPECT_EQ(op->expect, ret)
				TH_LOG("%s, fault %u: unexpected %s", op->name,
				       nth, ret < 0 ? strerrorname_np(-ret) :
						      "success");
		}
		if (op->undo)
			op->undo(s, ret);

		/* Back to where the test started, */
		snapshot_settled(&base, &now);
		EXPECT_EQ(0, snapshot_diff(&base, &now, why, sizeof(why)))
			TH_LOG("%s, after fault %u and undo: %s", op->name, nth,
			       why);
		/* and the operation still works. */
		if (ret != op->expect) {
			if (op->prepare)
				ASSERT_EQ(0, op->prepare(s));
			ret = op->run(s);
			EXPECT_EQ(op->expect, ret)
				TH_LOG("%s after fault %u: %s", op->name, nth,
				       strerror(-ret));
			if (!ret && op->check_ok)
				EXPECT_EQ(0, op->check_ok(s, why, sizeof(why)))
					TH_LOG("%s after fault %u: %s",
					       op->name, nth, why);
			if (op->undo)
				op->undo(s, ret);
			/* Its jobs freed before the next point counts. */
			snapshot_settled(&base, &now);
		}
		if (_metadata->exit_code != start_code)
			break;	/* the first failure tells the story */
	}
	close(nth_fd);
	errno_summary(r, errs, sizeof(errs));
	if (_metadata->exit_code != start_code) {
		TH_LOG("%s: stopped at fault %u: %u failed cleanly (%s), %u absorbed",
		       op->name, nth, r->failed, errs, r->absorbed);
		return false;
	}
	if (op->failures && r->failed == op->failures) {
		TH_LOG("%s: failed cleanly %u times (%s) in its first %u fault points, %u absorbed",
		       op->name, r->failed, errs, nth - self->first_nth,
		       r->absorbed);
		return true;
	}
	EXPECT_GE(self->max_nth, nth)
		TH_LOG("%s: still reaching fault points after %u", op->name,
		       self->max_nth);
	if (nth > self->max_nth)
		return false;
	TH_LOG("%s: %u fault points: %u failed cleanly (%s), %u absorbed",
	       op->name, r->points, r->failed, errs, r->absorbed);
	/*
	 * DRM copies the argument back after the handler succeeded: when
	 * that copy fails, the object exists but the call says EFAULT. Not
	 * checked further: the order of fault points varies a little from
	 * run to run (the debugging allocators allocate when they need to).
	 */
	if (r->copyback)
		TH_LOG("%s: %u runs failed copying the argument back (last at point %u) and left the object behind, until close",
		       op->name, r->copyback, r->copyback_nth);
	return true;
}

static void init_state(struct op_state *s)
{
	memset(s, 0, sizeof(*s));
	s->fd = s->fd2 = s->sysfs_fd = s->out_fd = -1;
}

TEST_F_TIMEOUT(faults, open_close, 600)
{
	static const struct fault_op op = {
		.name = "open+close",
		.allowed = { ENOMEM, EFAULT },
		.run = run_open_close,
	};
	struct fault_result r;
	struct op_state s;

	init_state(&s);
	ASSERT_EQ(0, open_dut(&s));
	if (fault_loop(_metadata, self, &op, &s, &r))
		EXPECT_LT(0, r.points);
}

TEST_F_TIMEOUT(faults, queries, 600)
{
	static const struct {
		const char *name;
		struct drm_trn_query q;
		bool data;
		int expect;
	} variants[] = {
		{ "QUERY device info", { DRM_TRN_QUERY_DEVICE_INFO, 56, 0, 0, 0 },
		  true, 0 },
		{ "QUERY memory", { DRM_TRN_QUERY_MEMORY, 64, 0, 0, 0 }, true, 0 },
		{ "QUERY size 0", { DRM_TRN_QUERY_DEVICE_INFO, 0, 0, 0, 0 },
		  false, 0 },
		{ "QUERY size 4096", { DRM_TRN_QUERY_MEMORY, 4096, 0, 0, 0 },
		  true, 0 },
		{ "QUERY flags", { DRM_TRN_QUERY_DEVICE_INFO, 56, 1, 0, 0 },
		  true, -EINVAL },
		{ "QUERY pad", { DRM_TRN_QUERY_DEVICE_INFO, 56, 0, 1, 0 },
		  true, -EINVAL },
		{ "QUERY unknown", { 0x100, 56, 0, 0, 0 }, true, -EINVAL },
		{ "QUERY short", { DRM_TRN_QUERY_DEVICE_INFO, 8, 0, 0, 0 },
		  true, -EINVAL },
		{ "QUERY NULL data", { DRM_TRN_QUERY_DEVICE_INFO, 56, 0, 0, 0 },
		  false, -EFAULT },
	};
	struct fault_op op = {
		.allowed = { ENOMEM, EFAULT },
		.prepare = prepare_fd,
		.run = run_query,
		.undo = undo_fd,
	};
	struct fault_result r;
	struct op_state s;
	size_t i;

	init_state(&s);
	ASSERT_EQ(0, open_dut(&s));
	for (i = 0; i < ARRAY_SIZE(variants); i++) {
		op.name = variants[i].name;
		op.expect = variants[i].expect;
		s.query = variants[i].q;
		if (variants[i].data)
			s.query.data = (uintptr_t)s.buf;
		fault_loop(_metadata, self, &op, &s, &r);
	}
}

TEST_F_TIMEOUT(faults, core_ioctls, 600)
{
	static const struct fault_op ops[] = {
		{
			.name = "VERSION",
			.allowed = { ENOMEM, EFAULT },
			.prepare = prepare_fd, .run = run_version,
			.undo = undo_fd,
		}, {
			.name = "GET_CAP",
			.allowed = { ENOMEM, EFAULT },
			.prepare = prepare_fd, .run = run_get_cap,
			.undo = undo_fd,
		}, {
			.name = "SYNCOBJ_CREATE",
			.allowed = { ENOMEM, EFAULT },
			.prepare = prepare_fd, .run = run_syncobj_create,
			.check_failed = check_syncobj_failed,
			.undo = undo_syncobj,
			.copyback = copyback_syncobj,
		},
	};
	struct fault_result r;
	struct op_state s;
	size_t i;

	init_state(&s);
	ASSERT_EQ(0, open_dut(&s));
	for (i = 0; i < ARRAY_SIZE(ops); i++)
		fault_loop(_metadata, self, &ops[i], &s, &r);
}

TEST_F_TIMEOUT(faults, buffers, 900)
{
	static const struct fault_op ops[] = {
		{
			.name = "BO_CREATE hbm",
			.allowed = { ENOMEM, EFAULT },
			.prepare = prepare_fd, .run = run_bo_create_hbm,
			.check_ok = check_bo_ok,
			.check_failed = check_bo_failed,
			.undo = undo_bo,
			.copyback = copyback_bo,
		}, {
			.name = "BO_CREATE host",
			.allowed = { ENOMEM, EFAULT },
			.prepare = prepare_fd, .run = run_bo_create_host,
			.check_ok = check_bo_ok,
			.check_failed = check_bo_failed,
			.undo = undo_bo,
			.copyback = copyback_bo,
		}, {
			.name = "BO_USERPTR",
			.allowed = { ENOMEM, EFAULT },
			.prepare = prepare_fd, .run = run_bo_userptr,
			.check_ok = check_bo_ok,
			.check_failed = check_bo_failed,
			.undo = undo_bo,
			.copyback = copyback_bo,
		}, {
			.name = "BO_INFO",
			.allowed = { ENOMEM, EFAULT },
			.prepare = prepare_host_bo, .run = run_bo_info,
			.check_ok = check_bo_info_ok,
			.check_failed = check_same_memory,
			.undo = undo_bo,
		}, {
			.name = "PRIME_HANDLE_TO_FD host",
			.allowed = { ENOMEM, EFAULT, ENFILE },
			.prepare = prepare_host_bo, .run = run_prime_export,
			.check_failed = check_same_memory,
			.undo = undo_bo,
			.copyback = copyback_export,
			.cached_refs = true,
		}, {
			.name = "PRIME_FD_TO_HANDLE",
			.allowed = { ENOMEM, EFAULT },
			.prepare = prepare_import, .run = run_prime_import,
			.check_failed = check_import_failed,
			.undo = undo_import,
			.copyback = copyback_import,
		}, {
			.name = "mmap host buffer",
			.allowed = { ENOMEM },
			.prepare = prepare_mmap, .run = run_mmap,
			.check_ok = check_mmap_ok,
			.undo = undo_bo,
		},
	};
	struct fault_result r;
	struct op_state s;
	uint32_t handle;
	size_t i;

	init_state(&s);
	s.up = self->up;
	ASSERT_EQ(0, open_dut(&s));
	/* The handle a clean BO_CREATE gets in a fresh file. */
	ASSERT_EQ(0, prepare_fd(&s));
	ASSERT_EQ(0, op_bo_create(&s, DRM_TRN_PLACEMENT_HBM, 4096, &handle));
	gem_close(s.fd, handle);
	undo_fd(&s, 0);
	s.first_handle = handle;
	for (i = 0; i < ARRAY_SIZE(ops); i++)
		fault_loop(_metadata, self, &ops[i], &s, &r);
}

TEST_F_TIMEOUT(faults, queues, 900)
{
	static const struct fault_op ops[] = {
		{
			.name = "QUEUE_CREATE",
			.allowed = { ENOMEM, EFAULT },
			.prepare = prepare_exec_fd, .run = run_queue_create,
			.check_ok = check_queue_create_ok,
			.check_failed = check_queue_create_failed,
			.undo = undo_exec,
			.copyback = copyback_queue,
		}, {
			.name = "QUEUE_DESTROY",
			.allowed = { ENOMEM, EFAULT },
			.prepare = prepare_queue, .run = run_queue_destroy,
			.check_ok = check_queue_destroy_ok,
			.check_failed = check_queue_works,
			.undo = undo_exec,
		}, {
			.name = "QUEUE_STATUS",
			.allowed = { ENOMEM, EFAULT },
			.prepare = prepare_queue_ran, .run = run_queue_status,
			.check_ok = check_queue_status_ok,
			.check_failed = check_queue_works,
			.undo = undo_exec,
		},
	};
	struct exec_state x = { 0 };
	struct fault_result r;
	struct op_state s;
	size_t i;

	init_state(&s);
	s.x = &x;
	ASSERT_EQ(0, open_dut(&s));
	for (i = 0; i < ARRAY_SIZE(ops); i++)
		fault_loop(_metadata, self, &ops[i], &s, &r);
}

TEST_F_TIMEOUT(faults, submit, 900)
{
	static const struct fault_op ops[] = {
		{
			.name = "SUBMIT one job",
			.allowed = { ENOMEM, EFAULT },
			.prepare = prepare_submit, .run = run_submit,
			.check_ok = check_submit_ok,
			.check_failed = check_submit_failed,
			.undo = undo_exec,
		}, {
			.name = "SUBMIT four jobs",
			.allowed = { ENOMEM, EFAULT },
			.prepare = prepare_submit, .run = run_submit,
			.check_ok = check_submit_ok,
			.check_failed = check_submit_failed,
			.undo = undo_exec,
		},
	};
	struct exec_state x = { 0 };
	struct fault_result r;
	struct op_state s;
	size_t i;

	init_state(&s);
	s.x = &x;
	ASSERT_EQ(0, open_dut(&s));
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		x.batch = i == 1;
		x.seqno_written = 0;
		if (fault_loop(_metadata, self, &ops[i], &s, &r) &&
		    x.seqno_written)
			TH_LOG("%s: %u failed runs had written job numbers back (a failure after the write-back)",
			       ops[i].name, x.seqno_written);
	}
}

/* Closing a file whose jobs are still queued or running. */
TEST_F_TIMEOUT(faults, close_with_jobs, 900)
{
	static const struct fault_op op = {
		.name = "close with jobs in flight",
		.allowed = { ENOMEM },
		.prepare = prepare_close, .run = run_close,
		.check_ok = check_close_ok,
		.undo = undo_exec,
	};
	struct exec_state x = { 0 };
	struct sim_counters now = { 0 };
	struct fault_result r;
	struct op_state s;

	init_state(&s);
	s.x = &x;
	ASSERT_EQ(0, open_dut(&s));
	ASSERT_EQ(0, sim_counters(s.id, &x.mem));
	if (fault_loop(_metadata, self, &op, &s, &r))
		TH_LOG("%s: %u of %u closes found jobs of the file unfinished, %u waited for them, %u cancelled some",
		       op.name, x.in_flight, r.points + 1, x.waited,
		       x.cancelled);
	EXPECT_EQ(0, sim_counters_wait(s.id, &x.mem, &now))
		TH_LOG("device memory hbm_used %llu host_pinned %llu, was %llu %llu",
		       (unsigned long long)now.hbm_used,
		       (unsigned long long)now.host_pinned,
		       (unsigned long long)x.mem.hbm_used,
		       (unsigned long long)x.mem.host_pinned);
}

/*
 * Binding the Trn3, one step of it failing at a time: trn_pci's probe
 * step by step, and the driver core around it. A step is a kernel
 * function: only fault points with it on their stack count (and none
 * under @reject, if set), and the step is failed until it has failed
 * cleanly @failures times, one for each way trn_pci can learn that it
 * failed. Failing it at every point deeper inside the kernel's own code
 * (an ioremap() of the part's 256 MiB has a point for every page-table
 * page and, under KASAN, every chunk of its shadow: hundreds) tells
 * trn_pci nothing new, and each try costs a bind and an unbind, 5 to 10 s
 * on the debug kernel. The core's registration (trn_device_register()) is
 * new_device's on the simulator, at every point.
 */
static const struct {
	const char *fn;
	const char *reject;
	unsigned int failures;
} part_bind_steps[] = {
	/* the driver core, before the probe */
	{ "driver_sysfs_add", NULL, 1 },
	/* its own memory */
	{ "trn_pci_probe", NULL, 1 },
	{ "pcim_enable_device", NULL, 1 },
	/* its devres, the region (EBUSY), the ioremap (EINVAL) */
	{ "pcim_iomap_region", NULL, 3 },
	/* either BAR's struct resource (pcim_request_region() jumps) */
	{ "__request_region", NULL, 2 },
	/* devm_bitmap_zalloc() jumps to it */
	{ "devm_bitmap_alloc", NULL, 1 },
	/* its devres, the ioremap */
	{ "devm_ioremap_wc", NULL, 2 },
	/* the test page, the queue's rings (of 15 to 18 points) */
	{ "trn_pci_udma_selftest", NULL, 2 },
	/* the rings, the workqueue */
	{ "trn_pci_cp_init", NULL, 2 },
	{ "trn_device_register", NULL, 1 },
	/*
	 * The driver core, after: the "trn" group (device_add_groups()
	 * and sysfs_create_groups() jump to it); trn_pci_remove() then runs
	 * on the fresh part.
	 */
	{ "internal_create_groups", "trn_pci_probe", 1 },
};

TEST_F_TIMEOUT(faults, part_bind, 1800)
{
	char name[96];
	struct fault_op op = {
		.name = name,
		/*
		 * EBUSY: request_mem_region() cannot allocate its struct
		 * resource; EINVAL: pcim_iomap_region() when its ioremap
		 * fails.
		 */
		.allowed = { ENOMEM, EFAULT, EBUSY, EINVAL },
		.prepare = prepare_bind,
		.run = run_sysfs_write,
		.check_ok = part_works,
		.check_failed = check_bind_failed,
		.undo = undo_bind,
	};
	unsigned int nsaved = self->nsaved;
	int start_code = _metadata->exit_code;
	struct fault_result r;
	struct op_state s;
	size_t i;
	int ret;

	if (!dut_is_part())
		SKIP(return, "a part's test: runs with TRN_TEST_DEVICE=part");
	init_state(&s);
	ASSERT_EQ(0, trn3_addr(s.pci_addr, sizeof(s.pci_addr)));
	ASSERT_EQ(0, part_rebind());
	ASSERT_EQ(0, sysfs_write(PCI_DRIVER "/unbind", s.pci_addr));
	for (i = 0; i < ARRAY_SIZE(part_bind_steps); i++) {
		snprintf(name, sizeof(name), "bind the Trn3, under %s%s%s",
			 part_bind_steps[i].fn,
			 part_bind_steps[i].reject ? " not " : "",
			 part_bind_steps[i].reject ? part_bind_steps[i].reject :
						     "");
		op.failures = self->every_point ? 0 :
					       part_bind_steps[i].failures;
		ret = aim_at_function(self->saved, &self->nsaved, "require",
				      part_bind_steps[i].fn);
		if (!ret && part_bind_steps[i].reject)
			ret = aim_at_function(self->saved, &self->nsaved,
					      "reject",
					      part_bind_steps[i].reject);
		EXPECT_EQ(0, ret) TH_LOG("%s: aiming the stack filter: %s",
					 name, strerror(-ret));
		if (!ret && fault_loop(_metadata, self, &op, &s, &r))
			EXPECT_LT(0, r.failed + r.absorbed)
				TH_LOG("%s: no fault point there", name);
		restore_faults(self->saved + nsaved, self->nsaved - nsaved);
		self->nsaved = nsaved;
		if (_metadata->exit_code != start_code)
			break;
	}
	if (s.no_node)
		TH_LOG("%u absorbed faults left the part without its /dev node (devtmpfs); it worked through a copy",
		       s.no_node);
	EXPECT_EQ(0, part_rebind());
}

/*
 * trn_pci's remove of the Trn3 under an open file, each of its fault
 * points failing: those with trn_pci_remove() on their stack but not the
 * core's trn_device_unregister() (del_device_while_open's on the
 * simulator). All of the unbind's, 25 under trn_pci_remove() and 32 in
 * all with the driver core's uevents and sysfs, take four to five
 * minutes on the debug kernel: TRN_FAULTS_EVERY_POINT=1 runs them.
 */
TEST_F_TIMEOUT(faults, part_unbind_while_open, 1800)
{
	static const struct fault_op op = {
		.name = "unbind the Trn3 with an open file",
		.allowed = { ENOMEM, EFAULT },
		.prepare = prepare_unbind_open,
		.run = run_sysfs_write,
		.check_ok = check_unbind_open_ok,
		.check_failed = check_unbind_open_failed,
		.undo = undo_unbind_open,
	};
	struct fault_result r;
	struct op_state s;

	if (!dut_is_part())
		SKIP(return, "a part's test: runs with TRN_TEST_DEVICE=part");
	if (!self->every_point) {
		ASSERT_EQ(0, aim_at_function(self->saved, &self->nsaved,
					     "require", "trn_pci_remove"));
		ASSERT_EQ(0, aim_at_function(self->saved, &self->nsaved,
					     "reject",
					     "trn_device_unregister"));
	}
	init_state(&s);
	ASSERT_EQ(0, trn3_addr(s.pci_addr, sizeof(s.pci_addr)));
	ASSERT_EQ(0, part_rebind());
	fault_loop(_metadata, self, &op, &s, &r);
	EXPECT_EQ(0, part_rebind());
}

TEST_F_TIMEOUT(faults, new_device, 900)
{
	static const struct fault_op op = {
		.name = "new_device",
		.allowed = { ENOMEM, ENODEV, EFAULT },
		.prepare = prepare_new,
		.run = run_sysfs_write,
		.check_ok = check_new_ok,
		.undo = undo_new,
	};
	struct fault_result r;
	struct op_state s;

	SIMULATOR_ONLY("creates simulated devices");
	AVOID_KNOWN_BUG(BUG_DRM_MINOR);
	init_state(&s);
	s.id = FIRST_ID;
	s.cmd = "950 2 16 2";
	/* It allocates: a test that reaches no point injects nothing. */
	if (fault_loop(_metadata, self, &op, &s, &r)) {
		if (s.no_node)
			TH_LOG("%u absorbed faults left the device without its /dev node (devtmpfs); it worked through a copy",
			       s.no_node);
		EXPECT_LT(0, r.points)
			TH_LOG("new_device reached no fault point: is injection working?");
		EXPECT_LT(0, r.failed);
	}
}

TEST_F_TIMEOUT(faults, del_device, 900)
{
	static const struct fault_op op = {
		.name = "del_device",
		.allowed = { ENOMEM, EFAULT },
		.prepare = prepare_del,
		.run = run_sysfs_write,
		.check_ok = check_del_ok,
		.check_failed = check_del_failed,
		.undo = undo_new,
	};
	struct fault_result r;
	struct op_state s;

	SIMULATOR_ONLY("deletes a simulated device");
	init_state(&s);
	s.id = FIRST_ID + 1;
	s.cmd = "951";
	fault_loop(_metadata, self, &op, &s, &r);
}

TEST_F_TIMEOUT(faults, del_device_while_open, 900)
{
	static const struct fault_op op = {
		.name = "del_device with an open file",
		.allowed = { ENOMEM, EFAULT },
		.prepare = prepare_del_open,
		.run = run_sysfs_write,
		.check_ok = check_del_open_ok,
		.check_failed = check_del_open_failed,
		.undo = undo_del_open,
	};
	struct fault_result r;
	struct op_state s;

	SIMULATOR_ONLY("deletes a simulated device");
	init_state(&s);
	s.id = FIRST_ID + 2;
	s.cmd = "952";
	fault_loop(_metadata, self, &op, &s, &r);
}

/*
 * open() of a device that is being deleted: its node is gone but the DRM
 * device lives on while a file is open, so open through a copy of the node.
 */
TEST_F_TIMEOUT(faults, open_removed_device, 600)
{
	static const struct fault_op op = {
		.name = "open of a removed device",
		.expect = -ENODEV,
		.allowed = { ENOMEM, EFAULT },
		.run = run_open_copy,
	};
	struct fault_result r;
	struct op_state s;
	struct stat st;
	int keep;

	SIMULATOR_ONLY("deletes a simulated device");
	init_state(&s);
	ASSERT_EQ(0, sim_new(FIRST_ID + 3, 1, 1, 1));
	ASSERT_EQ(0, open_device(&s, FIRST_ID + 3));
	keep = open(s.node, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, keep);
	ASSERT_EQ(0, stat(s.node, &st));
	unlink(NODE_COPY);
	ASSERT_EQ(0, mknod(NODE_COPY, S_IFCHR | 0600, st.st_rdev));
	ASSERT_EQ(0, sim_del(FIRST_ID + 3));

	fault_loop(_metadata, self, &op, &s, &r);
	close(keep);
	unlink(NODE_COPY);
}

/*
 * Loading trn_sim: its bus, driver and debugfs (num_devices=0; creating
 * devices is new_device's path, and the two known bugs cannot both be kept
 * out of one run), then with two devices, which only runs with
 * TRN_FAULTS_KNOWN_BUGS=1. Injection is aimed at module code.
 */
static void module_load_test(struct __test_metadata *_metadata,
			     FIXTURE_DATA(faults) *self, const char *params)
{
	char name[64];
	struct fault_op op = {
		.name = name,
		/*
		 * EINVAL: the module loader's module_add_driver() says so
		 * when it cannot make the module's drivers directory.
		 */
		.allowed = { ENOMEM, EFAULT, ENODEV, EINVAL },
		.run = run_module_load,
		.check_ok = check_module_ok,
		.check_failed = check_module_failed,
		.undo = undo_module_load,
	};
	char path[PATH_MAX];
	struct fault_result r;
	struct op_state s;
	int ret;

	snprintf(name, sizeof(name), "load trn_sim %s", params);
	init_state(&s);
	s.cmd = params;
	ASSERT_EQ(0, copy_module(self->module_dir, "trn_sim", path,
				 sizeof(path)));
	s.module_dir = MODULE_COPY;
	ret = focus_on_modules(self->saved, &self->nsaved);
	if (ret)
		SKIP(return, "cannot aim injection at module code: %s",
		     strerror(-ret));
	ASSERT_EQ(0, module_unload("trn_sim"));
	fault_loop(_metadata, self, &op, &s, &r);
	EXPECT_EQ(0, module_load(self->module_dir, "trn_sim", "num_devices=1"));
}

TEST_F_TIMEOUT(faults, module_load, 1800)
{
	SIMULATOR_ONLY("loads trn_sim");
	if (!self->module_dir)
		SKIP(return, "TRN_MODULE_DIR is not set");
	AVOID_KNOWN_BUG(BUG_BUS_REGISTER);
	module_load_test(_metadata, self, "num_devices=0");
}

TEST_F_TIMEOUT(faults, module_load_devices, 1800)
{
	SIMULATOR_ONLY("loads trn_sim");
	if (!self->module_dir)
		SKIP(return, "TRN_MODULE_DIR is not set");
	if (!self->known_bugs)
		SKIP(return, "meets both known bugs: TRN_FAULTS_KNOWN_BUGS=1 runs it");
	module_load_test(_metadata, self, "num_devices=2");
}

TEST_F_TIMEOUT(faults, module_unload, 1800)
{
	static const struct fault_op op = {
		.name = "unload trn_sim",
		.allowed = { ENOMEM, EFAULT },
		.prepare = prepare_module_unload,
		.run = run_module_unload,
		.check_failed = check_unload_failed,
		.undo = undo_module_load,
	};
	char path[PATH_MAX];
	struct fault_result r;
	struct op_state s;

	SIMULATOR_ONLY("unloads trn_sim");
	if (!self->module_dir)
		SKIP(return, "TRN_MODULE_DIR is not set");
	init_state(&s);
	ASSERT_EQ(0, copy_module(self->module_dir, "trn_sim", path,
				 sizeof(path)));
	s.module_dir = MODULE_COPY;
	ASSERT_EQ(0, module_unload("trn_sim"));
	fault_loop(_metadata, self, &op, &s, &r);
	EXPECT_EQ(0, module_load(self->module_dir, "trn_sim", "num_devices=1"));
}

/*
 * The fence signalling path under fault injection and memory pressure.
 * Nothing between a job's submission and its fences signalling may
 * allocate (run_job, the simulator's engine, retiring, the timeout
 * handler, the ban); lockdep checks that statically on this lane, as
 * every one of those paths is annotated with dma_fence_begin_signalling().
 * This drives all of them while a hog keeps the guest short of memory and
 * a random tenth of this thread's allocations fail: submissions may fail
 * (ENOMEM, cleanly: nothing queued), but every job that was queued must
 * finish, with the right data or a device error of its own, the hanging
 * one must time out and ban its context, and the device must end idle
 * with every job accounted for.
 */
#define PRESSURE_DEV	954
#define PRESSURE_JOBS	600

static pid_t start_hog(size_t leave_mib)
{
	long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	size_t want, i;
	pid_t pid;

	want = (size_t)pages * (size_t)psz;
	if (want <= (leave_mib << 20))
		return 0;
	want -= leave_mib << 20;
	fflush(NULL);
	pid = fork();
	if (pid)
		return pid;
	for (i = 0; i < want; i += 64 << 20) {
		size_t len = want - i < (64 << 20) ? want - i : 64 << 20;
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			break;
		memset(m, 0x5a, len);
	}
	pause();
	_exit(0);
}

static int make_it_fail(int on)
{
	return sysfs_write("/proc/thread-self/make-it-fail", on ? "1" : "0");
}

/*
 * Turning injection off is itself a write under injection, which may fail
 * (and leave it on): try until it takes.
 */
static void stop_failing(void)
{
	char buf[8];

	while (make_it_fail(0) ||
	       read_file("/proc/thread-self/make-it-fail", buf, sizeof(buf)) < 0 ||
	       buf[0] != '0')
		;
}

TEST_F_TIMEOUT(faults, signalling_under_pressure, 900)
{
	static const char *const prob[][2] = {
		{ "failslab/probability", "10" },
		{ "failslab/interval", "1" },
		{ "failslab/times", "-1" },
		{ "fail_page_alloc/probability", "10" },
		{ "fail_page_alloc/interval", "1" },
		{ "fail_page_alloc/times", "-1" },
	};
	struct drm_trn_queue_create q[4], hq;
	bool wrote[PRESSURE_JOBS] = { false };
	struct exec_counters c0, c = { 0 };
	struct host_bo cmd, data;
	uint64_t old_timeout, last[4] = { 0 };
	unsigned int i, queued = 0, refused = 0, k, dev;
	uint32_t bos[2];
	struct cmds cs;
	char path[160];
	pid_t hog;
	int fd, ret;

	if (dut_is_part()) {
		/* The part's own timeout (trn's default) bounds the hang. */
		dev = DUT_ID;
		fd = dut_open();
	} else {
		dev = PRESSURE_DEV;
		ASSERT_EQ(0, trn_param_get("job_timeout_ms", &old_timeout));
		ASSERT_EQ(0, trn_param_set("job_timeout_ms", 500));
		ret = sim_new(dev, 2, 64, 2);
		trn_param_set("job_timeout_ms", old_timeout);
		ASSERT_EQ(0, ret);
		fd = sim_open(dev);
	}
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, host_bo_new(fd, 256 << 10, &cmd));
	ASSERT_EQ(0, host_bo_new(fd, 64 << 10, &data));
	bos[0] = cmd.handle;
	bos[1] = data.handle;
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, queue_create(fd, i % 2, DRM_TRN_PRIORITY_NORMAL,
					  &q[i]));
	cmds_init(&cs, cmd.map, cmd.va, cmd.size);
	ASSERT_EQ(0, exec_counters(dev, &c0));

	for (i = 0; i < ARRAY_SIZE(prob); i++) {
		snprintf(path, sizeof(path), DEBUGFS "/%s", prob[i][0]);
		if (!access(path, W_OK))
			ASSERT_EQ(0, save_and_set(self->saved, &self->nsaved,
						  path, prob[i][1]));
	}
	hog = start_hog(96);
	ASSERT_LE(0, hog);

	ASSERT_EQ(0, make_it_fail(1));
	for (i = 0; i < PRESSURE_JOBS; i++) {
		struct drm_trn_job j;
		size_t from = cs.len;
		uint32_t slot = i % 1024;

		if (cs.len + 256 > cs.cap)
			break;
		switch (i % 3) {
		case 0:
			cmds_write32(&cs, data.va + 4 * slot, 0x1000 + i);
			break;
		case 1:
			cmds_fill(&cs, data.va + 8192 + 64 * (i % 64), 0x77, 64);
			break;
		default:
			cmds_copy(&cs, data.va + 32768 + 64 * (i % 64),
				  data.va + 8192, 64);
			break;
		}
		job_init(&j, cs.va + from, (uint32_t)(cs.len - from));
		j.bo_handles = (uintptr_t)bos;
		j.bo_count = 2;
		k = i % 4;
		ret = submit_jobs(fd, q[k].queue_id, &j, 1);
		if (!ret) {
			queued++;
			last[k] = j.seqno;
			wrote[i] = i % 3 == 0;
		} else if (ret == -ENOMEM || ret == -EINTR || ret == -EAGAIN) {
			refused++;
			cs.len = from;
		} else {
			stop_failing();
			ASSERT_EQ(0, ret) TH_LOG("job %u", i);
		}
	}
	/*
	 * Then a hang on a queue of its own, once the rest finished (the
	 * ban would cancel what is left): the timeout, reset and ban under
	 * pressure.
	 */
	stop_failing();
	for (k = 0; k < 4; k++)
		if (last[k])
			ASSERT_EQ(0, syncobj_wait_point(fd, q[k].syncobj,
							last[k], 120000));
	ASSERT_EQ(0, queue_create(fd, 0, DRM_TRN_PRIORITY_NORMAL, &hq));
	{
		struct drm_trn_job j;
		size_t from = cs.len;

		cmds_sem(&cs, true, 201, 1);
		job_init(&j, cs.va + from, (uint32_t)(cs.len - from));
		ASSERT_EQ(0, make_it_fail(1));
		do {
			ret = submit_jobs(fd, hq.queue_id, &j, 1);
		} while (ret == -ENOMEM);
		stop_failing();
		ASSERT_EQ(0, ret);
		queued++;
	}
	restore_faults(self->saved, self->nsaved);
	self->nsaved = 0;
	configure_faults(self->saved, &self->nsaved, "0");

	ret = exec_counters_idle(dev, 120000, &c);
	kill(hog, SIGKILL);
	waitpid(hog, NULL, 0);
	ASSERT_EQ(0, ret) TH_LOG("%u jobs queued, %u refused; submitted %llu completed %llu failed %llu",
				 queued, refused,
				 (unsigned long long)(c.submitted - c0.submitted),
				 (unsigned long long)(c.completed - c0.completed),
				 (unsigned long long)(c.failed - c0.failed));
	TH_LOG("%u jobs queued, %u submissions refused under injection",
	       queued, refused);
	EXPECT_EQ(c0.submitted + queued, c.submitted);
	/* The hang failed, and banned the context; nothing else failed. */
	EXPECT_EQ(c0.failed + 1, c.failed);
	EXPECT_EQ(c0.resets + 1, c.resets);
	for (k = 0; k < 4; k++) {
		struct drm_trn_queue_status st;

		if (!last[k])
			continue;
		EXPECT_EQ(1, timeline_fence_status(fd, q[k].syncobj, last[k]));
		ASSERT_EQ(0, queue_status(fd, q[k].queue_id, &st));
		EXPECT_EQ(last[k], st.completed_seqno);
		EXPECT_EQ(0, st.jobs_failed);
		EXPECT_EQ(DRM_TRN_QUEUE_BANNED, st.state);
	}
	for (i = 0; i < PRESSURE_JOBS; i++)
		if (wrote[i])
			ASSERT_EQ(0x1000 + i, ((uint32_t *)data.map)[i % 1024])
				TH_LOG("job %u", i);
	close(fd);
	if (dev == PRESSURE_DEV)
		sim_del(dev);
}

TEST_HARNESS_MAIN
