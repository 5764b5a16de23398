#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where two kernels' instruction counts of one bench window differ.

usage: scripts/bench-profile.py [--top N] BASE_RUN BASE_SYSTEM_MAP
                                SERIES_RUN SERIES_SYSTEM_MAP

Each RUN is a directory written by scripts/bench.sh --profile WINDOW: its
insn.log holds the insn_window plugin's "insn_profile id=<n> pc=<hex>
insns=<count>" lines, the kernel instructions of the profiled window per
translation block. A block is charged to the function of System.map that
contains its first instruction (a block never spans a call, so this is
right but for the rare fall-through into the next symbol). Prints, per
function, the instructions of each kernel and their difference, largest
difference first, then the totals.
"""
import argparse
import bisect
import re
import sys
from collections import Counter


def load_map(path):
    """Text symbols of a System.map, sorted by address."""
    syms = []
    for line in open(path):
        parts = line.split()
        if len(parts) >= 3 and parts[1] in 'tTwW':
            syms.append((int(parts[0], 16), parts[2]))
    syms.sort()
    return [a for a, _ in syms], [n for _, n in syms]


def load_profile(run, smap):
    addrs, names = smap
    per_fn = Counter()
    windows = set()
    pat = re.compile(r'insn_profile id=(\d+) pc=([0-9a-f]+) insns=(\d+)')
    for line in open(f'{run}/insn.log', errors='replace'):
        m = pat.match(line)
        if not m:
            continue
        windows.add(m.group(1))
        pc = int(m.group(2), 16)
        i = bisect.bisect_right(addrs, pc) - 1
        per_fn[names[i] if i >= 0 else '?'] += int(m.group(3))
    if not per_fn:
        sys.exit(f'{run}/insn.log: no insn_profile lines '
                 '(was it run with bench.sh --profile?)')
    if len(windows) > 1:
        sys.exit(f'{run}/insn.log: profiles of several windows')
    return per_fn


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--top', type=int, default=40)
    ap.add_argument('base_run')
    ap.add_argument('base_map')
    ap.add_argument('series_run')
    ap.add_argument('series_map')
    a = ap.parse_args()
    base = load_profile(a.base_run, load_map(a.base_map))
    series = load_profile(a.series_run, load_map(a.series_map))
    fns = sorted(set(base) | set(series),
                 key=lambda f: (-abs(series[f] - base[f]), f))
    print(f'{"function":40} {"base":>14} {"series":>14} {"series-base":>12}')
    for f in fns[:a.top]:
        d = series[f] - base[f]
        if not d:
            break
        print(f'{f[:40]:40} {base[f]:14d} {series[f]:14d} {d:+12d}')
    tb, ts = sum(base.values()), sum(series.values())
    print(f'{"total":40} {tb:14d} {ts:14d} {ts - tb:+12d}')


if __name__ == '__main__':
    main()
