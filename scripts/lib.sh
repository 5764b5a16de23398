# shellcheck shell=bash
# Common helpers for the pinsafe harness scripts. Sourced, not run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
TREE=$BUILD/linux
BASE_TREE=$BUILD/linux-base
export TOP BUILD TREE BASE_TREE

# shellcheck source=BASE
. "$TOP/BASE"

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Print elapsed wall time of a long step every 30 s so CI logs show life.
with_progress() {
	local label=$1 start pid rc
	shift
	start=$(date +%s)
	"$@" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 5
		if (( ($(date +%s) - start) % 30 < 5 )) && kill -0 "$pid" 2>/dev/null; then
			say "$label: $(( $(date +%s) - start ))s${PROGRESS_LOG:+ ($(tail -n 1 "$PROGRESS_LOG" 2>/dev/null | cut -c1-60))}"
		fi
	done
	rc=0
	wait "$pid" || rc=$?
	say "$label: done in $(( $(date +%s) - start ))s (rc=$rc)"
	return "$rc"
}
