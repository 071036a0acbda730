# SPDX-License-Identifier: MIT
# `umsi sim`: the simulator front end.
SIMCMD_SRCS := $(addprefix tools/sim/,simcmd.c simparse.c simrun.c)
UMSI_TOOL_OBJS += $(SIMCMD_SRCS:%.c=$(BUILD)/host/%.o)
TEST_SCRIPTS += tests/sim/umsi-sim.t tests/sim/sim-input.t tests/sim/sanitizers.t

.PHONY: sim-demo
sim-demo: $(BUILD)/umsi
	$(BUILD)/umsi sim
