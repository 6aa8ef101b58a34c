// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * trn-ls - list trn accelerator devices.
 *
 * Exit status: 0 when the devices (possibly none) were listed, 1 when a
 * device could not be enumerated or queried, 2 on a usage error; with
 * --health, 3 when every device answered but one is not "ok".
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trnhal.h"
#include "trn-ls-fmt.h"

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [--json] [--health] [--help]\n"
		"List the trn accelerator devices of this machine.\n"
		"\n"
		"  -j, --json     print a JSON object {\"devices\": [...]} for scripts\n"
		"  -H, --health   show each device's health and error counters\n"
		"  -h, --help     show this help\n"
		"\n"
		"Exit status: 0 on success (also when no device is present),\n"
		"1 if enumerating or querying a device failed, 2 on bad usage,\n"
		"3 with --health when a device is degraded or failed.\n",
		prog);
}

/* Enumerate into a malloc'ed array, growing it until every minor fits. */
static int list_minors(unsigned int **out, size_t *count)
{
	unsigned int *minors = NULL, *grown;
	size_t cap = 16;
	int ret;

	for (;;) {
		grown = realloc(minors, cap * sizeof(*minors));
		if (!grown) {
			free(minors);
			return -ENOMEM;
		}
		minors = grown;
		ret = trn_device_list(minors, cap, count);
		if (ret) {
			free(minors);
			return ret;
		}
		if (*count <= cap)
			break;
		cap = *count;	/* devices appeared meanwhile; retry */
	}
	*out = minors;
	return 0;
}

/*
 * A real part's identity, which trn_pci shows in sysfs beside the PCI
 * device (Documentation/hardware.md); absent for simulated devices.
 */
struct part_identity {
	bool present;
	char address[64];		/* PCI address, "0000:01:00.0" */
	char pci_id[16];		/* "1d0f:7364" */
	char serial[32];		/* 16 hex digits */
	char routing_id[16];
};

/* Read the first line of /sys/class/accel/accelMINOR/FILE. */
static bool read_sysfs(unsigned int minor, const char *file, char *buf,
		       size_t len)
{
	char path[160];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%u/%s", minor,
		 file);
	f = fopen(path, "r");
	if (!f)
		return false;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

static void part_identity(unsigned int minor, struct part_identity *id)
{
	char path[160], link[256], vendor[16], device[16];
	const char *slash;
	ssize_t n;

	memset(id, 0, sizeof(*id));
	if (!read_sysfs(minor, "device/trn/serial", id->serial,
			sizeof(id->serial)) ||
	    !read_sysfs(minor, "device/trn/routing_id", id->routing_id,
			sizeof(id->routing_id)) ||
	    !read_sysfs(minor, "device/vendor", vendor, sizeof(vendor)) ||
	    !read_sysfs(minor, "device/device", device, sizeof(device)))
		return;
	snprintf(path, sizeof(path), "/sys/class/accel/accel%u/device", minor);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return;
	link[n] = '\0';
	slash = strrchr(link, '/');
	snprintf(id->address, sizeof(id->address), "%.63s",
		 slash ? slash + 1 : link);
	/* sysfs spells them "0x1d0f". */
	snprintf(id->pci_id, sizeof(id->pci_id), "%.4s:%.4s",
		 strncmp(vendor, "0x", 2) ? vendor : vendor + 2,
		 strncmp(device, "0x", 2) ? device : device + 2);
	id->present = true;
}

/*
 * A device's health and error counters from sysfs (Documentation/ABI/
 * testing/sysfs-driver-trn); absent with a trn.ko that has none.
 */
struct health {
	bool present;
	char state[16];			/* ok, degraded, failed */
	char reason[128];
	uint64_t resets, device_resets, bans, mmu_faults, failed;
};

static uint64_t read_sysfs_u64(unsigned int minor, const char *file)
{
	char buf[32];

	return read_sysfs(minor, file, buf, sizeof(buf)) ?
	       strtoull(buf, NULL, 10) : 0;
}

