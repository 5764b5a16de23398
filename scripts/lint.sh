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
shellcheck on scripts/, guest/ and tests/. With coccinelle installed
(Debian's coccinelle), runs the series' pin_user_pages.cocci: it must
report each bad_*() function of tests/cocci/pin_user_pages_sample.c and
nothing else there, and nothing in COCCI_DIRS (default: drivers/infiniband
mm fs io_uring block drivers/vfio; reports are printed, COCCI_DIRS= skips).
Needs build/linux (make tree).
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
rule=$TREE/scripts/coccinelle/api/pin_user_pages.cocci
if [[ -f $rule ]] && command -v spatch > /dev/null; then
	sample=$TOP/tests/cocci/pin_user_pages_sample.c
	spatch_report() {
		spatch --very-quiet -D report --no-includes --include-headers \
			--sp-file "$rule" "$@" 2>/dev/null | grep -E '^[^ ]+:[0-9]+:' || true
	}
	got=$(spatch_report "$sample" | cut -d: -f2 | sort -n | tr '\n' ' ')
	want=$(grep -n 'put_page\|release_pages\|unpin_user_pages(' "$sample" |
		awk -F: '{ print $1 }' | while read -r l; do
			f=$(head -n "$l" "$sample" | grep -E '^static' | tail -n 1)
			if [[ $f == *" bad_"* ]]; then echo "$l"; fi
		done | sort -n | tr '\n' ' ')
	if [[ $got != "$want" || -z $got ]]; then
		echo "cocci: pin_user_pages.cocci reported lines '$got' of the sample, want '$want'"
		fail=1
	else
		echo "cocci: pin_user_pages.cocci flags its sample (lines $got)"
	fi
	for d in ${COCCI_DIRS-drivers/infiniband mm fs io_uring block drivers/vfio}; do
		out=$(cd "$TREE" && spatch_report --dir "$d")
		echo "cocci: $d: ${out:-no reports}"
		[[ -z $out ]] || fail=1
	done
else
	echo "cocci: skipped (no spatch, or no pin_user_pages.cocci in the tree)"
fi
(( fail == 0 )) && echo "lint: clean"
exit "$fail"
