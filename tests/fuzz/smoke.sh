# SPDX-License-Identifier: MIT
#
# A short, bounded libFuzzer pass, for the tests/fuzz/*.t scripts that
# source this file (from the repository's root; BUILD: the build tree):
#
#   fuzz_smoke NAME RUNS PROMISE [LIBFUZZER FLAGS ...] -- SEED DIR ...
#
# runs $BUILD/fuzz/NAME RUNS times from seed 1 over a fresh corpus
# ($BUILD/fuzz/corpus-X-smoke, X: NAME without "fuzz_") and the seed
# directories, logging to $BUILD/fuzz/NAME-smoke.log, and prints one TAP
# line: "ok 1 - NAME: RUNS runs without PROMISE", or not ok with the log's
# last 40 lines (and exit status 1). A target not built (no clang with
# libFuzzer) is a skip; FUZZ_NEEDS says what it needs.
fuzz_smoke() {
	local name=$1 runs=$2 promise=$3 bin corpus log
	local -a flags=()

	shift 3
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		flags+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	echo "1..1"
	bin=$BUILD/fuzz/$name
	if [ ! -x "$bin" ]; then
		echo "ok 1 - $name # SKIP not built (${FUZZ_NEEDS:-clang with libFuzzer needed})"
		exit 0
	fi
	corpus=$BUILD/fuzz/corpus-${name#fuzz_}-smoke
	rm -rf "$corpus"
	mkdir -p "$corpus"
	log=$BUILD/fuzz/$name-smoke.log
	if "$bin" -seed=1 -runs="$runs" "${flags[@]}" "$corpus" "$@" \
		>"$log" 2>&1; then
		echo "ok 1 - $name: $runs runs without $promise"
	else
		echo "not ok 1 - $name failed; see $log"
		tail -n 40 "$log" | sed 's/^/# /'
		exit 1
	fi
}
