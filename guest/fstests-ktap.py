#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn an fstests xunit report (check -R xunit) into one KTAP document.

usage: fstests-ktap.py RESULT_XML CHECK_LOG SUITE [EXPECTED]

One line per test in the report: "ok" for a pass, "not ok" for a failure
or error (with the failure message and the end of the output diff as
diagnostics), "# SKIP reason" for fstests' "not run". Tests the list named
but check never reached (the run was cut short) are not in the report:
with EXPECTED (how many tests were asked for), a shortfall adds one failed
test, SUITE_incomplete.
"""
import re
import sys
import xml.etree.ElementTree as ET


def main():
    xml_path, log_path = sys.argv[1], sys.argv[2]
    suite = sys.argv[3]
    expected = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    print("TAP version 13")
    try:
        root = ET.parse(xml_path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"1..1\nnot ok 1 {suite}\n# no xunit report: {e}")
        try:
            with open(log_path, encoding="utf-8", errors="replace") as f:
                for line in f.read().splitlines()[-20:]:
                    print(f"# check| {line}")
        except OSError:
            pass
        return 1
    cases = list(root.iter("testcase"))
    short = expected - len(cases) if expected > len(cases) else 0
    print(f"1..{len(cases) + (1 if short else 0)}")
    failed = 0
    for n, tc in enumerate(cases, 1):
        name = tc.get("name", f"test{n}")
        took = tc.get("time")
        if took:
            print(f"# {name}: {took} s")
        bad = tc.find("failure")
        if bad is None:
            bad = tc.find("error")
        skip = tc.find("skipped")
        if bad is not None:
            failed += 1
            msg = " ".join((bad.get("message") or "").split())
            print(f"# {name}: {msg}")
            out = tc.find("system-out")
            if out is not None and out.text:
                for line in out.text.splitlines()[-15:]:
                    print(f"# | {line}")
            print(f"not ok {n} {name}")
        elif skip is not None:
            why = " ".join((skip.get("message") or "not run").split())[:200]
            print(f"ok {n} {name} # SKIP {why}")
        else:
            print(f"ok {n} {name}")
    if short:
        failed += 1
        print(f"# {short} of {expected} tests missing from the report (run cut short?)")
        print(f"not ok {len(cases) + 1} {suite}_incomplete")
    # "Ran: a b c" / "Not run: ..." / "Failures: ..." lines of check.
    try:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if re.match(r"^(Ran|Not run|Failures|Failed|Passed all)", line):
                    print(f"# check: {line.strip()[:300]}")
    except OSError:
        pass
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
