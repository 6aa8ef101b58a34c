// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * trn-top's samples: sysfs and fdinfo read into plain structures, and the
 * --json report computed from two of them.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trn-ls-fmt.h"
#include "trn-top-data.h"

const char *const top_status_names[TOP_STATUSES] = {
	"bad_opcode", "bad_size", "bad_align", "bad_arg", "call_depth",
	"mmu_fault", "timeout", "aborted", "unsupported", "device_error",
};

/*
 * A path from parts; a path too long for @buf is left empty (and names no
 * file) rather than cut to another file's name.
 */
static void __attribute__((format(printf, 3, 4)))
path_of(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size)
		buf[0] = '\0';
}

/* @src into @buf, cut to fit. */
static void copy_str(char *buf, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(buf, src, n);
	buf[n] = '\0';
}

/* Read a small file into @buf, terminated; its length or -errno. */
static ssize_t read_text(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

/* A one-line sysfs attribute, its newline dropped; "" if unreadable. */
static void read_line(const char *dir, const char *attr, char *buf,
		      size_t size)
{
	char path[PATH_MAX];

	path_of(path, sizeof(path), "%s/%s", dir, attr);
	if (read_text(path, buf, size) < 0)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

static uint64_t read_u64(const char *dir, const char *attr)
{
	char buf[32];

	read_line(dir, attr, buf, sizeof(buf));
	return strtoull(buf, NULL, 10);
}

/* hbm_stack_used: blank-separated numbers, one per stack. */
static void read_stacks(const char *dir, struct top_device *d)
{
	char buf[TOP_MAX_STACKS * 21 + 2], *p = buf, *end;

	read_line(dir, "hbm_stack_used", buf, sizeof(buf));
	while (d->nstacks < TOP_MAX_STACKS) {
		unsigned long long v = strtoull(p, &end, 10);

		if (end == p)
			break;
		d->stack_used[d->nstacks++] = v;
		p = end;
	}
}

/* The last component of the symlink @dir/@link into @buf ("" if none). */
static void link_name(const char *dir, const char *link, char *buf,
		      size_t size)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	path_of(path, sizeof(path), "%s/%s", dir, link);
	n = readlink(path, target, sizeof(target) - 1);
	buf[0] = '\0';
	if (n > 0) {
		const char *slash;

		target[n] = '\0';
		slash = strrchr(target, '/');
		copy_str(buf, size, slash ? slash + 1 : target);
	}
}

static int read_device(const char *sys_root, unsigned int minor,
		       struct top_device *d)
{
	char dir[PATH_MAX], attr[64], sub[PATH_MAX];
	unsigned int i;

	memset(d, 0, sizeof(*d));
	d->minor = minor;
	path_of(dir, sizeof(dir), "%s/class/accel/accel%u", sys_root, minor);
	link_name(dir, "device", d->bus_id, sizeof(d->bus_id));
	path_of(sub, sizeof(sub), "%s/device", dir);
	link_name(sub, "driver", d->driver, sizeof(d->driver));
	read_line(dir, "health", d->health, sizeof(d->health));
	read_line(dir, "health_reason", d->health_reason,
		  sizeof(d->health_reason));
	d->hbm_total = read_u64(dir, "hbm_total");
	d->hbm_used = read_u64(dir, "hbm_used");
	read_stacks(dir, d);
	d->host_pinned = read_u64(dir, "host_pinned");
	d->submitted = read_u64(dir, "jobs_submitted");
	d->completed = read_u64(dir, "jobs_completed");
	d->failed = read_u64(dir, "jobs_failed");
	for (i = 0; i < TOP_STATUSES; i++) {
		snprintf(attr, sizeof(attr), "jobs_failed_by_status/%s",
			 top_status_names[i]);
		d->failed_by[i] = read_u64(dir, attr);
	}
	d->resets = read_u64(dir, "resets");
	d->device_resets = read_u64(dir, "device_resets");
	d->bans = read_u64(dir, "bans");
	d->mmu_faults = read_u64(dir, "mmu_faults");
	d->coredumps = read_u64(dir, "coredumps");

	for (;;) {
		path_of(sub, sizeof(sub), "%s/cores/%u", dir, d->ncores);
		if (access(sub, F_OK))
			break;
		d->ncores++;
	}
	if (d->ncores) {
		d->cores = calloc(d->ncores, sizeof(*d->cores));
		if (!d->cores)
			return -ENOMEM;
	}
	for (i = 0; i < d->ncores; i++) {
		path_of(sub, sizeof(sub), "%s/cores/%u", dir, i);
		d->cores[i].busy_ns = read_u64(sub, "busy_ns");
		d->cores[i].jobs_completed = read_u64(sub, "jobs_completed");
		d->cores[i].jobs_failed = read_u64(sub, "jobs_failed");
		d->cores[i].jobs_timed_out = read_u64(sub, "jobs_timed_out");
	}
	return 0;
}

static int cmp_device(const void *a, const void *b)
{
	const struct top_device *x = a, *y = b;

	return (x->minor > y->minor) - (x->minor < y->minor);
}

/* Every accel node whose device is trn's (it has jobs_submitted). */
static int read_devices(struct top_sample *s, const char *sys_root)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	struct top_device *grown;
	struct dirent *e;
	unsigned int minor;
	size_t cap = 0;
	int ret = 0;
	DIR *d;

	path_of(dir, sizeof(dir), "%s/class/accel", sys_root);
	d = opendir(dir);
	if (!d)
		return 0;	/* no accel class: no devices */
	while ((e = readdir(d))) {
		if (sscanf(e->d_name, "accel%u", &minor) != 1)
			continue;
		path_of(path, sizeof(path), "%s/%s/jobs_submitted", dir,
			 e->d_name);
		if (access(path, F_OK))
			continue;
		if (s->ndevices == cap) {
			cap = cap ? cap * 2 : 8;
			grown = realloc(s->devices, cap * sizeof(*grown));
			if (!grown) {
				ret = -ENOMEM;
				break;
			}
			s->devices = grown;
		}
		ret = read_device(sys_root, minor, &s->devices[s->ndevices]);
		if (ret)
			break;
		s->ndevices++;
	}
	closedir(d);
	if (s->ndevices)
		qsort(s->devices, s->ndevices, sizeof(*s->devices),
		      cmp_device);
	return ret;
}

