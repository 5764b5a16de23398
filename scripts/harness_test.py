#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Self-tests of the harness on recorded guest logs (make selftest).

Like tools/testing/kunit/kunit_tool_test.py: scripts/report.py and
scripts/demo-table.py run on small hand-made run directories under
scripts/testdata/ (console.log, results.log, qemu.rc, qemu.log) and must
print the table in expected.txt and exit with the status in expected.rc.

  report/clean             every suite ran, KUnit with a SKIP     -> 0
  report/crash             a KUnit case oopses at boot            -> 1
  report/timeout           a suite hangs, QEMU killed (rc 124)    -> 1
  report/splat             all tests pass, the kernel WARNed      -> 1
  report/expected_warning  a WARN between gup_kunit's markers     -> 0
  report/empty_console     QEMU aborted at once (rc 134)          -> 1
  demo/good, demo/failed   the demo table; the failed run         -> 0, 1

report.py runs with its built-in KTAP parser, and also with the kernel
tree's tools/testing/kunit/kunit_parser.py when the tree exists
(PINSAFE_TREE, default build/linux); the two parsers must also agree on
the tree's own KUnit test logs. No build needed: runs on a fresh clone.

usage: scripts/harness_test.py [-v] [unittest options]
       PINSAFE_UPDATE=1 scripts/harness_test.py   rewrite expected.* from
                                                  the built-in parser (check
                                                  the diff by hand!)
"""
import glob
import importlib.util
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
DATA = os.path.join(HERE, 'testdata')
TREE = os.environ.get('PINSAFE_TREE', os.path.join(TOP, 'build', 'linux'))
KUNIT = os.path.join(TREE, 'tools', 'testing', 'kunit')
HAVE_TREE = os.path.isfile(os.path.join(KUNIT, 'kunit_parser.py'))
UPDATE = os.environ.get('PINSAFE_UPDATE') == '1'
REPORT_CASES = ['clean', 'crash', 'timeout', 'splat', 'expected_warning',
		'empty_console']
# The kinds in testdata/demo/good: fixed here so that a new kind in
# tests/rdma/rdma_mr.c does not break the recorded run.
DEMO_KINDS = ('anon_malloc,anon_mmap,memfd_shared,tmpfs_shared,ext4_shared,'
	      'xfs_shared,ext4_shared_knob_off,ext4_private,anon_mmap_4m,'
	      'tmpfs_shared_4m,ext4_shared_4m,xfs_shared_4m')


def run(*args):
	p = subprocess.run([sys.executable] + list(args), capture_output=True,
			   text=True, cwd=TOP)
	return p.returncode, p.stdout, p.stderr


def report(case, parser):
	d = os.path.relpath(os.path.join(DATA, 'report', case), TOP)
	return run('scripts/report.py', '--tree', TREE, '--parser', parser,
		   f'series={d}')


def expected(kind, case):
	d = os.path.join(DATA, kind, case)
	with open(os.path.join(d, 'expected.txt')) as f:
		out = f.read()
	with open(os.path.join(d, 'expected.rc')) as f:
		return out, int(f.read())


def save(kind, case, out, rc):
	d = os.path.join(DATA, kind, case)
	with open(os.path.join(d, 'expected.txt'), 'w') as f:
		f.write(out)
	with open(os.path.join(d, 'expected.rc'), 'w') as f:
		f.write(f'{rc}\n')


def rows(out):
	"""{test name: (status, note)} of a report table."""
	res = {}
	for line in out.splitlines():
		parts = line.split()
		for i, p in enumerate(parts[1:], 1):
			if p in ('PASS', 'FAIL', 'SKIP', 'CRASH'):
				res[' '.join(parts[:i])] = (p, ' '.join(parts[i + 1:]))
				break
	return res


class ReportTest(unittest.TestCase):
	parser = 'builtin'
	maxDiff = None

	def check(self, case):
		rc, out, err = report(case, self.parser)
		if UPDATE and self.parser == 'builtin':
			save('report', case, out, rc)
		want, want_rc = expected('report', case)
		self.assertEqual(out, want, f'{case}: table differs ({self.parser} parser)\n{err}')
		self.assertEqual(rc, want_rc, f'{case}: exit status ({self.parser} parser)')
		return rows(out), out

	def test_clean(self):
		r, out = self.check('clean')
		self.assertEqual(r['kunit.gup_pin.gup_pin_large_anon'][0], 'SKIP')
		self.assertEqual(r['gup_test.gup_test_tmpfs_L'][0], 'SKIP')
		self.assertIn('gup_longterm_ext4.R/W longterm GUP pin in MAP_SHARED '
			      'file mapping ... with memfd', r)
		# A skip without a description must not shift later results.
		self.assertEqual(r['gup_longterm_ext4.R/W longterm GUP pin in '
				   'MAP_SHARED file mapping ... with memfd hugetlb '
				   '(1048576 kB)'][0], 'SKIP')
		self.assertEqual(r['gup_longterm_ext4.R/W longterm GUP pin in '
				   'MAP_SHARED file mapping ... with local tmpfile'][0],
				 'PASS')
		self.assertEqual(r['kernel.no_splats'][0], 'PASS')
		self.assertTrue(out.endswith('10 passed, 0 failed\n'))

	def test_crash_mid_suite(self):
		r, _ = self.check('crash')
		self.assertEqual(r['kunit.gup_pin.gup_pin_small_anon'][0], 'PASS')
		self.assertEqual(r['kunit.gup_pin.<missing 2>'][0], 'CRASH')
		self.assertEqual(r['guest.finished'][0], 'FAIL')
		self.assertEqual(r['kernel.no_splats'][0], 'FAIL')

	def test_timeout(self):
		r, out = self.check('timeout')
		self.assertEqual(r['qemu.exit'], ('FAIL', 'qemu rc=124: killed at the timeout'))
		self.assertEqual(r['pin_writeback_ext4.timeout'][0], 'FAIL')
		self.assertEqual(r['pin_writeback_xfs.end'][0], 'CRASH')
		self.assertIn('[series] qemu: qemu-system-x86_64: terminating', out)

	def test_splat(self):
		r, _ = self.check('splat')
		self.assertEqual(r['kernel.no_splats'][0], 'FAIL')
		self.assertIn('WARNING:', r['kernel.no_splats'][1])

	def test_expected_warning(self):
		r, _ = self.check('expected_warning')
		self.assertEqual(r['kernel.no_splats'], ('PASS', ''))

	def test_empty_console(self):
		r, out = self.check('empty_console')
		self.assertEqual(r['kernel.no_splats'], ('FAIL', 'no console log'))
		self.assertEqual(r['qemu.exit'], ('FAIL', 'qemu rc=134: QEMU failed'))
		self.assertIn('failed to set MSR 0x10a', out)
		self.assertNotIn('PASS', out)


@unittest.skipUnless(HAVE_TREE, f'no {KUNIT}/kunit_parser.py (make tree)')
class ReportTreeParserTest(ReportTest):
	parser = 'tree'


@unittest.skipUnless(HAVE_TREE, f'no {KUNIT}/kunit_parser.py (make tree)')
class ParsersAgreeTest(unittest.TestCase):
	"""The built-in parser and the tree's give the same leaves on the
	tree's own recorded KUnit logs (tools/testing/kunit/test_data)."""

	def test_kunit_test_data(self):
		spec = importlib.util.spec_from_file_location(
			'pinsafe_report', os.path.join(HERE, 'report.py'))
		rp = importlib.util.module_from_spec(spec)
		spec.loader.exec_module(rp)
		tree = rp.load_tree_parser(TREE)

		def flat(kp, lines):
			top = kp.parse_run_tests(lines)
			out = [(top.status.name, top.counts.errors > 0)]
			for i, sub in enumerate(top.subtests, 1):
				out += [(n, t.status.name) for n, t in rp.leaves(sub, 'k', i)]
			return out

		logs = sorted(glob.glob(os.path.join(KUNIT, 'test_data', '*.log')))
		self.assertTrue(logs)
		for log in logs:
			with open(log, errors='replace') as f:
				lines = f.read().splitlines()
			with self.subTest(log=os.path.basename(log)):
				self.assertEqual(flat(rp.BUILTIN, lines), flat(tree, lines))


