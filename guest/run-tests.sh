#!/bin/sh
# Runs in the guest (started by guest/init): sets up scratch file systems
# and rxe, then runs every test suite. Each suite's KTAP goes to the results
# port (/dev/ttyS1) between "#### PINSAFE-SUITE name" and
# "#### PINSAFE-END name rc=N" markers; scripts/report.py parses it.
#
# Environment (from the kernel command line, set by scripts/run-qemu.sh):
#   pinsafe_dir   the project checkout (on the 9p root)
#   pinsafe_bin   the built test binaries (mm/, rdma/)
#   pinsafe_only  comma-separated suite name prefixes to run (default: all)
#   pinsafe_filter comma-separated test names: pin_writeback runs only those
#                 (pin_writeback -t NAME for each; default: all)
#   pinsafe_role  server or client: one of two guests (scripts/two-host.sh)
#   pinsafe_fstests, pinsafe_fstests_fs, pinsafe_fstests_group,
#   pinsafe_fstests_tests,
#   pinsafe_fstests_timeout, pinsafe_fstests_stall
#                            run fstests instead (scripts/fstests.sh)
#   pinsafe_soak  seconds: run the soak test instead (scripts/soak.sh)
#   pinsafe_shell 1: set up the disks and rxe, then an interactive shell on
#                 the console instead of the suites (make shell)
set -u

RESULTS=/dev/ttyS1
[ -c "$RESULTS" ] || RESULTS=/dev/console
SUITE_TIMEOUT=${pinsafe_timeout:-600}
pinsafe_dir=${pinsafe_dir:?pinsafe_dir not set}
if [ -n "${pinsafe_shell:-}" ]; then
	pinsafe_bin=${pinsafe_bin:-}
else
	pinsafe_bin=${pinsafe_bin:?pinsafe_bin not set}
fi
only=${pinsafe_only:-}
filter=${pinsafe_filter:-}

export PINSAFE_TESTBIN="$pinsafe_bin/rdma"
export PINSAFE_DEV_EXT4=/dev/vda PINSAFE_DEV_XFS=/dev/vdb
export PINSAFE_MNT_EXT4=/mnt/ext4 PINSAFE_MNT_XFS=/mnt/xfs
export PINSAFE_MNT_TMPFS=/mnt/tmpfs
# ext4 on dm-integrity (crc32c, no journal): a device that needs stable pages
export PINSAFE_DEV_INTEG=/dev/vdc PINSAFE_MNT_INTEG=/mnt/integ
# ext4 on md raid5 over loop devices in a tmpfs (skip_copy: stable pages)
export PINSAFE_MNT_RAID5=/mnt/raid5
# The pin_writeback tests run on raid5 unless --filter names others.
PW_RAID5_TESTS="-t bounce_forward_progress -t stable_during_writeback -t quiesced_pages_whole -t lost_write"

log() { echo "pinsafe: $*" > /dev/console; }

selected() {
	[ -z "$only" ] && return 0
	for p in $(echo "$only" | tr ',' ' '); do
		case $1 in "$p"*) return 0 ;; esac
	done
	return 1
}

# suite NAME CMD [ARGS...]: run one KTAP-producing command, bounded.
suite() {
	name=$1
	shift
	selected "$name" || return 0
	log "suite $name: $*"
	start=$(date +%s)
	timeout -k 10 "$SUITE_TIMEOUT" "$@" > /tmp/suite.out 2>&1
	rc=$?
	fault_injection_off
	log "suite $name: rc=$rc in $(( $(date +%s) - start ))s"
	{
		echo "#### PINSAFE-SUITE $name"
		cat /tmp/suite.out
		echo "#### PINSAFE-END $name rc=$rc"
	} > "$RESULTS"
}

setup_disks() {
	mkdir -p "$PINSAFE_MNT_EXT4" "$PINSAFE_MNT_XFS" "$PINSAFE_MNT_TMPFS"
	# verity: pin_writeback checks that fs-verity refuses a pinned file
	if ! mkfs.ext4 -q -F -O verity "$PINSAFE_DEV_EXT4" ||
	   ! mount -t ext4 "$PINSAFE_DEV_EXT4" "$PINSAFE_MNT_EXT4"; then
		log "ext4 scratch disk setup failed"
	fi
	if ! mkfs.xfs -q -f "$PINSAFE_DEV_XFS" ||
	   ! mount -t xfs "$PINSAFE_DEV_XFS" "$PINSAFE_MNT_XFS"; then
		log "xfs scratch disk setup failed"
	fi
	mount -t tmpfs -o size=512m tmpfs "$PINSAFE_MNT_TMPFS"
	setup_integrity
	setup_raid5
}

