# shellcheck shell=sh disable=SC2154 # variables of guest/run-tests.sh
# make bench: pin_bench between instruction-count markers.
# Sourced by guest/run-tests.sh after guest/lib.sh; defines run_job.

# Benchmarks (make bench, pinsafe_only=bench and nothing else): pin_bench
# on ext4 and on ext4 over dm-integrity, both on loop devices over a tmpfs
# so that no I/O inside a counted window waits for the host. Everything
# that would run in the background at an arbitrary point of a window is
# turned off: periodic writeback, vmstat refreshes, lazy inode table and
# journal init, jbd2's commit timer (the workloads fsync), per-cpu page
# list tuning. pin_bench's
# output goes to a file first: a serial port still transmitting would
# spill interrupts into the next window.
run_job() {
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