static void read_health(unsigned int minor, struct health *h)
{
	memset(h, 0, sizeof(*h));
	if (!read_sysfs(minor, "health", h->state, sizeof(h->state)))
		return;
	if (!read_sysfs(minor, "health_reason", h->reason, sizeof(h->reason)))
		h->reason[0] = '\0';
	h->resets = read_sysfs_u64(minor, "resets");
	h->device_resets = read_sysfs_u64(minor, "device_resets");
	h->bans = read_sysfs_u64(minor, "bans");
	h->mmu_faults = read_sysfs_u64(minor, "mmu_faults");
	h->failed = read_sysfs_u64(minor, "jobs_failed");
	h->present = true;
}

static void print_json_health(const struct health *h)
{
	if (!h->present) {
		printf("      \"health\": null,\n");
		return;
	}
	printf("      \"health\": {\"state\": ");
	json_put_string(stdout, h->state);
	printf(", \"reason\": ");
	json_put_string(stdout, h->reason);
	printf(", \"resets\": %" PRIu64 ", \"device_resets\": %" PRIu64
	       ", \"bans\": %" PRIu64 ", \"mmu_faults\": %" PRIu64
	       ", \"jobs_failed\": %" PRIu64 "},\n", h->resets,
	       h->device_resets, h->bans, h->mmu_faults, h->failed);
}

static void print_json_part(const struct part_identity *id)
{
	if (!id->present) {
		printf("      \"part\": null,\n");
		return;
	}
	printf("      \"part\": {\"pci_address\": ");
	json_put_string(stdout, id->address);
	printf(", \"pci_id\": ");
	json_put_string(stdout, id->pci_id);
	printf(", \"serial\": ");
	json_put_string(stdout, id->serial);
	printf(", \"routing_id\": ");
	json_put_string(stdout, id->routing_id);
	printf("},\n");
}

static void print_json_device(const struct trn_device_info *info, bool first,
			      const struct health *h)
{
	struct part_identity id;

	printf("%s\n    {\n", first ? "" : ",");
	printf("      \"minor\": %u,\n", info->minor);
	printf("      \"node\": ");
	json_put_string(stdout, info->node);
	printf(",\n      \"generation\": ");
	json_put_string(stdout, trn_generation_name(info->generation));
	printf(",\n      \"device_id\": %" PRIu32 ",\n", info->device_id);
	printf("      \"cores\": %" PRIu32 ",\n", info->num_cores);
	printf("      \"queues_per_core\": %" PRIu32 ",\n",
	       info->queues_per_core);
	printf("      \"hbm_bytes\": %" PRIu64 ",\n", info->hbm_size);
	/* 0 from drivers before uAPI 1.8. */
	printf("      \"hbm_stacks\": %" PRIu32 ",\n", info->hbm_stacks);
	/* 0 from drivers before uAPI 1.3, which do not report them. */
	printf("      \"queue_depth\": %" PRIu32 ",\n", info->queue_depth);
	printf("      \"job_timeout_ms\": %" PRIu32 ",\n",
	       info->job_timeout_ms);
	printf("      \"ban_faults\": %" PRIu32 ",\n", info->ban_faults);
	printf("      \"driver\": ");
	json_put_string(stdout, info->driver_name);
	printf(",\n      \"driver_version\": \"%d.%d.%d\",\n",
	       info->driver_major, info->driver_minor,
	       info->driver_patchlevel);
	printf("      \"uapi_version\": \"%" PRIu32 ".%" PRIu32 "\",\n",
	       info->uapi_major, info->uapi_minor);
	printf("      \"simulated\": %s,\n",
	       info->capabilities & TRN_CAP_SIMULATED ? "true" : "false");
	part_identity(info->minor, &id);
	print_json_part(&id);
	if (h)
		print_json_health(h);
	printf("      \"capabilities\": %" PRIu64 "\n    }", info->capabilities);
}

static void print_health_header(void)
{
	printf("%-5s %-20s %-5s %-8s %6s %9s %5s %7s %7s %s\n", "MINOR",
	       "NODE", "GEN", "HEALTH", "RESETS", "DEVRESETS", "BANS",
	       "FAULTS", "FAILED", "REASON");
}