# A test killed while it injected page allocation failures must not leave
# them on for the next suite.
fault_injection_off() {
	f=/sys/kernel/debug/fail_page_alloc/probability
	[ -w "$f" ] && echo 0 > "$f"
	return 0
}

# dm-integrity without a journal, so a page that changes while it is being
# written leaves a block whose checksum does not match (read error).
# ext4 on dm-integrity, mounted nodelalloc: covers ext4 writeback without
# delayed allocation, and lets pin_writeback's scope test turn on per-file
# data journalling (ext4 ignores it on delalloc mounts).
setup_integrity() {
	mkdir -p "$PINSAFE_MNT_INTEG"
	[ -b "$PINSAFE_DEV_INTEG" ] || return 0
	export DM_DISABLE_UDEV=1
	if ! integritysetup format -q --batch-mode --integrity crc32c \
		--sector-size 4096 "$PINSAFE_DEV_INTEG" ||
	   ! integritysetup open --integrity crc32c --integrity-no-journal \
		"$PINSAFE_DEV_INTEG" integ ||
	   ! mkfs.ext4 -q -F /dev/mapper/integ ||
	   ! mount -t ext4 -o nodelalloc /dev/mapper/integ "$PINSAFE_MNT_INTEG"; then
		log "dm-integrity scratch disk setup failed"
		return 1
	fi
	log "dm-integrity: stable_writes=$(cat /sys/block/dm-0/queue/stable_writes)"
}

# raid5 (3 x 64 MiB loop devices over a tmpfs) with ext4. raid5 needs
# stable pages only with skip_copy (it then computes parity from the page
# cache pages themselves): turn it on. Only when its suite is selected.
setup_raid5() {
	mkdir -p "$PINSAFE_MNT_RAID5"
	selected pin_writeback_raid5 || return 0
	if ! command -v mdadm > /dev/null; then
		log "raid5: no mdadm on the host (scripts/deps.sh installs it)"
		return 0
	fi
	mkdir -p /run/raid5
	mount -t tmpfs -o size=200m tmpfs /run/raid5
	devs=""
	for i in 0 1 2; do
		truncate -s 64M "/run/raid5/d$i.img"
		d=$(losetup --find --show "/run/raid5/d$i.img") || {
			log "raid5: losetup failed"
			return 1
		}
		devs="$devs $d"
	done
	# shellcheck disable=SC2086 # one word per loop device
	if ! MDADM_NO_UDEV=1 mdadm --create /dev/md0 --level=5 \
		--raid-devices=3 --run --assume-clean --metadata=1.2 $devs \
		> /tmp/mdadm.out 2>&1 ||
	   ! echo 1 > /sys/block/md0/md/skip_copy ||
	   ! mkfs.ext4 -q -F /dev/md0 ||
	   ! mount -t ext4 /dev/md0 "$PINSAFE_MNT_RAID5"; then
		log "raid5 scratch disk setup failed: $(tr '\n' ' ' < /tmp/mdadm.out)"
		return 1
	fi
	log "raid5: stable_writes=$(cat /sys/block/md0/queue/stable_writes) skip_copy=$(cat /sys/block/md0/md/skip_copy)"
}

# rxe_add NETDEV: rxe0 on NETDEV, then wait (bounded) for its link-local GID.
rxe_add() {
	if ! rdma link add rxe0 type rxe netdev "$1"; then
		log "rxe setup on $1 failed"
		return 1
	fi
	i=0
	while [ $i -lt 50 ]; do
		ibv_devinfo -d rxe0 -v 2>/dev/null | grep -q 'GID\[ *[0-9]*\]:.*fe80' && break
		sleep 0.2
		i=$((i + 1))
	done
	ibv_devices > /dev/console 2>&1
}

setup_rdma() {
	ip link set lo up
	echo 0 > /proc/sys/net/ipv6/conf/default/accept_dad
	if ! ip link add veth0 type veth peer name veth1 ||
	   ! ip link set veth1 up || ! ip link set veth0 up; then
		log "veth setup failed"
		return 1
	fi
	rxe_add veth0
}

