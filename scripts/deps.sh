#!/bin/bash
# Install the Debian 12 packages the harness needs; only what is missing.
set -euo pipefail

usage() {
	cat <<'USAGE'
usage: scripts/deps.sh [--help]
Installs (apt-get, Debian 12 names) every package needed to build the
kernel, boot it in QEMU and run the tests. Does nothing when all are present.
USAGE
}
[[ ${1:-} == --help ]] && { usage; exit 0; }
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

PKGS=(
	# kernel build
	build-essential bc bison flex libelf-dev libssl-dev ccache dwarves
	cpio kmod rsync python3 git xz-utils
	# guest and disks
	qemu-system-x86 busybox-static e2fsprogs xfsprogs util-linux
	coreutils cryptsetup-bin dmsetup iproute2 mdadm
	# selftests
	liburing-dev libcap-dev libnuma-dev
	# rdma-core userspace
	rdma-core ibverbs-utils ibverbs-providers rdmacm-utils perftest
	libibverbs-dev librdmacm-dev python3-pyverbs
	# lint
	shellcheck python3-ply python3-git
)

apt_install "${PKGS[@]}"
