#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# TAP: the Debian packages. `make deb-build` runs dpkg-buildpackage -us -uc
# -b on a copy of the tree under build/deb; then: both packages exist with
# the version of debian/changelog, their control fields and file lists are
# what debian/control promises, lintian reports no error and no warning
# (each override in debian/*.lintian-overrides gives its reason), nothing
# landed beside the repository, and with both packages unpacked into a
# scratch root (dpkg -x) a program builds against the installed library
# through pkg-config and runs, and the installed command decodes a dump.
# Without dpkg-buildpackage and debhelper it skips, saying so (build.sh
# installs them).
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
deb=$B/deb
work=$B/packaging/deb
unset MAKEFLAGS MAKELEVEL MFLAGS
n=0
pass() { n=$((n + 1)); echo "ok $n - $*"; }
fail() { n=$((n + 1)); echo "not ok $n - $*"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
check() {
	local d=$1
	shift
	if "$@" >"$work/log" 2>&1; then
		pass "$d"
	else
		fail "$d"
		tail -n 40 "$work/log" | sed 's/^/# /'
	fi
}
has() { grep -qxF -- "$2" "$1"; }

command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null ||
	skip_all "dpkg-buildpackage or dh missing (Debian: dpkg-dev, debhelper)"
rm -rf "$work"
mkdir -p "$work"
export TMPDIR=$PWD/$work

# What lies beside the repository before the build, to compare after.
beside() { ls -A .. 2>/dev/null | grep -E '\.(deb|changes|buildinfo)$' | sort; }
beside >"$work/beside.before"

ver=$(dpkg-parsechangelog -l debian/changelog -S Version)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
start=$(date +%s)
check "make deb-build: dpkg-buildpackage -us -uc -b builds umsi $ver" \
	make --no-print-directory BUILD="$B" deb-build
secs=$(($(date +%s) - start))
echo "# dpkg-buildpackage took ${secs}s"
umsi_deb=$deb/umsi_${ver}_$arch.deb
dev_deb=$deb/libumsi-dev_${ver}_$arch.deb
if [ -f "$umsi_deb" ] && [ -f "$dev_deb" ] && [ -f "$deb/umsi_${ver}_$arch.changes" ]; then
	pass "umsi and libumsi-dev $ver ($arch) and the .changes are in $deb ($(du -k "$umsi_deb" | cut -f1) and $(du -k "$dev_deb" | cut -f1) KiB)"
else
	fail "the packages are not in $deb"
	ls -l "$deb" | sed 's/^/# /'
	echo "1..$n"
	exit 0
fi
beside >"$work/beside.after"
check "nothing written beside the repository (dpkg-buildpackage's outputs stay in $deb)" \
	diff -u "$work/beside.before" "$work/beside.after"

# ---- control fields ---------------------------------------------------------
field() { dpkg-deb -f "$1" "$2"; }
fields_ok() {
	[ "$(field "$umsi_deb" Package)" = umsi ] &&
	[ "$(field "$umsi_deb" Version)" = "$ver" ] &&
	[ "$(field "$umsi_deb" Section)" = admin ] &&
	field "$umsi_deb" Depends | grep -q 'libc6' &&
	[ "$(field "$dev_deb" Package)" = libumsi-dev ] &&
	[ "$(field "$dev_deb" Version)" = "$ver" ] &&
	[ "$(field "$dev_deb" Section)" = libdevel ] &&
	[ "$(field "$dev_deb" Architecture)" = "$arch" ] &&
	field "$dev_deb" Suggests | grep -qx umsi
}
check "control fields: names, version $ver, sections admin/libdevel, umsi depends on libc6, libumsi-dev suggests umsi" \
	fields_ok

# ---- file lists -------------------------------------------------------------
dpkg-deb -c "$umsi_deb" | awk '{print $6}' | sed 's|^\./|/|; s|/$||' >"$work/umsi.files"
dpkg-deb -c "$dev_deb" | awk '{print $6}' | sed 's|^\./|/|; s|/$||' >"$work/dev.files"
umsi_files_ok() {
	for f in /usr/bin/umsi /usr/share/man/man1/umsi.1.gz /usr/share/doc/umsi/copyright; do
		has "$work/umsi.files" "$f" || { echo "umsi lacks $f"; return 1; }
	done
	! grep -E '^/usr/(include|lib)/' "$work/umsi.files"
}
check "umsi holds /usr/bin/umsi, its man page and copyright, no library" umsi_files_ok
dev_files_ok() {
	for h in include/umsi/*.h; do
		has "$work/dev.files" "/usr/$h" || { echo "libumsi-dev lacks /usr/$h"; return 1; }
	done
	for f in /usr/lib/$multiarch/libumsi.a /usr/lib/$multiarch/pkgconfig/umsi.pc \
		 /usr/share/doc/libumsi-dev/PORTING.md.gz /usr/share/doc/libumsi-dev/MSI-HOWTO.md.gz \
		 /usr/share/doc/libumsi-dev/examples/host.c /usr/share/doc/libumsi-dev/copyright; do
		has "$work/dev.files" "$f" || { echo "libumsi-dev lacks $f"; return 1; }
	done
	! grep -E '^/usr/bin/' "$work/dev.files"
}
check "libumsi-dev holds every public header, libumsi.a and umsi.pc in /usr/lib/$multiarch, the guides and examples" \
	dev_files_ok

# ---- lintian ----------------------------------------------------------------
if command -v lintian >/dev/null; then
	check "lintian: no error, no warning (overrides: $(cat debian/*.lintian-overrides 2>/dev/null | grep -cv '^#'))" \
		make --no-print-directory BUILD="$B" deb-lint
	grep -E '^[EWIPO]: ' "$work/log" | sed 's/^/# /'
else
	echo "ok $((n += 1)) # SKIP lintian is not installed (Debian: lintian)"
fi

# ---- installed into a scratch root ------------------------------------------
root=$work/root
check "dpkg -x unpacks both packages into a scratch root" \
	sh -c "dpkg -x '$umsi_deb' '$root' && dpkg -x '$dev_deb' '$root'"
cat >"$work/prog.c" <<'C'
#include <umsi/umsi.h>
#include <umsi/x86.h>
int main(void)
{
	return umsi_x86_dest_reachable(1, 0) &&
	       umsi_strerror(-UMSI_ENOSPC)[0] == 'E' ? 0 : 1;
}
C
export PKG_CONFIG_SYSROOT_DIR=$PWD/$root
export PKG_CONFIG_LIBDIR=$PWD/$root/usr/lib/$multiarch/pkgconfig
flags=$(pkg-config --cflags --libs umsi 2>"$work/pc.err")
if [ -n "$flags" ] && echo "$flags" | grep -q -- "-I$PWD/$root/usr/include"; then
	pass "pkg-config finds umsi $(pkg-config --modversion umsi) in the scratch root: $flags"
else
	fail "pkg-config --cflags --libs umsi in the scratch root"
	sed 's/^/# /' "$work/pc.err"
fi
check "a program builds against the installed library through pkg-config" \
	cc -std=c11 -Wall -Wextra -Werror -o "$work/prog" "$work/prog.c" $flags
check "and runs" "$work/prog"
check "the installed umsi decodes a real dump" \
	"$root/usr/bin/umsi" inspect --dump tests/data/pci-dumps/cap-pcie-2
check "the installed umsi runs its built-in simulated machine" "$root/usr/bin/umsi" sim
"$root/usr/bin/umsi" inspect --check --dump tests/data/sim-dumps/sim-faults >"$work/check" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q '^0000:00:10.0 MSI \[bus-master-off\]' "$work/check"; then
	pass "the installed umsi inspect --check reports the faults of a dump (exit 1)"
else
	fail "the installed umsi inspect --check (exit $rc)"
	sed 's/^/# /' "$work/check" | head -20
fi
if man -l "$root/usr/share/man/man1/umsi.1.gz" 2>/dev/null | grep -q -- '--check'; then
	pass "the installed man page renders and documents --check"
else
	fail "man -l on the installed man page"
fi
echo "1..$n"
