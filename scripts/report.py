#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn guest logs into a per-test table and a closing "N passed, N failed".

usage: scripts/report.py [--tree LINUX] [--parser auto|tree|builtin]
                         LABEL=RUNDIR [LABEL=RUNDIR...]

Each RUNDIR holds console.log (kernel console, with the boot-time KUnit
KTAP), results.log (userspace suites between PINSAFE markers), qemu.log and
qemu.rc, written by scripts/run-qemu.sh. KTAP is parsed with the tree's own
tools/testing/kunit/kunit_parser.py (--tree, default build/linux) when it
exists, else (or with --parser builtin) with a small built-in port of the
same algorithm, so the harness self-tests run before any build. The first
LABEL is the kernel under test: the exit status is non-zero if any of its
tests failed or crashed, if its console shows a warning splat or is
missing, if QEMU exited non-zero, or if the guest did not finish. Further
LABELs (e.g. base) are shown side by side for comparison.
"""

import argparse
import enum
import io
import os
import re
import sys
import types

SPLATS = re.compile(r'(WARNING:|BUG:|KASAN:|UBSAN:|Oops|Kernel panic|'
		    r'general protection fault|possible circular locking|'
		    r'possible recursive locking|INFO: task .* blocked|'
		    r'soft lockup|hard LOCKUP|inconsistent lock state|'
		    r'page without buffers|Call Trace:)')
SUITE_BEGIN = re.compile(r'^#### PINSAFE-SUITE (\S+)')
SUITE_END = re.compile(r'^#### PINSAFE-END (\S+) rc=(\d+)')
CHANGE_TAG = 'EXPECTED-TO-CHANGE'


def load_tree_parser(tree):
	sys.path.insert(0, os.path.join(tree, 'tools/testing/kunit'))
	import kunit_parser  # noqa: E402
	import kunit_printer  # noqa: E402
	quiet = io.StringIO()
	kunit_printer.stdout._output = quiet
	kunit_parser.stdout._output = quiet
	return kunit_parser


# A minimal KTAP parser for when build/linux does not exist yet (fresh
# clone, harness self-tests). It is a port of the parts of
# tools/testing/kunit/kunit_parser.py that this script uses: the same
# statuses, the same tree of Test objects (name, status, subtests, log,
# counts.errors), the same rules for plans, "# Subtest:" headers, SKIP,
# missing results (CRASHED) and prefixes such as printk timestamps.
# scripts/harness_test.py runs the recorded logs through both parsers.

class TestStatus(enum.Enum):
	SUCCESS = enum.auto()
	FAILURE = enum.auto()
	SKIPPED = enum.auto()
	TEST_CRASHED = enum.auto()
	NO_TESTS = enum.auto()
	FAILURE_TO_PARSE_TESTS = enum.auto()


class KtapCounts:
	def __init__(self):
		self.passed = self.failed = self.crashed = 0
		self.skipped = self.errors = 0

	def total(self):
		return self.passed + self.failed + self.crashed + self.skipped

	def add_counts(self, o):
		self.passed += o.passed
		self.failed += o.failed
		self.crashed += o.crashed
		self.skipped += o.skipped
		self.errors += o.errors

	def add_status(self, st):
		if st == TestStatus.SUCCESS:
			self.passed += 1
		elif st == TestStatus.FAILURE:
			self.failed += 1
		elif st == TestStatus.SKIPPED:
			self.skipped += 1
		elif st != TestStatus.NO_TESTS:
			self.crashed += 1

	def get_status(self):
		if self.total() == 0:
			return TestStatus.NO_TESTS
		if self.crashed:
			return TestStatus.TEST_CRASHED
		if self.failed:
			return TestStatus.FAILURE
		if self.passed:
			return TestStatus.SUCCESS
		return TestStatus.SKIPPED


class KtapTest:
	def __init__(self):
		self.status = TestStatus.TEST_CRASHED
		self.name = ''
		self.expected_count = 0
		self.subtests = []
		self.log = []
		self.counts = KtapCounts()


K_START = re.compile(r'\s*KTAP version ([0-9]+)$')
T_START = re.compile(r'\s*TAP version ([0-9]+)$')
K_END = re.compile(r'\s*(List of all partitions:|'
		   r'Kernel panic - not syncing: VFS:|reboot: System halted)')
K_EXEC_ERR = re.compile(r'\s*kunit executor: (.*)$')
K_HEADER = re.compile(r'^\s*# Subtest: (.*)$')
K_PLAN = re.compile(r'^\s*1\.\.([0-9]+)')
K_RESULT = re.compile(r'^\s*(ok|not ok) ([0-9]+) (- )?([^#]*)( # .*)?$')
K_SKIP = re.compile(r'^\s*(ok|not ok) ([0-9]+) (- )?(.*) # SKIP(.*)$')
K_NOT_DIAG = (K_RESULT, K_HEADER, K_START, T_START, K_PLAN)


class KtapLines:
	def __init__(self, lines):
		self.lines, self.i = lines, 0

	def __bool__(self):
		return self.i < len(self.lines)

	def peek(self):
		return self.lines[self.i] if self else ''

	def pop(self):
		self.i += 1
		return self.lines[self.i - 1]


def ktap_isolate(output):
	out, prefix = [], None
	for line in output:
		line = line.rstrip()
		if prefix is None:
			for start, word in ((K_START, 'KTAP version'), (T_START, 'TAP version')):
				if start.search(line):
					prefix = len(line.split(word)[0])
					out.append(line[prefix:])
					break
			else:
				if K_EXEC_ERR.search(line):
					out.append(line)
		elif K_END.search(line):
			break
		else:
			out.append(line[prefix:])
	return KtapLines(out)


def ktap_diagnostic(ls):
	log = []
	while ls and not any(r.match(ls.peek()) for r in K_NOT_DIAG):
		log.append(ls.pop())
	return log


def ktap_name_match(ls, test):
	m = K_RESULT.match(ls.peek())
	return bool(m) and m.group(4) == test.name


def ktap_result(ls, test, num):
	m = K_RESULT.match(ls.peek())
	if not m:
		return
	skip = K_SKIP.match(ls.pop())
	test.name = skip.group(4) if skip else m.group(4)
	if int(m.group(2)) != num:
		test.counts.errors += 1
	if skip:
		test.status = TestStatus.SKIPPED
	elif m.group(1) == 'ok':
		test.status = TestStatus.SUCCESS
	else:
		test.status = TestStatus.FAILURE


def ktap_version(ls):
	if K_START.match(ls.peek()) or T_START.match(ls.peek()):
		ls.pop()
		return True
	return False


def ktap_plan(ls, test):
	m = K_PLAN.match(ls.peek())
	test.expected_count = int(m.group(1)) if m else None
	if m:
		ls.pop()


def ktap_parse_test(ls, num, log, is_subtest):
	test = KtapTest()
	test.log += log + ktap_diagnostic(ls)
	if not is_subtest:
		test.name = 'main'
		ktap_version(ls)
		test.log += ktap_diagnostic(ls)
		ktap_plan(ls, test)
		parent = True
	else:
		version = ktap_version(ls)
		m = K_HEADER.match(ls.peek())
		if m:
			test.name = m.group(1)
			ls.pop()
		parent = version or bool(m)
		if parent:
			test.log += ktap_diagnostic(ls)
			ktap_plan(ls, test)
	expected, n = test.expected_count, 1
	while parent and (expected is None or n <= expected):
		sub_log = ktap_diagnostic(ls)
		sub = KtapTest()
		if not ls or (is_subtest and ktap_name_match(ls, test)):
			if expected and n <= expected:
				test.counts.errors += 1		# missing subtest
				sub.log += sub_log
				test.counts.add_status(TestStatus.TEST_CRASHED)
			else:
				test.log += sub_log
				break
		else:
			at = ls.i
			sub = ktap_parse_test(ls, n, sub_log, True)
			if ls.i == at:		# nothing consumed: stray line
				ls.pop()
		test.subtests.append(sub)
		n += 1
	if is_subtest:
		test.log += ktap_diagnostic(ls)
		if test.name and not ktap_name_match(ls, test):
			test.counts.errors += 1		# missing result line
		else:
			ktap_result(ls, test, num)
	if parent and not test.subtests and test.status in (
			TestStatus.TEST_CRASHED, TestStatus.SUCCESS):
		test.status = TestStatus.NO_TESTS
		test.counts.errors += 1
	for t in test.subtests:
		test.counts.add_counts(t.counts)
	if test.counts.total() == 0:
		test.counts.add_status(test.status)
	elif test.counts.get_status() == TestStatus.TEST_CRASHED:
		test.status = TestStatus.TEST_CRASHED
	return test


def ktap_parse_run_tests(output):
	ls = ktap_isolate(output)
	if not ls:
		test = KtapTest()
		test.name = '<missing>'
		test.counts.errors += 1
		test.status = TestStatus.FAILURE_TO_PARSE_TESTS
		return test
	test = ktap_parse_test(ls, 0, [], False)
	if test.status != TestStatus.NO_TESTS:
		test.status = test.counts.get_status()
	return test


BUILTIN = types.SimpleNamespace(TestStatus=TestStatus,
				parse_run_tests=ktap_parse_run_tests)


def load_parser(tree, which='auto'):
	"""The tree's kunit_parser, or the built-in one (with a note on
	stderr when auto had to fall back)."""
	have = os.path.isfile(os.path.join(tree, 'tools/testing/kunit/kunit_parser.py'))
	if which == 'builtin' or (which == 'auto' and not have):
		if which == 'auto':
			print(f'report: no {tree}/tools/testing/kunit/kunit_parser.py, '
			      'using the built-in KTAP parser', file=sys.stderr)
		return BUILTIN
	if not have:
		sys.exit(f'report: no kunit_parser.py in {tree}')
	return load_tree_parser(tree)


class Run:
	def __init__(self, label, rundir):
		self.label = label
		self.dir = rundir
		self.results = {}	# name -> (status, note)
		self.order = []
		self.problems = []
		self.skip_reasons = []	# the "# SKIP" reasons of its KTAP
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


def leaves(test, prefix, num=0):
	"""Yield (name, test) for each leaf test case of a parsed KTAP tree.
	A test whose result line never came (the output stopped: crash,
	timeout) has no name: call it "<missing N>" after its number."""
	if test.name:
		name = f'{prefix}.{test.name}' if prefix else test.name
	else:
		name = f'{prefix}.<missing {num}>' if num else prefix
	if not test.subtests:
		yield name, test
		return
	for i, sub in enumerate(test.subtests, 1):
		yield from leaves(sub, name, i)


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


# "ok 45 # SKIP need more free huge pages": a result line with a directive
# but no description (gup_longterm's skips). KTAP allows it; kunit_parser
# in 6.12 does not, and would shift every later result by one.
NAMELESS_RESULT = re.compile(r'^(\s*(?:not )?ok [0-9]+) #')


def add_ktap(kp, run, lines, prefix):
	for l in lines:
		m = SKIP_LINE.match(l)
		if m and m.group(1).strip():
			run.skip_reasons.append(m.group(1).strip())
	lines = [NAMELESS_RESULT.sub(r'\1 <unnamed> #', l) for l in lines]
	top = kp.parse_run_tests(lines)
	if top.status == kp.TestStatus.FAILURE_TO_PARSE_TESTS:
		run.add(prefix, 'FAIL', 'no KTAP output')
		return
	# A plain KTAP document is one level; KUnit's is suites -> cases.
	for i, sub in enumerate(top.subtests, 1):
		for name, t in leaves(sub, prefix, i):
			name = unique_name(run, prefix, name, t)
			note = 'expected to change' if any(CHANGE_TAG in l for l in t.log) else ''
			if not t.name:
				note = 'no result line: output stopped (crash or timeout)'
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
	qemu_rc = read(os.path.join(run.dir, 'qemu.rc'))
	if qemu_rc and qemu_rc[0].strip() != '0':
		rc = qemu_rc[0].strip()
		why = 'killed at the timeout' if rc == '124' else 'QEMU failed'
		run.add('qemu.exit', 'FAIL', f'qemu rc={rc}: {why}')
		for l in read(os.path.join(run.dir, 'qemu.log'))[-10:]:
			run.problems.append(('qemu', l.strip()))
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
		if body:
			add_ktap(kp, run, body, cur)
		run.add(cur + '.end', 'CRASH', 'suite output ended without an end marker')
	done = any(l.startswith('#### PINSAFE-DONE') for l in results)
	run.add('guest.finished', 'PASS' if done else 'FAIL',
		'' if done else why_unfinished(run, console, qemu_rc))
	splats = [l for l in expected_warnings_removed(console)
		  if SPLATS.search(l)]
	if not any(l.strip() for l in console):
		# Nothing to look at is not "no splats".
		run.add('kernel.no_splats', 'FAIL', 'no console log')
	else:
		run.add('kernel.no_splats', 'FAIL' if splats else 'PASS',
			splats[0].strip()[:70] if splats else '')
	for l in splats[:20]:
		run.problems.append(('console', l.strip()))


RUNNER_END = re.compile(r'pinsafe guest: (runner missing: .*|run-tests\.sh exited with (\d+))')


def why_unfinished(run, console, qemu_rc):
	"""Why the guest did not reach its end marker, from guest/init's last
	words; the console's tail goes to the problems when init said any."""
	said = None
	for l in console:
		m = RUNNER_END.search(l)
		if m:
			said = m
	if said is None:
		if qemu_rc and qemu_rc[0].strip() == '124':
			return 'killed at the timeout before the end'
		return 'guest crashed or hung before the end (no word from guest/init)'
	for l in console[-15:]:
		run.problems.append(('console', l.rstrip()))
	if said.group(2) is None:
		return 'the guest runner is missing (' + said.group(1)[len('runner missing: '):] + ')'
	return f'the guest runner exited with status {said.group(2)} before the end'


