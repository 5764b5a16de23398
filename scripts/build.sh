#!/bin/bash
# Configure and build a guest kernel out of tree with ccache.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/build.sh [--config qemu|test|debug] [--base|--bisect] [--help]
Builds bzImage (and the uapi headers for the selftests) from build/linux,
or with --base from build/linux-base (tag base plus only the test
patches named in patches/test-patches.txt), or with --bisect from
build/bisect (a prefix of the series, scripts/check-bisect.sh), into
build/obj-{series,base,bisect}-CONFIG. The config is tinyconfig +
kvm_guest.config + config/qemu.config [+ test.config [+ debug.config]],
merged with merge_config.sh. Prints the path of the bzImage.
USAGE
}
cfg="test"
which=series
while (( $# )); do
	case $1 in
	--help) usage; exit 0 ;;
	--config) cfg=$2; shift 2 ;;
	--base) which=base; shift ;;
	--bisect) which=bisect; shift ;;
	*) usage >&2; exit 2 ;;
	esac
done
case $cfg in
qemu) frags=(qemu) ;;
test) frags=(qemu test) ;;
debug) frags=(qemu test debug) ;;
*) die "unknown config '$cfg' (qemu, test or debug)" ;;
esac

src=$TREE
[[ $which == bisect ]] && src=$BUILD/bisect
if [[ $which == base ]]; then
	src=$BASE_TREE
	[[ -d $TREE/.git ]] || die "no $TREE; run 'make tree' first"
	[[ -d $src ]] || die "no $src; run 'make tree' first"
fi
[[ -f $src/Makefile ]] || die "no kernel source in $src; run 'make tree' first"
obj=$BUILD/obj-$which-$cfg
mkdir -p "$obj"

jobs=$(( $(nproc) + 1 ))
export KBUILD_BUILD_TIMESTAMP="2000-01-01" KBUILD_BUILD_USER=pinsafe KBUILD_BUILD_HOST=pinsafe
export CCACHE_BASEDIR=$BUILD CCACHE_NOHASHDIR=1 CCACHE_SLOPPINESS=time_macros
kmake() { make -C "$src" O="$obj" ARCH=x86_64 CC="ccache gcc" -j"$jobs" "$@"; }

fraglist=("$src/kernel/configs/kvm_guest.config")
for f in "${frags[@]}"; do fraglist+=("$TOP/config/$f.config"); done
# Reconfigure when a fragment or any Kconfig file of the tree changes (a
# patch may add the symbols a fragment asks for).
cfgsum=$({ cat "${fraglist[@]}"; git -C "$src" ls-files -s -- '*Kconfig*'; } |
	sha256sum | cut -d' ' -f1)
if [[ ! -f $obj/.config || $(cat "$obj/.pinsafe-cfgsum" 2>/dev/null) != "$cfgsum" ]]; then
	say "configuring $obj ($cfg: tinyconfig + ${fraglist[*]##*/})"
	kmake -s tinyconfig >/dev/null
	(cd "$src" && ARCH=x86_64 scripts/kconfig/merge_config.sh -m -O "$obj" \
		"$obj/.config" "${fraglist[@]}" >/dev/null)
	kmake -s olddefconfig >/dev/null
	# Every option we asked for must have survived olddefconfig.
	bad=0
	while IFS= read -r line; do
		[[ $line =~ ^(CONFIG_[A-Z0-9_]+)=(.*)$ ]] || continue
		sym=${BASH_REMATCH[1]} val=${BASH_REMATCH[2]}
		if ! grep -rqs --include='Kconfig*' -E "^(menu)?config ${sym#CONFIG_}\$" "$src"; then
			say "note: ${sym} does not exist in this tree"
			continue
		fi
		if [[ $val == n ]]; then
			grep -q "^$sym=" "$obj/.config" && { say "config: $sym should be off"; bad=1; }
		elif ! grep -qxF "$sym=$val" "$obj/.config"; then
			say "config: wanted $sym=$val, got: $(grep "^$sym=\|# $sym is" "$obj/.config" || echo unset)"
			bad=1
		fi
	done < <(cat "${fraglist[@]:1}")
	(( bad == 0 )) || die "config fragments did not apply cleanly"
	echo "$cfgsum" > "$obj/.pinsafe-cfgsum"
fi

say "building $which kernel ($cfg) in $obj, log: $obj/build.log"
build_logged() { kmake bzImage > "$obj/build.log" 2>&1; }
PROGRESS_LOG=$obj/build.log with_progress "build $which-$cfg" build_logged || {
	grep -E 'error|Error' "$obj/build.log" | head -30 >&2
	die "kernel build failed, see $obj/build.log"
}
kmake -s headers >> "$obj/build.log" 2>&1 || die "make headers failed"
echo "$obj/arch/x86/boot/bzImage"
