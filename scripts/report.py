#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn guest logs into a per-test table and a closing "N passed, N failed".

usage: scripts/report.py [--tree LINUX] [--log FILE] LABEL=RUNDIR [LABEL=RUNDIR...]

Each RUNDIR holds console.log (kernel console, with the boot-time KUnit
KTAP) and results.log (userspace suites between PINSAFE markers), written by
scripts/run-qemu.sh. KTAP is parsed with the tree's own
tools/testing/kunit/kunit_parser.py. The first LABEL is the kernel under
test: the exit status is non-zero if any of its tests failed or crashed, if
its console shows a warning splat, or if the guest did not finish. Further
LABELs (e.g. base) are shown side by side for comparison.
"""

import argparse
import io
import os
import re
import sys

SPLATS = re.compile(r'(WARNING:|BUG:|KASAN:|UBSAN:|Oops|Kernel panic|'
		    r'general protection fault|possible circular locking|'
		    r'possible recursive locking|INFO: task .* blocked|'
		    r'soft lockup|hard LOCKUP|inconsistent lock state|'
		    r'page without buffers|Call Trace:)')
SUITE_BEGIN = re.compile(r'^#### PINSAFE-SUITE (\S+)')
SUITE_END = re.compile(r'^#### PINSAFE-END (\S+) rc=(\d+)')
CHANGE_TAG = 'EXPECTED-TO-CHANGE'


def load_parser(tree):
	sys.path.insert(0, os.path.join(tree, 'tools/testing/kunit'))
	import kunit_parser  # noqa: E402
	import kunit_printer  # noqa: E402
	quiet = io.StringIO()
	kunit_printer.stdout._output = quiet
	kunit_parser.stdout._output = quiet
	return kunit_parser, quiet


class Run:
	def __init__(self, label, rundir):
		self.label = label
		self.dir = rundir
		self.results = {}	# name -> (status, note)
		self.order = []
		self.problems = []
		self.seen = set()

	def add(self, name, status, note=''):
		if name not in self.results:
			self.order.append(name)
		self.results[name] = (status, note)


def read(path):
	try:
		with open(path, errors='replace') as f:
			return f.read().replace('\r', '').splitlines()
	except FileNotFoundError:
		return []


def leaves(test, prefix):
	"""Yield (name, test) for each leaf test case of a parsed KTAP tree."""
	name = f'{prefix}.{test.name}' if prefix and test.name else (test.name or prefix)
	if not test.subtests:
		yield name, test
		return
	for sub in test.subtests:
		yield from leaves(sub, name)


def status_of(kp, test):
	s = test.status
	if s == kp.TestStatus.SUCCESS:
		return 'PASS'
	if s == kp.TestStatus.SKIPPED:
		return 'SKIP'
	if s == kp.TestStatus.FAILURE:
		return 'FAIL'
	return 'CRASH'


RUN_LINE = re.compile(r'^#?\s*\[RUN\]\s*(.*)$')


def unique_name(run, prefix, name, test):
	"""kselftest programs such as gup_longterm name their results "Should
	have worked" and describe the case in a preceding "# [RUN] ..." line:
	use that description. Repeated names get a numeric suffix."""
	runs = [m.group(1) for m in map(RUN_LINE.match, test.log) if m]
	if runs:
		name = f'{prefix}.{runs[-1]}'
	base, i = name, 2
	while name in run.seen:
		name = f'{base} #{i}'
		i += 1
	run.seen.add(name)
	return name


def add_ktap(kp, run, lines, prefix):
	top = kp.parse_run_tests(lines)
	if top.status == kp.TestStatus.FAILURE_TO_PARSE_TESTS:
		run.add(prefix, 'FAIL', 'no KTAP output')
		return
	# A plain KTAP document is one level; KUnit's is suites -> cases.
	for sub in top.subtests:
		for name, t in leaves(sub, prefix):
			name = unique_name(run, prefix, name, t)
			note = 'expected to change' if any(CHANGE_TAG in l for l in t.log) else ''
			run.add(name, status_of(kp, t), note)
	if top.counts.errors and not top.subtests:
		run.add(prefix, 'FAIL', 'unparsable KTAP')


def expected_warnings_removed(lines):
	"""Drop the console lines between a test's "expected warnings begin"
	and "expected warnings end" markers (e.g. gup_kunit's bad-flags case,
	which checks that misuse fails and WARN_ON_ONCE()s)."""
	out, skipping = [], False
	for l in lines:
		if 'expected warnings begin' in l:
			skipping = True
		elif 'expected warnings end' in l:
			skipping = False
		elif not skipping:
			out.append(l)
	return out


def parse_run(kp, run):
	console = read(os.path.join(run.dir, 'console.log'))
	results = read(os.path.join(run.dir, 'results.log'))
	if not console:
		run.problems.append('no console log')
	# Boot-time KUnit suites.
	if any('KTAP version' in l for l in console):
		add_ktap(kp, run, console, 'kunit')
	# Userspace suites.
	cur, body = None, []
	for line in results:
		m = SUITE_BEGIN.match(line)
		if m:
			cur, body = m.group(1), []
			continue
		m = SUITE_END.match(line)
		if m and cur:
			before = len(run.order)
			add_ktap(kp, run, body, cur)
			rc = int(m.group(2))
			failed = any(run.results[n][0] in ('FAIL', 'CRASH')
				     for n in run.order[before:])
			if rc == 124 or rc == 137:
				run.add(cur + '.timeout', 'FAIL', 'suite timed out')
			elif rc not in (0, 4) and not failed:
				run.add(cur + '.exit', 'FAIL', f'exit status {rc}')
			cur = None
			continue
		if cur:
			body.append(line)
	if cur:
		run.add(cur, 'CRASH', 'suite output ended without an end marker')
	done = any(l.startswith('#### PINSAFE-DONE') for l in results)
	run.add('guest.finished', 'PASS' if done else 'FAIL',
		'' if done else 'guest crashed or timed out before the end')
	splats = [l for l in expected_warnings_removed(console)
		  if SPLATS.search(l)]
	run.add('kernel.no_splats', 'FAIL' if splats else 'PASS',
		splats[0].strip()[:70] if splats else '')
	for l in splats[:20]:
		run.problems.append(l.strip())


def main():
	ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
	ap.add_argument('--tree', default=os.path.join(
		os.path.dirname(os.path.abspath(__file__)), '..', 'build', 'linux'))
	ap.add_argument('runs', nargs='+', metavar='LABEL=RUNDIR')
	args = ap.parse_args()
	kp, _ = load_parser(args.tree)

	runs = []
	for spec in args.runs:
		label, _, d = spec.partition('=')
		run = Run(label, d)
		parse_run(kp, run)
		runs.append(run)

	names = []
	for r in runs:
		names += [n for n in r.order if n not in names]
	main_run = runs[0]
	w = max(len(n) for n in names) if names else 10
	w = min(max(w, 20), 72)
	hdr = f'{"test":<{w}}  ' + '  '.join(f'{r.label:<6}' for r in runs) + '  note'
	print(hdr)
	print('-' * len(hdr))
	for n in names:
		cols = [r.results.get(n, ('-', ''))[0] for r in runs]
		notes = [r.results.get(n, ('', ''))[1] for r in runs]
		note = next((x for x in notes if x), '')
		if len(runs) > 1:
			a, b = cols[0], cols[1]
			if a == 'PASS' and b in ('FAIL', 'CRASH'):
				note = f'base wrong, fixed by {runs[0].label}' + (f'; {note}' if note else '')
			elif a in ('FAIL', 'CRASH') and b == 'PASS':
				note = 'REGRESSION' + (f'; {note}' if note else '')
			elif b == '-' and a != '-':
				note = 'new in ' + runs[0].label + (f'; {note}' if note else '')
		print(f'{n:<{w}}  ' + '  '.join(f'{c:<6}' for c in cols) + f'  {note}')
	print()
	for r in runs:
		for p in r.problems[:10]:
			print(f'[{r.label}] console: {p}')
	st = [s for s, _ in main_run.results.values()]
	passed = st.count('PASS')
	failed = st.count('FAIL') + st.count('CRASH')
	skipped = st.count('SKIP')
	if len(runs) > 1:
		for r in runs[1:]:
			bst = [s for s, _ in r.results.values()]
			print(f'[{r.label}] {bst.count("PASS")} passed, '
			      f'{bst.count("FAIL") + bst.count("CRASH")} failed, '
			      f'{bst.count("SKIP")} skipped')
	print(f'[{main_run.label}] {skipped} skipped')
	print(f'{passed} passed, {failed} failed')
	return 1 if failed or passed == 0 else 0


if __name__ == '__main__':
	sys.exit(main())
