#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# TAP: the embedding fragments (umsi.mk, meson.build, CMakeLists.txt) build
# the core the way a kernel vendors it. A copy of the fragments, include/,
# src/ and LICENSE - nothing else of the repository - goes into a made-up
# kernel tree under build/packaging/fragments, which builds the core three
# ways: plain make including umsi.mk, Meson with uMSI as a subproject, CMake
# with add_subdirectory. Each build compiles with -Wall -Wextra -Werror and
# kernel code-generation flags, links a small program against its archive
# through what the fragment exports (include path, library) and runs it.
# Then: the three archives define the same global symbols (and the same as
# the project's own build/libumsi.a when present), need nothing from
# outside but memcpy/memset/memmove/memcmp, the three source lists name
# exactly src/*/*.c, and every place that states the version agrees.
# Meson or CMake missing: their steps are skipped, saying so (Debian
# packages meson, ninja-build, cmake; build.sh installs them).
set -u
cd "$(dirname "$0")/../.." || exit 1
root=$PWD
work=$root/${BUILD:-build}/packaging/fragments
unset MAKEFLAGS MAKELEVEL MFLAGS
export TMPDIR=$work/tmp
rm -rf "$work"
mkdir -p "$work" "$TMPDIR"
CC=${CC:-cc}
n=0

pass() { n=$((n + 1)); echo "ok $n - $*"; }
fail() { n=$((n + 1)); echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $*"; }
# check DESCRIPTION COMMAND...: the command's output is shown on failure.
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
have() { command -v "$1" >/dev/null 2>&1; }

# ---- the source lists ------------------------------------------------------
ls src/*/*.c src/arch/*/*.c | sort >"$work/want"
make -s --no-print-directory -f - <<'MK' | tr ' ' '\n' | sed '/^$/d; s|^\./||' | sort >"$work/mk-list"
include umsi.mk
all: ; @echo $(UMSI_SRCS)
MK
sed -n "s/^ *'\(src\/[^']*\.c\)',\$/\1/p" meson.build | sort >"$work/meson-list"
sed -n 's/^\s*\${CMAKE_CURRENT_SOURCE_DIR}\/\(src\/.*\.c\)$/\1/p' CMakeLists.txt | sort >"$work/cmake-list"
for f in mk meson cmake; do
	check "the $f fragment lists exactly src/*/*.c and src/arch/*/*.c ($(wc -l <"$work/want") files)" \
		diff -u "$work/want" "$work/$f-list"
done

# ---- one version everywhere ------------------------------------------------
versions() {
	echo "umsi.mk $(sed -n 's/^UMSI_VERSION *:= *//p' umsi.mk)"
	echo "meson.build $(sed -n "s/^ *version : '\(.*\)',\$/\1/p" meson.build)"
	echo "CMakeLists.txt $(sed -n 's/^project(umsi VERSION \([0-9.]*\) .*/\1/p' CMakeLists.txt)"
	echo "umsi.pc.in $(sed -n 's/^Version: //p' umsi.pc.in)"
	echo "umsi.h $(sed -n 's/^#define UMSI_VERSION_MAJOR //p' include/umsi/umsi.h).$(sed -n 's/^#define UMSI_VERSION_MINOR //p' include/umsi/umsi.h)"
	[ -f debian/changelog ] &&
		echo "debian/changelog $(sed -n '1s/^umsi (\([^)]*\)).*/\1/p' debian/changelog)"
}
versions >"$work/versions"
v=$(sed -n 's/^umsi.mk //p' "$work/versions")
if [ -n "$v" ] && ! grep -v "^umsi.h " "$work/versions" | grep -qv " $v\$" &&
   grep -q "^umsi.h ${v%.*}\$" "$work/versions"; then
	pass "version $v in every fragment, umsi.pc.in, umsi.h and debian/changelog"
else
	fail "the version differs between files"
	sed 's/^/# /' "$work/versions"
fi

# ---- a made-up kernel that vendors uMSI ------------------------------------
k=$work/kernel
v=$k/third_party/umsi
mkdir -p "$v"
cp -r umsi.mk meson.build CMakeLists.txt LICENSE include src "$v/"
cat >"$k/prog.c" <<'C'
/* SPDX-License-Identifier: MIT */
#include <umsi/umsi.h>
#include <umsi/x86.h>
int main(void)
{
	return umsi_x86_dest_reachable(1, 0) &&
	       umsi_strerror(-UMSI_ENOSPC)[0] == 'E' ? 0 : 1;
}
C
# Code generation as a kernel chooses it, but position-independent so the
# test program can link the archive as a hosted PIE.
KFLAGS="-O2 -g -Wall -Wextra -Werror -fno-stack-protector -fPIE"
case $($CC -dumpmachine) in
x86_64*) KFLAGS="$KFLAGS -mno-red-zone -mgeneral-regs-only" ;;
esac

