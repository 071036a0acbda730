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

# The riscv64 and arm64 kernels are built by clang and ld.lld (no cross
# gcc); the arm64 image needs llvm-objcopy (package llvm). Their QEMUs:
# qemu-system-misc (qemu-system-riscv64; OpenSBI, -bios default, comes
# with it: /usr/share/qemu/opensbi-riscv64-generic-fw_dynamic.bin is in
# qemu-system-data, which it depends on) and qemu-system-arm
# (qemu-system-aarch64). Their tests (tests/qemu/riscv64-*.t,
# arm64-*.t) skip when these are missing.
PKGS="make gcc clang lld llvm libc6-dev libcmocka-dev pkg-config valgrind \
      libclang-rt-dev qemu-system-x86 qemu-system-misc qemu-system-arm \
      pciutils perl binutils linux-image-cloud-amd64 busybox-static \
      librsvg2-bin python3 \
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
if [ ! -f /usr/share/qemu/opensbi-riscv64-generic-fw_dynamic.bin ]; then
	echo "build.sh: no OpenSBI firmware for qemu-system-riscv64 -bios default" \
	     "(/usr/share/qemu/opensbi-riscv64-generic-fw_dynamic.bin, package" \
	     "qemu-system-data): the riscv64 QEMU tests will fail" >&2
fi

target=${1:-all}
[ $# -gt 0 ] && shift
exec make -j"$(nproc)" "$target" "$@"
