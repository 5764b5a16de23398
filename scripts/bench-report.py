#!/usr/bin/env python3
"""Summarise pin_bench runs: medians per kernel, ratios with their range.

usage: bench-report.py KERNEL:RESULTS.LOG...   (KERNEL is base or series;
the logs of one round are given together, base first)
"""
import re
import statistics
import sys


def load(path):
    """{(fs, metric): (value, unit)} from one guest's results.log."""
    res, fs = {}, None
    for line in open(path, errors='replace'):
        m = re.match(r'#### PINSAFE-BENCH (\S+)', line)
        if m:
            fs = m.group(1)
        m = re.match(r'BENCH (\S+) (\S+) (.*)', line)
        if m and fs:
            res[(fs, m.group(1))] = (float(m.group(2)), m.group(3).strip())
    return res


def main(args):
    if not args or args[0] in ('-h', '--help'):
        print(__doc__.strip())
        return 0
    runs = {'base': [], 'series': []}
    for arg in args:
        which, path = arg.split(':', 1)
        runs[which].append(load(path))
    rounds = list(zip(runs['base'], runs['series']))
    keys = sorted({k for r in runs['base'] + runs['series'] for k in r})

    def values(which, key):
        return [r[key][0] for r in runs[which] if key in r]

    print(f'{len(rounds)} rounds; medians')
    print(f'{"fs":<6} {"metric":<12} {"base":>10} {"series":>10}  unit')
    for k in keys:
        b, s = values('base', k), values('series', k)
        unit = next((r[k][1] for r in runs['base'] + runs['series'] if k in r), '')
        bm = statistics.median(b) if b else float('nan')
        sm = statistics.median(s) if s else float('nan')
        print(f'{k[0]:<6} {k[1]:<12} {bm:>10.1f} {sm:>10.1f}  {unit}')
    print()

    def ratio(name, per_round):
        vals = [v for v in per_round if v is not None]
        if vals:
            print(f'{name} = {statistics.median(vals):.3f} '
                  f'(rounds: {", ".join(f"{v:.3f}" for v in vals)})')

    for fs in ('ext4', 'integ'):
        wf = (fs, 'write_fsync')
        ratio(f'{fs}: write+fsync unpinned, series/base',
              [s[wf][0] / b[wf][0] if wf in b and wf in s else None
               for b, s in rounds])
        p, u = (fs, 'wb_pinned'), (fs, 'wb_unpinned')
        ratio(f'{fs}: writeback pinned/unpinned (series)',
              [s[p][0] / s[u][0] if p in s and u in s else None
               for _, s in rounds])
        # base/base: how far two boots of the same kernel disagree
        ratio(f'{fs}: write+fsync unpinned, base round n / round 1',
              [b[wf][0] / rounds[0][0][wf][0]
               if wf in b and wf in rounds[0][0] else None
               for b, _ in rounds[1:]])
        bp, mc = (fs, 'bounced'), (fs, 'memcpy')
        extra = []
        for _, s in rounds:
            if p in s and u in s and bp in s and s[bp][0] > 0 and mc in s:
                pages = 16 * 256        # 16 MiB passes, 4 KiB pages
                ns = (16 / s[p][0] - 16 / s[u][0]) / pages * 1e9
                extra.append(f'{ns:.0f} vs {s[mc][0]:.0f}')
        if extra:
            print(f'{fs}: pinned-write extra ns/page vs memcpy ns/page: '
                  f'{"; ".join(extra)}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
