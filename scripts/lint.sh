#!/bin/bash
# checkpatch --strict on every patch of the series, shellcheck on scripts.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/lint.sh [--help]
Runs the tree's scripts/checkpatch.pl --strict on patches/NNNN-*.patch
(the cover letter too), checks each patch carries the project's Signed-off-by, and runs
shellcheck on scripts/, guest/ and tests/. Needs build/linux (make tree).
USAGE
}
[[ ${1:-} == --help ]] && { usage; exit 0; }
[[ -x $TREE/scripts/checkpatch.pl ]] || die "no $TREE; run 'make tree' first"
# checkpatch runs spdxcheck.py with python3; use Debian's (python3-ply).
export PATH=/usr/bin:/bin:$PATH

fail=0
for p in "$TOP"/patches/[0-9][0-9][0-9][0-9]-*.patch; do
	if ! out=$(cd "$TREE" && ./scripts/checkpatch.pl --strict --terse "$p" 2>&1); then
		echo "$out"
		fail=1
	fi
	# The cover letter is checked for style only (checkpatch above).
	[[ $(basename "$p") == 0000-* ]] ||
	grep -q '^Signed-off-by: pinsafe developers <dev@pinsafe.invalid>$' "$p" ||
		{ echo "$p: missing Signed-off-by"; fail=1; }
	echo "checkpatch: $(basename "$p"): ${out:-clean}"
done
mapfile -t bash_scripts < <(ls "$TOP"/scripts/*.sh "$TOP"/.ci/run)
shellcheck -x "${bash_scripts[@]}" || fail=1
mapfile -t sh_scripts < <(ls "$TOP"/guest/init "$TOP"/guest/*.sh "$TOP"/tests/*/*.sh 2>/dev/null)
shellcheck -s sh -x "${sh_scripts[@]}" || fail=1
(( fail == 0 )) && echo "lint: clean"
exit "$fail"
