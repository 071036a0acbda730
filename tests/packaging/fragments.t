#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# TAP: the embedding fragments (umsi.mk, meson.build with
# meson_options.txt, CMakeLists.txt) build the core the way a kernel
# vendors it. A copy of the fragments, include/, src/ and LICENSE - nothing
# else of the repository - goes into a made-up kernel tree under
# build/packaging/fragments, which builds the core three ways: plain make
# including umsi.mk, Meson with uMSI as a subproject, CMake with
# add_subdirectory. Each way builds every back end (the default), only
# the ITS, and VT-d (which brings in x86), compiles with -Wall -Wextra
# -Werror and kernel code-generation flags, links a small program (GNU C:
# the kernel's own flags, not uMSI's) against its archive through what
# the fragment exports (include path, library) and runs it; the ITS one
# finds a NULL umsi_config.ctl refused without x86. The compile commands
# show uMSI's flags on uMSI's files only (for make: those the kernel names
# with UMSI_OBJDIR, also when CFLAGS is given on make's command line), and
# an unknown back end fails, naming it.
# Then: each archive needs nothing from outside but
# memcpy/memset/memmove/memcmp and defines the chosen back ends' symbols
# and no other's; the three ways' archives of a selection define the same
# global symbols (and, of every back end, the same as the project's own
# build/libumsi.a when present); the three source lists name exactly
# src/*/*.c; and every place that states the version agrees.
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

# umsi.mk's UMSI_BACKENDS picks the files: the core (everything but
# src/arch/<arch>) and the back ends named; vtd brings in x86.
mklist() {
	make -s --no-print-directory -f - UMSI_BACKENDS="$1" <<'MK' 2>&1
include umsi.mk
all: ; @echo $(UMSI_BACKENDS): $(sort $(UMSI_SRCS:./%=%))
MK
}
grep -v '^src/arch/[a-z0-9]*/' "$work/want" >"$work/core"
grep '^src/arch/common/' "$work/want" >>"$work/core"
want_its="its: $(cat "$work/core" - <<<"$(grep '^src/arch/arm64/its' "$work/want")" | LC_ALL=C sort | tr '\n' ' ')"
got_its=$(mklist its)
if [ "$got_its " = "$want_its" ]; then
	pass "umsi.mk: UMSI_BACKENDS=its lists the core and src/arch/arm64/its* ($(( $(wc -w <<<"$got_its") - 1 )) files)"
else
	fail "umsi.mk: UMSI_BACKENDS=its lists the wrong files"
	echo "# want $want_its" && echo "# got  $got_its"
fi
want_v2m="gicv2m: $(cat "$work/core" - <<<"src/arch/arm64/gicv2m.c" | LC_ALL=C sort | tr '\n' ' ')"
got_v2m=$(mklist gicv2m)
if [ "$got_v2m " = "$want_v2m" ]; then
	pass "umsi.mk: UMSI_BACKENDS=gicv2m lists the core and src/arch/arm64/gicv2m.c"
else
	fail "umsi.mk: UMSI_BACKENDS=gicv2m lists the wrong files"
	echo "# want $want_v2m" && echo "# got  $got_v2m"
fi
got_vtd=$(mklist vtd)
if [ "$got_vtd" = "$(mklist 'x86 vtd')" ] && [ "$got_vtd" = "$(mklist 'vtd x86')" ] &&
   [ "${got_vtd%%:*}" = "x86 vtd" ] && grep -q 'src/arch/x86/lapic.c' <<<"$got_vtd" &&
   mklist "" | grep -q "UMSI_BACKENDS is empty"; then
	pass "umsi.mk: UMSI_BACKENDS=vtd adds x86 (as 'x86 vtd' and 'vtd x86'), an empty list fails"
else
	fail "umsi.mk: UMSI_BACKENDS=vtd gives: $got_vtd"
