#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print the RDMA-on-a-file demo table from guest results.

usage: scripts/demo-table.py LABEL=RUNDIR [LABEL=RUNDIR...]

Reads the "# DEMO kind=... reg=... write=... disk=..." lines that
tests/rdma/rdma_mr prints per buffer kind, and the perftest results, from
RUNDIR/results.log, and prints buffer kind x (registers? RDMA WRITE lands?
on disk after fsync?) with one column group per kernel.
"""
import os
import re
import sys

DEMO = re.compile(r'#\s*DEMO kind=(\S+) reg=(\S+) write=(\S+) disk=(\S+)')
PERF = re.compile(r'^(not ok|ok) \d+ (perftest_write_bw_\S+)')
EXPECTING = re.compile(r'#.*ib_write_bw --mmap on \S+, expecting (\S+)')
REGFAIL = re.compile(r'#.*perftest failed at memory registration')
OUTCOME = {
	('ok', 'pass'): 'runs, RDMA WRITE over the file mapping',
	('ok', 'reg_fail'): 'fails at ibv_reg_mr (registration refused)',
	('not ok', 'pass'): 'FAILED (expected to run)',
	('not ok', 'pass', 'reg'): 'fails at ibv_reg_mr (registration refused)',
	('not ok', 'reg_fail'): 'ran, but a refusal was expected (flip the test)',
}


def load(rundir):
	rows, perf = {}, {}
	order = []
	expecting, regfail = 'pass', False
	path = os.path.join(rundir, 'results.log')
	try:
		lines = open(path, errors='replace').read().splitlines()
	except FileNotFoundError:
		return order, rows, perf
	for line in lines:
		m = DEMO.search(line)
		if m:
			kind = m.group(1)
			if kind not in rows:
				order.append(kind)
			rows[kind] = m.groups()[1:]
		m = EXPECTING.search(line)
		if m:
			expecting, regfail = m.group(1), False
		if REGFAIL.search(line):
			regfail = True
		m = PERF.match(line)
		if m:
			key = (m.group(1), expecting) + (('reg',) if regfail else ())
			perf[m.group(2)] = OUTCOME.get(key, OUTCOME.get(key[:2],
								       m.group(1)))
	return order, rows, perf


def main():
	runs = []
	for spec in sys.argv[1:]:
		label, _, d = spec.partition('=')
		runs.append((label,) + load(d))
	if not runs:
		print(__doc__)
		return 2
	kinds = []
	for r in runs:
		kinds += [k for k in r[1] if k not in kinds]
	width = max([len('buffer kind')] + [len(k) for k in kinds])
	head = f'{"buffer kind":<{width}}'
	for label, *_ in runs:
		head += f' | {label + ": registers":<22} {"WRITE lands":<11} {"on disk":<8}'
	print(head)
	print('-' * len(head))
	for k in kinds:
		line = f'{k:<{width}}'
		for _, _, rows, _ in runs:
			reg, write, disk = rows.get(k, ('?', '?', '?'))
			reg = 'yes' if reg == 'ok' else f'no ({reg})'
			line += f' | {reg:<22} {write:<11} {disk:<8}'
		print(line)
	print()
	print('perftest ib_write_bw --mmap=FILE (unmodified client):')
	for label, _, _, perf in runs:
		for name, res in sorted(perf.items()):
			print(f'  {label:<8} {name:<28} {res}')
	return 0


if __name__ == '__main__':
	sys.exit(main())
