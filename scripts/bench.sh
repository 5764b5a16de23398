#!/bin/bash
# Writeback benchmarks: base (+ test patches) and series, side by side.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'USAGE'
usage: scripts/bench.sh [--help]     (make bench)
Builds (or reuses) the base kernel with the test patches and the series
kernel, boots each once and runs tests/bench/pin_bench on ext4 and on
ext4 over dm-integrity, then prints the numbers and the ratios:
  write_fsync  series/base      buffered write+fsync, unpinned (want >= 0.99)
  wb_pinned    / wb_unpinned    writeback of a pinned file vs an unpinned
                                one, series kernel (want >= 0.8)
  bounce       extra ns per bounced page on dm-integrity vs a memcpy
Under TCG the guests run with -icount (ICOUNT, default shift=0,sleep=off;
ICOUNT= turns it off): their clock counts instructions, so the numbers
do not depend on what else the host runs. The absolute values mean little;
the ratios are what to read. Results are kept in build/bench-{base,series}/.
USAGE
}
[[ ${1:-} == --help ]] && { usage; exit 0; }

"$TOP/scripts/deps.sh"
"$TOP/scripts/fetch-base.sh"
"$TOP/scripts/tree.sh"
for which in base series; do
	args=()
	[[ $which == base ]] && args=(--base)
	kernel=$("$TOP/scripts/build.sh" --config test "${args[@]}")
	bin=$("$TOP/scripts/build-tests.sh" --config test "${args[@]}")
	"$TOP/scripts/run-qemu.sh" --kernel "$kernel" --bin "$bin" \
		--out "$BUILD/bench-$which" --only bench --timeout 900 \
		--icount "${ICOUNT-shift=0,sleep=off}"
done

python3 - "$BUILD/bench-base/results.log" "$BUILD/bench-series/results.log" <<'PY'
import re, sys

def load(path):
    res, fs = {}, None
    for line in open(path, errors='replace'):
        m = re.match(r'#### PINSAFE-BENCH (\S+)', line)
        if m:
            fs = m.group(1)
        m = re.match(r'BENCH (\S+) (\S+) (.*)', line)
        if m and fs:
            res[(fs, m.group(1))] = (float(m.group(2)), m.group(3).strip())
    return res

base, series = load(sys.argv[1]), load(sys.argv[2])
keys = sorted(set(base) | set(series))
print(f'{"fs":<6} {"metric":<12} {"base":>10} {"series":>10}  unit')
for k in keys:
    b = base.get(k, (float('nan'), ''))
    s = series.get(k, (float('nan'), ''))
    print(f'{k[0]:<6} {k[1]:<12} {b[0]:>10.1f} {s[0]:>10.1f}  {s[1] or b[1]}')
print()
for fs in ('ext4', 'integ'):
    b, s = base.get((fs, 'write_fsync')), series.get((fs, 'write_fsync'))
    if b and s:
        print(f'{fs}: write+fsync unpinned, series/base = {s[0] / b[0]:.3f}')
    p, u = series.get((fs, 'wb_pinned')), series.get((fs, 'wb_unpinned'))
    if p and u:
        print(f'{fs}: writeback pinned/unpinned (series) = {p[0] / u[0]:.3f}')
    bp = series.get((fs, 'bounced'))
    mc = series.get((fs, 'memcpy'))
    if p and u and bp and bp[0] > 0 and mc:
        # MiB/s -> seconds per 16 MiB pass; extra time per bounced page
        pages = 16 * 256
        extra = (16 / p[0] - 16 / u[0]) / pages * 1e9
        print(f'{fs}: pinned-write overhead {extra:.0f} ns/page '
              f'(memcpy {mc[0]:.0f} ns/page, {bp[0]:.0f} pages bounced)')
PY
