# shellcheck shell=sh disable=SC2154 # variables of guest/run-tests.sh
# make check: every test suite, each in KTAP on the results port.
# Sourced by guest/run-tests.sh after guest/lib.sh; defines run_job.

# The pin_writeback tests run on raid5 unless --filter names others.
PW_RAID5_TESTS="-t bounce_forward_progress -t stable_during_writeback -t quiesced_pages_whole -t lost_write"

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
	# Writeback of pinned page cache (needs the series' gup_test device).
	pw_args=""
	for t in $(echo "$filter" | tr ',' ' '); do
		pw_args="$pw_args -t $t"
	done
	for fs in ext4 xfs tmpfs integ raid5; do
		[ -x "$pinsafe_bin/mm/pin_writeback" ] || break
		mountpoint -q "/mnt/$fs" || continue
		selected "pin_writeback_$fs" || continue
		args=$pw_args
		[ "$fs" = raid5 ] && [ -z "$args" ] && args=$PW_RAID5_TESTS
		# shellcheck disable=SC2086 # one word per -t and test name
		(cd "/mnt/$fs" && suite "pin_writeback_$fs" "$pinsafe_bin/mm/pin_writeback" $args)
	done
	# Revocable pins (the series' gup_test device registers them).
	for fs in ext4 xfs; do
		[ -x "$pinsafe_bin/mm/pin_revoke" ] || break
		mountpoint -q "/mnt/$fs" || continue
		# shellcheck disable=SC2086 # one word per -t and test name
		(cd "/mnt/$fs" && suite "pin_revoke_$fs" "$pinsafe_bin/mm/pin_revoke" $pw_args)
	done
	if [ -f "$pinsafe_dir/tests/rdma/suites.sh" ]; then
		# shellcheck source-path=SCRIPTDIR/..
		# shellcheck source=tests/rdma/suites.sh
		. "$pinsafe_dir/tests/rdma/suites.sh"
	fi
	echo 1 > /proc/sys/vm/stat_refresh 2>/dev/null
	log "vmstat: $(grep -E 'pinned|nr_foll_pin' /proc/vmstat | tr '\n' ' ')"
}