fi

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
cp -r umsi.mk meson.build meson_options.txt CMakeLists.txt LICENSE include src "$v/"
# The kernel's own file: GNU C (typeof), so compiling it with uMSI's
# -std=c11 fails. PROG_ALL uses x86 and the rest; PROG_ITS only the ITS,
# and finds that a NULL umsi_config.ctl is refused without x86; PROG_VTD
# only VT-d and the x86 message code.
cat >"$k/prog.c" <<'C'
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>
#include <umsi/umsi.h>
#include <umsi/x86.h>

#ifdef PROG_ITS
static char logged[256];
static int cfg_read(void *h, umsi_bdf_t b, uint16_t o, uint8_t w, uint32_t *v)
{ (void)h; (void)b; (void)o; (void)w; *v = ~0u; return 0; }
static int cfg_write(void *h, umsi_bdf_t b, uint16_t o, uint8_t w, uint32_t v)
{ (void)h; (void)b; (void)o; (void)w; (void)v; return 0; }
static int mmio_map(void *h, uint64_t p, uint64_t l, void **virt)
{ (void)h; (void)p; (void)l; *virt = NULL; return -UMSI_EIO; }
static void mmio_unmap(void *h, void *virt, uint64_t l)
{ (void)h; (void)virt; (void)l; }
static void *lock_create(void *h) { (void)h; return malloc(1); }
static void lock_destroy(void *h, void *l) { (void)h; free(l); }
static umsi_irqflags_t lock_acquire(void *h, void *l)
{ (void)h; (void)l; return 0; }
static void lock_release(void *h, void *l, umsi_irqflags_t f)
{ (void)h; (void)l; (void)f; }
static void *alloc(void *h, size_t n) { (void)h; return calloc(1, n); }
static void release(void *h, void *p, size_t n) { (void)h; (void)n; free(p); }
static void logmsg(void *h, enum umsi_log_level l, const char *m)
{ (void)h; (void)l; strncpy(logged, m, sizeof(logged) - 1); }
static uint64_t clock_ns(void *h) { (void)h; return 0; }
static uint32_t current_cpu(void *h) { (void)h; return 0; }
static uint32_t cpu_count(void *h) { (void)h; return 1; }
static int cpu_hwid(void *h, uint32_t c, uint32_t *id)
{ (void)h; *id = c; return 0; }
static bool cpu_is_online(void *h, uint32_t c) { (void)h; return c == 0; }
static uint32_t platform_flags(void *h) { (void)h; return 0; }
static int run_on_cpu(void *h, uint32_t c, void (*fn)(void *), void *arg)
{ (void)h; (void)c; fn(arg); return 0; }
static const struct umsi_host_ops ops = {
	.cfg_read = cfg_read, .cfg_write = cfg_write,
	.mmio_map = mmio_map, .mmio_unmap = mmio_unmap,
	.lock_create = lock_create, .lock_destroy = lock_destroy,
	.lock_acquire = lock_acquire, .lock_release = lock_release,
	.alloc = alloc, .free = release, .log = logmsg,
	.clock_ns = clock_ns, .current_cpu = current_cpu,
	.cpu_count = cpu_count, .cpu_hwid = cpu_hwid,
	.cpu_is_online = cpu_is_online, .platform_flags = platform_flags,
	.run_on_cpu = run_on_cpu,
};
#endif

int main(int argc, char **argv)
{
	typeof(argc) ok = argv != NULL;
#if defined(PROG_ITS)
	struct umsi_system *sys = NULL;
	const struct umsi_ctl *volatile its = &umsi_ctl_arm64_its;

	ok = ok && its && umsi_strerror(-UMSI_ENOSPC)[0] == 'E' &&
	     umsi_system_create(&ops, NULL, NULL, &sys) == -UMSI_EINVAL &&
	     !sys && strstr(logged, "the x86 one is not built");
#elif defined(PROG_VTD)
	const struct umsi_ctl *volatile vtd = &umsi_ctl_x86_vtd;

	ok = ok && vtd && umsi_x86_dest_reachable(1, 0);
#else
	ok = ok && umsi_x86_dest_reachable(1, 0) &&
	     umsi_strerror(-UMSI_ENOSPC)[0] == 'E';
#endif
	return ok ? 0 : 1;
}
C
# Code generation as a kernel chooses it, but position-independent so the
# test program can link the archive as a hosted PIE.
KFLAGS="-O2 -g -Wall -Wextra -Werror -fno-stack-protector -fPIE"
case $($CC -dumpmachine) in
x86_64*) KFLAGS="$KFLAGS -mno-red-zone -mgeneral-regs-only" ;;
esac

