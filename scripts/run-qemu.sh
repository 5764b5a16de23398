#!/bin/bash
# Boot a built kernel in QEMU with the host root over 9p and run the tests.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/run-qemu.sh --kernel BZIMAGE --bin TESTBIN --out DIR
                           [--only SUITES] [--filter TESTS] [--timeout SECONDS]
                           [--icount OPTS] [--plugin SO] [--smp N]
                           [--append ARGS] [--net listen|connect:PORT]
                           [--disk-size SIZE] [--shell] [--dry-run] [--help]
Boots BZIMAGE (--smp vCPUs, default 2; 2 GiB) with the host's / shared
read-only over 9p and guest/init as PID 1. Fresh scratch disks become ext4
(/dev/vda, 1 GiB), xfs (/dev/vdb, 1 GiB) and ext4 on dm-integrity (/dev/vdc, 128 MiB) in the
guest. The kernel console goes to
DIR/console.log, the suites' KTAP to DIR/results.log (second serial port).
--only takes comma-separated suite name prefixes (gup_test, gup_longterm,
pin_writeback, pin_dirty, pin_truncate, pin_refuse, pin_wberror,
pin_revoke, pin_ for all of these, rdma...). --filter takes
comma-separated kselftest test names (e.g.
dirty_limit_strictlimit,pinned_dirty_exact): each pin_* selftest then runs
only those it has (-t NAME for each; the guest's pinsafe_filter), and one
that has none of them does not run. The VM is
killed after --timeout seconds (default 1800).
--icount OPTS (TCG only, e.g. shift=0,sleep=off) ties the guest clock to
the number of instructions executed, so timings in the guest do not
depend on how busy the host is (make bench uses it).
--plugin SO[,ARG=VALUE...] loads a TCG plugin built by
scripts/build-plugin.sh (the insn_window instruction counter) with
outfile=DIR/insn.log: one line per window the guest marks (TCG only).
--append ARGS adds ARGS to the guest's kernel command line (e.g. idle=halt).
--net listen:PORT or connect:PORT gives the guest a virtio-net NIC (eth0)
on a QEMU socket network at 127.0.0.1:PORT: one guest listens, the other
connects (scripts/two-host.sh). Without it the guest has no NIC.
--disk-size SIZE sets the size of the ext4 and xfs scratch disks (sparse
files, default 1G; make fstests uses more).
--shell gives the guest's console to this terminal (QEMU's -serial
mon:stdio; Ctrl-A x quits): the guest sets up the scratch disks and rxe
as for the tests and runs an interactive shell instead of the suites
(make shell). --bin is optional then, and there is no timeout.
--dry-run prints the QEMU command line, one argument per line, and exits
without booting (make selftest checks it).
Progress lines ("pinsafe: ...") are echoed while the guest runs.

The checkout and BIN may be anywhere, also under a directory the guest
hides behind tmpfs (/root, /var/tmp, /mnt, /tmp) and in paths with
spaces: guest/hostpath.sh says where the guest finds them.

Accelerator: PINSAFE_ACCEL=auto (default) uses KVM only if /dev/kvm is
read/writable, /proc/cpuinfo has vmx or svm and a probe guest (QEMU with
-accel kvm -cpu host) really runs for 3 s; otherwise single-threaded TCG,
and one line says why. --icount implies TCG. PINSAFE_ACCEL=tcg forces
TCG; PINSAFE_ACCEL=kvm forces KVM without a probe (QEMU fails if KVM
cannot run the guest).
DIR/qemu.log gets QEMU's own output and DIR/qemu.rc its exit status
(124: killed at --timeout); on a non-zero status the end of qemu.log is
printed. The exit status is 0 either way: scripts/report.py and
scripts/demo-table.py judge the run.
USAGE
}
kernel="" bin="" out="" only="" filter="" tmo=1800 icount="" plugin="" smp=2
extra="" net="" disk_size=1G dry_run=0 shell=0
while (( $# )); do
	case $1 in
	--help) usage; exit 0 ;;
	--kernel) kernel=$2; shift 2 ;;
	--bin) bin=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	--filter) filter=$2; shift 2 ;;
	--timeout) tmo=$2; shift 2 ;;
	--icount) icount=$2; shift 2 ;;
	--plugin) plugin=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--append) extra=$2; shift 2 ;;
	--net) net=$2; shift 2 ;;
	--disk-size) disk_size=$2; shift 2 ;;
	--dry-run) dry_run=1; shift ;;
	--shell) shell=1; shift ;;
	*) usage >&2; exit 2 ;;
	esac
