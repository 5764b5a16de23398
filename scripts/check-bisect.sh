#!/bin/bash
# Build, check and boot every prefix of the series (make check-bisect).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/check-bisect.sh [--from N] [--to M] [--suites LIST] [--jobs J]
                               [--help]
                               (make check-bisect [FROM=N] [TO=M])
For each prefix 1..N of the series in build/linux (--from/--to narrow
it): runs checkpatch --strict on its last patch (make lint's rules),
checks it out in build/bisect (a worktree of build/linux), builds the
test-config kernel and the tests in build/obj-bisect-test and
build/tests-bisect (ccache, so each prefix is an incremental build of the
one before), boots it and runs the boot-time KUnit suites plus the pin
selftests (--suites, default gup_test,gup_longterm,pin_writeback,pin_dirty,
pin_truncate,pin_refuse,pin_wberror,pin_revoke), and
reads the run with scripts/report.py. Fails on the first prefix with a
checkpatch error, a build error or a failing test, and says which.
One line per prefix (commit, times and results) is appended to
build/check-bisect.txt, after a line naming the run.
Guests run from a copy of their kernel and tests (build/bisect-stage-K),
so the next prefix builds while one runs, and --jobs guests (default 2:
TCG runs each on one host CPU) run at once; results are read in order.
Budget: minutes per prefix under TCG.
USAGE
}
from=1 to="" suites=gup_test,gup_longterm,pin_writeback,pin_dirty,pin_truncate,pin_refuse,pin_wberror,pin_revoke
jobs=2
while (( $# )); do
	case $1 in
	--help) usage; exit 0 ;;
	--from) from=$2; shift 2 ;;
	--to) to=$2; shift 2 ;;
	--suites) suites=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	*) usage >&2; exit 2 ;;
	esac
done
mapfile -t commits < <(git -C "$TREE" rev-list --reverse base..HEAD)
n=${#commits[@]}
to=${to:-$n}
[[ $from =~ ^[0-9]+$ && $to =~ ^[0-9]+$ ]] || die "--from and --to take numbers"
(( from >= 1 && from <= to && to <= n )) ||
	die "--from and --to must satisfy 1 <= from <= to <= $n"
[[ $suites =~ ^[a-z0-9_,]+$ ]] || die "bad --suites '$suites'"
[[ $jobs =~ ^[1-9]$ ]] || die "--jobs takes 1-9"
export PATH=/usr/bin:/bin:$PATH	# checkpatch's spdxcheck wants Debian's python3
bisect=$BUILD/bisect
if [[ ! -d $bisect ]]; then
	git -C "$TREE" worktree add -q -f --detach "$bisect" base
fi
summary=$BUILD/check-bisect.txt
echo "# $(date -u +%FT%TZ) prefixes $from-$to of $n, suites $suites" >> "$summary"
patches=()
for p in "$TOP"/patches/[0-9][0-9][0-9][0-9]-*.patch; do
	[[ $p == */0000-* ]] || patches+=("$p")
done
(( ${#patches[@]} == n )) || die "patches/ has ${#patches[@]} patches, build/linux $n: make export first"
# Guests in flight, oldest first: "k hash start built pid out".
running=()

# Wait for the oldest guest, read its run, record it; die if it failed.
reap() {
	local k h start built pid out
	read -r k h start built pid out <<< "${running[0]}"
	running=("${running[@]:1}")
	wait "$pid" || true
	if ! "$TOP/scripts/report.py" "prefix$k=$out" > "$out/report.txt" 2>&1; then
		tail -n 30 "$out/report.txt" >&2
		echo "$k $h test-failure build=$((built - start))s run=$(( $(date +%s) - built ))s" >> "$summary"
		for r in "${running[@]}"; do kill "$(cut -d' ' -f5 <<< "$r")" 2>/dev/null || true; done
		die "prefix $k: a test failed, see $out/report.txt"
	fi
	echo "$k $h ok build=$((built - start))s run=$(( $(date +%s) - built ))s $(tail -n 1 "$out/report.txt")" >> "$summary"
	say "prefix $k: $(tail -n 1 "$out/report.txt") in $(( $(date +%s) - start ))s"
	rm -rf "$BUILD/bisect-stage-$k"
}

for (( k = from; k <= to; k++ )); do
	c=${commits[k - 1]}
	p=${patches[k - 1]}
	h=$(git -C "$TREE" rev-parse --short=12 "$c")
	start=$(date +%s)
	say "prefix $k/$n: $(git -C "$TREE" log -1 --format=%s "$c")"
	if ! cp_out=$(cd "$TREE" && ./scripts/checkpatch.pl --strict --terse "$p" 2>&1) &&
	   grep -v '^total: ' <<< "$cp_out" | grep -q 'ERROR'; then
		echo "$cp_out" >&2
		echo "$k $h checkpatch-error" >> "$summary"
		die "prefix $k: checkpatch errors in $(basename "$p")"
	fi
	git -C "$bisect" checkout -q -f --detach "$c"
	kernel=$("$TOP/scripts/build.sh" --bisect --config test) || {
		echo "$k $h build-error" >> "$summary"
		die "prefix $k: kernel build failed"
	}
	bin=$("$TOP/scripts/build-tests.sh" --bisect --config test) || {
		echo "$k $h tests-build-error" >> "$summary"
		die "prefix $k: tests build failed"
	}
	stage=$BUILD/bisect-stage-$k
	rm -rf "$stage"
	mkdir -p "$stage"
	cp "$kernel" "$stage/bzImage"
	cp -a "$bin" "$stage/tests"
	built=$(date +%s)
	while (( ${#running[@]} >= jobs )); do
		reap
	done
	out=$BUILD/run-bisect-$k
	"$TOP/scripts/run-qemu.sh" --kernel "$stage/bzImage" --bin "$stage/tests" \
		--out "$out" --only "$suites" > "$stage/qemu.log" 2>&1 &
	running+=("$k $h $start $built $! $out")
done
while (( ${#running[@]} )); do
	reap
done
say "prefixes $from-$to: all built, checkpatch-clean and green ($summary)"
