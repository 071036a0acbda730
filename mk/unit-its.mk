# SPDX-License-Identifier: MIT
#
# The third run of every unit test built on the shared fixtures
# (tests/unit/test_pci_fixture.h, tests/unit/irq_fixture.h), beside the x86
# run and the IMSIC run (mk/unit-imsic.mk): with UMSI_TEST_CTL=its, on the
# simulator's GICv3 ITS model with the Arm ITS back end
# (tests/unit/ctl_fixture.h). The run is build/tests/<test>-its, a two-line
# wrapper around the same binary, listed in TEST_BINS so that
# scripts/run-tests counts its tests, skips included, under its own name
# (and make test-asan runs it too). Tests that check an x86- or IMSIC-only
# fact skip there with a one-line reason.
#
# The tests are found by name as in mk/unit-imsic.mk; test_imsic and
# test_its, which build their own IMSIC and ITS machines, are not run again.
UNIT_ITS_RE := \<machine_(new|up|up_nofile)[(]
UNIT_ITS_SRCS := $(shell grep -lE '$(UNIT_ITS_RE)' tests/unit/test_*.c)
UNIT_ITS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%-its,$(UNIT_ITS_SRCS))
TEST_BINS += $(UNIT_ITS)

$(UNIT_ITS): $(BUILD)/tests/%-its: $(BUILD)/tests/% mk/unit-its.mk
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nUMSI_TEST_CTL=its exec "$$(dirname "$$0")/%s" "$$@"\n' \
		'$*' > $@.tmp
	chmod +x $@.tmp
	mv $@.tmp $@
