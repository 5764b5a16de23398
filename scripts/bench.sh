#!/bin/bash
# Writeback benchmarks: base (+ test patches) and series, side by side.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/bench.sh [--rounds N] [--help]     (make bench)
Builds (or reuses) the base kernel with the test patches and the series
kernel, then boots them alternately, N rounds (default 3), and runs
tests/bench/pin_bench on ext4 and on ext4 over dm-integrity in each boot.
Prints the median of every metric per kernel and the ratios, each ratio
with its range over the rounds:
  write_fsync  series/base      buffered write+fsync, unpinned (want >= 0.99)
  wb_pinned    / wb_unpinned    writeback of a pinned file vs an unpinned
                                one, series kernel (want >= 0.8)
  bounce       extra ns per bounced page on dm-integrity vs a memcpy
Under TCG the guests run with -icount (ICOUNT, default shift=0,sleep=off;
ICOUNT= turns it off), which takes the host's load out of the guest's
clock but not all noise: read the ranges before the medians. Results are
kept in build/bench-{base,series}-ROUND/.
USAGE
}
rounds=3
while (( $# )); do
	case $1 in
	--help) usage; exit 0 ;;
	--rounds) rounds=$2; shift 2 ;;
	*) usage >&2; exit 2 ;;
	esac
done

"$TOP/scripts/deps.sh"
"$TOP/scripts/fetch-base.sh"
"$TOP/scripts/tree.sh"
declare -A kernel bin
for which in base series; do
	args=()
	[[ $which == base ]] && args=(--base)
	kernel[$which]=$("$TOP/scripts/build.sh" --config test "${args[@]}")
	bin[$which]=$("$TOP/scripts/build-tests.sh" --config test "${args[@]}")
done

logs=()
for (( r = 1; r <= rounds; r++ )); do
	for which in base series; do
		say "bench round $r/$rounds: $which"
		"$TOP/scripts/run-qemu.sh" --kernel "${kernel[$which]}" \
			--bin "${bin[$which]}" --out "$BUILD/bench-$which-$r" \
			--only bench --timeout 900 \
			--icount "${ICOUNT-shift=0,sleep=off}"
		logs+=("$which:$BUILD/bench-$which-$r/results.log")
	done
done

python3 "$TOP/scripts/bench-report.py" "${logs[@]}"
