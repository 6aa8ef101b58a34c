// SPDX-License-Identifier: GPL-2.0-only
/*
 * Symbol namespaces are bare identifiers (EXPORT_SYMBOL_NS(sym, NS)); since
 * Linux 6.13 they are string literals and an identifier does not compile.
 */
#include <linux/export.h>
#include <linux/module.h>

int trn_probe_symbol;
EXPORT_SYMBOL_NS_GPL(trn_probe_symbol, TRN_PROBE_NS);
MODULE_LICENSE("GPL");