class DemoTableTest(unittest.TestCase):
	maxDiff = None

	def demo(self, case):
		d = os.path.relpath(os.path.join(DATA, 'demo', case), TOP)
		rc, out, err = run('scripts/demo-table.py', '--kinds', DEMO_KINDS,
				   f'series={d}')
		if UPDATE:
			save('demo', case, out, rc)
		want, want_rc = expected('demo', case)
		self.assertEqual(out, want, f'demo {case}: table differs\n{err}')
		self.assertEqual(rc, want_rc, f'demo {case}: exit status\n{err}')
		return err

	def test_good(self):
		self.assertEqual(self.demo('good'), '')

	def test_failed(self):
		err = self.demo('failed')
		self.assertEqual(expected('demo', 'failed')[0], '', 'no empty table')
		for want in ('QEMU exited with status 134', 'no DEMO rows',
			     'did not finish', 'failed to set MSR 0x10a',
			     'console.log', 'demo: FAILED'):
			self.assertIn(want, err)

	def test_missing_kind(self):
		d = os.path.relpath(os.path.join(DATA, 'demo', 'good'), TOP)
		rc, _, err = run('scripts/demo-table.py', '--kinds',
				 DEMO_KINDS + ',nfs_shared', f'series={d}')
		self.assertEqual(rc, 1)
		self.assertIn('buffer kinds missing: nfs_shared', err)


class RunQemuTest(unittest.TestCase):
	def test_accel_override_documented_and_checked(self):
		sh = os.path.join(HERE, 'run-qemu.sh')
		p = subprocess.run([sh, '--help'], capture_output=True, text=True)
		self.assertEqual(p.returncode, 0)
		self.assertIn('PINSAFE_ACCEL', p.stdout)
		os.makedirs('/tmp/pinsafe-harness-test/bin', exist_ok=True)
		k = '/tmp/pinsafe-harness-test/k'
		open(k, 'w').close()
		p = subprocess.run([sh, '--kernel', k, '--bin', os.path.dirname(k) + '/bin',
				    '--out', os.path.dirname(k) + '/out'],
				   capture_output=True, text=True,
				   env=dict(os.environ, PINSAFE_ACCEL='vmx'))
		self.assertNotEqual(p.returncode, 0)
		self.assertIn('PINSAFE_ACCEL must be auto, kvm or tcg', p.stderr)


if __name__ == '__main__':
	print(f'harness self-tests; tree parser: {KUNIT if HAVE_TREE else "none (built-in only)"}',
	      file=sys.stderr)
	unittest.main()
