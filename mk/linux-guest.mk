# SPDX-License-Identifier: MIT
#
# `umsi inspect` on a real Linux: tests/inspect/linux-guest.t boots
# Debian's cloud kernel (linux-image-cloud-amd64) under QEMU TCG with a
# busybox initramfs that scripts/linux-guest-initramfs makes at test time
# (busybox-static, pciutils and build/umsi), and compares the guest's
# `umsi inspect` with its lspci, with QEMU's monitor and with Linux.
#   make test                 runs it with the rest
#   make test-linux-guest     runs only it (about 10 s)
TEST_SCRIPTS += tests/inspect/linux-guest.t

.PHONY: test-linux-guest
test-linux-guest: $(BUILD)/umsi
	@scripts/run-tests -- tests/inspect/linux-guest.t

# Does QEMU send DEVICE_DELETED for an xHCI a guest removed? Debian's
# generic kernel (fetched once with apt-get download into
# build/linux-generic/) and the uMSI kernel each remove nec-usb-xhci and
# edu from a PCIe slot (scripts/xhci-unplug-check; about 2 minutes).
.PHONY: xhci-unplug-check
xhci-unplug-check: $(BUILD)/umsi kernel
	@scripts/xhci-unplug-check
