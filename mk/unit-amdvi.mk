# SPDX-License-Identifier: MIT
#
# The sixth run of every unit test built on the shared fixtures
# (tests/unit/test_pci_fixture.h, tests/unit/irq_fixture.h), beside the x86,
# IMSIC, ITS, VT-d and GICv2m runs: with UMSI_TEST_CTL=amdvi, on the
# simulator's x86 machine with its AMD-Vi unit and the AMD-Vi back end
# (tests/unit/ctl_fixture.h). The run is build/tests/<test>-amdvi, a two-line
# wrapper around the same binary, listed in TEST_BINS so that
# scripts/run-tests counts its tests, skips included, under its own name.
# Tests that check a fact this machine does not share (INTx, a message
# that changes on a move, APIC IDs above 255) skip there with a one-line
# reason.
UNIT_AMDVI_RE := \<machine_(new|up|up_nofile)[(]
UNIT_AMDVI_SRCS := $(shell grep -lE '$(UNIT_AMDVI_RE)' tests/unit/test_*.c)
UNIT_AMDVI := $(patsubst tests/unit/%.c,$(BUILD)/tests/%-amdvi,$(UNIT_AMDVI_SRCS))
TEST_BINS += $(UNIT_AMDVI)

$(UNIT_AMDVI): $(BUILD)/tests/%-amdvi: $(BUILD)/tests/% mk/unit-amdvi.mk
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nUMSI_TEST_CTL=amdvi exec "$$(dirname "$$0")/%s" "$$@"\n' \
		'$*' > $@.tmp
	chmod +x $@.tmp
	mv $@.tmp $@
