#!/bin/sh
# Runs in the guest (started by guest/init): runs one job, chosen from the
# kernel command line: every test suite (guest/job-suites.sh), make bench,
# make fstests, one side of make two-host, make soak or make shell
# (guest/job-*.sh), with the scratch disk, rxe and reporting helpers of
# guest/lib.sh. Each suite's KTAP goes to the results port (/dev/ttyS1)
# between "#### PINSAFE-SUITE name" and "#### PINSAFE-END name rc=N"
# markers, and "#### PINSAFE-DONE" ends every job; scripts/report.py
# parses it.
#
# Environment (from the kernel command line, set by scripts/run-qemu.sh):
#   pinsafe_dir   the project checkout (on the 9p root)
#   pinsafe_bin   the built test binaries (mm/, rdma/)
#   pinsafe_only  comma-separated suite name prefixes to run (default: all)
#   pinsafe_filter comma-separated test names: the pin_* selftests run
#                 only those they have (-t NAME for each; default: all),
#                 and one that has none of them does not run
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
# shellcheck disable=SC2034 # read by guest/job-suites.sh
filter=${pinsafe_filter:-}

export PINSAFE_TESTBIN="$pinsafe_bin/rdma"
export PINSAFE_DEV_EXT4=/dev/vda PINSAFE_DEV_XFS=/dev/vdb
export PINSAFE_MNT_EXT4=/mnt/ext4 PINSAFE_MNT_XFS=/mnt/xfs
export PINSAFE_MNT_TMPFS=/mnt/tmpfs
# ext4 on dm-integrity (crc32c, no journal): a device that needs stable pages
export PINSAFE_DEV_INTEG=/dev/vdc PINSAFE_MNT_INTEG=/mnt/integ
# ext4 on md raid5 over loop devices in a tmpfs (skip_copy: stable pages)
export PINSAFE_MNT_RAID5=/mnt/raid5

# One job per kind of run, chosen from the kernel command line.
if [ -n "${pinsafe_shell:-}" ]; then
	job=shell
elif [ -n "${pinsafe_soak:-}" ]; then
	job=soak
elif [ -n "${pinsafe_fstests:-}" ]; then
	job=fstests
elif [ -n "${pinsafe_role:-}" ]; then
	job=two-host
elif [ "$only" = bench ]; then
	job=bench
else
	job=suites
fi
# shellcheck source=guest/lib.sh
. "$pinsafe_dir/guest/lib.sh"
# shellcheck disable=SC1090 # one of guest/job-*.sh
. "$pinsafe_dir/guest/job-$job.sh"
run_job
finish
