#!/bin/sh
# SPDX-License-Identifier: MIT
#
# One entry point for a fresh Debian machine (run as root):
#   ./build.sh demo    install what is missing, build, run the main job
#   ./build.sh test    install what is missing, build, run every test
# Anything else is passed to make. Packages come from Debian through
# apt-get, only when missing, so both keep working offline once installed.
set -eu
cd "$(dirname "$0")"

PKGS="make gcc clang lld libc6-dev libcmocka-dev pkg-config valgrind \
      libclang-rt-dev qemu-system-x86 pciutils perl binutils \
      dpkg-dev debhelper lintian meson ninja-build cmake"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "build.sh: installing Debian packages:$missing"
	if [ "$(id -u)" != 0 ]; then
		echo "build.sh: need root to install packages (or install them yourself)" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends $missing
fi

target=${1:-all}
[ $# -gt 0 ] && shift
exec make -j"$(nproc)" "$target" "$@"
