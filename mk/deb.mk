# SPDX-License-Identifier: MIT
#
# Debian packages (debian/): umsi (the command, its man page) and
# libumsi-dev (libumsi.a, headers, umsi.pc, guides, examples).
#
#   make deb        dpkg-buildpackage -us -uc -b on a copy of the tree in
#                   $(BUILD)/deb/umsi-VERSION; the .deb, .buildinfo and
#                   .changes files land in $(BUILD)/deb (dpkg-buildpackage
#                   writes beside the source tree, so building from a copy
#                   keeps everything inside the repository); then lintian
#                   on the .changes when lintian is installed
#   make test       runs tests/packaging/deb.t: make deb, lintian, both
#                   packages unpacked into a scratch root, a program built
#                   against it through pkg-config, the command run from it
#
# Needs the Debian packages dpkg-dev and debhelper (lintian for the check);
# build.sh installs them. The copy holds what git would: the tree without
# $(BUILD), .git and what .gitignore names.
DEB_DIR     = $(BUILD)/deb
DEB_VERSION = $(shell dpkg-parsechangelog -l debian/changelog -S Version 2>/dev/null)
DEB_SRC     = $(DEB_DIR)/umsi-$(DEB_VERSION)

TEST_SCRIPTS += tests/packaging/deb.t

.PHONY: deb deb-build deb-lint
deb: deb-build
	@if command -v lintian >/dev/null; then $(MAKE) --no-print-directory deb-lint; \
	else echo "make deb: lintian is not installed; packages not checked"; fi

deb-build:
	@command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null || \
		{ echo "make deb: needs dpkg-buildpackage and dh (Debian: dpkg-dev, debhelper)" >&2; exit 1; }
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_SRC) $(DEB_DIR)/tmp
	tar -cf - --exclude=./$(BUILD) --exclude=./.git --exclude-vcs-ignores . | \
		tar -xf - -C $(DEB_SRC)
	cd $(DEB_SRC) && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		TMPDIR=$(abspath $(DEB_DIR)/tmp) dpkg-buildpackage -us -uc -b
	@cd $(DEB_DIR) && ls -l *.deb

# lintian on what `make deb` built: errors and warnings fail; each
# override in debian/*.lintian-overrides carries its reason.
deb-lint:
	cd $(DEB_DIR) && TMPDIR=$(abspath $(DEB_DIR)/tmp) \
		lintian --fail-on error,warning --display-info --show-overrides \
		umsi_$(DEB_VERSION)_*.changes
