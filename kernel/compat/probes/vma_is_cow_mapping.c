// SPDX-License-Identifier: GPL-2.0-only
/*
 * vma_is_cow_mapping() takes the VMA; older kernels only have
 * is_cow_mapping() on its flags.
 */
#include <linux/mm.h>
#include <linux/module.h>

bool trn_probe(const struct vm_area_struct *vma);
bool trn_probe(const struct vm_area_struct *vma)
{
	return vma_is_cow_mapping(vma);
}
MODULE_LICENSE("GPL");
