#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run rdma-core's own test suite (pyverbs) on one device, as KTAP.

The tests are the ones Debian's python3-pyverbs ships for the installed
rdma-core (/usr/share/doc/rdma-core/tests, some gzipped);
scripts/build-tests.sh unpacks them next to this script. Each unittest test
becomes one KTAP line: errors and failures are "not ok", unittest skips
(hardware the device lacks) are "# SKIP" with unittest's reason. Tests
listed in rdma_core_known.txt fail on rxe on every kernel, for the reason
given there; they are reported as "# SKIP known: reason" when they fail and
as a failure when they start to pass, so that the list stays true. Tests
listed there as "flaky: reason" depend on timing (rxe completes work in
kernel threads): a failure is "# SKIP known flaky: reason", a pass a pass.

usage: rdma_core_tests.py TESTS_DIR [--dev rxe0] [-k PATTERN ...]
"""
import argparse
import importlib.machinery
import os
import sys
import time
import unittest


def load_known(path):
    known = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, why = line.partition(" ")
            known[name] = why.strip() or "known rxe failure"
    return known


class KtapResult(unittest.TestResult):
    def __init__(self, known):
        super().__init__()
        self.known = known
        self.num = 0
        self.counts = {"pass": 0, "fail": 0, "skip": 0, "known": 0}
        self.seen_known = set()
        self.start = 0.0

    def startTest(self, test):
        super().startTest(test)
        self.start = time.monotonic()

    def _line(self, test, ok, directive=""):
        self.num += 1
        took = time.monotonic() - self.start
        print(f"# {test.id()}: {took:.1f} s")
        print(f"{'ok' if ok else 'not ok'} {self.num} {test.id()}{directive}",
              flush=True)

    def _bad(self, test, err, what):
        name = test.id()
        why = self.known.get(name)
        if why is not None:
            self.seen_known.add(name)
            self.counts["known"] += 1
            kind = "known flaky" if why.startswith("flaky:") else "known"
            why = why.removeprefix("flaky:").strip()
            self._line(test, True, f" # SKIP {kind}: {why}")
            return
        self.counts["fail"] += 1
        for line in self._exc_info_to_string(err, test).rstrip().splitlines()[-6:]:
            print(f"# {line}")
        print(f"# {what}")
        self._line(test, False)

    def addSuccess(self, test):
        super().addSuccess(test)
        why = self.known.get(test.id())
        if why is not None and not why.startswith("flaky:"):
            self.counts["fail"] += 1
            print(f"# {test.id()} passes: remove it from rdma_core_known.txt")
            self._line(test, False)
            return
        self.counts["pass"] += 1
        self._line(test, True)

    def addError(self, test, err):
        super().addError(test, err)
        self._bad(test, err, "error")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._bad(test, err, "failure")

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.counts["skip"] += 1
        reason = " ".join(str(reason).split())[:160]
        self._line(test, True, f" # SKIP {reason}")

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.counts["pass"] += 1
        self._line(test, True)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.counts["fail"] += 1
        self._line(test, False)


def flatten(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from flatten(t)
        else:
            yield t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tests_dir")
    ap.add_argument("--dev", default="rxe0")
    ap.add_argument("-k", action="append", default=[],
                    help="only tests whose id contains this (repeatable)")
    args = ap.parse_args()

    here = os.path.dirname(os.path.abspath(__file__))
    known = load_known(os.path.join(here, "rdma_core_known.txt"))
    print("TAP version 13")
    init = os.path.join(args.tests_dir, "__init__.py")
    if not os.path.exists(init):
        print(f"1..1\nok 1 rdma_core # SKIP no rdma-core tests in {args.tests_dir}")
        return 4
    # rdma-core's run_tests.py: its args_parser reads sys.argv.
    sys.path.insert(0, args.tests_dir)
    sys.argv = [sys.argv[0], "--dev", args.dev]
    from args_parser import parser  # noqa: E402 (rdma-core's)
    parser.parse_args()
    tests = importlib.machinery.SourceFileLoader("tests", init).load_module()
    loader = unittest.TestLoader()
    cases = list(flatten(loader.loadTestsFromModule(tests)))
    if args.k:
        cases = [c for c in cases if any(k in c.id() for k in args.k)]
    print(f"1..{len(cases)}", flush=True)
    result = KtapResult(known)
    start = time.monotonic()
    for case in cases:
        case(result)
    c = result.counts
    print(f"# rdma-core tests on {args.dev}: {c['pass']} passed, {c['fail']} failed, "
          f"{c['skip']} skipped (hardware), {c['known']} known rxe failures, "
          f"{time.monotonic() - start:.0f} s")
    return 1 if c["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
