# shellcheck shell=sh
# Where the test guest finds a host path. Sourced by guest/init and by the
# harness self-tests (scripts/harness_test.py), so the mapping is tested
# without booting.
#
# The guest's root is the host's / over 9p, read-only. guest/init mounts
# tmpfs over PINSAFE_MASKED (the guest needs them writable), which hides
# the host's files there, and first binds the whole 9p root to
# PINSAFE_HOSTROOT, where they stay visible. A checkout or build directory
# under a masked directory (root's home, /var/tmp, /mnt, /tmp) is reached
# through PINSAFE_HOSTROOT; every other path is the same in the guest.

PINSAFE_MASKED="/tmp /var/tmp /mnt /root /run"
PINSAFE_HOSTROOT=/run/host

# guest_path HOSTPATH: print the path under which the guest sees HOSTPATH.
guest_path() {
	for _m in $PINSAFE_MASKED; do
		case $1 in
		"$_m" | "$_m"/*)
			printf '%s%s\n' "$PINSAFE_HOSTROOT" "$1"
			return 0
			;;
		esac
	done
	printf '%s\n' "$1"
}
