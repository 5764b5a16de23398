#!/bin/bash
# Long soak of every writer and disturbance at once, on a debug kernel.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/soak.sh [--duration 30m] [--config debug|test]
                       [--kernels series,base] [--help]
Boots each kernel (default: the series only) built with CONFIG (default
debug: KASAN, lockdep, DEBUG_VM) and runs tests/soak/soak for DURATION
(s, m or h): device-emulated and RDMA writers into ext4, xfs and
dm-integrity files with pins dropped and retaken at random, sync storms,
truncate/punch/collapse/insert/zero, reflink and freeze on xfs, a memory
cgroup near its limit, compaction and drop_caches. A progress line every
minute. At the end every file is checked through its block device, pins
must balance and nr_pinned_dirty be back to 0. Logs:
build/run-soak-KERNEL-CONFIG/. Prints the table (with any splat) and the
run's figures; exits non-zero on a failure of the first kernel.
USAGE
}
dur=30m cfg=debug kernels=series
while (( $# )); do
	case $1 in
	--help) usage; exit 0 ;;
	--duration) dur=$2; shift 2 ;;
	--config) cfg=$2; shift 2 ;;
	--kernels) kernels=$2; shift 2 ;;
	*) usage >&2; exit 2 ;;
	esac
done
[[ $dur =~ ^([0-9]+)([smh]?)$ ]] || die "--duration takes e.g. 1800s, 30m or 1h"
secs=${BASH_REMATCH[1]}
case ${BASH_REMATCH[2]} in m) secs=$((secs * 60)) ;; h) secs=$((secs * 3600)) ;; esac
(( secs >= 60 )) || die "--duration must be at least a minute"
check_kernels "$kernels"

IFS=, read -r -a which <<< "$kernels"
args=()
for w in "${which[@]}"; do
	kernel_and_tests "$w" "$cfg"
	out=$BUILD/run-soak-$w-$cfg
	# Boot and the final checks take minutes on a debug kernel under TCG.
	"$TOP/scripts/run-qemu.sh" --kernel "$kernel" --bin "$bin" --out "$out" \
		--timeout $((secs + 2400)) --append "pinsafe_soak=$secs"
	args+=("$w=$out")
done
rc=0
"$TOP/scripts/report.py" "${args[@]}" | tee "$BUILD/soak-$cfg.txt" || rc=$?
for w in "${which[@]}"; do
	say "$w: soak figures"
	grep -hE '^# (soak|[a-z_0-9]+: [0-9]+ operations|nr_pinned_dirty|pins held)' \
		"$BUILD/run-soak-$w-$cfg/results.log" | sed 's/^# /   /' || true
done
exit "$rc"
