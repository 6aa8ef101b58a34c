// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * mlp-demo: an MLP (784-512-512-10, relu, softmax) on a trn device
 * through the eager runtime: N forward passes and one training step,
 * every result checked against the CPU reference. Exit status 0 when all
 * values are within their bounds, 1 on a mismatch, 2 on bad usage or an
 * error. See Documentation/eager.md.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eager_mlp.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mlp-demo [options]\n"
		"  -d, --device DEV   trn:N (default trn:0)\n"
		"  -b, --batch N      batch size (default 64)\n"
		"  -n, --passes N     forward passes (default 4)\n"
		"      --hidden N     hidden width (default 512)\n"
		"      --in N         input width (default 784)\n"
		"      --out N        classes (default 10)\n"
		"  -s, --seed N       random seed (default 1)\n"
		"      --lr X         learning rate (default 0.05)\n"
		"      --bf16         forward matmuls on bf16 operands\n"
		"      --no-train     skip the training step\n"
		"      --no-check     skip the comparison with the CPU reference\n"
		"  -h, --help\n");
}

static int parse_pos(const char *s, int64_t *v)
{
	char *end;
	long long x = strtoll(s, &end, 10);

	if (*end || x < 1 || x > 65536)
		return -1;
	*v = x;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "batch", required_argument, NULL, 'b' },
		{ "passes", required_argument, NULL, 'n' },
		{ "hidden", required_argument, NULL, 'H' },
		{ "in", required_argument, NULL, 'I' },
		{ "out", required_argument, NULL, 'O' },
		{ "seed", required_argument, NULL, 's' },
		{ "lr", required_argument, NULL, 'l' },
		{ "bf16", no_argument, NULL, 'B' },
		{ "no-train", no_argument, NULL, 'T' },
		{ "no-check", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct eager_mlp_config cfg;
	struct eager_mlp_result res;
	char name[16];
	int64_t v;
	int c, ret;

	eager_mlp_defaults(&cfg);
	cfg.log = stdout;
	while ((c = getopt_long(argc, argv, "d:b:n:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (eager_device_parse(optarg, &cfg.device) ||
			    cfg.device.type != EAGER_TRN)
				goto bad;
			break;
		case 'b':
			if (parse_pos(optarg, &cfg.batch))
				goto bad;
			break;
		case 'n':
			if (parse_pos(optarg, &v))
				goto bad;
			cfg.passes = (unsigned int)v;
			break;
		case 'H':
			if (parse_pos(optarg, &cfg.hidden))
				goto bad;
			break;
		case 'I':
			if (parse_pos(optarg, &cfg.in))
				goto bad;
			break;
		case 'O':
			if (parse_pos(optarg, &cfg.out))
				goto bad;
			break;
		case 's':
			cfg.seed = strtoull(optarg, NULL, 0);
			break;
		case 'l':
			cfg.lr = strtof(optarg, NULL);
			break;
		case 'B':
			cfg.bf16 = true;
			break;
		case 'T':
			cfg.train = false;
			break;
		case 'C':
			cfg.check = false;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (optind != argc)
		goto bad;

	printf("device %s", eager_device_name(cfg.device, name, sizeof(name)));
	ret = eager_device_has_transpose(cfg.device);
	if (ret < 0) {
		printf("\nmlp-demo: %s\n", trn_strerror(ret));
		return 2;
	}
	printf(", matmul transpose flags: %s\n",
	       ret ? "yes" : "no (2-D copies instead)");
	ret = eager_mlp_run(&cfg, &res);
	if (ret) {
		printf("mlp-demo: %s\n", trn_strerror(ret));
		eager_shutdown();
		return 2;
	}
	printf("allocator: %llu allocs, %llu cache hits, %llu misses, peak "
	       "%llu KiB allocated, %llu KiB reserved\n",
	       (unsigned long long)res.mem.allocs,
	       (unsigned long long)res.mem.cache_hits,
	       (unsigned long long)res.mem.cache_misses,
	       (unsigned long long)res.mem.peak_allocated >> 10,
	       (unsigned long long)res.mem.peak_reserved >> 10);
	printf("stream: %llu ops, %llu commands, %llu jobs (flushed: %llu "
	       "queue dry, %llu buffer full, %llu sync)\n",
	       (unsigned long long)res.stream.ops,
	       (unsigned long long)res.stream.commands,
	       (unsigned long long)res.stream.jobs,
	       (unsigned long long)res.stream.flush_dry,
	       (unsigned long long)res.stream.flush_full,
	       (unsigned long long)res.stream.flush_sync);
	eager_shutdown();
	if (cfg.check) {
		printf("%s: %lld values outside their bound\n",
		       res.mismatches ? "FAIL" : "PASS",
		       (long long)res.mismatches);
		return res.mismatches ? 1 : 0;
	}
	return 0;
bad:
	usage(stderr);
	return 2;
}