# One of two guests on a QEMU socket network (scripts/two-host.sh): eth0
# is 10.0.2.1 on the server and 10.0.2.2 on the client, with rxe0 on it.
# The server registers files and checks its disks; the client writes.
run_two_host() {
	case $pinsafe_role in
	server) self=10.0.2.1 ;;
	client) self=10.0.2.2 ;;
	*) log "pinsafe_role must be server or client, not '$pinsafe_role'"; return 1 ;;
	esac
	setup_disks
	ip link set lo up
	echo 0 > /proc/sys/net/ipv6/conf/eth0/accept_dad
	if ! ip addr add "$self/24" dev eth0 || ! ip link set eth0 up; then
		log "eth0 setup failed (no virtio-net?)"
		return 1
	fi
	rxe_add eth0 || return 1
	log "two hosts: $pinsafe_role $self"
	# Interleaved rounds of each buffer kind: TCG's speed drifts.
	PERF_2HOST_MODES="anon ext4 xfs anon ext4 xfs anon ext4 xfs"
	if [ "$pinsafe_role" = server ]; then
		suite rdma_2host "$pinsafe_bin/rdma/rdma_2host" -s
		# shellcheck disable=SC2086 # one word per mode
		suite perftest_2host sh "$pinsafe_bin/rdma/perftest_2host.sh" server $PERF_2HOST_MODES
	else
		suite rdma_2host "$pinsafe_bin/rdma/rdma_2host" -c 10.0.2.1
		# shellcheck disable=SC2086 # one word per mode
		suite perftest_2host sh "$pinsafe_bin/rdma/perftest_2host.sh" client 10.0.2.1 $PERF_2HOST_MODES
	fi
}

