# SPDX-License-Identifier: MIT
# make demo: the main job. Boots the reference kernel in QEMU when the
# kernel demo exists (scripts/qemu-demo), else runs `umsi sim`.
.PHONY: demo
demo: real-all
	@if [ -x scripts/qemu-demo ] && [ -f $(BUILD)/umsi-kernel ]; then \
		scripts/qemu-demo; \
	else \
		$(BUILD)/umsi sim; \
	fi
