#!/bin/bash
# RDMA between two guests: a client writes into a server's file MRs.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/two-host.sh [--config test|debug] [--kernels series,base]
                           [--help]
For each kernel (default: series, then base), boots two guests joined by a
QEMU socket network over 127.0.0.1 (virtio-net, rxe on each): a server
(10.0.2.1) and a client (10.0.2.2). The client RDMA-WRITEs into files the
server registered on ext4 and on xfs while the server syncs them, and the
server checks every round in its mapping and on its block device; then
the server punches a hole over the registered file, which revokes the MR
instead of waiting, and the client's next RDMA WRITE must fail with
IBV_WC_REM_ACCESS_ERR (tests/rdma/rdma_2host); then unmodified ib_write_bw
runs from the client
into the server's MR on an ext4 file, an xfs file (the server runs sync
in a loop meanwhile) and anonymous memory (tests/rdma/perftest_2host.sh).
Builds what is missing. Logs: build/run-2host-KERNEL-CONFIG/{server,client}.
Prints the server and client tables (series beside base) and the
bandwidths with the file/anon ratios; exits non-zero if a test of the
first kernel failed.
USAGE
}
cfg=test kernels=series,base
while (( $# )); do
	case $1 in
	--help) usage; exit 0 ;;
	--config) cfg=$2; shift 2 ;;
	--kernels) kernels=$2; shift 2 ;;
	*) usage >&2; exit 2 ;;
	esac
done
check_kernels "$kernels"


# run_pair WHICH: boot the server and the client of one kernel.
run_pair() {
	local which=$1 kernel bin out port spid
	kernel_and_tests "$which" "$cfg"
	out=$BUILD/run-2host-$which-$cfg
	port=$(( 20000 + RANDOM % 20000 ))
	rm -rf "$out"
	mkdir -p "$out"
	say "$which: server guest listens on 127.0.0.1:$port"
	"$TOP/scripts/run-qemu.sh" \
		--kernel "$kernel" --bin "$bin" --out "$out/server" \
		--net "listen:$port" --append pinsafe_role=server \
		--only rdma_2host,perftest_2host --timeout 1800 \
		2> >(sed 's/^/[server] /' >&2) &
	spid=$!
	# QEMU's socket netdev must listen before the client connects.
	for _ in $(seq 1 150); do
		ss -ltn 2>/dev/null | grep -q "127.0.0.1:$port " && break
		kill -0 "$spid" 2>/dev/null || die "the server guest did not start"
		sleep 0.2
	done
	"$TOP/scripts/run-qemu.sh" \
		--kernel "$kernel" --bin "$bin" --out "$out/client" \
		--net "connect:$port" --append pinsafe_role=client \
		--only rdma_2host,perftest_2host --timeout 1800 \
		2> >(sed 's/^/[client] /' >&2)
	wait "$spid"
}

IFS=, read -r -a which <<< "$kernels"
for w in "${which[@]}"; do
	run_pair "$w"
done

rc=0
for side in server client; do
	args=()
	for w in "${which[@]}"; do
		args+=("$w=$BUILD/run-2host-$w-$cfg/$side")
	done
	say "$side guest"
	"$TOP/scripts/report.py" "${args[@]}" || rc=1
done
say "ib_write_bw into the server's MR (MB/s), client side"
for w in "${which[@]}"; do
	grep -h '^# bw' "$BUILD/run-2host-$w-$cfg/client/results.log" 2>/dev/null |
		sed "s/^# /   $w: /" || echo "   $w: no bandwidth figures"
done
exit "$rc"
