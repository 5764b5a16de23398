# shellcheck shell=sh disable=SC2154 # variables of guest/run-tests.sh
# make soak: every writer and disturbance at once (tests/soak).
# Sourced by guest/run-tests.sh after guest/lib.sh; defines run_job.

run_job() {
	setup_disks
	setup_rdma
	# shellcheck disable=SC2034 # read by suite()
	SUITE_TIMEOUT=$((pinsafe_soak + 900))
	suite soak "$pinsafe_bin/soak/soak" -t "$pinsafe_soak"
	echo 1 > /proc/sys/vm/stat_refresh 2>/dev/null
	log "vmstat: $(grep -E 'pinned|nr_foll_pin|bounce' /proc/vmstat | tr '\n' ' ')"
}
