# shellcheck shell=bash
# Common helpers for the pinsafe harness scripts. Sourced, not run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Kbuild cannot build in or from a directory whose path has a space or a
# colon: a checkout in such a path builds under /var/tmp instead.
if [[ -z ${BUILD:-} && $TOP == *[' :']* ]]; then
	BUILD=/var/tmp/pinsafe-build-$(printf '%s' "$TOP" | sha1sum | cut -c1-12)
fi
BUILD=${BUILD:-$TOP/build}
TREE=$BUILD/linux
BASE_TREE=$BUILD/linux-base
export TOP BUILD TREE BASE_TREE

# shellcheck source=BASE
. "$TOP/BASE"

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# apt_install PKG...: install (Debian 12 names) those not installed yet.
apt_install() {
	local p missing=() sudo=
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'ok installed' || missing+=("$p")
	done
	(( ${#missing[@]} )) || return 0
	(( EUID != 0 )) && sudo=sudo
	say "installing: ${missing[*]}"
	$sudo apt-get update -q >&2
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q \
		--no-install-recommends "${missing[@]}" >&2
}

# check_kernels LIST: a --kernels argument is series, base or both.
check_kernels() {
	[[ $1 =~ ^(series|base)(,(series|base))?$ ]] ||
		die "--kernels takes series, base or both"
}

# kernel_and_tests WHICH CFG: build (incrementally) the WHICH=series|base
# kernel of config CFG and the tests for it; sets kernel and bin to the
# bzImage and the test directory. The Makefile made build/linux first.
kernel_and_tests() {
	local args=()
	[[ $1 == base ]] && args=(--base)
	# shellcheck disable=SC2034 # the caller's
	kernel=$("$TOP/scripts/build.sh" --config "$2" "${args[@]}")
	# shellcheck disable=SC2034 # the caller's
	bin=$("$TOP/scripts/build-tests.sh" --config "$2" "${args[@]}")
}

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

# add_deb_src: deb-src entries for every configured Debian deb entry.
add_deb_src() {
	local d=/etc/apt/sources.list.d f tmp SUDO=
	(( EUID != 0 )) && SUDO=sudo
	tmp=$(mktemp -d)
	# deb822: each stanza of Types: deb on a Debian URI, as deb-src.
	for f in "$d"/*.sources; do
		[[ -f $f && $f != */pinsafe-src.sources ]] || continue
		awk 'BEGIN { RS = ""; ORS = "\n\n" }
		     /(^|\n)Types:[^\n]*deb( |\n|$)/ && /URIs:[^\n]*debian/ {
			sub(/(^|\n)Types:[^\n]*/, "\nTypes: deb-src"); sub(/^\n/, "")
			print }' "$f" >> "$tmp/src.sources"
	done
	# one-line style
	for f in /etc/apt/sources.list "$d"/*.list; do
		[[ -f $f && $f != */pinsafe-src.list ]] || continue
		awk '$1 == "deb" && /debian/ { $1 = "deb-src"; print }' "$f" >> "$tmp/src.list"
	done
	[[ -s $tmp/src.sources || -s $tmp/src.list ]] ||
		die "no Debian deb entry in /etc/apt to make a deb-src entry from"
	[[ -s $tmp/src.sources ]] && $SUDO cp "$tmp/src.sources" "$d/pinsafe-src.sources"
	[[ -s $tmp/src.list ]] && $SUDO cp "$tmp/src.list" "$d/pinsafe-src.list"
	rm -rf "$tmp"
	say "added deb-src entries ($d/pinsafe-src.*); apt-get update"
	$SUDO apt-get update -q >&2
}

# apt_source PKG VERSION DIR: download the source package PKG=VERSION into
# DIR (apt-get source --download-only), adding deb-src entries if needed.
apt_source() {
	local pkg=$1 ver=$2 dir=$3
	if ! apt-cache showsrc "$pkg" 2>/dev/null | grep -xF "Version: $ver" > /dev/null; then
		add_deb_src
		apt-cache showsrc "$pkg" 2>/dev/null | grep -xF "Version: $ver" > /dev/null ||
			die "apt has no source for $pkg $ver even with deb-src entries"
	fi
	mkdir -p "$dir"
	(cd "$dir" && apt-get source --download-only -q "$pkg=$ver" >&2)
}
