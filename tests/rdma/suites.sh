# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
#
# The RDMA test invocations. Sourced by the guest runner (guest/run-tests.sh)
# after it has set up rxe0, lo and the scratch file systems; the runner
# provides suite() (KTAP markers, timeout) and exports PINSAFE_TESTBIN,
# PINSAFE_MNT_{EXT4,XFS,TMPFS} and PINSAFE_DEV_{EXT4,XFS}.
#
# Each command prints one KTAP document and exits 0 (pass), 1 (fail) or
# 4 (skipped: no rxe0).

# Registration of anon/memfd/tmpfs/ext4/xfs buffers, RDMA WRITE/READ into
# them, on-disk check through FIEMAP + O_DIRECT.
suite rdma_mr "${PINSAFE_TESTBIN:?}/rdma_mr"

# ibv_reg_mr() with bad input: errno, no crash.
suite rdma_badinput "${PINSAFE_TESTBIN:?}/rdma_badinput"

# A read-only registration of an ext4/xfs file: the owner's background
# writeback, hole punch and truncate behave as without it.
suite rdma_ro_owner "${PINSAFE_TESTBIN:?}/rdma_ro_owner"

# Unmodified perftest ib_write_bw --mmap=FILE over rxe, one test per fs.
suite rdma_perftest sh "${PINSAFE_TESTBIN:?}/perftest.sh" tmpfs ext4 xfs

# A writable file MR that another process's hole punch or truncate needs:
# revoked at once (the next RDMA WRITE gets IBV_WC_REM_ACCESS_ERR), what the
# QP wrote before on disk, registering again works (refused on base).
suite rdma_revoke "${PINSAFE_TESTBIN:?}/rdma_revoke"

# io_uring fixed buffers on MAP_SHARED ext4/xfs files: registration (refused
# on base), O_DIRECT READ_FIXED into them beside writeback, sync and
# truncate, data on disk, truncate policy, pins balanced after unregister.
suite uring_fixed "${PINSAFE_TESTBIN:?}/uring_fixed"

# rdma-core's own test suite (pyverbs, as Debian ships it) on rxe0; known
# rxe failures in rdma_core_known.txt.
suite rdma_core python3 "${PINSAFE_TESTBIN:?}/rdma_core_tests.py" \
	"${PINSAFE_TESTBIN:?}/rdma-core-tests" --dev rxe0