/* "123", "4 KiB", "2 MiB": drm-usage-stats sizes, in bytes. */
static uint64_t parse_size(const char *v)
{
	char *end;
	uint64_t n = strtoull(v, &end, 10);

	while (*end == ' ' || *end == '\t')
		end++;
	if (!strncmp(end, "KiB", 3))
		n <<= 10;
	else if (!strncmp(end, "MiB", 3))
		n <<= 20;
	else if (!strncmp(end, "GiB", 3))
		n <<= 30;
	return n;
}

static void parse_mem(struct top_mem *m, const char *kind, const char *v)
{
	uint64_t n = parse_size(v);

	if (!strcmp(kind, "total"))
		m->total = n;
	else if (!strcmp(kind, "shared"))
		m->shared = n;
	else if (!strcmp(kind, "resident"))
		m->resident = n;
	else if (!strcmp(kind, "active"))
		m->active = n;
}

/* The counters of a client's fdinfo, each a plain number. */
static const struct {
	const char *key;
	size_t offset;
} client_counters[] = {
	{ "drm-client-id", offsetof(struct top_client, client_id) },
	{ "trn-context", offsetof(struct top_client, context) },
	{ "trn-queues", offsetof(struct top_client, queues) },
	{ "trn-buffers", offsetof(struct top_client, buffers) },
	{ "trn-jobs-completed", offsetof(struct top_client, jobs_completed) },
	{ "trn-jobs-failed", offsetof(struct top_client, jobs_failed) },
	{ "trn-mmu-faults", offsetof(struct top_client, mmu_faults) },
	{ "trn-bans", offsetof(struct top_client, bans) },
};

