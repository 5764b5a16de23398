#!/bin/bash
# Build a kernel and the tests, boot it, run every suite, print the table.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/check.sh [--base] [--config qemu|test|debug] [--only SUITES]
                        [--filter TESTS] [--no-report] [--help]
Installs missing packages, fetches the base, makes build/linux, builds the
kernel (series, or the plain base with --base) and the tests, boots it in
QEMU and runs all suites (or those named by --only; --filter names
test cases of the pin_* selftests, e.g. lost_write,pin_races_truncate:
only the programs that have one of them run). Logs go to
build/run-{series,base}-CONFIG/. Prints the per-test table and
"N passed, N failed"; exits non-zero on any failure, including QEMU
exiting non-zero, no console log, or a guest that did not finish.
PINSAFE_ACCEL=auto|kvm|tcg selects the accelerator (scripts/run-qemu.sh).
"make check" runs the harness self-tests (make selftest) first.
USAGE
}
which=series cfg="test" only="" filter="" report=1
while (( $# )); do
	case $1 in
	--help) usage; exit 0 ;;
	--base) which=base; shift ;;
	--config) cfg=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	--filter) filter=$2; shift 2 ;;
	--no-report) report=0; shift ;;
	*) usage >&2; exit 2 ;;
	esac
done

t0=$(date +%s)
kernel_and_tests "$which" "$cfg"
t1=$(date +%s)
out=$BUILD/run-$which-$cfg
qargs=(--kernel "$kernel" --bin "$bin" --out "$out")
# A KASAN + lockdep guest under TCG runs every suite in about 30 min when
# alone on the host: give it three times that before it is killed.
[[ $cfg == debug ]] && qargs+=(--timeout 5400)
[[ -n $only ]] && qargs+=(--only "$only")
[[ -n $filter ]] && qargs+=(--filter "$filter")
"$TOP/scripts/run-qemu.sh" "${qargs[@]}"
t2=$(date +%s)
say "timing: build $((t1 - t0))s, boot+tests $((t2 - t1))s"
(( report )) || exit 0
"$TOP/scripts/report.py" "$which=$out" | tee "$out/report.txt"
