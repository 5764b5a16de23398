#!/bin/bash
# Install the exact base kernel source package named in BASE and verify it.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/fetch-base.sh [--help]
Installs $BASE_PACKAGE=$BASE_VERSION from BASE with apt and checks the
tarball's sha256. BASE_VERSION=<other 6.12.y> in the environment picks
another packaged version (its sha256 is then reported, not enforced).
USAGE
}
[[ ${1:-} == --help ]] && { usage; exit 0; }

want=${PINSAFE_BASE_VERSION:-$BASE_VERSION}
have=$(dpkg-query -W -f='${Version}' "$BASE_PACKAGE" 2>/dev/null || true)
SUDO=
(( EUID != 0 )) && SUDO=sudo
if [[ $have != "$want" ]]; then
	say "installing $BASE_PACKAGE=$want (installed: ${have:-none})"
	$SUDO apt-get update -q
	if ! apt-cache madison "$BASE_PACKAGE" | awk '{print $3}' | grep -qxF "$want"; then
		echo "error: $BASE_PACKAGE version $want is not available from apt." >&2
		echo "available versions:" >&2
		apt-cache madison "$BASE_PACKAGE" | awk '{print "  " $3}' >&2
		echo "set PINSAFE_BASE_VERSION=<one of these> to try another 6.12.y" >&2
		exit 1
	fi
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q \
		--no-install-recommends --allow-downgrades "$BASE_PACKAGE=$want"
fi
[[ -f $BASE_TARBALL ]] || die "$BASE_TARBALL missing after install"
sum=$(sha256sum "$BASE_TARBALL" | cut -d' ' -f1)
if [[ $want == "$BASE_VERSION" && $sum != "$BASE_SHA256" ]]; then
	die "sha256 mismatch for $BASE_TARBALL: got $sum, BASE says $BASE_SHA256"
fi
[[ $want == "$BASE_VERSION" ]] || say "override $want: sha256 $sum (not checked)"
exit 0
