// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * trn-top: a live view of trn devices and of the processes using them,
 * from sysfs and the fdinfo of accel nodes (trn-top-data.c), as a
 * terminal screen, as plain text (--batch) or as JSON reports (--json).
 * Needs no privileges: an unprivileged user sees every device and their
 * own processes. Documentation/operators.md.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef TRN_TOP_CURSES
#include <curses.h>
#endif

#include "trn-ls-fmt.h"
#include "trn-top-data.h"

enum sort_key { SORT_BUSY, SORT_HBM, SORT_HOST, SORT_JOBS, SORT_PID, SORT_N };
static const char *const sort_names[SORT_N] = {
	"busy", "hbm", "host", "jobs", "pid",
};

struct opts {
	bool json, batch;
	bool interval_given;
	double interval;	/* seconds */
	long count;		/* reports; 0: until stopped */
	long device;		/* minor, or -1 for all */
	enum sort_key sort;
	const char *proc_root, *sys_root;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [OPTION]...\n"
		"Show trn devices and the processes using them.\n"
		"\n"
		"  -j, --json          print JSON reports (one line each) instead of the screen\n"
		"  -b, --batch         print the screen as plain text, without terminal control\n"
		"  -i, --interval SEC  seconds between samples (default 1; fractions allowed)\n"
		"  -n, --count N       print N reports, then exit (default with --json or\n"
		"                      --batch: 1, or until stopped if --interval is given)\n"
		"  -d, --device MINOR  only /dev/accel/accelMINOR\n"
		"  -s, --sort KEY      order processes by busy, hbm, host, jobs or pid\n"
		"                      (default busy)\n"
		"  -h, --help          show this help\n"
		"\n"
		"Keys on the screen: q quits, s changes the order, d cycles through the\n"
		"devices, + and - change the interval.\n"
		"\n"
		"Exit status: 0, 1 on a failure to read the system, 2 on bad usage.\n",
		prog);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_s(double s)
{
	struct timespec ts = {
		.tv_sec = (time_t)s,
		.tv_nsec = (long)((s - floor(s)) * 1e9),
	};

	while (!stop && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int take(struct top_sample *s, const struct opts *o)
{
	int ret = top_sample_take(s, o->proc_root, o->sys_root, now_ns());

	if (ret)
		fprintf(stderr, "trn-top: cannot read %s and %s: %s\n",
			o->proc_root, o->sys_root, strerror(-ret));
	else if (o->device >= 0 && (o->json || o->batch))
		top_sample_only(s, (unsigned int)o->device);
	return ret;
}

/* ------------------------------------------------------------ the view */

/* Lines of the view, handed to the screen or to stdout. */
struct view {
	void (*line)(struct view *v, bool bold, const char *text);
	unsigned int width;
	FILE *out;
};

static void view_printf(struct view *v, bool bold, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void view_printf(struct view *v, bool bold, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	v->line(v, bold, buf);
}

static void text_line(struct view *v, bool bold, const char *text)
{
	(void)bold;
	fprintf(v->out, "%s\n", text);
}

/* The sort key's value of a client; larger first (but pid: smaller). */
static double sort_value(const struct top_client *c,
			 const struct top_sample *prev, uint64_t period,
			 enum sort_key key)
{
	const struct top_client *b = top_find_client(prev, c);

	switch (key) {
	case SORT_BUSY:
		return top_client_busy(c, b, period);
	case SORT_HBM:
		return (double)c->hbm.resident;
	case SORT_HOST:
		return (double)c->host.resident;
	case SORT_JOBS:
		return b ? top_ratio(b->jobs_completed, c->jobs_completed,
				     period) : 0.0;
	case SORT_PID:
	default:
		return -(double)c->pid;
	}
}

struct sort_ctx {
	const struct top_sample *now, *prev;
	uint64_t period;
	enum sort_key key;
};

static struct sort_ctx sort_ctx;

static int cmp_client(const void *a, const void *b)
{
	const struct top_client *x = *(const struct top_client *const *)a;
	const struct top_client *y = *(const struct top_client *const *)b;
	double vx = sort_value(x, sort_ctx.prev, sort_ctx.period, sort_ctx.key);
	double vy = sort_value(y, sort_ctx.prev, sort_ctx.period, sort_ctx.key);

	if (vx != vy)
		return vx < vy ? 1 : -1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

static void bar(char *buf, size_t size, double ratio, unsigned int width)
{
	unsigned int i, fill;

	if (ratio < 0)
		ratio = 0;
	if (ratio > 1)
		ratio = 1;
	fill = (unsigned int)(ratio * width + 0.5);
	if (size < width + 3)
		return;
	buf[0] = '[';
	for (i = 0; i < width; i++)
		buf[1 + i] = i < fill ? '#' : ' ';
	buf[1 + width] = ']';
	buf[2 + width] = '\0';
}

/*
 * Cells on lines of their own below a device's, a new line whenever the
 * next cell would pass the view's width or the buffer.
 */
struct cells {
	char line[512];
	size_t len;
};

static void cells_flush(struct view *v, struct cells *c)
{
	if (c->len)
		view_printf(v, false, "      %s", c->line);
	c->len = 0;
}

static void cells_add(struct view *v, struct cells *c, const char *cell)
{
	size_t n = strlen(cell);

	if (c->len + n > v->width || c->len + n >= sizeof(c->line))
		cells_flush(v, c);
	c->len += (size_t)snprintf(c->line + c->len, sizeof(c->line) - c->len,
				   "%s", cell);
}

/* Each HBM stack's use, where the device has more than one. */
static void render_stacks(struct view *v, const struct top_device *d)
{
	struct cells c = { .len = 0 };
	char used[32], cell[48];
	unsigned int i;

	if (d->nstacks < 2)
		return;
	for (i = 0; i < d->nstacks; i++) {
		format_size(d->stack_used[i], used, sizeof(used));
		snprintf(cell, sizeof(cell), "  stack%-2u %10s", i, used);
		cells_add(v, &c, cell);
	}
	cells_flush(v, &c);
}

static void render_device(struct view *v, const struct top_device *d,
			  const struct top_device *b, uint64_t period)
{
	char used[32], total[32], cell[64], meter[32];
	struct cells c = { .len = 0 };
	unsigned int i;

	format_size(d->hbm_used, used, sizeof(used));
	format_size(d->hbm_total, total, sizeof(total));
	view_printf(v, false,
		    "accel%-3u %-14.14s %-9.9s %10s / %-10s %8.1f %8.1f %7llu %7llu %6llu",
		    d->minor, d->bus_id, d->health, used, total,
		    b ? top_ratio(b->completed, d->completed, period) * 1e9 : 0.0,
		    b ? top_ratio(b->failed, d->failed, period) * 1e9 : 0.0,
		    (unsigned long long)(d->resets + d->device_resets),
		    (unsigned long long)d->mmu_faults,
		    (unsigned long long)d->bans);
	if (d->health_reason[0])
		view_printf(v, false, "         %s", d->health_reason);
	render_stacks(v, d);
	for (i = 0; i < d->ncores; i++) {
		double u = b && i < b->ncores ?
			   top_ratio(b->cores[i].busy_ns, d->cores[i].busy_ns,
				     period) : 0.0;

		bar(meter, sizeof(meter), u, 10);
		snprintf(cell, sizeof(cell), "  core%-2u %s %5.1f%%", i, meter,
			 u * 100);
		cells_add(v, &c, cell);
	}
	cells_flush(v, &c);
}

static void render(struct view *v, const struct top_sample *now,
		   const struct top_sample *prev, const struct opts *o)
{
	uint64_t period = prev ? now->time_ns - prev->time_ns : 0;
	const struct top_client **rows;
	size_t i, n = 0, ndev = 0;

	for (i = 0; i < now->ndevices; i++)
		ndev += o->device < 0 || now->devices[i].minor == o->device;
	view_printf(v, true,
		    "trn-top - %zu device%s, %zu client%s, every %.1f s, sorted by %s%s",
		    ndev, ndev == 1 ? "" : "s", now->nclients,
		    now->nclients == 1 ? "" : "s", o->interval,
		    sort_names[o->sort],
		    now->hidden ? " (other users' processes hidden)" : "");
	view_printf(v, true,
		    "DEVICE   BUS            HEALTH          HBM USED / TOTAL   JOBS/S FAILED/S  RESETS  FAULTS   BANS");
	for (i = 0; i < now->ndevices; i++) {
		const struct top_device *d = &now->devices[i];

		if (o->device >= 0 && d->minor != o->device)
			continue;
		render_device(v, d, top_find_device(prev, d->minor), period);
	}
	if (!ndev)
		view_printf(v, false, "(no trn devices)");
	view_printf(v, false, "%s", "");

	rows = calloc(now->nclients ? now->nclients : 1, sizeof(*rows));
	if (!rows)
		return;
	for (i = 0; i < now->nclients; i++)
		if (o->device < 0 || now->clients[i].minor == o->device)
			rows[n++] = &now->clients[i];
	sort_ctx = (struct sort_ctx){ now, prev, period, o->sort };
	qsort(rows, n, sizeof(*rows), cmp_client);
	view_printf(v, true,
		    "    PID COMM             DEV   CTX QUEUES        HBM       HOST  BUSY%%   JOBS/S   FAILED FAULTS  BANS");
	for (i = 0; i < n; i++) {
		const struct top_client *c = rows[i];
		const struct top_client *b = top_find_client(prev, c);
		char hbm[32], host[32];

		format_size(c->hbm.resident, hbm, sizeof(hbm));
		format_size(c->host.resident, host, sizeof(host));
		view_printf(v, false,
			    "%7d %-16.16s %3u %5llu %6llu %10s %10s %6.1f %8.1f %8llu %6llu %5llu",
			    c->pid, c->comm, c->minor,
			    (unsigned long long)c->context,
			    (unsigned long long)c->queues, hbm, host,
			    top_client_busy(c, b, period) * 100,
			    b ? top_ratio(b->jobs_completed, c->jobs_completed,
					  period) * 1e9 : 0.0,
			    (unsigned long long)c->jobs_failed,
			    (unsigned long long)c->mmu_faults,
			    (unsigned long long)c->bans);
	}
	if (!n)
		view_printf(v, false, "(no processes using trn devices%s)",
			    now->hidden ? " that you may see" : "");
	free(rows);
}

/* ------------------------------------------------ --json and --batch */

static int run_reports(const struct opts *o)
{
	struct top_sample prev, now;
	struct view v = { .line = text_line, .width = 100, .out = stdout };
	long printed = 0;
	int ret;

	ret = take(&prev, o);
	if (ret)
		return 1;
	while (!stop) {
		sleep_s(o->interval);
		if (stop)
			break;
		ret = take(&now, o);
		if (ret) {
			top_sample_free(&prev);
			return 1;
		}
		if (o->json) {
			top_print_json(stdout, &now, &prev);
		} else {
			render(&v, &now, &prev, o);
			if (o->count != 1)
				putchar('\n');
		}
		fflush(stdout);
		top_sample_free(&prev);
		prev = now;
		if (o->count && ++printed >= o->count)
			break;
	}
	top_sample_free(&prev);
	return 0;
}

/* ------------------------------------------------------------ the screen */

#ifdef TRN_TOP_CURSES
static void screen_line(struct view *v, bool bold, const char *text)
{
	int y, x;

	(void)v;
	getyx(stdscr, y, x);
	(void)x;
	if (y >= LINES)
		return;
	if (bold)
		attron(A_BOLD);
	mvaddnstr(y, 0, text, COLS);
	if (bold)
		attroff(A_BOLD);
	move(y + 1, 0);
}

static long next_device(const struct top_sample *s, long cur)
{
	size_t i;

	/* all -> first -> ... -> last -> all */
	for (i = 0; i < s->ndevices; i++)
		if (cur < 0 || s->devices[i].minor > (unsigned long)cur)
			return s->devices[i].minor;
	return -1;
}

static void screen_render(const struct top_sample *now,
			  const struct top_sample *prev, const struct opts *o)
{
	struct view v = { .line = screen_line, .width = (unsigned int)COLS };

	erase();
	move(0, 0);
	render(&v, now, prev, o);
	refresh();
}

/*
 * A sample every interval, shown against the one before; a key shows the
 * same pair again at once in its new order or selection.
 */
static int run_screen(struct opts *o)
{
	struct top_sample prev, now;
	long shown = 0;
	int ch, ret = 0;

	if (take(&prev, o))
		return 1;
	initscr();
	cbreak();
	noecho();
	curs_set(0);
	keypad(stdscr, TRUE);
	/* The first figures come a fifth of a second after the start. */
	timeout(200);
	ch = getch();
	if (take(&now, o)) {
		endwin();
		top_sample_free(&prev);
		return 1;
	}
	screen_render(&now, &prev, o);
	while (!stop && ch != 'q' && ch != 'Q') {
		timeout((int)(o->interval * 1000));
		ch = getch();
		switch (ch) {
		case 'q':
		case 'Q':
			continue;
		case 's':
			o->sort = (o->sort + 1) % SORT_N;
			break;
		case 'd':
			o->device = next_device(&now, o->device);
			break;
		case '+':
			o->interval = fmin(o->interval * 2, 60);
			break;
		case '-':
			o->interval = fmax(o->interval / 2, 0.1);
			break;
		case ERR:
			top_sample_free(&prev);
			prev = now;
			if (take(&now, o)) {
				ret = 1;
				/* @now was emptied; keep freeing safe. */
				stop = 1;
				continue;
			}
			if (o->count && ++shown >= o->count)
				stop = 1;
			break;
		default:	/* KEY_RESIZE and the rest: draw again */
			break;
		}
		screen_render(&now, &prev, o);
	}
	endwin();
	top_sample_free(&prev);
	top_sample_free(&now);
	return ret;
}
#endif

static bool parse_double(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return !errno && end != s && !*end && isfinite(*v);
}

static bool parse_long(const char *s, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return !errno && end != s && !*end;
}

int main(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "batch", no_argument, NULL, 'b' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "device", required_argument, NULL, 'd' },
		{ "sort", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = {
		.interval = 1.0,
		.count = -1,
		.device = -1,
		.sort = SORT_BUSY,
		.proc_root = "/proc",
		.sys_root = "/sys",
	};
	struct sigaction sa = { .sa_handler = on_signal };
	const char *env;
	int opt, i;

	while ((opt = getopt_long(argc, argv, "jbi:n:d:s:h", long_opts,
				  NULL)) != -1) {
		switch (opt) {
		case 'j':
			o.json = true;
			break;
		case 'b':
			o.batch = true;
			break;
		case 'i':
			if (!parse_double(optarg, &o.interval) ||
			    o.interval < 0.1 || o.interval > 3600) {
				fprintf(stderr, "trn-top: --interval takes seconds from 0.1 to 3600, not '%s'\n",
					optarg);
				return 2;
			}
			o.interval_given = true;
			break;
		case 'n':
			if (!parse_long(optarg, &o.count) || o.count < 1) {
				fprintf(stderr, "trn-top: --count takes a positive number, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'd':
			if (!parse_long(optarg, &o.device) || o.device < 0 ||
			    o.device > 65535) {
				fprintf(stderr, "trn-top: --device takes an accel minor number, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 's':
			for (i = 0; i < SORT_N; i++)
				if (!strcmp(optarg, sort_names[i]))
					break;
			if (i == SORT_N) {
				fprintf(stderr, "trn-top: --sort takes busy, hbm, host, jobs or pid, not '%s'\n",
					optarg);
				return 2;
			}
			o.sort = (enum sort_key)i;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "trn-top: unexpected argument '%s'\n",
			argv[optind]);
		return 2;
	}
	if (o.json && o.batch) {
		fprintf(stderr, "trn-top: --json and --batch exclude each other\n");
		return 2;
	}
	/* For tests: another /proc and /sys (made-up trees). */
	env = getenv("TRN_TOP_PROC");
	if (env && *env)
		o.proc_root = env;
	env = getenv("TRN_TOP_SYS");
	if (env && *env)
		o.sys_root = env;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (o.json || o.batch) {
		/* One report, or a stream when an interval was asked for. */
		if (o.count < 0)
			o.count = o.interval_given ? 0 : 1;
		return run_reports(&o);
	}
	if (o.count < 0)
		o.count = 0;
#ifdef TRN_TOP_CURSES
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "trn-top: not a terminal; use --batch or --json\n");
		return 2;
	}
	return run_screen(&o);
#else
	fprintf(stderr, "trn-top: built without curses; use --batch or --json\n");
	return 2;
#endif
}
