# SPDX-License-Identifier: MIT
# make demo: the main job. Boots the reference kernel in QEMU when the
# kernel demo exists (scripts/qemu-demo), else runs `umsi sim`.
# make demo ARCH=riscv64: the riscv64 kernel on qemu-system-riscv64 virt
# with the AIA (scripts/qemu-demo --arch riscv64). make demo ARCH=arm64:
# the arm64 kernel on qemu-system-aarch64 virt with GICv3 and an ITS
# (scripts/qemu-demo --arch arm64); with GIC=2 on a GICv2 with its v2m
# MSI frame (--gic 2). ARCH unset, x86_64, x86 or amd64: the x86 demo.
.PHONY: demo
ifeq ($(ARCH),riscv64)
demo: real-all kernel-riscv64
	scripts/qemu-demo --arch riscv64
else ifneq ($(filter arm64 aarch64,$(ARCH)),)
demo: real-all kernel-arm64
	scripts/qemu-demo --arch arm64 --gic $(or $(GIC),3)
else ifneq ($(filter-out x86_64 x86 amd64,$(ARCH)),)
demo:
	@echo "make demo: ARCH=$(ARCH) has no demo (x86_64, riscv64, arm64)" >&2; exit 2
else
demo: real-all
	@if [ -x scripts/qemu-demo ] && [ -f $(BUILD)/umsi-kernel ]; then \
		scripts/qemu-demo; \
	else \
		$(BUILD)/umsi sim; \
	fi
endif

# make bench-hotadd: QMP device_add to MSI-X enabled (QEMU's trace) for a
# hot-added e1000e, the distribution over 40 samples, on every
# architecture; then a virtio-net on x86-64 for the reference kernel and,
# when Debian's cloud kernel is installed, for Linux on the same machine
# (20 samples: its pciehp waits 5 s before each removal)
# (scripts/bench-hotadd; docs/bench-hotadd.md). A benchmark: figures, no
# verdict.
.PHONY: bench-hotadd
bench-hotadd: kernel kernel-arm64 kernel-riscv64 $(BUILD)/umsi
	scripts/bench-hotadd --arch x86_64
	scripts/bench-hotadd --arch arm64
	scripts/bench-hotadd --arch riscv64
	scripts/bench-hotadd --arch x86_64 --device virtio-net-pci
	@if scripts/linux-guest-initramfs --print-kernel >/dev/null 2>&1; then \
		scripts/bench-hotadd --guest linux --samples 20 || \
			echo "no Linux figure: the guest could not be run (above)"; \
	else \
		echo "no Linux figure: no /boot/vmlinuz-*-cloud-amd64 (Debian: linux-image-cloud-amd64)"; \
	fi
