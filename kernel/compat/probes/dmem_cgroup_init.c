// SPDX-License-Identifier: GPL-2.0-only
/*
 * The dmem cgroup controller (newer kernels) registers a region with a
 * struct dmem_cgroup_init; it took the region's size alone at first.
 */
#include <linux/cgroup_dmem.h>
#include <linux/module.h>

struct dmem_cgroup_region *trn_probe(u64 size);
struct dmem_cgroup_region *trn_probe(u64 size)
{
	const struct dmem_cgroup_init init = { .size = size };

	return dmem_cgroup_register_region(&init, "%s", "probe");
}
MODULE_LICENSE("GPL");
