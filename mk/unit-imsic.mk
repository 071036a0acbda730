# SPDX-License-Identifier: MIT
#
# Every unit test built on the shared fixtures (tests/unit/test_pci_fixture.h,
# tests/unit/irq_fixture.h) runs twice under make test: as built, on the
# x86 model, and with UMSI_TEST_CTL=imsic, on the simulator's IMSIC model
# with the RISC-V IMSIC back end (tests/unit/ctl_fixture.h). The second run
# is build/tests/<test>-imsic, a two-line wrapper around the same binary,
# listed in TEST_BINS so that scripts/run-tests counts its tests, skips
# included, under its own name (and make test-asan runs it too). Tests that
# check an x86-only fact skip there with a one-line reason.
#
# The tests that build their machine through the fixtures (machine_new,
# machine_up) are found by name; test_imsic and test_its, which build their
# own IMSIC and ITS machines, are not run again. mk/unit-its.mk runs the
# same binaries a third time, on the ITS.
UNIT_IMSIC_RE := \<machine_(new|up|up_nofile)[(]
UNIT_IMSIC_SRCS := $(shell grep -lE '$(UNIT_IMSIC_RE)' tests/unit/test_*.c)
UNIT_IMSIC := $(patsubst tests/unit/%.c,$(BUILD)/tests/%-imsic,$(UNIT_IMSIC_SRCS))
TEST_BINS += $(UNIT_IMSIC)

$(UNIT_IMSIC): $(BUILD)/tests/%-imsic: $(BUILD)/tests/% mk/unit-imsic.mk
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nUMSI_TEST_CTL=imsic exec "$$(dirname "$$0")/%s" "$$@"\n' \
		'$*' > $@.tmp
	chmod +x $@.tmp
	mv $@.tmp $@
