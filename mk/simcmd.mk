# SPDX-License-Identifier: MIT
# `umsi sim`: the simulator front end.
UMSI_TOOL_OBJS += $(BUILD)/host/tools/sim/simcmd.o
TEST_SCRIPTS += tests/sim/umsi-sim.t

.PHONY: sim-demo
sim-demo: $(BUILD)/umsi
	$(BUILD)/umsi sim
