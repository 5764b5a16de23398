#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# perftest_2host.sh server MODE... | client SERVER_IP MODE...
#
# Unmodified perftest ib_write_bw between two hosts: the client writes into
# the server's buffer, which is, per MODE, a MAP_SHARED file on ext4 or xfs
# (--mmap; the server runs sync in a loop meanwhile, so writeback of the
# registered file goes on all the time) or anonymous memory ("anon"). A
# MODE may be given several times (interleaved rounds: TCG's speed drifts).
# Each side prints one KTAP document with one test per MODE given,
# write_bw_MODE_N (perftest exited 0); the client also prints "# bw MODE
# MB/s..." with every round's average and their median, and "# bw_ratio
# MODE/anon R" of the medians for each file mode, which
# scripts/two-host.sh shows. Both sides must be given the same MODEs in
# the same order.
#
# Environment: PINSAFE_MNT_{EXT4,XFS}; PINSAFE_RDMA_DEV (default rxe0).

DEV=${PINSAFE_RDMA_DEV:-rxe0}
PORT_BASE=18700
MSG_SIZE=65536
DURATION=10		# seconds of traffic per round (-D)
FILE_MB=16
SERVER_TIMEOUT=180	# the client may start late: the other guest boots
CLIENT_TRIES=60		# client attempts, 1 s apart, until the server listens

TMP=${TMPDIR:-/tmp}/pinsafe-perftest2.$$
SKIP_NAME=perftest_2host
failed=0
passed=0
skipped=0
testno=0
# shellcheck source=tests/rdma/perftest_lib.sh
. "$(dirname "$0")/perftest_lib.sh"

mode_mnt() {	# mode_mnt MODE: the mount point of a file mode, or ""
	case $1 in
	ext4) echo "${PINSAFE_MNT_EXT4:-}" ;;
	xfs) echo "${PINSAFE_MNT_XFS:-}" ;;
	*) echo "" ;;
	esac
}

# nth MODE: sets n to how many times MODE has been run, this one included.
nth() {
	n=0
	eval "n=\$((\${nth_$1:-0} + 1)); nth_$1=\$n"
}

serve() {	# serve MODE PORT NAME
	mode=$1 name=$3
	mmap=
	if [ "$mode" != anon ]; then
		mnt=$(mode_mnt "$mode")
		if [ -z "$mnt" ]; then
			result skip "$name" "no $mode mount"
			return
		fi
		file=$mnt/perftest.2host
		dd if=/dev/zero of="$file" bs=1M count=$FILE_MB conv=fsync \
			2>/dev/null
		mmap=--mmap=$file
	fi
	set -- -d "$DEV" -x "$gid" -F -D $DURATION -s $MSG_SIZE -p "$2"
	# shellcheck disable=SC2086 # $mmap is one word or none
	timeout -k 5 $SERVER_TIMEOUT ib_write_bw "$@" $mmap \
		> "$TMP/server.log" 2>&1 &
	srv_pid=$!
	syncs=0
	if [ -n "$mmap" ]; then
		while alive $srv_pid; do
			sync
			syncs=$((syncs + 1))
			sleep 0.2
		done
	fi
	wait $srv_pid
	rc=$?
	show_log server "$TMP/server.log"
	diag "$mode: server exit $rc, $syncs syncs beside it"
	[ -n "$mmap" ] && rm -f "$file"
	if [ $rc -eq 0 ]; then
		result ok "$name"
	else
		result fail "$name"
	fi
}

median() {	# median NUMBER...
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
		print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# The average bandwidth (MB/s) of a perftest client log, or "".
bw_of() {
	awk '/BW average/ { getline; print $4; exit }' "$1"
}

run_client() {	# run_client SERVER MODE PORT NAME
	name=$4
	set -- "$1" "$2" -d "$DEV" -x "$gid" -F -D $DURATION -s $MSG_SIZE -p "$3"
	server=$1 mode=$2
	shift 2
	try=0
	while :; do
		timeout -k 5 $((DURATION + 60)) ib_write_bw "$@" "$server" \
			> "$TMP/client.log" 2>&1
		rc=$?
		try=$((try + 1))
		# Not listening yet: the server side may still be setting up.
		if [ $rc -ne 0 ] && [ $try -lt $CLIENT_TRIES ] &&
		   grep -q "Couldn't connect" "$TMP/client.log"; then
			sleep 1
			continue
		fi
		break
	done
	show_log client "$TMP/client.log"
	bw=$(bw_of "$TMP/client.log")
	diag "$mode: client exit $rc after $try attempt(s)"
	if [ "$rc" -eq 0 ] && [ -n "$bw" ]; then
		eval "bws_$mode=\"\${bws_$mode:-} $bw\""
		result ok "$name"
	else
		result fail "$name"
	fi
}

main() {
	role=${1:-}
	echo "TAP version 13"
	case $role in
	server) shift ;;
	client) server=${2:?server address}; shift 2 ;;
	*) echo "usage: $0 server MODE... | client SERVER_IP MODE..." >&2; exit 2 ;;
	esac
	perftest_prepare
	[ $# -gt 0 ] || set -- ext4 xfs anon
	echo "1..$#"
	diag "$role: device $DEV gid index $gid, $DURATION s of ${MSG_SIZE}-byte writes per mode"
	port=$PORT_BASE
	for mode in "$@"; do
		nth "$mode"
		name=write_bw_${mode}_$n
		if [ "$role" = server ]; then
			serve "$mode" $port "$name"
		else
			run_client "$server" "$mode" $port "$name"
		fi
		port=$((port + 1))
	done
	if [ "$role" = client ]; then
		modes=$(printf '%s\n' "$@" | sort -u)
		for mode in $modes; do
			eval "v=\${bws_$mode:-}"
			[ -n "$v" ] || continue
			# shellcheck disable=SC2086 # one word per value
			med=$(median $v)
			eval "med_$mode=$med"
			diag "bw $mode $v median $med"
		done
		anon=${med_anon:-}
		for mode in $modes; do
			[ "$mode" = anon ] && continue
			eval "bw=\${med_$mode:-}"
			[ -n "$anon" ] && [ -n "$bw" ] &&
				diag "bw_ratio $mode/anon $(awk -v a="$bw" -v b="$anon" 'BEGIN { printf "%.3f", a / b }')"
		done
	fi
	echo "# Totals: pass:$passed fail:$failed xfail:0 xpass:0 skip:$skipped error:0"
	[ $failed -eq 0 ]
}

main "$@"