cat >"$k/Makefile" <<'MK'
# A kernel's own make build, with uMSI vendored in third_party/umsi.
include third_party/umsi/umsi.mk
OBJS := $(UMSI_SRCS:%.c=obj/%.o)
obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(KFLAGS) $(UMSI_CPPFLAGS) $(UMSI_CFLAGS) -c $< -o $@
libumsi.a: $(OBJS)
	$(AR) rcs $@ $^
prog: prog.c libumsi.a
	$(CC) $(UMSI_CPPFLAGS) -o $@ prog.c libumsi.a
MK
check "plain make: a Makefile including umsi.mk builds libumsi.a and links a program" \
	make -C "$k" -j2 CC="$CC" KFLAGS="$KFLAGS" prog
check "plain make: the program runs" "$k/prog"
archives=("$k/libumsi.a")
names=(make)

if have meson && have ninja; then
	mkdir -p "$k/subprojects"
	ln -s ../third_party/umsi "$k/subprojects/umsi"
	cat >"$k/meson.build" <<'MESON'
project('kernel', 'c', default_options : ['c_std=c11'])
umsi = subproject('umsi')
executable('prog', 'prog.c', dependencies : umsi.get_variable('umsi_dep'))
MESON
	check "meson: uMSI as a subproject builds libumsi.a and links a program" \
		sh -c "cd '$k' && CC='$CC' meson setup --optimization=2 -Dc_args='$KFLAGS' mbuild &&
		       ninja -C mbuild -j2"
	check "meson: the program runs" "$k/mbuild/prog"
	archives+=("$k/mbuild/subprojects/umsi/libumsi.a")
	names+=(meson)
else
	skip "meson or ninja is not installed (Debian: meson, ninja-build)"
	skip "meson: no program"
fi

if have cmake; then
	cat >"$k/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.13)
project(kernel C)
add_subdirectory(third_party/umsi)
add_executable(prog prog.c)
target_link_libraries(prog PRIVATE umsi)
CMAKE
	check "cmake: add_subdirectory builds the umsi target and links a program" \
		sh -c "cd '$k' && cmake -S . -B cbuild -DCMAKE_C_COMPILER='$CC' \
		       -DCMAKE_C_FLAGS='$KFLAGS' -DCMAKE_BUILD_TYPE= &&
		       cmake --build cbuild -j 2"
	check "cmake: the program runs" "$k/cbuild/prog"
	archives+=("$k/cbuild/third_party/umsi/libumsi.a")
	names+=(cmake)
else
	skip "cmake is not installed (Debian: cmake)"
	skip "cmake: no program"
fi

# ---- the archives ----------------------------------------------------------
for i in "${!archives[@]}"; do
	a=${archives[$i]}
	nm -g --defined-only "$a" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u \
		>"$work/${names[$i]}.syms"
	# Linked into one object, what the archive still needs from outside.
	ld -r -o "$work/${names[$i]}.o" --whole-archive "$a" 2>/dev/null
	bad=$(nm -u "$work/${names[$i]}.o" 2>/dev/null | awk '{print $2}' | sort -u |
	      grep -vxE 'memcpy|memset|memmove|memcmp|_GLOBAL_OFFSET_TABLE_' | tr '\n' ' ')
	if [ -s "$work/${names[$i]}.syms" ] && [ -z "$bad" ]; then
		pass "${names[$i]}: libumsi.a defines $(wc -l <"$work/${names[$i]}.syms") global symbols and needs nothing beyond memcpy/memset/memmove/memcmp"
	else
		fail "${names[$i]}: libumsi.a is empty or needs:$bad"
	fi
done
same=1
for i in "${!names[@]}"; do
	if ! diff -u "$work/make.syms" "$work/${names[$i]}.syms" >"$work/log"; then
		same=0
		sed 's/^/# /' "$work/log" | head -40
	fi
done
if [ ${#names[@]} -lt 3 ]; then
	skip "the three archives export the same symbols: only ${names[*]} built"
elif [ $same = 1 ]; then
	pass "make, meson and cmake archives export the same $(wc -l <"$work/make.syms") symbols"
else
	fail "the archives export different symbols"
fi
if [ -f "${BUILD:-build}/libumsi.a" ]; then
	nm -g --defined-only "${BUILD:-build}/libumsi.a" | awk 'NF == 3 {print $3}' |
		sort -u >"$work/project.syms"
	check "and the same as the project's own ${BUILD:-build}/libumsi.a" \
		diff -u "$work/project.syms" "$work/make.syms"
else
	skip "${BUILD:-build}/libumsi.a not built"
fi
echo "1..$n"
