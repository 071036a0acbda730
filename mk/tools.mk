# SPDX-License-Identifier: MIT
# The umsi command. Subcommand modules add their objects to UMSI_TOOL_OBJS
# (tools/inspect -> mk/inspect.mk, tools/sim -> mk/simcmd.mk).
UMSI_TOOL_OBJS += $(BUILD)/host/tools/umsi.o
ALL_TARGETS += $(BUILD)/umsi

$(BUILD)/host/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Iplatform $(CFLAGS_HOST) -MMD -MP -c $< -o $@

$(BUILD)/umsi: $(UMSI_TOOL_OBJS) $(SIM_LIB) $(LIB)
	$(CC) $(CFLAGS_HOST) -o $@ $(UMSI_TOOL_OBJS) $(SIM_LIB) $(LIB) $(LDFLAGS_HOST) -lpthread

-include $(UMSI_TOOL_OBJS:.o=.d)

# The command built with AddressSanitizer, UBSan and LeakSanitizer, for
# tests/sim/sanitizers.t and tests/inspect/sanitizers.t: the same build
# tree and flags as `make test-asan` (mk/pci.mk), so the libraries it
# builds serve both.
UMSI_ASAN_BUILD = $(or $(ASAN_BUILD),build/asan)
UMSI_ASAN_FLAGS = $(or $(ASAN_FLAGS),-fsanitize=address,undefined \
	-fno-sanitize-recover=undefined -fno-omit-frame-pointer)
.PHONY: umsi-asan
umsi-asan:
	$(MAKE) BUILD=$(UMSI_ASAN_BUILD) EXTRA_CFLAGS="$(UMSI_ASAN_FLAGS)" \
		EXTRA_LDFLAGS="$(UMSI_ASAN_FLAGS)" $(UMSI_ASAN_BUILD)/umsi
