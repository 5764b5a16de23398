#!/bin/bash
# Build the userspace tests the guest runs: mm selftests and tests/rdma.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/build-tests.sh [--base|--bisect] [--config CFG] [--help]
Builds gup_test and gup_longterm (and pin_* selftests when the tree has
them) from the tree's tools/testing/selftests/mm against the uapi headers
of build/obj-{series,base,bisect}-CFG, and tests/rdma (with rdma-core's
own tests from python3-pyverbs), into
build/tests-{series,base,bisect}/. Prints that directory. --bisect builds
the mm selftests only: tests/bench, tests/soak and tests/rdma need the
series' gup_test device emulation, which early prefixes lack, and
make check-bisect runs none of them.
USAGE
}
which=series cfg="test"
while (( $# )); do
	case $1 in
	--help) usage; exit 0 ;;
	--base) which=base; shift ;;
	--bisect) which=bisect; shift ;;
	--config) cfg=$2; shift 2 ;;
	*) usage >&2; exit 2 ;;
	esac
done
src=$TREE
[[ $which == base ]] && src=$BASE_TREE
[[ $which == bisect ]] && src=$BUILD/bisect
obj=$BUILD/obj-$which-$cfg
out=$BUILD/tests-$which
[[ -d $obj/usr/include ]] || die "no uapi headers in $obj; run scripts/build.sh first"
# A prefix must not run a test program left from a later one (pin_writeback
# exists only from its selftest patch on): build the bisect tests from
# scratch each time.
[[ $which == bisect ]] && rm -rf "$out"
mkdir -p "$out/mm" "$out/rdma"

st=$src/tools/testing/selftests/mm
progs=(gup_test gup_longterm)
for t in "$st"/pin_*.c; do
	[[ -f $t ]] && progs+=("$(basename "$t" .c)")
done
make -s -C "$st" OUTPUT="$out/mm" KHDR_INCLUDES="-isystem $obj/usr/include" \
	"${progs[@]/#/$out/mm/}" >&2 || die "selftest build failed"
if [[ $which == bisect ]]; then
	echo "$out"
	exit 0
fi
mkdir -p "$out/bench"
make -s -C "$TOP/tests/bench" OUT="$out/bench" KSRC="$src" >&2 ||
	die "tests/bench build failed"
mkdir -p "$out/soak"
make -s -C "$TOP/tests/soak" OUT="$out/soak" KSRC="$src" >&2 ||
	die "tests/soak build failed"
if [[ -f $TOP/tests/rdma/Makefile ]]; then
	make -s -C "$TOP/tests/rdma" OUT="$out/rdma" >&2 || die "tests/rdma build failed"
fi
# rdma-core's own tests, as Debian's python3-pyverbs ships them (some gzipped).
rct=/usr/share/doc/rdma-core/tests
if [[ -f $rct/__init__.py ]]; then
	rm -rf "$out/rdma/rdma-core-tests"
	cp -r "$rct" "$out/rdma/rdma-core-tests"
	find "$out/rdma/rdma-core-tests" -name '*.gz' -exec gunzip -f {} +
fi
echo "$out"
