# shellcheck shell=sh disable=SC2154 # variables of guest/run-tests.sh
# make fstests: a curated fstests list in KTAP.
# Sourced by guest/run-tests.sh after guest/lib.sh; defines run_job.

# fstests (scripts/fstests.sh): the built checkout pinsafe_fstests (on the
# host, read-only over 9p) is copied to a tmpfs and run with
# pinsafe_fstests_fs on /dev/vda (TEST) and /dev/vdb (SCRATCH): the tests of
# tests/fstests/tests.list, or the group pinsafe_fstests_group, never those
# of tests.exclude. One suite, fstests_<fs>, in KTAP (guest/fstests-ktap.py).
run_job() {
	fs=${pinsafe_fstests_fs:?}
	src=$pinsafe_fstests
	dst=/run/fstests
	list=$pinsafe_dir/tests/fstests/tests.list
	log "fstests: copying $src"
	mkdir -p "$dst" /mnt/test /mnt/scratch
	if ! cp -a "$src/." "$dst/"; then
		log "fstests: copy of $src failed"
		return 1
	fi
	cat > "$dst/local.config" <<-EOF
	export FSTYP=$fs
	export TEST_DEV=/dev/vda TEST_DIR=/mnt/test
	export SCRATCH_DEV=/dev/vdb SCRATCH_MNT=/mnt/scratch
	export RESULT_BASE=/tmp/fstests-results
	# No udevd in the guest: dmsetup makes its own /dev/mapper nodes and
	# fstests settles with dm_links (below), not "udevadm wait", which
	# waits for ever without udev.
	export DM_DISABLE_UDEV=1
	export UDEV_SETTLE_PROG=/run/dm_links
	unset UDEV_WAIT_PROG
	EOF
	# What udev's dm rules do: /dev/mapper/NAME becomes a symlink to the
	# devtmpfs node dm-N. fstests finds a dm device's sysfs directory
	# (/sys/fs/xfs/dm-N/error, ...) by resolving that symlink; with the
	# plain node dmsetup makes it looks for /sys/fs/xfs/NAME instead.
	cat > /run/dm_links <<-'EOF'
	#!/bin/sh
	for n in /dev/mapper/*; do
		[ -b "$n" ] && [ ! -L "$n" ] || continue
		dev=$(stat -c '%t:%T' "$n") || continue
		dev=$((0x${dev%:*})):$((0x${dev#*:}))
		dm=$(basename "$(readlink -f "/sys/dev/block/$dev")")
		[ -b "/dev/$dm" ] && ln -sfn "../$dm" "$n"
	done
	sleep 1
	EOF
	chmod +x /run/dm_links
	# cgroup2 for the cgroup writeback tests (generic/563).
	if ! grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts; then
		mount -t cgroup2 none /sys/fs/cgroup ||
			log "fstests: no cgroup2: generic/563 will not run"
	fi
	case $fs in
	ext4) mkfs.ext4 -q -F /dev/vda ;;
	xfs) mkfs.xfs -q -f /dev/vda ;;
	esac
	awk '!/^#/ && NF { print $1 }' "$pinsafe_dir/tests/fstests/tests.exclude" \
		> /tmp/fstests.exclude
	if [ -n "${pinsafe_fstests_group:-}" ]; then
		set -- -g "$pinsafe_fstests_group"
		expected=0
	elif [ -n "${pinsafe_fstests_tests:-}" ]; then
		# shellcheck disable=SC2046 # one word per test name
		set -- $(echo "$pinsafe_fstests_tests" | tr ',' ' ')
		expected=$#
	else
		# generic/ tests and those of this file system only: check runs
		# any test it is named, xfs/ ones on ext4 too.
		# shellcheck disable=SC2046 # one word per test name
		set -- $(awk -v fs="$fs" '!/^#/ && NF && ($1 ~ "^generic/" || $1 ~ "^" fs "/") { print $1 }' "$list")
		expected=$#
	fi
	SUITE_TIMEOUT=${pinsafe_fstests_timeout:-5400}
	cat > /tmp/fstests-run.sh <<-EOF
	#!/bin/sh
	cd $dst || exit 1
	timeout -k 30 $((SUITE_TIMEOUT - 120)) ./check -R xunit \\
		-E /tmp/fstests.exclude $* > /tmp/check.log 2>&1
	rc=\$?
	python3 $pinsafe_dir/guest/fstests-ktap.py \
		/tmp/fstests-results/result.xml /tmp/check.log fstests_$fs $expected
	exit \$rc
	EOF
	# Progress on the console: check's own lines, as they come.
	(tail -n +1 -F /tmp/check.log 2>/dev/null | sed -u 's/^/pinsafe fstests: /' \
		> /dev/console) &
	tailer=$!
	fstests_watchdog "${pinsafe_fstests_stall:-900}" &
	watchdog=$!
	suite "fstests_$fs" sh /tmp/fstests-run.sh
	kill $tailer $watchdog 2>/dev/null
}

# fstests has no per-test timeout: a test that makes no progress for $1
# seconds gets its processes and blocked tasks shown on the console (what it
# waits for), then is killed so that ./check reports it failed and goes on.
fstests_watchdog() {
	stall=$1
	last=""
	since=$(date +%s)
	while sleep 30; do
		now=$(date +%s)
		cur=$(ls -l --time-style=+%s /tmp/check.log 2>/dev/null)
		if [ "$cur" != "$last" ]; then
			last=$cur
			since=$now
			continue
		fi
		[ $((now - since)) -lt "$stall" ] && continue
		log "fstests: no progress for ${stall}s; processes, then blocked tasks:"
		ps -eo pid,ppid,stat,wchan:30,etimes,args > /dev/console
		echo w > /proc/sysrq-trigger
		# the running test: the newest child of ./check running a test
		t=$(pgrep -n -f '^(/bin/)?bash [^ ]*tests/[a-z0-9]+/[0-9]+$')
		if [ -n "$t" ]; then
			log "fstests: killing stalled test pid $t and its children"
			pkill -KILL -P "$t"
			kill -KILL "$t"
		fi
		since=$now
	done
}
