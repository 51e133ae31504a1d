# SPDX-License-Identifier: LGPL-2.1-or-later
# go/: the Go package (cgo over the shared library, its own go.mod; see
# go/README.md). Not part of `all` nor of the release tarball: `make
# check-go` builds and tests it against this build's library with the
# tree's headers (a Go toolchain, golang-go: tests/deps.sh; root: the
# tests use the real kernel, a network namespace each), run by
# tests/run-all.sh on build-werror.
check-go: lib/libnfq-batch.la
	$(top_srcdir)/go/tests/run.sh "$(abs_top_builddir)"

.PHONY: check-go
