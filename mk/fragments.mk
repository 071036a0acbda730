# SPDX-License-Identifier: MIT
#
# The embedding fragments at the root of the repository - umsi.mk (make),
# meson.build (Meson subproject), CMakeLists.txt (CMake add_subdirectory) -
# are for kernels that vendor uMSI; this build does not use them.
#
#   make test             runs tests/packaging/fragments.t: the core built
#                         three ways from a copy holding only the fragments,
#                         include/ and src/, with every back end and with
#                         two subsets (UMSI_BACKENDS), and the archives
#                         compared
#   make fragments-check  that test alone
TEST_SCRIPTS += tests/packaging/fragments.t

.PHONY: fragments-check
fragments-check: $(LIB)
	prove -v tests/packaging/fragments.t
