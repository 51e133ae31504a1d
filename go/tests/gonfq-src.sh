# SPDX-License-Identifier: LGPL-2.1-or-later
#
# go/tests/gonfq-src.sh: sourced by upstream.sh and vs-go-nfqueue.sh.
# gonfq_unpack SRC DIR puts go-nfqueue's source into DIR (its go.mod at
# the top) from SRC: a directory, a release tarball
# (go-nfqueue-2.0.0.tar.gz), or Debian's package of it
# (golang-github-florianl-go-nfqueue-dev_2.0.0-2_all.deb: the source under
# /usr/share/gocode/src/github.com/florianl/go-nfqueue).
gonfq_unpack() {
	mkdir -p "$2" || return 1
	case $1 in
	*.deb)
		dpkg-deb --fsys-tarfile "$1" |
			tar -C "$2" -x --strip-components=8 \
				./usr/share/gocode/src/github.com/florianl/go-nfqueue ||
			return 1
		;;
	*)
		if [ -d "$1" ]; then
			cp -r "$1"/. "$2"/ || return 1
		else
			tar -C "$2" --strip-components=1 -xf "$1" || return 1
		fi
		;;
	esac
	[ -f "$2/go.mod" ] && [ -f "$2/nfqueue.go" ] || {
		echo "gonfq-src: no go-nfqueue source in $1" >&2
		return 1
	}
}
