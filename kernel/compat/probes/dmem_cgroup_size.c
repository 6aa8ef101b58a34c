// SPDX-License-Identifier: GPL-2.0-only
/*
 * The dmem cgroup controller's first interface: a region is
 * registered with its size.
 */
#include <linux/cgroup_dmem.h>
#include <linux/module.h>

struct dmem_cgroup_region *trn_probe(u64 size);
struct dmem_cgroup_region *trn_probe(u64 size)
{
	return dmem_cgroup_register_region(size, "%s", "probe");
}
MODULE_LICENSE("GPL");
