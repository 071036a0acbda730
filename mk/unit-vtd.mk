# SPDX-License-Identifier: MIT
#
# The fourth run of every unit test built on the shared fixtures
# (tests/unit/test_pci_fixture.h, tests/unit/irq_fixture.h), beside the
# x86, IMSIC and ITS runs: with UMSI_TEST_CTL=vtd, on the simulator's x86
# machine with its VT-d remapping unit and the library's VT-d back end
# (tests/unit/ctl_fixture.h). The run is build/tests/<test>-vtd, a
# two-line wrapper around the same binary, listed in TEST_BINS so that
# scripts/run-tests counts its tests, skips included, under its own name.
# Tests that check a fact of the compatibility message format (or of the
# host's remapping hook) skip there with a one-line reason.
UNIT_VTD_RE := \<machine_(new|up|up_nofile)[(]
UNIT_VTD_SRCS := $(shell grep -lE '$(UNIT_VTD_RE)' tests/unit/test_*.c)
UNIT_VTD := $(patsubst tests/unit/%.c,$(BUILD)/tests/%-vtd,$(UNIT_VTD_SRCS))
TEST_BINS += $(UNIT_VTD)

$(UNIT_VTD): $(BUILD)/tests/%-vtd: $(BUILD)/tests/% mk/unit-vtd.mk
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nUMSI_TEST_CTL=vtd exec "$$(dirname "$$0")/%s" "$$@"\n' \
		'$*' > $@.tmp
	chmod +x $@.tmp
	mv $@.tmp $@
