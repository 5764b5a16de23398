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
shellcheck on scripts/, guest/ and tests/, and scripts/kernel-doc -none
on every C file the series touches: no warning the base does not have.
With coccinelle installed
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

# new_files_maintained PATCH: does every file PATCH adds already belong to
# a MAINTAINERS section other than THE REST (block/ files to the block
# layer's)? Then checkpatch's "does MAINTAINERS need updating?" is answered.
new_files_maintained() {
	local f
	while read -r f; do
		(cd "$TREE" && ./scripts/get_maintainer.pl --no-git --no-git-fallback \
			--sections -f "$f" 2>/dev/null) | grep -v '^THE REST$' |
			grep -qE '^[A-Z0-9].*[A-Z]$' || return 1
	done < <(awk '/^--- \/dev\/null$/ { n = 1; next }
		n && sub(/^\+\+\+ b\//, "") { print } { n = 0 }' "$1")
}

fail=0
for p in "$TOP"/patches/[0-9][0-9][0-9][0-9]-*.patch; do
	if ! out=$(cd "$TREE" && ./scripts/checkpatch.pl --strict --terse "$p" 2>&1); then
		if ! grep -v '^total: ' <<< "$out" |
			grep -qv 'does MAINTAINERS need updating' &&
		   new_files_maintained "$p"; then
			out="clean (its new files are in a MAINTAINERS section already)"
		else
			echo "$out"
			fail=1
		fi
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
# kernel-doc: the series adds no warning to the files it touches.
kdoc_warnings() { # REV FILE...: kernel-doc -none of FILEs at REV
	local dir rev=$1
	shift
	dir=$(mktemp -d)
	git -C "$TREE" archive "$rev" "$@" | tar -x -C "$dir"
	(cd "$dir" && "$TREE/scripts/kernel-doc" -none "$@" 2>&1) |
		sed 's/:[0-9]*:/:/' | sort
	rm -rf "$dir"
}
mapfile -t kdoc_files < <(git -C "$TREE" diff --name-only --diff-filter=AM base HEAD -- '*.c' '*.h')
mapfile -t kdoc_old < <(git -C "$TREE" diff --name-only --diff-filter=M base HEAD -- '*.c' '*.h')
new_kdoc=$(comm -13 <(kdoc_warnings base "${kdoc_old[@]}") \
	<(kdoc_warnings HEAD "${kdoc_files[@]}"))
if [[ -n $new_kdoc ]]; then
	echo "kernel-doc: warnings the base does not have:"
	echo "$new_kdoc"
	fail=1
else
	echo "kernel-doc: no new warning in the ${#kdoc_files[@]} C files the series touches"
fi
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
