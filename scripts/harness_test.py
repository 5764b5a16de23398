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
  report/runner_missing    init finds no guest/run-tests.sh       -> 1
  report/runner_failed     guest/run-tests.sh exits 2 at once     -> 1
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
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
DATA = os.path.join(HERE, 'testdata')
TREE = os.environ.get('PINSAFE_TREE', os.path.join(TOP, 'build', 'linux'))
KUNIT = os.path.join(TREE, 'tools', 'testing', 'kunit')
HAVE_TREE = os.path.isfile(os.path.join(KUNIT, 'kunit_parser.py'))
UPDATE = os.environ.get('PINSAFE_UPDATE') == '1'
REPORT_CASES = ['clean', 'crash', 'timeout', 'splat', 'expected_warning',
		'empty_console', 'runner_missing', 'runner_failed']
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

	def test_runner_missing(self):
		r, out = self.check('runner_missing')
		self.assertEqual(r['guest.finished'],
				 ('FAIL', 'the guest runner is missing (no executable '
				  '/var/tmp/pinsafe/guest/run-tests.sh in the guest)'))
		self.assertNotIn('crashed', out)
		self.assertIn('[series] console: pinsafe guest: runner missing', out)

	def test_runner_failed(self):
		r, out = self.check('runner_failed')
		self.assertEqual(r['guest.finished'],
				 ('FAIL', 'the guest runner exited with status 2 before the end'))
		self.assertIn('pinsafe_bin not set', out)


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


def kernel_params(cmdline):
	"""{name: value} as the kernel splits a command line (lib/cmdline.c
	next_arg(): quotes group words and are stripped from the value)."""
	out, i, n = {}, 0, len(cmdline)
	while i < n:
		while i < n and cmdline[i] == ' ':
			i += 1
		if i >= n:
			break
		quoted = cmdline[i] == '"'
		j = i + 1 if quoted else i
		in_quote, eq, k = quoted, None, j
		while k < n and (cmdline[k] != ' ' or in_quote):
			if eq is None and cmdline[k] == '=':
				eq = k
			if cmdline[k] == '"':
				in_quote = not in_quote
			k += 1
		arg = cmdline[j:k]
		if eq is None:
			out[arg.rstrip('"')] = None
		else:
			name, val = cmdline[j:eq], cmdline[eq + 1:k]
			if val.startswith('"'):
				val = val[1:].removesuffix('"')
			elif quoted:
				val = val.removesuffix('"')
			out[name] = val
		i = k
	return out


# Test lists of fake pin_* selftests, as their -l prints them (kselftest
# harness columns: fixture, variant, test).
PIN_LISTS = {
	'pin_writeback': [('pin_wb', 'shortterm', 'lost_write'),
			  ('', 'longterm', 'stable_during_writeback')],
	'pin_dirty': [('pin_wb', 'shortterm', 'dirty_limit_not_stuck'),
		      ('', 'longterm', '')],
	'pin_truncate': [('global', '', 'truncate_under_pin')],
	'pin_refuse': [('pin_wb', 'shortterm', 'swapon_refused')],
	'pin_wberror': [('pin_bounce', '', 'bounce_forward_progress')],
	'pin_revoke': [('revoke', 'truncate', 'as_if_unpinned')],
}


class PinSuitesTest(unittest.TestCase):
	"""guest/job-suites.sh runs each pin_* selftest as a suite per file
	system, and with a filter only those that have one of its tests."""

	def suites(self, filt):
		with tempfile.TemporaryDirectory() as d:
			os.mkdir(os.path.join(d, 'mm'))
			for prog, rows in PIN_LISTS.items():
				lines = ['%-20s %-25s %s' % r for r in
					 [('# FIXTURE', 'VARIANT', 'TEST')] + rows]
				path = os.path.join(d, 'mm', prog)
				with open(path, 'w') as f:
					f.write('#!/bin/sh\ncat >&2 <<EOF\n%s\nEOF\n' %
						'\n'.join(lines))
				os.chmod(path, 0o755)
			script = ('set -u; only=; filter=$1; pinsafe_bin=$2; '
				  '. "$3/guest/lib.sh"; . "$3/guest/job-suites.sh"; '
				  'mountpoint() { return 0; }; cd() { :; }; '
				  'suite() { n=$1; shift; echo "$n $*"; }; pin_suites')
			p = subprocess.run(['sh', '-c', script, 'sh', filt, d, TOP],
					   capture_output=True, text=True, check=True)
		return [ln.replace(d + '/mm/', '') for ln in p.stdout.splitlines()]

	def test_all(self):
		out = self.suites('')
		for prog in PIN_LISTS:
			fss = ('ext4', 'xfs') if prog == 'pin_revoke' else \
				('ext4', 'xfs', 'tmpfs', 'integ')
			for fs in fss:
				self.assertIn('%s_%s %s' % (prog, fs, prog), out)
		# raid5: only the listed tests, only programs that have one
		raid5 = [ln for ln in out if '_raid5 ' in ln]
		self.assertEqual(raid5, [
			'pin_writeback_raid5 pin_writeback -t stable_during_writeback '
			'-t lost_write',
			'pin_wberror_raid5 pin_wberror -t bounce_forward_progress'])

	def test_filter_runs_only_programs_with_a_named_test(self):
		out = self.suites('dirty_limit_not_stuck,as_if_unpinned,nosuch')
		self.assertEqual(out, [
			'pin_dirty_%s pin_dirty -t dirty_limit_not_stuck' % fs
			for fs in ('ext4', 'xfs', 'tmpfs', 'integ', 'raid5')] + [
			'pin_revoke_%s pin_revoke -t as_if_unpinned' % fs
			for fs in ('ext4', 'xfs')])


