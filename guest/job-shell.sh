# shellcheck shell=sh disable=SC2154 # variables of guest/run-tests.sh
# make shell: the test setup, then a shell on the console.
# Sourced by guest/run-tests.sh after guest/lib.sh; defines run_job.

# make shell: the test setup, then a shell on the console (ttyS0) until it
# exits; the suites' binaries are in $PINSAFE_BIN.
run_job() {
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
}
