#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# TAP: `make install` into a temporary prefix yields a library that a
# three-line program including <umsi/umsi.h> links against through
# pkg-config.
cd "$(dirname "$0")/.." || exit 1
echo "1..3"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if make --no-print-directory install PREFIX="$tmp/prefix" >"$tmp/log" 2>&1; then
	echo "ok 1 - make install PREFIX=$tmp/prefix"
else
	echo "not ok 1 - make install"; sed 's/^/# /' "$tmp/log"
fi
cat >"$tmp/prog.c" <<'C'
#include <umsi/umsi.h>
#include <umsi/x86.h>
int main(void) { return umsi_x86_dest_reachable(1, 0) && umsi_strerror(-UMSI_ENOSPC)[0] == 'E' ? 0 : 1; }
C
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
if cc -std=c11 -Wall -Wextra -Werror -o "$tmp/prog" "$tmp/prog.c" $(pkg-config --cflags --libs umsi) 2>"$tmp/cc"; then
	echo "ok 2 - a program links through pkg-config --cflags --libs umsi"
else
	echo "not ok 2 - link through pkg-config"; sed 's/^/# /' "$tmp/cc"
fi
if "$tmp/prog"; then echo "ok 3 - and runs"; else echo "not ok 3 - and runs"; fi