SKIP_LINE = re.compile(r'^\s*ok [0-9]+ .*?# SKIP\s*(.*)$')


def skip_reasons(run, most=15):
	"""The reasons the tests of @run gave for skipping (their KTAP "# SKIP"
	directives), the largest groups first: [(reason, count)], the rest
	summed in one line."""
	counts = {}
	for reason in run.skip_reasons:
		counts[reason] = counts.get(reason, 0) + 1
	groups = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
	if len(groups) > most:
		rest = sum(c for _, c in groups[most - 1:])
		groups = groups[:most - 1] + [(f'{len(groups) - most + 1} other reasons', rest)]
	return groups


def main():
	ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
	ap.add_argument('--tree', default=os.path.join(
		os.path.dirname(os.path.abspath(__file__)), '..', 'build', 'linux'))
	ap.add_argument('--parser', choices=('auto', 'tree', 'builtin'),
			default='auto', help='KTAP parser: the tree\'s '
			'kunit_parser.py, the built-in one, or the tree\'s if it exists')
	ap.add_argument('runs', nargs='+', metavar='LABEL=RUNDIR')
	args = ap.parse_args()
	kp = load_parser(args.tree, args.parser)

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
		for where, p in r.problems[:20]:
			print(f'[{r.label}] {where}: {p}')
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
	for reason, count in skip_reasons(main_run):
		print(f'[{main_run.label}]   {count:4} {reason}')
	print(f'{passed} passed, {failed} failed')
	return 1 if failed or passed == 0 else 0


if __name__ == '__main__':
	sys.exit(main())