def guest_path(path):
	"""guest/hostpath.sh's answer for PATH."""
	p = subprocess.run(['sh', '-c', '. "$1"; guest_path "$2"', 'sh',
			    os.path.join(TOP, 'guest', 'hostpath.sh'), path],
			   capture_output=True, text=True, check=True)
	return p.stdout.rstrip('\n')


class GuestPathTest(unittest.TestCase):
	"""A checkout anywhere on the host is found by the guest (the guest
	mounts tmpfs over /root, /var/tmp, /mnt, /tmp and /run)."""

	def test_masked_directories_are_reached_through_the_host_root(self):
		for host, guest in (
				('/root/pinsafe', '/run/host/root/pinsafe'),
				('/var/tmp/pinsafe', '/run/host/var/tmp/pinsafe'),
				('/mnt', '/run/host/mnt'),
				('/tmp/a b/pinsafe', '/run/host/tmp/a b/pinsafe'),
				('/run/user/0/x', '/run/host/run/user/0/x'),
				('/home/dev/pinsafe', '/home/dev/pinsafe'),
				('/opt/pinsafe', '/opt/pinsafe'),
				('/tmpx/pinsafe', '/tmpx/pinsafe'),
				('/var/tmpx', '/var/tmpx')):
			with self.subTest(host=host):
				self.assertEqual(guest_path(host), guest)

	def test_init_masks_only_what_hostpath_maps(self):
		with open(os.path.join(TOP, 'guest', 'init')) as f:
			init = f.read()
		self.assertIn('hostpath.sh', init)
		self.assertIn('for d in $PINSAFE_MASKED', init)
		# No other tmpfs over a host directory.
		mounts = [l.split()[-1] for l in init.splitlines()
			  if 'mount -t tmpfs' in l]
		self.assertEqual(sorted(mounts), ['"$d"', '/dev/shm', '/run'])

	def test_kernel_params(self):
		self.assertEqual(kernel_params('a=1 b="x y" "c=d e" f'),
				 {'a': '1', 'b': 'x y', 'c': 'd e', 'f': None})

	def test_shell_gets_the_console_and_needs_no_bin(self):
		import tempfile
		root = tempfile.mkdtemp(prefix='pinsafe-shell-', dir='/tmp')
		kernel = os.path.join(root, 'bzImage')
		open(kernel, 'w').close()
		p = subprocess.run([os.path.join(HERE, 'run-qemu.sh'), '--kernel',
				    kernel, '--out', os.path.join(root, 'out'),
				    '--shell', '--dry-run'],
				   capture_output=True, text=True,
				   env=dict(os.environ, PINSAFE_ACCEL='tcg'))
		self.assertEqual(p.returncode, 0, p.stderr)
		argv = p.stdout.splitlines()
		params = kernel_params(argv[argv.index('-append') + 1])
		self.assertEqual(params.get('pinsafe_shell'), '1')
		self.assertNotIn('pinsafe_bin', params)
		serials = [argv[i + 1] for i, a in enumerate(argv) if a == '-serial']
		self.assertEqual(serials[0], 'mon:stdio')
		# Without --shell, --bin is required.
		p = subprocess.run([os.path.join(HERE, 'run-qemu.sh'), '--kernel',
				    kernel, '--out', os.path.join(root, 'out'),
				    '--dry-run'], capture_output=True, text=True,
				   env=dict(os.environ, PINSAFE_ACCEL='tcg'))
		self.assertEqual(p.returncode, 2)

	def test_checkout_with_spaces_under_a_masked_directory(self):
		import shutil
		import tempfile
		root = tempfile.mkdtemp(prefix='pinsafe harness ', dir='/tmp')
		self.addCleanup(shutil.rmtree, root)
		top = os.path.join(root, 'check out')
		os.makedirs(top)
		for d in ('scripts', 'guest'):
			shutil.copytree(os.path.join(TOP, d), os.path.join(top, d),
					ignore=shutil.ignore_patterns('testdata'))
		shutil.copy(os.path.join(TOP, 'BASE'), top)
		kernel = os.path.join(root, 'bz Image')
		open(kernel, 'w').close()
		binp = os.path.join(root, 'tests bin')
		os.makedirs(binp)
		p = subprocess.run([os.path.join(top, 'scripts', 'run-qemu.sh'),
				    '--kernel', kernel, '--bin', binp, '--out',
				    os.path.join(root, 'out'), '--dry-run'],
				   capture_output=True, text=True,
				   env=dict(os.environ, PINSAFE_ACCEL='tcg'))
		self.assertEqual(p.returncode, 0, p.stderr)
		argv = p.stdout.splitlines()
		params = kernel_params(argv[argv.index('-append') + 1])
		self.assertEqual(params['init'], top + '/guest/init')
		self.assertEqual(params['pinsafe_dir'], top)
		self.assertEqual(params['pinsafe_bin'], binp)
		self.assertEqual(guest_path(params['pinsafe_dir']),
				 '/run/host' + top)
		self.assertIn(kernel, argv)
		# Kbuild cannot use a path with spaces: lib.sh builds elsewhere.
		b = subprocess.run(['bash', '-c', '. "$1/scripts/lib.sh"; echo "$BUILD"',
				    'sh', top], capture_output=True, text=True,
				   check=True).stdout.strip()
		self.assertNotIn(' ', b)
		self.assertTrue(b.startswith('/var/tmp/pinsafe-build-'), b)


if __name__ == '__main__':
	print(f'harness self-tests; tree parser: {KUNIT if HAVE_TREE else "none (built-in only)"}',
	      file=sys.stderr)
	unittest.main()
