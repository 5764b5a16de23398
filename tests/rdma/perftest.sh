#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# perftest.sh [FS...]: run the unmodified perftest ib_write_bw in loopback
# over rxe with --mmap buffers (MAP_SHARED files) on each file system
# (default: tmpfs ext4 xfs) and print one KTAP document, one test per file
# system. Server and client each mmap their own file on that file system;
# perftest registers it with LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ.
#
# Environment: PINSAFE_MNT_{TMPFS,EXT4,XFS}; PINSAFE_RDMA_DEV (default rxe0).

# perftest must work on MAP_SHARED files of every file system here. The
# base kernel refuses writable FOLL_LONGTERM pins of MAP_SHARED ext4/xfs
# files (mm/gup.c writable_file_mapping_allowed()), so perftest fails at
# memory registration there: that is what the series fixes. "reg_fail"
# remains for a kernel where the refusal is policy (vm.longterm_pin_file_mappings=0).
EXPECT_TMPFS=pass
EXPECT_EXT4=pass
EXPECT_XFS=pass

DEV=${PINSAFE_RDMA_DEV:-rxe0}
PORT_BASE=18515
ITERS=20
MSG_SIZE=4096
FILE_MB=1
LISTEN_WAIT=30		# seconds for the server to start listening
CLIENT_TIMEOUT=60	# seconds for the whole client run
SERVER_TIMEOUT=120	# hard bound of the server's life
SERVER_GRACE=10		# seconds the server may outlive the client

TMP=${TMPDIR:-/tmp}/pinsafe-perftest.$$
# shellcheck source=tests/rdma/perftest_lib.sh
. "$(dirname "$0")/perftest_lib.sh"
failed=0
passed=0
skipped=0
testno=0

# run_pair FS MNT PORT: server and client on files in MNT. Sets srv_rc,
# cli_rc and leaves the output in $TMP/server.log and $TMP/client.log.
run_pair() {
	pair_port=$3
	srv_file=$2/perftest.server
	cli_file=$2/perftest.client
	for f in "$srv_file" "$cli_file"; do
		dd if=/dev/zero of="$f" bs=1M count=$FILE_MB conv=fsync \
			2>/dev/null
	done
	set -- -d "$DEV" -x "$gid" -F -n $ITERS -s $MSG_SIZE -p "$pair_port"

	timeout -k 5 $SERVER_TIMEOUT ib_write_bw "$@" --mmap="$srv_file" \
		> "$TMP/server.log" 2>&1 &
	srv_pid=$!
	t=0
	while ! listening "$pair_port" && alive $srv_pid &&
	      [ $t -lt $((LISTEN_WAIT * 5)) ]; do
		sleep 0.2
		t=$((t + 1))
	done
	if listening "$pair_port"; then
		timeout -k 5 $CLIENT_TIMEOUT ib_write_bw "$@" \
			--mmap="$cli_file" 127.0.0.1 > "$TMP/client.log" 2>&1
		cli_rc=$?
	else
		echo "server did not listen on port $pair_port" > "$TMP/client.log"
		cli_rc=255
	fi
	# A failed client must not leave the server waiting: bounded reap.
	reap $srv_pid $SERVER_GRACE
	srv_rc=$rc
	rm -f "$srv_file" "$cli_file"
}

# The lines perftest prints when ibv_reg_mr() fails, per side.
reg_failure_lines() {
	for side in server client; do
		grep -i -e "allocate MR" -e "create mr" -e "reg_mr" \
			"$TMP/$side.log" | sed "s/^/$side: /"
	done
}

test_fs() {	# test_fs FS PORT
	fs=$1
	name=perftest_write_bw_$fs
	case $fs in
	tmpfs) mnt=${PINSAFE_MNT_TMPFS:-} expect=$EXPECT_TMPFS magic=1021994 ;;
	ext4) mnt=${PINSAFE_MNT_EXT4:-} expect=$EXPECT_EXT4 magic=ef53 ;;
	xfs) mnt=${PINSAFE_MNT_XFS:-} expect=$EXPECT_XFS magic=58465342 ;;
	*) result skip "$name" "unknown file system $fs"; return ;;
	esac
	if [ -z "$mnt" ]; then
		result skip "$name" "mount point of $fs not set"
		return
	fi
	if [ "$(stat -f -c %t "$mnt" 2>/dev/null)" != "$magic" ]; then
		result skip "$name" "$mnt is not $fs"
		return
	fi

	diag "---- $fs: ib_write_bw --mmap on $mnt, expecting $expect"
	run_pair "$fs" "$mnt" "$2"
	show_log server "$TMP/server.log"
	show_log client "$TMP/client.log"
	diag "server exit $srv_rc, client exit $cli_rc"

	case $expect in
	pass)
		if [ $srv_rc -eq 0 ] && [ $cli_rc -eq 0 ]; then
			result ok "$name"
		else
			lines=$(reg_failure_lines)
			if [ -n "$lines" ]; then
				echo "$lines" | sed 's/^/# perftest said: /'
				diag "$fs: perftest failed at memory registration"
			fi
			result fail "$name"
		fi
		;;
	reg_fail)
		diag "$fs MAP_SHARED longterm pin expected to be refused: perftest must fail at memory registration"
		lines=$(reg_failure_lines)
		if [ $srv_rc -eq 0 ] && [ $cli_rc -eq 0 ]; then
			diag "perftest succeeded, but its registration should have been refused"
			result fail "$name"
		elif [ -n "$lines" ]; then
			echo "$lines" | sed 's/^/# perftest said: /'
			result ok "$name"
		else
			diag "perftest failed, but not at memory registration"
			result fail "$name"
		fi
		;;
	esac
}

main() {
	echo "TAP version 13"
	perftest_prepare
	[ $# -gt 0 ] || set -- tmpfs ext4 xfs
	echo "1..$#"
	diag "device $DEV gid index $gid"
	port=$PORT_BASE
	for fs in "$@"; do
		test_fs "$fs" $port
		port=$((port + 1))
	done
	echo "# Totals: pass:$passed fail:$failed xfail:0 xpass:0 skip:$skipped error:0"
	[ $failed -eq 0 ]
}

main "$@"
