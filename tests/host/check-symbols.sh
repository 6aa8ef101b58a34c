#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The dynamic symbols exported by libtrnhal must be exactly the documented
# list (libhal/trnhal.symbols), all under version node TRNHAL_0, all listed
# in the version script, declared in trnhal.h and described in the docs.
#
# usage: check-symbols.sh NM LIBRARY SYMBOLS MAP HEADER DOC
set -eu

nm=$1 lib=$2 symbols=$3 map=$4 header=$5 doc=$6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

"$nm" -D --defined-only "$lib" | awk '$2 != "A" { print $3 }' >"$tmp/raw"
sed 's/@.*//' "$tmp/raw" | sort >"$tmp/exported"
grep -v '^[[:space:]]*#' "$symbols" | sed '/^[[:space:]]*$/d' | sort >"$tmp/documented"
sed -n '/global:/,/local:/p' "$map" | grep -o '^[[:space:]]*[A-Za-z_][A-Za-z0-9_]*;' |
	tr -d ' \t;' | sort >"$tmp/map"

if ! [ -s "$tmp/documented" ]; then
	echo "empty symbol list $symbols"
	exit 1
fi
if ! diff -u "$tmp/documented" "$tmp/exported"; then
	echo "exported symbols of $lib differ from $symbols"
	fail=1
fi
if ! diff -u "$tmp/documented" "$tmp/map"; then
	echo "version script $map differs from $symbols"
	fail=1
fi
if grep -v '@@TRNHAL_0$' "$tmp/raw"; then
	echo "symbols above are not versioned TRNHAL_0"
	fail=1
fi
while read -r s; do
	if ! grep -q "[[:space:]*]$s(" "$header"; then
		echo "$s is not declared in $header"
		fail=1
	fi
	if ! grep -q "$s" "$doc"; then
		echo "$s is not described in $doc"
		fail=1
	fi
done <"$tmp/documented"

[ "$fail" -eq 0 ] && echo "symbol list OK ($(wc -l <"$tmp/documented") symbols)"
exit "$fail"
