#!/bin/bash
# The main job: from a fresh machine to RDMA on a file in one command.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/demo.sh [--help]     (make demo; DEMO_BASE=1 make demo)
Installs what is missing, fetches and verifies the base, applies the
series, builds the kernel (or reuses the build), boots it in QEMU and runs
the rdma-core scenario over rxe: ibv_reg_mr() on anonymous, memfd, tmpfs,
ext4 and xfs memory, RDMA WRITE into it, fsync, and a check of the blocks
on disk. Prints buffer kind x (registers? WRITE lands? on disk?). With
DEMO_BASE=1, or when the base kernel is already built (make compare),
the base kernel runs the same scenario and is shown side by side.
Exits non-zero, with the end of the QEMU and console logs, if a guest did
not run to the end or the scenario did not run. QEMU uses KVM only when a
probe guest runs under it, else TCG; PINSAFE_ACCEL=kvm|tcg overrides
(scripts/run-qemu.sh --help).
USAGE
}
[[ ${1:-} == --help ]] && { usage; exit 0; }

runs=()
kernels=(series)
if [[ ${DEMO_BASE:-0} == 1 || -f $BUILD/obj-base-test/arch/x86/boot/bzImage ]]; then
	kernels+=(base)
fi
for which in "${kernels[@]}"; do
	say "kernel: $which"
	kernel_and_tests "$which" test
	"$TOP/scripts/run-qemu.sh" --kernel "$kernel" --bin "$bin" \
		--out "$BUILD/demo-$which" --only rdma --timeout 600
	runs+=("$which=$BUILD/demo-$which")
done
echo
"$TOP/scripts/demo-table.py" "${runs[@]}" ||
	die "the demo did not run to the end (see above); logs in $BUILD/demo-*/"
