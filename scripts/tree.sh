#!/bin/bash
# Make build/linux: the base source as a git tree (tag "base") with the
# series from patches/ applied by git am. Safe to re-run.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/tree.sh [--help]
Creates build/linux from the base tarball (tag "base") and applies
patches/[0-9]*.patch (not the cover letter). A second run with nothing
changed does nothing. If patches/ changed and build/linux holds no
unexported work, the series is re-applied on top of "base". If build/linux
has commits or edits that are not in patches/, it refuses: run
"make export" first, or reset build/linux yourself.
USAGE
}
[[ ${1:-} == --help ]] && { usage; exit 0; }

export GIT_AUTHOR_NAME="pinsafe developers" GIT_AUTHOR_EMAIL=dev@pinsafe.invalid
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
g() { git -C "$TREE" "$@"; }

series_patches() {
	find "$TOP/patches" -maxdepth 1 -name '[0-9][0-9][0-9][0-9]-*.patch' \
		! -name '0000-*' | sort
}
series_sum() {
	series_patches | xargs -r cat | sha256sum | cut -d' ' -f1
}
stamp=$TREE/.git/pinsafe-applied

make_base() {
	say "unpacking $BASE_TARBALL into $TREE"
	rm -rf "$TREE.tmp"
	mkdir -p "$TREE.tmp"
	with_progress "unpack" tar -xf "$BASE_TARBALL" -C "$TREE.tmp" --strip-components=1
	# Debian's packaging .gitignore ignores every top-level path ("/*"),
	# which would hide new files from "git add"; drop that block.
	sed -i '/^# Debian packaging: ignore everything/,$d' "$TREE.tmp/.gitignore"
	sed -i '${/^#$/d}' "$TREE.tmp/.gitignore"
	git -C "$TREE.tmp" init -q -b pinsafe
	git -C "$TREE.tmp" config user.name "$GIT_AUTHOR_NAME"
	git -C "$TREE.tmp" config user.email "$GIT_AUTHOR_EMAIL"
	git -C "$TREE.tmp" config core.abbrev 12
	with_progress "git add" git -C "$TREE.tmp" add -A -f
	# Fixed dates make the base commit id the same on every machine.
	GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z" \
		git -C "$TREE.tmp" commit -q -m "base: $BASE_PACKAGE $BASE_VERSION"
	git -C "$TREE.tmp" tag base
	mv "$TREE.tmp" "$TREE"
}

apply_series() {
	local p n=0
	g reset -q --hard base
	while read -r p; do
		n=$((n + 1))
		g am -q --keep-cr "$p" || {
			g am --abort || true
			die "patch $(basename "$p") does not apply to base"
		}
	done < <(series_patches)
	say "applied $n patches on base"
	printf '%s %s\n' "$(series_sum)" "$(g rev-parse HEAD)" > "$stamp"
	update_base_tree
}

# build/linux-base: tag base plus only the test patches listed in
# patches/test-patches.txt, so new tests run on the unfixed kernel too.
update_base_tree() {
	local list=$TOP/patches/test-patches.txt p subj sum tests=()
	local bstamp=$TREE/.git/pinsafe-base-applied
	if [[ -f $list ]]; then
		while read -r p; do
			# Subject: may be folded over several lines.
			subj=$(awk '/^Subject: /{s=$0; while ((getline l) > 0 && l ~ /^ /) s=s l; print s; exit}' "$p" |
				sed 's/^Subject: \[PATCH[^]]*\] //')
			grep -qxF -- "$subj" "$list" && tests+=("$p")
		done < <(series_patches)
	fi
	sum=$(cat /dev/null "${tests[@]}" | sha256sum | cut -d' ' -f1)
	if [[ -d $BASE_TREE && $(cat "$bstamp" 2>/dev/null) == "$sum" ]]; then
		return 0
	fi
	if [[ ! -d $BASE_TREE ]]; then
		git -C "$TREE" worktree add -q -f --detach "$BASE_TREE" base
	fi
	git -C "$BASE_TREE" checkout -q -f --detach base
	# Without their MAINTAINERS lines: those of a test may sit next to
	# a line of a patch that is not a test; a test needs none of them.
	for p in "${tests[@]}"; do
		git -C "$BASE_TREE" am -q --keep-cr --exclude=MAINTAINERS "$p" || {
			git -C "$BASE_TREE" am --abort || true
			die "test patch $(basename "$p") does not apply to base"
		}
	done
	say "build/linux-base: base + ${#tests[@]} test patches"
	echo "$sum" > "$bstamp"
}

[[ -d $TREE/.git ]] || make_base

if [[ -n $(g status --porcelain --untracked-files=no) ]]; then
	die "$TREE has uncommitted changes; commit them (then make export) or discard them"
fi
if [[ -f $stamp ]]; then
	read -r sum head < "$stamp"
	if [[ $sum == "$(series_sum)" && $head == "$(g rev-parse HEAD)" ]]; then
		say "build/linux is up to date ($(g rev-list --count base..HEAD) patches)"
		update_base_tree
		exit 0
	fi
	if [[ $head != "$(g rev-parse HEAD)" ]]; then
		# Local commits: fine if they are exactly what patches/ holds.
		tmp=$(mktemp -d)
		trap 'rm -rf "$tmp"' EXIT
		"$TOP/scripts/export.sh" --to "$tmp" >/dev/null
		exported=$(find "$tmp" -name '[0-9]*.patch' ! -name '0000-*' | sort |
			xargs -r cat | sha256sum | cut -d' ' -f1)
		if [[ $exported == "$(series_sum)" ]]; then
			printf '%s %s\n' "$(series_sum)" "$(g rev-parse HEAD)" > "$stamp"
			say "build/linux matches patches/"
			update_base_tree
			exit 0
		fi
		die "$TREE has commits not exported to patches/ (HEAD $(g rev-parse --short HEAD)); run 'make export' first or 'git -C build/linux reset --hard base'"
	fi
	say "patches/ changed; re-applying the series"
fi
apply_series