run_kunit_debugfs_check() {
	# Built-in KUnit suites ran at boot (their KTAP is on the console);
	# list them here so a missing suite is visible in the results.
	for d in /sys/kernel/debug/kunit/*/; do
		[ -d "$d" ] && log "kunit suite ran at boot: $(basename "$d")"
	done
}

# Benchmarks (make bench, pinsafe_only=bench and nothing else): pin_bench
# on ext4 and on ext4 over dm-integrity, both on loop devices over a tmpfs
# so that no I/O inside a counted window waits for the host. Everything
# that would run in the background at an arbitrary point of a window is
# turned off: periodic writeback, vmstat refreshes, lazy inode table and
# journal init, jbd2's commit timer (the workloads fsync), per-cpu page
# list tuning. pin_bench's
# output goes to a file first: a serial port still transmitting would
# spill interrupts into the next window.
run_bench() {
	echo 0 > /proc/sys/vm/dirty_writeback_centisecs
	echo 600 > /proc/sys/vm/stat_interval
	# A fixed, short per-cpu page list (no auto-tuning, the minimum of 4
	# batches): a window's frees overflow it into the buddy lists at the
	# same rate in every boot. With the default auto-tuned length, how
	# much overflowed depended on the list's history (truncate and punch
	# varied by 1-2 % between boots).
	echo 1000000 > /proc/sys/vm/percpu_pagelist_high_fraction
	mkdir -p /run/bench /mnt/bench-ext4 /mnt/bench-integ
	mount -t tmpfs -o size=1200m tmpfs /run/bench
	truncate -s 768M /run/bench/ext4.img
	truncate -s 128M /run/bench/integ.img
	mkfs="mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0"
	export DM_DISABLE_UDEV=1
	if ! l=$(losetup --find --show /run/bench/ext4.img) ||
	   ! $mkfs "$l" > /dev/null ||
	   ! mount -t ext4 -o commit=600 "$l" /mnt/bench-ext4; then
		log "bench: ext4 on a loop device failed"
	fi
	if ! l=$(losetup --find --show /run/bench/integ.img) ||
	   ! integritysetup format -q --batch-mode --integrity crc32c \
		--sector-size 4096 "$l" ||
	   ! integritysetup open --integrity crc32c --integrity-no-journal \
		"$l" integ-bench ||
	   ! $mkfs /dev/mapper/integ-bench > /dev/null ||
	   ! mount -t ext4 -o nodelalloc,commit=600 /dev/mapper/integ-bench \
		/mnt/bench-integ; then
		log "bench: dm-integrity on a loop device failed"
	fi
	# The kernel's memcpy is rep movsb with FSRM (pin_bench's memcpy_movsb)
	echo "#### PINSAFE-BENCH-CPU $(grep -m 1 -ow -e fsrm -e erms /proc/cpuinfo | tr '\n' ' ')" > "$RESULTS"
	sync
	for set in ext4 integ; do
		mountpoint -q "/mnt/bench-$set" || continue
		log "bench $set"
		timeout 900 "$pinsafe_bin/bench/pin_bench" "$set" \
			"/mnt/bench-$set" > /tmp/bench.out 2>&1
		rc=$?
		log "bench $set: rc=$rc"
		{
			echo "#### PINSAFE-BENCH $set"
			cat /tmp/bench.out
			echo "#### PINSAFE-BENCH-END $set rc=$rc"
			# Reclaim or compaction in a window would be noise
			echo "#### PINSAFE-BENCH-STAT $set $(grep -E '^(MemFree|Shmem):' /proc/meminfo | tr -s ' \n' '  ')$(grep -E '^(pgscan|pgsteal|compact_stall|compact_migrate)' /proc/vmstat | tr '\n' ' ')"
		} > "$RESULTS"
	done
}

# fstests (scripts/fstests.sh): the built checkout pinsafe_fstests (on the
# host, read-only over 9p) is copied to a tmpfs and run with
# pinsafe_fstests_fs on /dev/vda (TEST) and /dev/vdb (SCRATCH): the tests of
# tests/fstests/tests.list, or the group pinsafe_fstests_group, never those
# of tests.exclude. One suite, fstests_<fs>, in KTAP (guest/fstests-ktap.py).
run_fstests() {
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

# The end of every kind of run: the marker scripts/report.py waits for.
finish() {
	dmesg > /tmp/dmesg.txt
	log "all suites done"
	echo "#### PINSAFE-DONE" > "$RESULTS"
}

# make shell: the test setup, then a shell on the console (ttyS0) until it
# exits; the suites' binaries are in $PINSAFE_BIN.
run_shell() {
	echo 16 > /proc/sys/vm/nr_hugepages
	setup_disks
	setup_rdma
	export PINSAFE_BIN="$pinsafe_bin" PS1='pinsafe:\w# '
	{
		echo
		echo "pinsafe shell: kernel $(uname -r)"
		echo "  ext4 /mnt/ext4, xfs /mnt/xfs, ext4 on dm-integrity /mnt/integ, tmpfs /mnt/tmpfs"
		printf '  rxe:'
		for d in /sys/class/infiniband/*; do
			[ -e "$d" ] && printf ' %s' "${d##*/}"
		done
		echo
		echo "  tests in \$PINSAFE_BIN (${pinsafe_bin:-none}), e.g."
		echo "    cd /mnt/xfs && \$PINSAFE_BIN/mm/pin_writeback -t lost_write"
		echo "  the host's / is read-only; exit (or Ctrl-A x) ends the VM"
	} > /dev/console
	cd /mnt/ext4 2>/dev/null || cd /
	setsid -c bash -i < /dev/ttyS0 > /dev/ttyS0 2>&1
	log "shell exited"
	finish
}

main() {
	if [ -n "${pinsafe_shell:-}" ]; then
		run_shell
		return
	fi
	if [ -n "${pinsafe_soak:-}" ]; then
		# make soak: every writer and disturbance at once (tests/soak).
		setup_disks
		setup_rdma
		SUITE_TIMEOUT=$((pinsafe_soak + 900))
		suite soak "$pinsafe_bin/soak/soak" -t "$pinsafe_soak"
		echo 1 > /proc/sys/vm/stat_refresh 2>/dev/null
		log "vmstat: $(grep -E 'pinned|nr_foll_pin|bounce' /proc/vmstat | tr '\n' ' ')"
		finish
		return
	fi
	if [ -n "${pinsafe_fstests:-}" ]; then
		run_fstests
		finish
		return
	fi
	if [ -n "${pinsafe_role:-}" ]; then
		run_two_host
		finish
		return
	fi
	if [ "$only" = bench ]; then
		run_bench
		finish
		return
	fi
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
	finish
}

main