/* One "key:\tvalue" line of a trn client. */
static int parse_key(struct top_client *c, const char *key, const char *v)
{
	char kind[16], region[16];
	unsigned int core;
	size_t i;

	for (i = 0; i < sizeof(client_counters) / sizeof(*client_counters); i++) {
		if (!strcmp(key, client_counters[i].key)) {
			*(uint64_t *)((char *)c + client_counters[i].offset) =
				strtoull(v, NULL, 10);
			return 0;
		}
	}
	if (sscanf(key, "drm-engine-core%u", &core) == 1 && core < 4096) {
		if (core >= c->ncores) {
			uint64_t *grown = realloc(c->engine_ns,
						  (core + 1) * sizeof(*grown));

			if (!grown)
				return -ENOMEM;
			memset(grown + c->ncores, 0,
			       (core + 1 - c->ncores) * sizeof(*grown));
			c->engine_ns = grown;
			c->ncores = core + 1;
		}
		c->engine_ns[core] = strtoull(v, NULL, 10);
	} else if (sscanf(key, "drm-%15[a-z]-%15s", kind, region) == 2) {
		if (!strcmp(region, "hbm"))
			parse_mem(&c->hbm, kind, v);
		else if (!strcmp(region, "host"))
			parse_mem(&c->host, kind, v);
	}
	return 0;
}

bool top_parse_fdinfo(const char *text, struct top_client *c)
{
	bool trn = false;
	const char *line;

	memset(c, 0, sizeof(*c));
	for (line = text; *line; ) {
		size_t len = strcspn(line, "\n");
		char key[64], val[128];
		const char *colon = memchr(line, ':', len);

		if (colon && (size_t)(colon - line) < sizeof(key)) {
			const char *v = colon + 1;
			size_t vlen;

			memcpy(key, line, (size_t)(colon - line));
			key[colon - line] = '\0';
			while (v < line + len && (*v == ' ' || *v == '\t'))
				v++;
			vlen = (size_t)(line + len - v);
			if (vlen >= sizeof(val))
				vlen = sizeof(val) - 1;
			memcpy(val, v, vlen);
			val[vlen] = '\0';
			if (!strcmp(key, "drm-driver"))
				trn = !strcmp(val, "trn");
			else if (parse_key(c, key, val))
				break;
		}
		line += len;
		if (*line)
			line++;
	}
	if (!trn) {
		free(c->engine_ns);
		c->engine_ns = NULL;
		c->ncores = 0;
	}
	return trn;
}

const struct top_client *top_find_client(const struct top_sample *prev,
					 const struct top_client *c)
{
	size_t i;

	for (i = 0; prev && i < prev->nclients; i++)
		if (prev->clients[i].pid == c->pid &&
		    prev->clients[i].minor == c->minor &&
		    prev->clients[i].client_id == c->client_id)
			return &prev->clients[i];
	return NULL;
}

const struct top_device *top_find_device(const struct top_sample *prev,
					 unsigned int minor)
{
	size_t i;

	for (i = 0; prev && i < prev->ndevices; i++)
		if (prev->devices[i].minor == minor)
			return &prev->devices[i];
	return NULL;
}

/* Add @c unless the process already has that client (a dup()ed fd). */
static int add_client(struct top_sample *s, struct top_client *c,
		      size_t *cap)
{
	struct top_client *grown;

	if (top_find_client(s, c)) {
		free(c->engine_ns);
		return 0;
	}
	if (s->nclients == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		grown = realloc(s->clients, *cap * sizeof(*grown));
		if (!grown) {
			free(c->engine_ns);
			return -ENOMEM;
		}
		s->clients = grown;
	}
	s->clients[s->nclients++] = *c;
	return 0;
}

