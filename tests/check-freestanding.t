#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# TAP: the core compiles and links as a kernel would build it.
exec "$(dirname "$0")/../scripts/check-freestanding"