# Three builds each way: every back end (the default), only the ITS, and
# VT-d (which brings in x86), named all, its, vtd. To keep this quick the
# subsets drop -g, its (the one that compiles code of its own, the
# UMSI_NO_DEFAULT_CTL branch) keeps the warnings that need -O1, and vtd
# (the same code as all) is not optimised.
subsets=(all its vtd)
declare -A kflags=([all]="$KFLAGS" [its]="${KFLAGS/-O2 -g/-O1}" [vtd]="${KFLAGS/-O2 -g/-O0}")
declare -A mopt=([all]=--optimization=2 [its]=--buildtype=plain [vtd]=--buildtype=plain)
declare -A backends=([its]=its [vtd]=vtd)
declare -A prog=([all]=ALL [its]=ITS [vtd]=VTD)
declare -A nsrcs=([all]=37 [its]=30 [vtd]=31)
archives=()
names=()
# scoped NAME FILE SUBSET: FILE has the compile commands of a build (make's
# output, a compile_commands.json): every uMSI source was compiled, with
# uMSI's flags, and prog.c without them.
scoped() {
	local u p
	u=$(grep -oE -- '-c [^ ]*umsi/src/[^ "]*\.c' "$2" | sort -u | wc -l)
	p=$(grep -E -- '-c [^ ]*prog\.c' "$2" | grep -c -- '-ffreestanding\|-fno-builtin')
	if [ "$u" -eq "${nsrcs[$3]}" ] && [ "$p" -eq 0 ] &&
	   grep -qE -- '-c [^ ]*prog\.c' "$2" &&
	   ! grep -E -- '-c [^ ]*umsi/src/[^ "]*\.c' "$2" |
		grep -v -- '-ffreestanding.*-fno-builtin' | grep -q .; then
		pass "$1 $3: $u uMSI sources compiled with UMSI's flags, the kernel's prog.c without"
	else
		fail "$1 $3: $u of ${nsrcs[$3]} uMSI sources, or the flags reach prog.c ($p) or miss uMSI's files"
		grep -E -- '-c [^ ]*(umsi/src/[^ "]*|prog)\.c' "$2" | head -5 | sed 's/^/# /'
	fi
}
# fails DESCRIPTION COMMAND...: the command fails and says which back end
# it does not know (foo).
fails() {
	local d=$1
	shift
	if ! "$@" >"$work/log" 2>&1 && grep -q "foo" "$work/log" &&
	   grep -qiE "back end|allowed choices" "$work/log"; then
		pass "$d: $(grep -m1 foo "$work/log" | sed 's/^.*\(uMSI\|ERROR\)/\1/')"
	else
		fail "$d"
		tail -n 20 "$work/log" | sed 's/^/# /'
	fi
}

# kmake LOG ARGS...: make in the made-up kernel, the commands kept in LOG.
kmake() {
	local log=$1
	shift
	make -C "$k" -j2 CC="$CC" "$@" >"$log" 2>&1 || { cat "$log"; return 1; }
}
# The kernel's CFLAGS (GNU C) are its own; umsi.mk adds UMSI_CFLAGS to
# uMSI's objects only, which the kernel names by setting UMSI_OBJDIR.
cat >"$k/Makefile" <<'MK'
# A kernel's own make build, with uMSI vendored in third_party/umsi;
# everything built goes under $(B).
UMSI_OBJDIR := $(B)/obj/umsi
include third_party/umsi/umsi.mk
CFLAGS   := $(KFLAGS) -std=gnu11
CPPFLAGS := $(UMSI_CPPFLAGS)
$(UMSI_OBJDIR)/%.o: $(UMSI_DIR)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@
$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -DPROG_$(PROG) -c $< -o $@
$(B)/libumsi.a: $(UMSI_OBJS)
	$(AR) rcs $@ $^
