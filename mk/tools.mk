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
