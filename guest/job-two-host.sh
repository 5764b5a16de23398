# shellcheck shell=sh disable=SC2154 # variables of guest/run-tests.sh
# make two-host: one of two guests, the server or the client.
# Sourced by guest/run-tests.sh after guest/lib.sh; defines run_job.

# One of two guests on a QEMU socket network (scripts/two-host.sh): eth0
# is 10.0.2.1 on the server and 10.0.2.2 on the client, with rxe0 on it.
# The server registers files and checks its disks; the client writes.
run_job() {
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