$(B)/prog: $(B)/obj/prog.o $(B)/libumsi.a
	$(CC) -o $@ $^
MK
for s in "${subsets[@]}"; do
	# The its build names CFLAGS on make's command line: uMSI's objects
	# still get UMSI_CFLAGS.
	set -- B="m-$s" PROG="${prog[$s]}" KFLAGS="${kflags[$s]}"
	[ "$s" = all ] || set -- "$@" UMSI_BACKENDS="${backends[$s]}"
	[ "$s" = its ] && set -- "$@" CFLAGS="${kflags[$s]} -std=gnu11"
	if [ "$s" = all ]; then
		d="plain make: a Makefile including umsi.mk builds libumsi.a and links a program"
	else
		d="plain make, UMSI_BACKENDS=${backends[$s]}: builds libumsi.a and links a program using $s"
	fi
	check "$d" kmake "$work/make-$s.log" "$@" "m-$s/prog"
	check "plain make $s: the program runs" "$k/m-$s/prog"
	scoped "plain make" "$work/make-$s.log" "$s"
	archives+=("$k/m-$s/libumsi.a")
	names+=("make-$s")
done
fails "plain make: an unknown back end fails" \
	make -C "$k" B=m-bad PROG=ITS KFLAGS="$KFLAGS" UMSI_BACKENDS="its foo" m-bad/prog

if have meson && have ninja; then
	mkdir -p "$k/subprojects"
	ln -s ../third_party/umsi "$k/subprojects/umsi"
	cat >"$k/meson.build" <<'MESON'
project('kernel', 'c', default_options : ['c_std=gnu11'])
umsi = subproject('umsi')
executable('prog', 'prog.c', dependencies : umsi.get_variable('umsi_dep'),
  c_args : '-DPROG_' + get_option('prog'))
MESON
	echo "option('prog', type : 'string', value : 'ALL')" >"$k/meson_options.txt"
	for s in "${subsets[@]}"; do
		o=
		[ "$s" = all ] || o="-Dumsi:backends=${backends[$s]}"
		if [ "$s" = all ]; then
			d="meson: uMSI as a subproject builds libumsi.a and links a program"
		else
			d="meson, $o: builds libumsi.a and links a program using $s"
		fi
		check "$d" \
			sh -c "cd '$k' && CC='$CC' meson setup ${mopt[$s]} -Dc_args='${kflags[$s]}' \
			       -Dprog=${prog[$s]} $o mb-$s && ninja -C mb-$s -j2"
		check "meson $s: the program runs" "$k/mb-$s/prog"
		scoped meson "$k/mb-$s/compile_commands.json" "$s"
		archives+=("$k/mb-$s/subprojects/umsi/libumsi.a")
		names+=("meson-$s")
	done
	fails "meson: an unknown back end fails" \
		sh -c "cd '$k' && CC='$CC' meson setup -Dumsi:backends=its,foo mb-bad"
else
	skip "meson or ninja is not installed (Debian: meson, ninja-build)"
	skip "meson: no program"
fi

if have cmake; then
	cat >"$k/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.13)
project(kernel C)
set(PROG ALL CACHE STRING "which prog.c")
add_subdirectory(third_party/umsi)
add_executable(prog prog.c)
target_link_libraries(prog PRIVATE umsi)
target_compile_definitions(prog PRIVATE PROG_${PROG})
set_target_properties(prog PROPERTIES C_STANDARD 11 C_EXTENSIONS ON)
CMAKE
	for s in "${subsets[@]}"; do
		o=
		[ "$s" = all ] || o="-DUMSI_BACKENDS=${backends[$s]}"
		if [ "$s" = all ]; then
			d="cmake: add_subdirectory builds the umsi target and links a program"
		else
			d="cmake, $o: builds the umsi target and links a program using $s"
		fi
		check "$d" \
			sh -c "cd '$k' && cmake -S . -B cb-$s -DCMAKE_C_COMPILER='$CC' \
			       -DCMAKE_C_FLAGS='${kflags[$s]}' -DCMAKE_BUILD_TYPE= \
			       -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DPROG=${prog[$s]} $o &&
			       cmake --build cb-$s -j 2"
		check "cmake $s: the program runs" "$k/cb-$s/prog"
		scoped cmake "$k/cb-$s/compile_commands.json" "$s"
		archives+=("$k/cb-$s/third_party/umsi/libumsi.a")
		names+=("cmake-$s")
	done
	fails "cmake: an unknown back end fails" \
		sh -c "cd '$k' && cmake -S . -B cb-bad -DCMAKE_C_COMPILER='$CC' '-DUMSI_BACKENDS=its;foo'"
