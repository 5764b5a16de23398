# shellcheck shell=sh disable=SC2154 # variables of guest/run-tests.sh
# Sourced by guest/run-tests.sh: logging, the suite wrapper, the scratch
# disks and rxe that every job sets up, and the end marker.

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

# mkfs_xfs_exchange DEV: an xfs that can exchange file ranges
# (XFS_IOC_EXCHANGE_RANGE, which the tests use on pinned files). mkfs.xfs
# -i exchange=1 makes it from xfsprogs 6.10 on; Debian 12's 6.1 cannot, so
# set the feature's incompat bit (XFS_SB_FEAT_INCOMPAT_EXCHRANGE, 0x40)
# with xfs_db: the bit is all the feature changes on the disk (it lets the
# kernel log file-content exchanges). xfs_db -d writes it past its own
# verifier, which does not know the bit, with the CRC recalculated. The
# xfs_repair of Debian 12 would refuse such a file system; nothing runs it.
mkfs_xfs_exchange() {
	mkfs.xfs -q -f -i exchange=1 "$1" 2>/dev/null && return 0
	mkfs.xfs -q -f "$1" || return 1
	inc=$(xfs_db -c "sb 0" -c "print features_incompat" "$1" | sed 's/.*= //')
	[ -n "$inc" ] || return 1
	xfs_db -x -c "sb 0" -c "write -d features_incompat $((inc | 0x40))" \
		"$1" > /dev/null 2>&1
	xfs_db -c "sb 0" -c "print features_incompat" "$1" 2>/dev/null |
		grep -q "= $(printf '%#x' $((inc | 0x40)))\$" ||
		log "xfs on $1: no exchange range (xfs_db could not set the bit)"
	return 0
}

setup_disks() {
	mkdir -p "$PINSAFE_MNT_EXT4" "$PINSAFE_MNT_XFS" "$PINSAFE_MNT_TMPFS"
	# verity: pin_refuse checks that fs-verity refuses a pinned file
	if ! mkfs.ext4 -q -F -O verity "$PINSAFE_DEV_EXT4" ||
	   ! mount -t ext4 "$PINSAFE_DEV_EXT4" "$PINSAFE_MNT_EXT4"; then
		log "ext4 scratch disk setup failed"
	fi
	if ! mkfs_xfs_exchange "$PINSAFE_DEV_XFS" ||
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

# The selftests of writeback of DMA-pinned page cache, split by area from
# what was one program, pin_writeback: a suite PROG_FS each per file system.
PW_PROGS="pin_writeback pin_dirty pin_truncate pin_refuse pin_wberror"

# raid5 (3 x 64 MiB loop devices over a tmpfs) with ext4. raid5 needs
# stable pages only with skip_copy (it then computes parity from the page
# cache pages themselves): turn it on. Only when a raid5 suite is selected.
setup_raid5() {
	mkdir -p "$PINSAFE_MNT_RAID5"
	want=""
	for prog in $PW_PROGS; do
		selected "${prog}_raid5" && want=1
	done
	[ -n "$want" ] || return 0
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

run_kunit_debugfs_check() {
	# Built-in KUnit suites ran at boot (their KTAP is on the console);
	# list them here so a missing suite is visible in the results.
	for d in /sys/kernel/debug/kunit/*/; do
		[ -d "$d" ] && log "kunit suite ran at boot: $(basename "$d")"
	done
}

# The end of every kind of run: the marker scripts/report.py waits for.
finish() {
	dmesg > /tmp/dmesg.txt
	log "all suites done"
	echo "#### PINSAFE-DONE" > "$RESULTS"
}
