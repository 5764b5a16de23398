#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print the RDMA-on-a-file demo table from guest results.

usage: scripts/demo-table.py [--kinds K1,K2,...] LABEL=RUNDIR [LABEL=RUNDIR...]

Reads the "# DEMO kind=... reg=... write=... disk=..." lines that
tests/rdma/rdma_mr prints per buffer kind, and the perftest results, from
RUNDIR/results.log, and prints buffer kind x (registers? RDMA WRITE lands?
on disk after fsync?) with one column group per kernel. Then, from
tests/rdma/rdma_revoke, what another process's hole punch or truncate of
a file MR does: how long it takes, what the next RDMA WRITE to the MR
gets, and the case's verdict (revoked at once, data on disk, registers
again).

Exits 1, and says on stderr what went wrong with the end of RUNDIR/qemu.log
and RUNDIR/console.log, when a run did not finish (QEMU exit status in
RUNDIR/qemu.rc not 0, no "#### PINSAFE-DONE" in results.log) or the
scenario did not run (no DEMO rows, an expected buffer kind or the perftest
results missing). The expected kinds are those of kinds[] in
tests/rdma/rdma_mr.c, or --kinds.
"""
import os
import re
import sys

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')

DEMO = re.compile(r'#\s*DEMO kind=(\S+) reg=(\S+) write=(\S+) disk=(\S+)')
PERF = re.compile(r'^(not ok|ok) \d+ (perftest_write_bw_\S+)')
EXPECTING = re.compile(r'#.*ib_write_bw --mmap on \S+, expecting (\S+)')
REGFAIL = re.compile(r'#.*perftest failed at memory registration')
REVOKE_CASE = re.compile(r'^(not ok|ok) \d+ ((?:punch|truncate)_(?:ext4|xfs))$')
REVOKE_CUT = re.compile(r'#\s*((?:punch|truncate)_\w+): (?:hole punch|truncate) '
			r'by another process in ([\d.]+) s: (.*)')
REVOKE_REG = re.compile(r'#\s*((?:punch|truncate)_\w+): writable ibv_reg_mr\(\) '
			r'of the file: (.*)')
REVOKE_WRITE = re.compile(r'#\s*((?:punch|truncate)_\w+): RDMA WRITE to the MR '
			  r'after the cut: (.*)')
OUTCOME = {
	('ok', 'pass'): 'runs, RDMA WRITE over the file mapping',
	('ok', 'reg_fail'): 'fails at ibv_reg_mr (registration refused)',
	('not ok', 'pass'): 'FAILED (expected to run)',
	('not ok', 'pass', 'reg'): 'fails at ibv_reg_mr (registration refused)',
	('not ok', 'reg_fail'): 'ran, but a refusal was expected (flip the test)',
}


def load_revoke(rundir):
	"""rdma_revoke's cases: name -> [cut result, next WRITE, verdict]."""
	cases = {}
	try:
		lines = open(os.path.join(rundir, 'results.log'),
			     errors='replace').read().splitlines()
	except FileNotFoundError:
		return cases
	for line in lines:
		m = REVOKE_CUT.search(line)
		if m:
			cases.setdefault(m.group(1), ['?', '?', '?'])[0] = \
				f'{m.group(3)} in {m.group(2)} s'
		m = REVOKE_REG.search(line)
		if m:
			cases.setdefault(m.group(1), ['?', '?', '?'])[0] = \
				f'not registered: {m.group(2)}'
		m = REVOKE_WRITE.search(line)
		if m:
			cases.setdefault(m.group(1), ['?', '?', '?'])[1] = m.group(2)
		m = REVOKE_CASE.match(line)
		if m:
			cases.setdefault(m.group(2), ['?', '?', '?'])[2] = \
				'PASS' if m.group(1) == 'ok' else 'FAIL'
	return cases


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


def expected_kinds():
	"""The buffer kinds rdma_mr runs: the names in its kinds[] table."""
	try:
		src = open(os.path.join(TOP, 'tests/rdma/rdma_mr.c')).read()
	except FileNotFoundError:
		return []
	table = src.partition('kinds[] = {')[2].partition('\n};')[0]
	return re.findall(r'^\s*\{\s*"(\w+)"', table, re.M)


def tail(path, n):
	try:
		with open(path, errors='replace') as f:
			return f.read().replace('\r', '').splitlines()[-n:]
	except FileNotFoundError:
		return ['(missing)']


def problems(rundir, order, perf, kinds):
	"""What says that this run's demo did not happen, [] if nothing."""
	bad = []
	try:
		rc = open(os.path.join(rundir, 'qemu.rc')).read().strip()
	except FileNotFoundError:
		rc = None
	if rc is None:
		bad.append('no qemu.rc: QEMU did not run (or not through run-qemu.sh)')
	elif rc != '0':
		why = ' (killed at the timeout)' if rc == '124' else ''
		bad.append(f'QEMU exited with status {rc}{why}')
	try:
		results = open(os.path.join(rundir, 'results.log'), errors='replace').read()
	except FileNotFoundError:
		results = ''
	if not re.search(r'^#### PINSAFE-DONE', results, re.M):
		bad.append('the guest did not finish (no "#### PINSAFE-DONE" in results.log)')
	if not order:
		bad.append('no DEMO rows: the rdma_mr scenario did not run')
	else:
		missing = [k for k in kinds if k not in order]
		if missing:
			bad.append('buffer kinds missing: ' + ', '.join(missing))
	if not perf:
		bad.append('no perftest results: the rdma_perftest scenario did not run')
	return bad


def main():
	args = sys.argv[1:]
	kinds = None
	if args[:1] == ['--kinds'] and len(args) > 1:
		kinds = [k for k in args[1].split(',') if k]
		args = args[2:]
	if not args or args[0] in ('-h', '--help'):
		print(__doc__)
		return 0 if args else 2
	if kinds is None:
		kinds = expected_kinds()
	runs, report = [], []
	for spec in args:
		label, _, d = spec.partition('=')
		runs.append((label,) + load(d))
		bad = problems(d, runs[-1][1], runs[-1][3], kinds)
		if bad:
			report.append(f'demo: {label} ({d}) FAILED:')
			report += [f'  - {b}' for b in bad]
			for f, n in (('qemu.log', 10), ('console.log', 15)):
				report.append(f'  last lines of {os.path.join(d, f)}:')
				report += [f'    | {l}' for l in tail(os.path.join(d, f), n) or ['(empty)']]
	kinds = []
	for r in runs:
		kinds += [k for k in r[1] if k not in kinds]
	if not kinds and report:
		# Nothing ran: no empty table that looks like a result.
		print('\n'.join(report), file=sys.stderr)
		print('demo: FAILED: no buffer kind ran, there is no table', file=sys.stderr)
		return 1
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
	revokes = [(label, load_revoke(d)) for label, d in
		   (spec.partition('=')[::2] for spec in args)]
	if any(cases for _, cases in revokes):
		print()
		print('a file MR written by an RC QP, then punched or truncated by '
		      'another process (rdma_revoke):')
		for label, cases in revokes:
			for name, (cut, write, verdict) in sorted(cases.items()):
				print(f'  {label:<8} {name:<14} cut: {cut:<36} '
				      f'next WRITE: {write:<20} {verdict}')
	if report:
		sys.stdout.flush()
		print('\n'.join([''] + report + ['demo: FAILED: the guest or the '
			'scenario did not run to the end, the table above is incomplete']),
		      file=sys.stderr)
		return 1
	return 0


if __name__ == '__main__':
	sys.exit(main())