done
if [[ ! -f $kernel || -z $out ]] || [[ ! -d $bin && ( $shell == 0 || -n $bin ) ]]; then
	usage >&2
	exit 2
fi
kernel=$(realpath "$kernel")
[[ -n $bin ]] && bin=$(realpath "$bin")

# kparam NAME VALUE: one kernel command line parameter. A value with
# spaces is quoted; the kernel strips the quotes (lib/cmdline.c
# next_arg()) before it sets init= or passes NAME=VALUE to init.
kparam() {
	[[ $2 != *'"'* && $2 != *$'\n'* && -n $2 ]] ||
		die "$1: cannot pass '$2' on the kernel command line"
	if [[ $2 == *' '* ]]; then
		printf ' %s="%s"' "$1" "$2"
	else
		printf ' %s=%s' "$1" "$2"
	fi
}

mkdir -p "$out"
out=$(realpath "$out")
rm -f "$out"/{console,results,qemu,insn}.log "$out"/qemu.rc "$out"/*.img
[[ $disk_size =~ ^[0-9]+[MG]$ ]] || die "--disk-size takes e.g. 512M or 8G, not '$disk_size'"
truncate -s "$disk_size" "$out/ext4.img" "$out/xfs.img"
truncate -s 128M "$out/integ.img"

# kvm_usable: succeeds if KVM can really run a guest here; otherwise
# prints why not.
kvm_usable() {
	local rc=0 log
	[[ -r /dev/kvm && -w /dev/kvm ]] || { echo "no usable /dev/kvm"; return 1; }
	grep -qwE 'vmx|svm' /proc/cpuinfo ||
		{ echo "no vmx/svm in /proc/cpuinfo (nested VM without virtualization?)"; return 1; }
	# A guest with no boot device stays in the firmware: still running
	# after 3 s means KVM created the vCPUs, set their MSRs and ran them.
	log=$(timeout -k 2 3 qemu-system-x86_64 -accel kvm -cpu host -machine pc \
		-m 64 -nodefaults -display none -no-reboot -monitor none \
		-serial none 2>&1) || rc=$?
	(( rc == 124 )) && return 0
	echo "KVM probe guest failed (qemu rc=$rc: $(head -n 1 <<< "$log"))"
	return 1
}

accel_mode=${PINSAFE_ACCEL:-auto}
case $accel_mode in
auto)
	if [[ -n $icount || -n $plugin ]]; then
		why="--icount and --plugin need TCG"
	elif why=$(kvm_usable); then
		accel_mode=kvm
	fi
	[[ $accel_mode == kvm ]] || { accel_mode=tcg; say "using TCG: $why (PINSAFE_ACCEL=kvm|tcg overrides)"; }
	;;
kvm)
	[[ -z $icount && -z $plugin ]] ||
		die "--icount and --plugin need TCG, but PINSAFE_ACCEL=kvm"
	say "using KVM (PINSAFE_ACCEL=kvm, not probed)"
	;;
tcg) say "using TCG (PINSAFE_ACCEL=tcg)" ;;
*) die "PINSAFE_ACCEL must be auto, kvm or tcg, not '$accel_mode'" ;;
esac
if [[ $accel_mode == kvm ]]; then
	accel=(-accel kvm -cpu host)
else
	# Multi-threaded TCG with -cpu max oopses at boot (docs/design.md).
	accel=(-accel "tcg,thread=single" -cpu max)
	[[ -n $icount ]] && accel+=(-icount "$icount")
fi
if [[ -n $plugin ]]; then
	so=${plugin%%,*}
	[[ -f $so && $out != *,* ]] ||
		die "--plugin: no file '$so', or a comma in '$out'"
	accel+=(-plugin "file=$(realpath "$so")${plugin#"$so"},outfile=$out/insn.log")
fi
append="console=ttyS0 root=/dev/root rootfstype=9p ro"
append+=" rootflags=trans=virtio,version=9p2000.L,msize=512000,cache=loose"
append+="$(kparam init "$TOP/guest/init") panic=-1 softlockup_panic=1 printk.time=1"
append+="$(kparam pinsafe_dir "$TOP")"
[[ -n $bin ]] && append+="$(kparam pinsafe_bin "$bin")"
append+=" pinsafe_timeout=600"
(( shell )) && append+=" pinsafe_shell=1"
[[ -n $only ]] && append+=" pinsafe_only=$only"
[[ $filter =~ ^[A-Za-z0-9_.,-]*$ ]] ||
	die "--filter takes comma-separated test names, not '$filter'"
[[ -n $filter ]] && append+=" pinsafe_filter=$filter"
[[ -n $extra ]] && append+=" $extra"
# Under TCG a debug (KASAN) kernel can spend 5-6 s per ACPI interrupt link
# on one vCPU without scheduling, while the other waits in stop_machine()
# to switch to the refined TSC clocksource: a 26 s "soft lockup" at boot
# that is emulation speed, not a hang. Allow 120 s (2 x watchdog_thresh)
# and 100 s for RCU stalls, which the same wait trips (a grace period
# cannot start meanwhile); real hangs still end the run, and hung tasks
# are reported as before.
[[ $accel_mode == tcg ]] &&
	append+=" watchdog_thresh=60 rcupdate.rcu_cpu_stall_timeout=100"

nic=(-nic none)
if [[ -n $net ]]; then
	[[ $net =~ ^(listen|connect):([0-9]+)$ ]] ||
		die "--net takes listen:PORT or connect:PORT, not '$net'"
	mac=52:54:00:12:34:0$([[ ${BASH_REMATCH[1]} == listen ]] && echo 1 || echo 2)
	nic=(-netdev "socket,id=n0,${BASH_REMATCH[1]}=127.0.0.1:${BASH_REMATCH[2]}"
	     -device "virtio-net-pci,netdev=n0,mac=$mac")
fi

# ttyS0, the kernel console: a log file, or this terminal for --shell.
console=(-serial "file:$out/console.log")
(( shell )) && console=(-serial mon:stdio)
# shellcheck disable=SC2054 # commas are QEMU option syntax
qemu=(qemu-system-x86_64 "${accel[@]}" -smp "$smp" -m 2G
	-no-reboot -display none -monitor none "${nic[@]}"
	-kernel "$kernel" -append "$append"
	-fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap
	-device virtio-9p-pci,fsdev=root,mount_tag=/dev/root
	-drive "file=$out/ext4.img,format=raw,if=virtio,cache=unsafe"
	-drive "file=$out/xfs.img,format=raw,if=virtio,cache=unsafe"
	-drive "file=$out/integ.img,format=raw,if=virtio,cache=unsafe"
	"${console[@]}" -serial "file:$out/results.log")
if (( dry_run )); then
	printf '%s\n' "${qemu[@]}"
	rm -f "$out"/*.img
	exit 0
fi

if (( shell )); then
	say "booting $(basename "$kernel") (${accel[1]}) with a shell on this terminal; Ctrl-A x quits"
	rc=0
	"${qemu[@]}" || rc=$?
	rm -f "$out"/*.img
	exit "$rc"
fi

say "booting $(basename "$kernel") (${accel[1]}), logs in $out"
start=$(date +%s)
timeout -k 10 "$tmo" "${qemu[@]}" > "$out/qemu.log" 2>&1 &
qpid=$!
seen=0
while kill -0 "$qpid" 2>/dev/null; do
	sleep 2
	if [[ -f $out/console.log ]]; then
		n=$(grep -c 'pinsafe' "$out/console.log" || true)
		if (( n > seen )); then
			grep 'pinsafe' "$out/console.log" | tail -n +"$((seen + 1))" | sed 's/^/   /' >&2
			seen=$n
		fi
	fi
done
rc=0
wait "$qpid" || rc=$?
echo "$(( $(date +%s) - start ))" > "$out/seconds"
(( rc == 124 )) && say "QEMU killed after ${tmo}s timeout"
rm -f "$out"/*.img
echo "$rc" > "$out/qemu.rc"
if (( rc == 0 )); then
	say "guest finished in $(cat "$out/seconds")s (qemu rc=0)"
else
	say "QEMU ended after $(cat "$out/seconds")s with status $rc; last lines of $out/qemu.log:"
	tail -n 15 "$out/qemu.log" | sed 's/^/   qemu: /' >&2
fi
exit 0
