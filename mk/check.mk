# SPDX-License-Identifier: MIT
# The freestanding check runs as part of make test.
TEST_SCRIPTS += tests/check-freestanding.t
TEST_SCRIPTS += tests/check-layers.t
TEST_SCRIPTS += tests/check-neutral.t
# The simulator's core names none of its device models (sim_models.c).
TEST_SCRIPTS += tests/check-sim-models.t
TEST_SCRIPTS += tests/install.t
TEST_SCRIPTS += tests/clang-build.t
TEST_SCRIPTS += tests/asan.t

# The bench tables in docs/ and README.md match what the code prints
# (scripts/bench-docs --check; `make bench` rewrites them).
TEST_SCRIPTS += tests/bench-docs.t
