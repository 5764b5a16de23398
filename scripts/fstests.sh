#!/bin/bash
# Run the curated fstests list on ext4 or xfs, series beside base.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/fstests.sh --fstests DIR --fs ext4|xfs [--kernels series,base]
                          [--group GROUP | --tests T1,T2...] [--config test|debug]
                          [--stall SECONDS] [--help]
Runs fstests from DIR (an fstests checkout you have: fstests is not in
Debian 12 and nothing of it is committed here) in the test kernel, for each
kernel (default series, then base): TEST and SCRATCH are two 8 GiB virtio
disks, the tests are those of tests/fstests/tests.list (or fstests group
GROUP, e.g. quick on a machine with KVM, or the --tests given), never those of
tests/fstests/tests.exclude. Installs fstests' build dependencies and
builds DIR if needed (make), and creates the fsgqa users fstests asks for
(useradd) if missing. Logs: build/run-fstests-FS-KERNEL-CONFIG/. Prints
pass/fail/notrun per test for every kernel side by side and any splat;
exits non-zero if a test failed on the first kernel. A test that makes no
progress for --stall seconds (default 900) has its blocked tasks shown on
the console and is killed (it fails; the run goes on).
Budget about 45 minutes per file system and kernel under TCG.
USAGE
}
fst="" fs="" kernels=series,base group="" tests="" cfg=test stall=900
while (( $# )); do
	case $1 in
	--help) usage; exit 0 ;;
	--fstests) fst=$2; shift 2 ;;
	--fs) fs=$2; shift 2 ;;
	--kernels) kernels=$2; shift 2 ;;
	--group) group=$2; shift 2 ;;
	--tests) tests=$2; shift 2 ;;
	--config) cfg=$2; shift 2 ;;
	--stall) stall=$2; shift 2 ;;
	*) usage >&2; exit 2 ;;
	esac
done
[[ -n $fst && -f $fst/check && -d $fst/tests/generic ]] ||
	die "--fstests must name an fstests checkout (with ./check and tests/generic)"
[[ $fs == ext4 || $fs == xfs ]] || die "--fs takes ext4 or xfs"
check_kernels "$kernels"
[[ -z $group || $group =~ ^[a-z_,]+$ ]] || die "bad --group '$group'"
[[ -z $tests || $tests =~ ^[a-z0-9]+/[0-9]+(,[a-z0-9]+/[0-9]+)*$ ]] ||
	die "--tests takes e.g. generic/029,xfs/011, not '$tests'"
[[ $stall =~ ^[0-9]+$ ]] || die "--stall takes seconds, not '$stall'"
(( stall >= 60 )) || die "--stall takes at least 60 seconds"
[[ -z $group || -z $tests ]] || die "--group and --tests exclude each other"
fst=$(realpath "$fst")
[[ $fst != *' '* ]] || die "paths with spaces are not supported"

SUDO=
(( EUID != 0 )) && SUDO=sudo
# What fstests' README lists for Debian, less what scripts/deps.sh has.
FSTESTS_PKGS=(
	xfslibs-dev uuid-dev libtool-bin automake autoconf libacl1-dev
	libaio-dev libattr1-dev libgdbm-dev libgdbm-compat-dev libcap-dev
	liburing-dev gawk fio dbench uuid-runtime quota attr acl bc psmisc
	sqlite3 xfsdump indent libinih-dev pkg-config
)
apt_install "${FSTESTS_PKGS[@]}"
if [[ ! -x $fst/ltp/fsx || ! -x $fst/src/aio-dio-regress/aio-dio-extend-stat ]]; then
	say "building fstests in $fst"
	PROGRESS_LOG=$BUILD/fstests-build.log with_progress "fstests build" \
		bash -c "make -C '$fst' -j'$(nproc)' > '$BUILD/fstests-build.log' 2>&1" ||
		die "fstests build failed, see $BUILD/fstests-build.log"
fi
# The users fstests' README asks for (tests that need them are "not run"
# without them).
for u in fsgqa fsgqa2 123456-fsgqa; do
	id "$u" > /dev/null 2>&1 || $SUDO useradd -m "$u" ||
		say "could not add user $u: tests that need it will not run"
done

IFS=, read -r -a which <<< "$kernels"
append="pinsafe_fstests=$fst pinsafe_fstests_fs=$fs pinsafe_fstests_timeout=5400 pinsafe_fstests_stall=$stall"
[[ -n $group ]] && append+=" pinsafe_fstests_group=$group"
[[ -n $tests ]] && append+=" pinsafe_fstests_tests=$tests"
args=()
for w in "${which[@]}"; do
	kernel_and_tests "$w" "$cfg"
	out=$BUILD/run-fstests-$fs-$w-$cfg
	"$TOP/scripts/run-qemu.sh" --kernel "$kernel" --bin "$bin" --out "$out" \
		--disk-size 8G --timeout 5700 --append "$append"
	args+=("$w=$out")
done
"$TOP/scripts/report.py" "${args[@]}" | tee "$BUILD/fstests-$fs-$cfg.txt"
