/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (c) 2026 The trn authors
 *
 * Every difference between the kernels trn supports lives here, as
 * wrappers that let the driver read like current upstream code. Which side
 * of each difference the target kernel is on is decided by the build-time
 * probes in compat/probes/ (see scripts/compat-probe.sh), never by version
 * numbers.
 */
#ifndef __TRN_COMPAT_H__
#define __TRN_COMPAT_H__

#include <linux/module.h>

#include "trn_compat_probed.h"

/*
 * Before 6.13 a symbol namespace was an identifier that the macros
 * stringified; now it is a string literal. Let MODULE_IMPORT_NS() take the
 * literal everywhere.
 */
#ifdef TRN_HAVE_SYMBOL_NS_IDENTIFIER
#undef MODULE_IMPORT_NS
#define MODULE_IMPORT_NS(ns)	MODULE_INFO(import_ns, ns)
#endif

/* Whether a mapping is private and writable, i.e. copied on write. */
#ifndef TRN_HAVE_VMA_IS_COW_MAPPING
#include <linux/mm.h>

static inline bool vma_is_cow_mapping(const struct vm_area_struct *vma)
{
	return is_cow_mapping(vma->vm_flags);
}
#endif

#endif /* __TRN_COMPAT_H__ */
