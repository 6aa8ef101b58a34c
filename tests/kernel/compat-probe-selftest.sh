#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Checks kernel/scripts/compat-probe.sh against a real kernel build tree:
# a snippet that compiles must yield TRN_HAVE_*, one that does not must not,
# and a second run must come from the cache without compiling.
#
#   compat-probe-selftest.sh KDIR
# Prints TAP; exits non-zero on failure.
set -eu

kdir=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir "$work/probes"
cat >"$work/probes/always_there.c" <<'C'
#include <linux/module.h>
MODULE_LICENSE("GPL");
C
cat >"$work/probes/never_there.c" <<'C'
#include <linux/module.h>
#include <linux/trn_header_that_does_not_exist.h>
MODULE_LICENSE("GPL");
C

n=0
fail=0
check() {
	n=$((n + 1))
	if eval "$2"; then
		echo "ok $n compat_probe.$1"
	else
		echo "not ok $n compat_probe.$1"
		fail=1
	fi
}

echo "TAP version 13"
echo "1..4"
"$top/kernel/scripts/compat-probe.sh" "$kdir" "$work/probes" "$work/out.h" >/dev/null
check present "grep -q '^#define TRN_HAVE_ALWAYS_THERE 1' '$work/out.h'"
check absent "! grep -q '^#define TRN_HAVE_NEVER_THERE' '$work/out.h'"
check cached "[ -n \"\$(ls '$work'/cache/*.h 2>/dev/null)\" ]"
out=$("$top/kernel/scripts/compat-probe.sh" "$kdir" "$work/probes" "$work/out.h")
check cache_hit "[ -z '$out' ]"
exit $fail
