#!/bin/bash
# Debian packages of the patched kernel (make deb).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/deb.sh [--config test|debian] [--help]   (make deb)
Builds linux-image and linux-headers packages of the series kernel with the
kernel's own "make bindeb-pkg" and checks that they install: dpkg-deb
must read them, "dpkg --dry-run -i" must accept them on this machine, and
the image must hold the series' kernel.
  --config test    (default) the test kernel's config (build/obj-series-test,
                   built by scripts/build.sh if needed); minutes with ccache
  --config debian  Debian's own 6.12 config (package linux-config-6.12,
                   config.amd64_none_amd64), module signing off, in
                   build/obj-series-debian; thousands of modules: hours on
                   two cores (docs/results.md has the figure)
The packages are written to build/deb-CONFIG/.
USAGE
}
cfg="test"
while (( $# )); do
	case $1 in
	--help) usage; exit 0 ;;
	--config) cfg=$2; shift 2 ;;
	*) usage >&2; exit 2 ;;
	esac
done
[[ $cfg == test || $cfg == debian ]] || die "--config takes test or debian"
pkgs=(dpkg-dev debhelper rsync kmod cpio bc)
[[ $cfg == debian ]] && pkgs+=(linux-config-6.12)
apt_install "${pkgs[@]}"
SUDO=
(( EUID != 0 )) && SUDO=sudo

export KBUILD_BUILD_TIMESTAMP="2000-01-01" KBUILD_BUILD_USER=pinsafe KBUILD_BUILD_HOST=pinsafe
export CCACHE_BASEDIR=$BUILD CCACHE_NOHASHDIR=1 CCACHE_SLOPPINESS=time_macros
if [[ $cfg == test ]]; then
	"$TOP/scripts/build.sh" --config test > /dev/null
	obj=$BUILD/obj-series-test
else
	"$TOP/scripts/tree.sh"
	obj=$BUILD/obj-series-debian
	mkdir -p "$obj"
	src_cfg=/usr/src/linux-config-6.12/config.amd64_none_amd64.xz
	[[ -f $src_cfg ]] || die "$src_cfg missing (package linux-config-6.12)"
	if [[ ! -f $obj/.config ]]; then
		xz -dc "$src_cfg" > "$obj/.config"
		# Debian signs modules with its own key, which we do not have.
		"$TREE/scripts/config" --file "$obj/.config" -d MODULE_SIG_ALL \
			--set-str MODULE_SIG_KEY "" --set-str SYSTEM_TRUSTED_KEYS "" \
			--set-str SYSTEM_REVOCATION_KEYS "" -d DEBUG_INFO_BTF
		make -C "$TREE" O="$obj" ARCH=x86_64 CC="ccache gcc" olddefconfig > /dev/null
	fi
fi
# Versioned like Debian's own kernel packages, so that dpkg upgrades rather
# than downgrades linux-libc-dev.
pkgver=$(make -s -C "$TREE" kernelversion)-1pinsafe
out=$BUILD/deb-$cfg
rm -rf "$out"
mkdir -p "$out"
start=$(date +%s)
log=$out/bindeb-pkg.log
PROGRESS_LOG=$log with_progress "bindeb-pkg ($cfg)" bash -c \
	"make -C '$TREE' O='$obj' ARCH=x86_64 CC='ccache gcc' -j'$(( $(nproc) + 1 ))' \
		KDEB_PKGVERSION='$pkgver' bindeb-pkg > '$log' 2>&1" ||
	die "bindeb-pkg failed, see $log"
# bindeb-pkg writes the packages next to the object tree.
mv "$(dirname "$obj")"/linux-*_"$pkgver"_*.deb "$out"/
say "bindeb-pkg ($cfg): $(( $(date +%s) - start ))s"
rel=$(cat "$obj/include/config/kernel.release")
img=$(ls "$out"/linux-image-"$rel"_*.deb)
for d in "$out"/*.deb; do
	dpkg-deb --info "$d" > /dev/null || die "dpkg-deb cannot read $d"
done
# (grep -c, not -q: an early exit would kill the producer under pipefail)
[[ $(dpkg-deb --contents "$img" | grep -c "boot/vmlinuz-$rel\$") == 1 ]] ||
	die "$img holds no /boot/vmlinuz-$rel"
# The image must be the series kernel: its gup code has the series' symbols.
[[ $(dpkg-deb --fsys-tarfile "$img" | tar -xO "./boot/System.map-$rel" |
	grep -c ' filemap_wait_pinned_range$') == 1 ]] || die "$img is not the series kernel"
$SUDO dpkg --dry-run -i "$out"/*.deb > "$out/dry-run.log" 2>&1 ||
	die "dpkg --dry-run -i refuses the packages, see $out/dry-run.log"
! grep -q 'downgrading' "$out/dry-run.log" ||
	die "installing would downgrade a package, see $out/dry-run.log"
ls -l "$out"/*.deb
say "packages of $rel in $out: readable, installable (dpkg --dry-run -i)"