else
	skip "cmake is not installed (Debian: cmake)"
	skip "cmake: no program"
fi

# ---- the archives ----------------------------------------------------------
# The back ends' objects each archive must hold, and not.
declare -A has=([all]="umsi_ctl_x86_lapic umsi_ctl_x86_vtd umsi_ctl_x86_amdvi umsi_ctl_riscv_imsic umsi_ctl_arm64_its umsi_ctl_arm64_gicv2m"
		[its]="umsi_ctl_arm64_its" [vtd]="umsi_ctl_x86_lapic umsi_ctl_x86_vtd")
declare -A hasnt=([all]="" [its]="umsi_ctl_x86_lapic umsi_ctl_x86_vtd umsi_ctl_x86_amdvi umsi_ctl_riscv_imsic umsi_ctl_arm64_gicv2m"
		  [vtd]="umsi_ctl_x86_amdvi umsi_ctl_riscv_imsic umsi_ctl_arm64_its")
for i in "${!archives[@]}"; do
	a=${archives[$i]}
	nm=${names[$i]}
	s=${nm#*-}
	nm -g --defined-only "$a" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u \
		>"$work/$nm.syms"
	# Linked into one object, what the archive still needs from outside.
	ld -r -o "$work/$nm.o" --whole-archive "$a" 2>/dev/null
	bad=$(nm -u "$work/$nm.o" 2>/dev/null | awk '{print $2}' | sort -u |
	      grep -vxE 'memcpy|memset|memmove|memcmp|_GLOBAL_OFFSET_TABLE_' | tr '\n' ' ')
	if [ -s "$work/$nm.syms" ] && [ -z "$bad" ]; then
		pass "$nm: libumsi.a defines $(wc -l <"$work/$nm.syms") global symbols and needs nothing beyond memcpy/memset/memmove/memcmp"
	else
		fail "$nm: libumsi.a is empty or needs:$bad"
	fi
	wrong=
	for y in ${has[$s]}; do
		grep -qx "$y" "$work/$nm.syms" || wrong="$wrong missing $y"
	done
	for y in ${hasnt[$s]}; do
		grep -qx "$y" "$work/$nm.syms" && wrong="$wrong has $y"
	done
	if [ -z "$wrong" ]; then
		pass "$nm: the back ends of $s, no other (${has[$s]})"
	else
		fail "$nm:$wrong"
	fi
done
for s in "${subsets[@]}"; do
	same=1
	built=()
	for nm in "${names[@]}"; do
		[ "${nm#*-}" = "$s" ] || continue
		built+=("${nm%-*}")
		if ! diff -u "$work/make-$s.syms" "$work/$nm.syms" >"$work/log"; then
			same=0
			sed 's/^/# /' "$work/log" | head -40
		fi
	done
	if [ ${#built[@]} -lt 3 ]; then
		skip "the three $s archives export the same symbols: only ${built[*]} built"
	elif [ $same = 1 ]; then
		pass "make, meson and cmake $s archives export the same $(wc -l <"$work/make-$s.syms") symbols"
	else
		fail "the $s archives export different symbols"
	fi
done
if [ -f "${BUILD:-build}/libumsi.a" ]; then
	nm -g --defined-only "${BUILD:-build}/libumsi.a" | awk 'NF == 3 {print $3}' |
		sort -u >"$work/project.syms"
	check "and the same as the project's own ${BUILD:-build}/libumsi.a" \
		diff -u "$work/project.syms" "$work/make-all.syms"
else
	skip "${BUILD:-build}/libumsi.a not built"
fi
echo "1..$n"
