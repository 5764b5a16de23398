#!/bin/bash
# Boot the series kernel with the test setup and a shell on this terminal.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/shell.sh [--base] [--config qemu|test|debug] [--help]   (make shell)
Builds the kernel (series, or base plus the test patches with --base) and
the tests if needed, boots it in QEMU with the scratch disks formatted
and mounted (ext4 /mnt/ext4, xfs /mnt/xfs, ext4 on dm-integrity
/mnt/integ), rxe on a dummy netdev and the test binaries in $PINSAFE_BIN,
and gives you a shell on the guest's console, as virtme-ng does. The
host's / is the guest's root, read-only. "exit" or Ctrl-A x ends the VM.
The prerequisites (deps, base, tree) come from the Makefile.
USAGE
}
which=() cfg=test
while (( $# )); do
	case $1 in
	--help) usage; exit 0 ;;
	--base) which=(--base); shift ;;
	--config) cfg=$2; shift 2 ;;
	*) usage >&2; exit 2 ;;
	esac
done
kernel=$("$TOP/scripts/build.sh" --config "$cfg" "${which[@]}")
bin=$("$TOP/scripts/build-tests.sh" --config "$cfg" "${which[@]}")
exec "$TOP/scripts/run-qemu.sh" --kernel "$kernel" --bin "$bin" \
	--out "$BUILD/shell-$cfg" --shell
