#!/bin/bash
# Rewrite the series' MAINTAINERS section in every commit of build/linux.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/maintainers-section.sh [--help]
Rewrites base..HEAD of build/linux (git filter-branch --index-filter) so
that each commit's MAINTAINERS is the base's plus the series' own section,
"MEMORY MANAGEMENT - DMA PINS OF FILE-BACKED MEMORY", listing those of
the series' own files (FILES below) that exist at that commit; a commit
before the first of them has no section. The commit that adds a file thus
adds its F: line. Files the series adds under a directory another section
owns (block/blk-pinned-bounce.c: the block layer's F: block/) are not
listed. Run it after a patch adds one of FILES or the series is
reordered, then make export. Refuses to run with uncommitted changes.
USAGE
}
[[ ${1:-} == --help ]] && { usage; exit 0; }
(( $# == 0 )) || { usage >&2; exit 2; }
[[ -z $(git -C "$TREE" status --porcelain --untracked-files=no) ]] ||
	die "$TREE has uncommitted changes"

filter=$(mktemp)
trap 'rm -f "$filter"' EXIT
cat > "$filter" <<'FILTER'
set -euo pipefail
FILES="include/linux/pin_revoke.h mm/.kunitconfig mm/gup_kunit.c mm/pin_revoke.c
scripts/coccinelle/api/pin_user_pages.cocci
tools/testing/selftests/mm/file_pin_fixture.h
tools/testing/selftests/mm/file_pin_util.c tools/testing/selftests/mm/file_pin_util.h
tools/testing/selftests/mm/file_pin_wb.c tools/testing/selftests/mm/file_pin_wb.h
tools/testing/selftests/mm/pin_dirty.c tools/testing/selftests/mm/pin_refuse.c
tools/testing/selftests/mm/pin_revoke.c tools/testing/selftests/mm/pin_truncate.c
tools/testing/selftests/mm/pin_wberror.c tools/testing/selftests/mm/pin_writeback.c"
present=""
for f in $FILES; do
	git ls-files --error-unmatch "$f" > /dev/null 2>&1 && present="$present $f"
done
new=$(mktemp)
git show base:MAINTAINERS | awk -v files="$present" '
	/^MEMORY MAPPING$/ && files != "" {
		print "MEMORY MANAGEMENT - DMA PINS OF FILE-BACKED MEMORY"
		print "M:\tpinsafe developers <dev@pinsafe.invalid>"
		print "L:\tlinux-mm@kvack.org"
		print "S:\tMaintained"
		print "T:\tgit git://git.kernel.org/pub/scm/linux/kernel/git/akpm/mm"
		n = split(files, f, " ")
		for (i = 1; i <= n; i++) print "F:\t" f[i]
		print ""
	}
	{ print }' > "$new"
git update-index --cacheinfo 100644,"$(git hash-object -w "$new")",MAINTAINERS
rm -f "$new"
FILTER
FILTER_BRANCH_SQUELCH_WARNING=1 git -C "$TREE" filter-branch -f \
	--index-filter "bash $filter" base..HEAD > /dev/null
git -C "$TREE" update-ref -d refs/original/refs/heads/pinsafe 2>/dev/null || true
git -C "$TREE" checkout -q -- MAINTAINERS
say "MAINTAINERS section rewritten in $(git -C "$TREE" rev-list --count base..HEAD) commits; now: make export"
