# SPDX-License-Identifier: MIT
#
# The fifth run of every unit test built on the shared fixtures
# (tests/unit/test_pci_fixture.h, tests/unit/irq_fixture.h), beside the x86,
# IMSIC, ITS and VT-d runs: with UMSI_TEST_CTL=gicv2m, on the
# simulator's GICv2 + v2m model with the Arm GICv2m back end
# (tests/unit/ctl_fixture.h). The run is build/tests/<test>-gicv2m, a two-line
# wrapper around the same binary, listed in TEST_BINS so that
# scripts/run-tests counts its tests, skips included, under its own name
# (and make test-asan runs it too). Tests that check a fact this machine
# does not share (INTx, more than 8 CPUs as targets, raw messages to a CPU
# of the test's choosing) skip there with a one-line reason.
#
# The tests are found by name as in mk/unit-imsic.mk; test_imsic and
# test_its, which build their own IMSIC and ITS machines, are not run again.
UNIT_GICV2M_RE := \<machine_(new|up|up_nofile)[(]
UNIT_GICV2M_SRCS := $(shell grep -lE '$(UNIT_GICV2M_RE)' tests/unit/test_*.c)
UNIT_GICV2M := $(patsubst tests/unit/%.c,$(BUILD)/tests/%-gicv2m,$(UNIT_GICV2M_SRCS))
TEST_BINS += $(UNIT_GICV2M)

$(UNIT_GICV2M): $(BUILD)/tests/%-gicv2m: $(BUILD)/tests/% mk/unit-gicv2m.mk
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nUMSI_TEST_CTL=gicv2m exec "$$(dirname "$$0")/%s" "$$@"\n' \
		'$*' > $@.tmp
	chmod +x $@.tmp
	mv $@.tmp $@
