#!/bin/bash
# The series' KUnit suite the way mm maintainers run KUnit: kunit.py.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/kunit.sh [--arch x86_64|um] [--help]   (make kunit)
Runs the tree's own runner on the series' mm/.kunitconfig (the gup_pin
suite):
  tools/testing/kunit/kunit.py run --kunitconfig=mm --arch=x86_64
with its build in build/kunit-ARCH (ccache) and, for x86_64, its own QEMU
command line (TCG here when KVM cannot run). kunit.py builds a minimal
kernel from the .kunitconfig, boots it and parses the KTAP; its summary
and exit status are this script's.
USAGE
}
arch=x86_64
while (( $# )); do
	case $1 in
	--help) usage; exit 0 ;;
	--arch) arch=$2; shift 2 ;;
	*) usage >&2; exit 2 ;;
	esac
done
[[ $arch == x86_64 || $arch == um ]] || die "--arch takes x86_64 or um"
[[ -f $TREE/mm/.kunitconfig ]] || die "$TREE/mm/.kunitconfig missing: is the series applied?"
cc=gcc
command -v ccache > /dev/null && cc="ccache gcc"
cd "$TREE"
# kunit.py builds in the source tree's directory unless told otherwise,
# and wants a clean source tree for O= builds (ours is: build.sh uses O=).
exec python3 tools/testing/kunit/kunit.py run --kunitconfig=mm --arch="$arch" \
	--build_dir="$BUILD/kunit-$arch" --jobs="$(nproc)" \
	--make_options "CC=$cc" --timeout 900
