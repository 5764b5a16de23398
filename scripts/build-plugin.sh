#!/bin/bash
# Build the insn_window QEMU TCG plugin (instruction counts for make bench).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/build-plugin.sh [--help]
Builds scripts/qemu-plugin/insn_window.c into build/qemu-plugin/insn_window.so
and prints its path. The plugin API header (qemu-plugin.h) is in no Debian
binary package, only in the qemu source package: the first run takes it
from the source of the installed qemu-system-x86 (apt-get source
--download-only; when apt knows no deb-src for Debian yet, it adds
/etc/apt/sources.list.d/pinsafe-src.{sources,list}, the deb-src twins of
the configured Debian entries, and runs apt-get update) and keeps it in
build/qemu-plugin/include/.
USAGE
}
[[ ${1:-} == --help ]] && { usage; exit 0; }
(( $# == 0 )) || { usage >&2; exit 2; }

out=$BUILD/qemu-plugin
hdr=$out/include/qemu-plugin.h
if [[ ! -f $hdr ]]; then
	ver=$(dpkg-query -W -f='${source:Version}' qemu-system-x86 2>/dev/null) ||
		die "qemu-system-x86 is not installed (scripts/deps.sh)"
	say "fetching the qemu $ver source package for qemu-plugin.h"
	rm -rf "$out/src"
	mkdir -p "$out/include"
	apt_source qemu "$ver" "$out/src"
	tar -xJf "$out"/src/qemu_*.orig.tar.xz -C "$out/src" --wildcards \
		'*/include/qemu/qemu-plugin.h'
	cp "$out"/src/qemu-*/include/qemu/qemu-plugin.h "$hdr.tmp"
	grep -q '^#define QEMU_PLUGIN_VERSION' "$hdr.tmp" ||
		die "no QEMU_PLUGIN_VERSION in the qemu $ver plugin header"
	mv "$hdr.tmp" "$hdr"
	rm -rf "$out/src"
fi
make -s -C "$TOP/scripts/qemu-plugin" OUT="$out" QEMU_INCLUDE="$out/include" >&2 ||
	die "plugin build failed"
echo "$out/insn_window.so"
