#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# TAP: the layers point one way (scripts/check-layers).
exec "$(dirname "$0")/../scripts/check-layers"
