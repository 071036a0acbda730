# SPDX-License-Identifier: MIT
#
# uMSI top-level build. Each module owns a fragment in mk/*.mk that adds to
# the variables below; this file only wires them together.
#
#   make              library, simulator, the umsi command
#   make test         every test (unit, property, fuzz smoke, QEMU), one summary
#   make install PREFIX=/usr/local
#
CC      ?= cc
AR      ?= ar
BUILD   ?= build
PREFIX  ?= /usr/local
OPT     ?= -O2 -g
WARN    := -std=c11 -Wall -Wextra -Werror
CPPFLAGS_CORE := -Iinclude
# The core is always compiled as a kernel would compile it.
CFLAGS_CORE := $(WARN) $(OPT) -ffreestanding -fno-builtin -fno-strict-aliasing \
               -fno-common $(EXTRA_CFLAGS)
# On x86-64 the one archive also serves kernels: no red zone, no SSE (an
# interrupt path must not touch the FPU state).
ifneq ($(filter x86_64%,$(shell $(CC) -dumpmachine)),)
CFLAGS_CORE += -mno-red-zone -mgeneral-regs-only
endif
# Hosted code (simulator, tools, tests) may use libc.
CFLAGS_HOST := $(WARN) $(OPT) -D_GNU_SOURCE $(EXTRA_CFLAGS)
LDFLAGS_HOST := $(EXTRA_LDFLAGS)

CORE_SRCS := $(sort $(wildcard src/*/*.c src/arch/*/*.c))
CORE_OBJS := $(CORE_SRCS:%.c=$(BUILD)/core/%.o)
LIB       := $(BUILD)/libumsi.a
SIM_LIB   := $(BUILD)/libumsi-sim.a

# Fragments append to these.
ALL_TARGETS  := $(LIB)
TEST_BINS    :=
TEST_SCRIPTS :=
CHECK_TARGETS :=

.PHONY: all test check install clean
all: real-all

# Layers, checked as the core compiles (docs/PORTING.md section 3): the
# IRQ core, the allocator, the back ends and the helpers include no PCI
# header; the PCI layer includes no back end (umsi/ctl.h, umsi/x86.h).
$(BUILD)/core/src/irq/%.o $(BUILD)/core/src/vector/%.o $(BUILD)/core/src/arch/%.o \
$(BUILD)/core/src/lib/%.o: CFLAGS_LAYER := -DUMSI_LAYER_CORE
$(BUILD)/core/src/pci/%.o: CFLAGS_LAYER := -DUMSI_LAYER_PCI

$(BUILD)/core/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_CORE) $(CFLAGS_CORE) $(CFLAGS_LAYER) -MMD -MP -c $< -o $@

$(LIB): $(CORE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

include $(sort $(wildcard mk/*.mk))

# The unit tests share fixture headers their rules do not name: a change
# to one rebuilds every test binary (a stale one would test old code).
$(filter $(BUILD)/tests/test_%,$(TEST_BINS)): $(wildcard tests/unit/*fixture*.h)

real-all: $(ALL_TARGETS)

.PHONY: build-tests
build-tests: $(TEST_BINS)

# make test: build everything, run the checks, then every test binary and
# script through one runner that prints "N passed, N failed" last.
test: $(ALL_TARGETS) $(TEST_BINS) $(CHECK_TARGETS)
	@scripts/run-tests $(TEST_BINS) -- $(TEST_SCRIPTS)

install: $(LIB)
	install -d $(DESTDIR)$(PREFIX)/include/umsi $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/umsi/*.h $(DESTDIR)$(PREFIX)/include/umsi/
	install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/
	sed -e 's|@PREFIX@|$(PREFIX)|' umsi.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/umsi.pc
	if [ -x $(BUILD)/umsi ]; then install -m 755 $(BUILD)/umsi $(DESTDIR)$(PREFIX)/bin/; fi

clean:
	rm -rf $(BUILD)

-include $(CORE_OBJS:.o=.d)