static void print_health_device(const struct trn_device_info *info,
				const struct health *h)
{
	printf("%-5u %-20s %-5s %-8s %6" PRIu64 " %9" PRIu64 " %5" PRIu64
	       " %7" PRIu64 " %7" PRIu64 " %s\n",
	       info->minor, info->node, trn_generation_name(info->generation),
	       h->present ? h->state : "-", h->resets, h->device_resets,
	       h->bans, h->mmu_faults, h->failed,
	       h->present && h->reason[0] ? h->reason : "-");
}

static void print_text_header(void)
{
	printf("%-5s %-20s %-5s %4s %5s %6s %5s %8s %10s %-12s %-4s %s\n",
	       "MINOR", "NODE", "GEN", "ID", "CORES", "QUEUES", "DEPTH",
	       "TIMEOUT", "HBM", "DRIVER", "UAPI", "PART");
}

static void print_text_device(const struct trn_device_info *info)
{
	char hbm[32], drv[48], depth[16] = "-", timeout[16] = "-";
	char part[160] = "-";
	struct part_identity id;

	format_size(info->hbm_size, hbm, sizeof(hbm));
	/* Drivers before uAPI 1.3 do not report them (0). */
	if (info->queue_depth)
		snprintf(depth, sizeof(depth), "%" PRIu32, info->queue_depth);
	if (info->job_timeout_ms)
		snprintf(timeout, sizeof(timeout), "%" PRIu32 " ms",
			 info->job_timeout_ms);
	snprintf(drv, sizeof(drv), "%s %d.%d.%d", info->driver_name,
		 info->driver_major, info->driver_minor,
		 info->driver_patchlevel);
	part_identity(info->minor, &id);
	if (id.present)
		snprintf(part, sizeof(part), "%s %s serial %s routing %s",
			 id.address, id.pci_id, id.serial, id.routing_id);
	printf("%-5u %-20s %-5s %4" PRIu32 " %5" PRIu32 " %6" PRIu32
	       " %5s %8s %10s %-12s %" PRIu32 ".%-2" PRIu32 " %s\n",
	       info->minor, info->node, trn_generation_name(info->generation),
	       info->device_id, info->num_cores, info->queues_per_core, depth,
	       timeout, hbm, drv, info->uapi_major, info->uapi_minor, part);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "health", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int *minors;
	bool json = false, first = true, health = false, unhealthy = false;
	size_t count, i, shown = 0;
	int c, ret, status = 0;

	while ((c = getopt_long(argc, argv, "jHh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'H':
			health = true;
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
		fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0],
			argv[optind]);
		usage(stderr, argv[0]);
		return 2;
	}

	ret = list_minors(&minors, &count);
	if (ret) {
		fprintf(stderr, "%s: cannot enumerate devices: %s\n", argv[0],
			trn_strerror(ret));
		return 1;
	}

	if (json)
		printf("{\n  \"devices\": [");
	for (i = 0; i < count; i++) {
		struct trn_device_info info;
		struct health h;
		trn_device_t *dev;

		ret = trn_device_open(minors[i], &dev);
		if (!ret) {
			ret = trn_device_info(dev, &info);
			trn_device_close(dev);
		}
		/* A device removed since the listing is simply gone. */
		if (ret == -ENOENT || ret == -ENODEV)
			continue;
		if (ret) {
			fprintf(stderr, "%s: accel%u: %s\n", argv[0], minors[i],
				trn_strerror(ret));
			status = 1;
			continue;
		}
		read_health(minors[i], &h);
		if (health && h.present && strcmp(h.state, "ok"))
			unhealthy = true;
		if (json) {
			print_json_device(&info, first, health ? &h : NULL);
			first = false;
		} else if (health) {
			if (!shown)
				print_health_header();
			print_health_device(&info, &h);
		} else {
			if (!shown)
				print_text_header();
			print_text_device(&info);
		}
		shown++;
	}
	free(minors);

	if (json)
		printf("%s]\n}\n", first ? "" : "\n  ");
	else if (!shown && !status)
		printf("no trn devices found\n");
	return status ? status : unhealthy ? 3 : 0;
}
