#!/bin/bash
# Write base..HEAD of build/linux to patches/ as a git format-patch series
# with the cover letter text kept in patches/cover-letter.txt.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/export.sh [--to DIR] [--help]
Regenerates patches/NNNN-*.patch from base..HEAD of build/linux, and
0000-cover-letter.patch from patches/cover-letter.txt (first line: subject,
then a blank line, then the body), ending with the maintainers and lists
scripts/get_maintainer.pl names for the series. Output is deterministic:
zeroed commit ids, dates taken from the commits, so an unchanged series
gives no diff.
USAGE
}
out=$TOP/patches
while (( $# )); do
	case $1 in
	--help) usage; exit 0 ;;
	--to) out=$2; shift 2 ;;
	*) usage >&2; exit 2 ;;
	esac
done
[[ -d $TREE/.git ]] || die "no $TREE; run 'make tree' first"
g() { git -C "$TREE" "$@"; }
[[ -z $(g status --porcelain --untracked-files=no) ]] ||
	die "$TREE has uncommitted changes; commit them first"

cover=$TOP/patches/cover-letter.txt
[[ -f $cover ]] || die "$cover missing"
n=$(g rev-list --count base..HEAD)
(( n > 0 )) || die "no commits on top of base"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g -c core.abbrev=12 format-patch -q --zero-commit --cover-letter --base=base \
	--subject-prefix=PATCH --no-signature -o "$tmp" base..HEAD

# Who the series goes to: scripts/get_maintainer.pl on the patches, with
# the base's MAINTAINERS plus the series' own section (not its own
# address), no git history; the cover letter ends with it.
recipients=$tmp/recipients
(cd "$TREE" && ./scripts/get_maintainer.pl --no-rolestats --no-git \
	--no-git-fallback --no-tree "$tmp"/000[1-9]-*.patch "$tmp"/00[1-9][0-9]-*.patch) |
	grep -v -F 'dev@pinsafe.invalid' > "$recipients" ||
	die "get_maintainer.pl failed"

# The cover letter: fill in subject and blurb, take the date of HEAD.
subject=$(head -n1 "$cover")
date=$(g log -1 --format=%aD HEAD)
python3 - "$tmp"/0000-cover-letter.patch "$cover" "$subject" "$date" "$recipients" <<'PY'
import sys
path, cover, subject, date, recipients = sys.argv[1:]
body = open(cover).read().split('\n', 2)[2].rstrip('\n') if open(cover).read().count('\n') >= 2 else ''
rcpt = [l.strip() for l in open(recipients) if l.strip()]
people = [r for r in rcpt if '<' in r]
lists = [r for r in rcpt if '<' not in r]
if people or lists:
    body += ('\n\nRecipients, as scripts/get_maintainer.pl names them for this'
             '\nseries (--no-git, MAINTAINERS of the base):\n\n'
             + '\n'.join('  ' + r for r in people)
             + '\n\nLists:\n\n' + '\n'.join('  ' + r for r in lists))
text = open(path).read()
text = text.replace('*** SUBJECT HERE ***', subject)
text = text.replace('*** BLURB HERE ***', body)
lines = text.split('\n')
for i, l in enumerate(lines):
    if l.startswith('Date: '):
        lines[i] = 'Date: ' + date
        break
open(path, 'w').write('\n'.join(lines))
PY

mkdir -p "$out"
find "$out" -maxdepth 1 -name '[0-9][0-9][0-9][0-9]-*.patch' -delete
cp "$tmp"/*.patch "$out"/
if [[ $out == "$TOP/patches" ]]; then
	# Record that build/linux now matches patches/ (see tree.sh).
	printf '%s %s\n' \
		"$(find "$out" -maxdepth 1 -name '[0-9][0-9][0-9][0-9]-*.patch' ! -name '0000-*' | sort | xargs -r cat | sha256sum | cut -d' ' -f1)" \
		"$(g rev-parse HEAD)" > "$TREE/.git/pinsafe-applied"
fi
say "exported $n patches + cover letter to $out"
