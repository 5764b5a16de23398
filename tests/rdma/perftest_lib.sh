# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
#
# Helpers of perftest.sh and perftest_2host.sh (sourced): their common
# start, KTAP lines and counts, the GID to use, and bounded waits for
# perftest processes. The caller sets DEV (the RDMA device) and the
# counters passed, failed, skipped and testno to 0.

diag() {
	printf '# %s\n' "$*"
}

result() {	# result ok|fail|skip NAME [REASON]
	testno=$((testno + 1))
	case $1 in
	ok) echo "ok $testno $2"; passed=$((passed + 1)) ;;
	skip) echo "ok $testno $2 # SKIP $3"; skipped=$((skipped + 1)) ;;
	*) echo "not ok $testno $2"; failed=$((failed + 1)) ;;
	esac
}

# The first non-zero GID of port 1 among the first 16, RoCE v2 first.
gid_index() {
	ports=/sys/class/infiniband/$DEV/ports/1
	first=
	i=0
	while [ $i -lt 16 ]; do
		gid=$(cat "$ports/gids/$i" 2>/dev/null) || gid=
		case $gid in
		'' | 0000:0000:0000:0000:0000:0000:0000:0000) ;;
		*)
			[ -n "$first" ] || first=$i
			type=$(cat "$ports/gid_attrs/types/$i" 2>/dev/null)
			if [ "$type" = "RoCE v2" ]; then
				echo "$i"
				return 0
			fi
			;;
		esac
		i=$((i + 1))
	done
	[ -n "$first" ] && echo "$first"
}

# Is anything listening on TCP port $1?
listening() {
	hex=$(printf '%04X' "$1")
	grep -Eq ":$hex [0-9A-F]+:0000 0A " /proc/net/tcp /proc/net/tcp6 \
		2>/dev/null
}

alive() {
	kill -0 "$1" 2>/dev/null
}

# Wait up to $2 seconds for pid $1 to exit, then kill it; leaves its status
# in $rc.
reap() {
	t=0
	while alive "$1" && [ $t -lt $(($2 * 5)) ]; do
		sleep 0.2
		t=$((t + 1))
	done
	if alive "$1"; then
		diag "server still running after ${2}s, killing it"
		kill "$1" 2>/dev/null
	fi
	wait "$1"
	# shellcheck disable=SC2034 # the caller reads it
	rc=$?
}

show_log() {	# show_log PREFIX FILE
	sed "s/^/# $1| /" "$2"
}

# Nothing can run: one skipped test (see ktap.h for why not "1..0").
skip_all() {
	echo "1..1"
	echo "ok 1 ${SKIP_NAME:-perftest_write_bw} # SKIP $1"
	exit 4
}

# The start of both scripts: the RDMA device, perftest and a GID must be
# there (else one skipped test); sets gid; $TMP exists until exit.
perftest_prepare() {
	[ -d "/sys/class/infiniband/$DEV" ] || skip_all "no $DEV device"
	command -v ib_write_bw > /dev/null ||
		skip_all "ib_write_bw (perftest) not installed"
	gid=$(gid_index)
	[ -n "$gid" ] || skip_all "$DEV has no usable GID"
	mkdir -p "$TMP" || exit 1
	trap 'rm -rf "$TMP"' EXIT
}
