#!/bin/bash
# Benchmarks in exact guest instruction counts: base (+ test patches) and
# series, side by side.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/bench.sh [--rounds N] [--profile WINDOW] [--help]  (make bench)
Builds (or reuses) the base kernel with the test patches and the series
kernel, and the insn_window QEMU plugin (scripts/build-plugin.sh), then
boots the two kernels alternately, N rounds (default 3), under TCG with
-icount shift=0,sleep=off, one vCPU and idle=halt. In each boot
tests/bench/pin_bench runs its workloads on ext4 and on ext4 over
dm-integrity, both on loop devices over a tmpfs, each workload between two
markers; the plugin counts the kernel and user instructions executed
between them. scripts/bench-report.py prints, per workload, the median
kernel instructions of each kernel, their spread over the boots, the
ratio base/series and the guest-clock throughput, then the targets of
issue #13, decided on instruction counts. scripts/stack-report.py then
compares the stack frames on the writeback paths of the two vmlinux
(checkstack.pl; static, no boot).
Results are kept in build/bench-{base,series}-ROUND/ (results.log: the
guest's output; insn.log: the plugin's counts).

--profile WINDOW (a workload name, e.g. write_fsync) boots each kernel
once with the plugin also counting that window's kernel instructions per
translation block, and prints with scripts/bench-profile.py the functions
whose counts differ between base and series, instead of the ratios.

Environment, for runs with kernels built elsewhere (all four together):
  BASE_KERNEL, SERIES_KERNEL   bzImages to boot instead of building them
  BASE_BIN, SERIES_BIN         directories with bench/pin_bench for each
BENCH_OUT (default build/) is where the bench-* directories go.
USAGE
}
rounds=3
profile=""
while (( $# )); do
	case $1 in
	--help) usage; exit 0 ;;
	--rounds) rounds=$2; shift 2 ;;
	--profile) profile=$2; shift 2 ;;
	*) usage >&2; exit 2 ;;
	esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "--rounds takes a positive number"
# A profile compares one boot of each kernel
[[ -z $profile ]] || rounds=1

declare -A kimg tbin
if [[ -n ${BASE_KERNEL:-}${SERIES_KERNEL:-}${BASE_BIN:-}${SERIES_BIN:-} ]]; then
	[[ -f ${BASE_KERNEL:-} && -f ${SERIES_KERNEL:-} &&
	   -x ${BASE_BIN:-}/bench/pin_bench && -x ${SERIES_BIN:-}/bench/pin_bench ]] ||
		die "BASE_KERNEL, SERIES_KERNEL (bzImages), BASE_BIN and SERIES_BIN (with bench/pin_bench) go together"
	kimg=([base]=$BASE_KERNEL [series]=$SERIES_KERNEL)
	tbin=([base]=$BASE_BIN [series]=$SERIES_BIN)
	say "using the given kernels and test binaries"
else
	for which in base series; do
		kernel_and_tests "$which" test
		kimg[$which]=$kernel
		tbin[$which]=$bin
	done
fi
plugin=$("$TOP/scripts/build-plugin.sh")
if [[ -n $profile ]]; then
	# The window ids: pin_bench.c's enum window, W_WRITE_FSYNC = 1 onwards
	id=$(sed -n '/^enum window {/,/^};/p' "$TOP/tests/bench/pin_bench.c" |
	     tr -d ' \t\n' | sed 's/^enumwindow{//; s/};$//; s/=1//' |
	     tr ',' '\n' | grep -nx "W_${profile^^}" | cut -d: -f1) ||
		die "--profile: no window '$profile' in tests/bench/pin_bench.c"
	plugin+=",profile=$id"
fi

out=${BENCH_OUT:-$BUILD}
runs=()
for (( r = 1; r <= rounds; r++ )); do
	for which in base series; do
		say "bench round $r/$rounds: $which"
		"$TOP/scripts/run-qemu.sh" --kernel "${kimg[$which]}" \
			--bin "${tbin[$which]}" --out "$out/bench-$which-$r" \
			--only bench --timeout 900 --icount shift=0,sleep=off \
			--plugin "$plugin" --smp 1 --append idle=halt
		runs+=("$which:$out/bench-$which-$r")
	done
done

if [[ -n $profile ]]; then
	map() { echo "$(dirname "$1")/../../../System.map"; }
	python3 "$TOP/scripts/bench-profile.py" \
		"$out/bench-base-1" "${BASE_MAP:-$(map "${kimg[base]}")}" \
		"$out/bench-series-1" "${SERIES_MAP:-$(map "${kimg[series]}")}" |
		tee "$out/bench-profile-$profile.txt"
	exit 0
fi
python3 "$TOP/scripts/bench-report.py" "${runs[@]}" | tee "$out/bench-report.txt"
# The writeback paths' stack frames, from the vmlinux beside each bzImage.
vml() { echo "$(dirname "$1")/../../../vmlinux"; }
if [[ -f $(vml "${kimg[base]}") && -f $(vml "${kimg[series]}") ]]; then
	echo
	python3 "$TOP/scripts/stack-report.py" \
		"$(vml "${kimg[base]}")" "$(vml "${kimg[series]}")" |
		tee -a "$out/bench-report.txt"
else
	say "no vmlinux beside the bzImages: no stack report"
fi
