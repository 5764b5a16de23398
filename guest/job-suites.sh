# shellcheck shell=sh disable=SC2154 # variables of guest/run-tests.sh
# make check: every test suite, each in KTAP on the results port.
# Sourced by guest/run-tests.sh after guest/lib.sh; defines run_job.

# The selftests of writeback of DMA-pinned page cache (PW_PROGS, guest/lib.sh)
# run as one suite each per file system (PROG_FS).
# On raid5 only these tests run (unless --filter names others), so only the
# programs that hold one of them.
PW_RAID5_TESTS="bounce_forward_progress stable_during_writeback quiesced_pages_whole lost_write"

# pin_suite PROG FS [NAMES...]: run the selftest PROG in /mnt/FS as suite
# PROG_FS; with NAMES, only those of its tests (-t NAME each), and not at
# all when it has none of them (its -l lists its tests, the test name
# after the fixture and variant columns).
pin_suite() {
	prog=$1 fs=$2
	shift 2
	bin=$pinsafe_bin/mm/$prog
	[ -x "$bin" ] || return 0
	mountpoint -q "/mnt/$fs" || return 0
	selected "${prog}_$fs" || return 0
	args=""
	if [ $# -gt 0 ]; then
		tests=$("$bin" -l 2>&1 | cut -c48-)
		for t in "$@"; do
			if printf '%s\n' "$tests" | grep -qxF -- "$t"; then
				args="$args -t $t"
			fi
		done
		[ -n "$args" ] || return 0
	fi
	# shellcheck disable=SC2086 # one word per -t and test name
	(cd "/mnt/$fs" && suite "${prog}_$fs" "$bin" $args)
}

# The pin_* selftests, as --filter (pinsafe_filter) says.
pin_suites() {
	# Writeback of pinned page cache (needs the series' gup_test device).
	names=$(echo "$filter" | tr ',' ' ')
	for prog in $PW_PROGS; do
		for fs in ext4 xfs tmpfs integ raid5; do
			fs_names=$names
			[ "$fs" = raid5 ] && [ -z "$fs_names" ] &&
				fs_names=$PW_RAID5_TESTS
			# shellcheck disable=SC2086 # one word per test name
			pin_suite "$prog" "$fs" $fs_names
		done
	done
	# Revocable pins (the series' gup_test device registers them).
	for fs in ext4 xfs; do
		# shellcheck disable=SC2086 # one word per test name
		pin_suite pin_revoke "$fs" $names
	done
}

run_job() {
	echo 16 > /proc/sys/vm/nr_hugepages
	setup_disks
	setup_rdma
	run_kunit_debugfs_check

	suite gup_test "$pinsafe_dir/guest/gup-test-suite.sh" "$pinsafe_bin/mm/gup_test"
	for fs in tmpfs ext4 xfs; do
		selected "gup_longterm_$fs" || continue
		(cd "/mnt/$fs" && suite "gup_longterm_$fs" "$pinsafe_bin/mm/gup_longterm")
	done
	pin_suites
	if [ -f "$pinsafe_dir/tests/rdma/suites.sh" ]; then
		# shellcheck source-path=SCRIPTDIR/..
		# shellcheck source=tests/rdma/suites.sh
		. "$pinsafe_dir/tests/rdma/suites.sh"
	fi
	echo 1 > /proc/sys/vm/stat_refresh 2>/dev/null
	log "vmstat: $(grep -E 'pinned|nr_foll_pin' /proc/vmstat | tr '\n' ' ')"
}
