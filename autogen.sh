#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Generate configure and Makefile.in from a git checkout.
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
autoreconf --force --install --warnings=all "$@"
echo "Now run ./configure && make"
