#!/bin/sh
# SPDX-License-Identifier: MIT
#
# debian/libtrnhal0.symbols lists exactly the symbols of
# libhal/trnhal.symbols (the list the version script and the library are
# held to), each under the version node TRNHAL_0, plus the node itself.
#
# usage: check-debian-symbols.sh DEBIAN_SYMBOLS SYMBOLS
set -eu

deb=$1 symbols=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

head -n 1 "$deb" | grep -qx 'libtrnhal.so.0 libtrnhal0 #MINVER#' ||
	{ echo "$deb: first line is not 'libtrnhal.so.0 libtrnhal0 #MINVER#'"; exit 1; }
tail -n +2 "$deb" | sed -n 's/^ \([A-Za-z_0-9]*\)@TRNHAL_0 [0-9][0-9.]*$/\1/p' | LC_ALL=C sort >"$tmp/deb"
tail -n +2 "$deb" | grep -vc '^ [A-Za-z_0-9]*@TRNHAL_0 [0-9][0-9.]*$' >"$tmp/odd" || true
[ "$(cat "$tmp/odd")" = 0 ] || { echo "$deb: lines not of the form ' name@TRNHAL_0 version'"; exit 1; }
{ echo TRNHAL_0; grep -v '^[[:space:]]*#' "$symbols" | sed '/^[[:space:]]*$/d'; } | LC_ALL=C sort >"$tmp/want"
diff -u "$tmp/want" "$tmp/deb" || { echo "$deb differs from $symbols"; exit 1; }
echo "debian symbols: $(wc -l <"$tmp/deb") entries, as $symbols"