/* The trn clients among the open files of process @pid. */
static int read_process(struct top_sample *s, const char *proc_root,
			int pid, size_t *cap)
{
	char dir[PATH_MAX], path[PATH_MAX + 300], target[PATH_MAX];
	char comm[32], text[8192];
	struct dirent *e;
	bool any = false;
	int ret = 0;
	DIR *d;

	path_of(dir, sizeof(dir), "%s/%d/fd", proc_root, pid);
	d = opendir(dir);
	if (!d) {
		if (errno == EACCES)
			s->hidden++;
		return 0;
	}
	comm[0] = '\0';
	while (!ret && (e = readdir(d))) {
		struct top_client c;
		unsigned int minor;
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		path_of(path, sizeof(path), "%s/%s", dir, e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (sscanf(target, "/dev/accel/accel%u", &minor) != 1)
			continue;
		path_of(path, sizeof(path), "%s/%d/fdinfo/%s", proc_root, pid,
			 e->d_name);
		if (read_text(path, text, sizeof(text)) < 0)
			continue;
		if (!top_parse_fdinfo(text, &c))
			continue;
		if (!any) {
			path_of(path, sizeof(path), "%s/%d", proc_root, pid);
			read_line(path, "comm", comm, sizeof(comm));
			any = true;
		}
		c.pid = pid;
		c.minor = minor;
		copy_str(c.comm, sizeof(c.comm), comm);
		ret = add_client(s, &c, cap);
	}
	closedir(d);
	return ret;
}

int top_sample_take(struct top_sample *s, const char *proc_root,
		    const char *sys_root, uint64_t time_ns)
{
	struct dirent *e;
	size_t cap = 0;
	int ret;
	DIR *d;

	memset(s, 0, sizeof(*s));
	s->time_ns = time_ns;
	ret = read_devices(s, sys_root);
	if (ret)
		goto err;
	d = opendir(proc_root);
	if (!d) {
		ret = -errno;
		goto err;
	}
	while (!ret && (e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0 || pid > INT_MAX)
			continue;
		ret = read_process(s, proc_root, (int)pid, &cap);
	}
	closedir(d);
	if (ret)
		goto err;
	return 0;
err:
	top_sample_free(s);
	return ret;
}

void top_sample_free(struct top_sample *s)
{
	size_t i;

	for (i = 0; i < s->ndevices; i++)
		free(s->devices[i].cores);
	for (i = 0; i < s->nclients; i++)
		free(s->clients[i].engine_ns);
	free(s->devices);
	free(s->clients);
	memset(s, 0, sizeof(*s));
}

void top_sample_only(struct top_sample *s, unsigned int minor)
{
	size_t i, n = 0;

	for (i = 0; i < s->ndevices; i++) {
		if (s->devices[i].minor == minor)
			s->devices[n++] = s->devices[i];
		else
			free(s->devices[i].cores);
	}
	s->ndevices = n;
	for (i = 0, n = 0; i < s->nclients; i++) {
		if (s->clients[i].minor == minor)
			s->clients[n++] = s->clients[i];
		else
			free(s->clients[i].engine_ns);
	}
	s->nclients = n;
}

double top_ratio(uint64_t before, uint64_t now, uint64_t period_ns)
{
	if (!period_ns || now < before)
		return 0.0;
	return (double)(now - before) / (double)period_ns;
}

double top_client_busy(const struct top_client *c,
		       const struct top_client *before, uint64_t period_ns)
{
	double sum = 0.0;
	unsigned int i;

	if (!before)
		return 0.0;
	for (i = 0; i < c->ncores; i++)
		sum += top_ratio(i < before->ncores ? before->engine_ns[i] : 0,
				 c->engine_ns[i], period_ns);
	return sum;
}

/* Counters a report gives as per-second rates, and the period. */
static double per_s(uint64_t before, uint64_t now, uint64_t period_ns)
{
	return top_ratio(before, now, period_ns) * 1e9;
}

static void json_mem(FILE *f, const char *name, const struct top_mem *m)
{
	fprintf(f, "\"%s\":{\"total\":%" PRIu64 ",\"shared\":%" PRIu64
		",\"resident\":%" PRIu64 ",\"active\":%" PRIu64 "}",
		name, m->total, m->shared, m->resident, m->active);
}

static void json_device(FILE *f, const struct top_device *d,
			const struct top_device *b, uint64_t period)
{
	unsigned int i;

	fprintf(f, "{\"minor\":%u,\"node\":\"/dev/accel/accel%u\",\"bus_id\":",
		d->minor, d->minor);
	json_put_string(f, d->bus_id);
	fputs(",\"driver\":", f);
	json_put_string(f, d->driver);
	fputs(",\"health\":", f);
	json_put_string(f, d->health);
	fputs(",\"health_reason\":", f);
	json_put_string(f, d->health_reason);
	fprintf(f, ",\"memory\":{\"hbm_total\":%" PRIu64 ",\"hbm_used\":%" PRIu64
		",\"host_pinned\":%" PRIu64 ",\"hbm_stack_used\":[", d->hbm_total,
		d->hbm_used, d->host_pinned);
	for (i = 0; i < d->nstacks; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", d->stack_used[i]);
	fputs("]}", f);
	fprintf(f, ",\"execution\":{\"submitted\":%" PRIu64
		",\"completed\":%" PRIu64 ",\"failed\":%" PRIu64
		",\"failed_by_status\":{", d->submitted, d->completed,
		d->failed);
	for (i = 0; i < TOP_STATUSES; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "",
			top_status_names[i], d->failed_by[i]);
	fprintf(f, "},\"resets\":%" PRIu64 ",\"device_resets\":%" PRIu64
		",\"bans\":%" PRIu64 ",\"mmu_faults\":%" PRIu64
		",\"coredumps\":%" PRIu64, d->resets, d->device_resets,
		d->bans, d->mmu_faults, d->coredumps);
	if (b)
		fprintf(f, ",\"completed_per_s\":%.1f,\"failed_per_s\":%.1f",
			per_s(b->completed, d->completed, period),
			per_s(b->failed, d->failed, period));
	fputs("},\"cores\":[", f);
	for (i = 0; i < d->ncores; i++) {
		const struct top_core *c = &d->cores[i];

		fprintf(f, "%s{\"core\":%u,\"busy_ns\":%" PRIu64
			",\"jobs_completed\":%" PRIu64 ",\"jobs_failed\":%" PRIu64
			",\"jobs_timed_out\":%" PRIu64, i ? "," : "", i,
			c->busy_ns, c->jobs_completed, c->jobs_failed,
			c->jobs_timed_out);
		if (b && i < b->ncores)
			fprintf(f, ",\"utilization\":%.4f",
				top_ratio(b->cores[i].busy_ns, c->busy_ns,
					  period));
		fputc('}', f);
	}
	fputs("]}", f);
}

static void json_client(FILE *f, const struct top_client *c,
			const struct top_client *b, uint64_t period)
{
	unsigned int i;

	fprintf(f, "{\"pid\":%d,\"comm\":", c->pid);
	json_put_string(f, c->comm);
	fprintf(f, ",\"minor\":%u,\"client_id\":%" PRIu64 ",\"context\":%" PRIu64
		",\"queues\":%" PRIu64 ",\"buffers\":%" PRIu64 ",\"memory\":{",
		c->minor, c->client_id, c->context, c->queues, c->buffers);
	json_mem(f, "hbm", &c->hbm);
	fputc(',', f);
	json_mem(f, "host", &c->host);
	fprintf(f, "},\"jobs\":{\"completed\":%" PRIu64 ",\"failed\":%" PRIu64,
		c->jobs_completed, c->jobs_failed);
	if (b)
		fprintf(f, ",\"completed_per_s\":%.1f",
			per_s(b->jobs_completed, c->jobs_completed, period));
	fprintf(f, "},\"errors\":{\"mmu_faults\":%" PRIu64 ",\"bans\":%" PRIu64
		"}", c->mmu_faults, c->bans);
	if (b)
		fprintf(f, ",\"utilization\":%.4f",
			top_client_busy(c, b, period));
	fputs(",\"cores\":[", f);
	for (i = 0; i < c->ncores; i++) {
		fprintf(f, "%s{\"core\":%u,\"engine_ns\":%" PRIu64, i ? "," : "",
			i, c->engine_ns[i]);
		if (b)
			fprintf(f, ",\"utilization\":%.4f",
				top_ratio(i < b->ncores ? b->engine_ns[i] : 0,
					  c->engine_ns[i], period));
		fputc('}', f);
	}
	fputs("]}", f);
}

void top_print_json(FILE *f, const struct top_sample *now,
		    const struct top_sample *prev)
{
	uint64_t period = prev ? now->time_ns - prev->time_ns : 0;
	size_t i;

	fprintf(f, "{\"trn_top\":1,\"time_ns\":%" PRIu64 ",\"period_ns\":%" PRIu64
		",\"hidden_processes\":%zu,\"devices\":[", now->time_ns, period,
		now->hidden);
	for (i = 0; i < now->ndevices; i++) {
		if (i)
			fputc(',', f);
		json_device(f, &now->devices[i],
			    top_find_device(prev, now->devices[i].minor), period);
	}
	fputs("],\"clients\":[", f);
	for (i = 0; i < now->nclients; i++) {
		const struct top_client *c = &now->clients[i];

		if (i)
			fputc(',', f);
		/* A client new since @prev has no rates yet. */
		json_client(f, c, top_find_client(prev, c), period);
	}
	fputs("]}\n", f);
}
