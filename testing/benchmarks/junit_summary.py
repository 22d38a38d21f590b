#!/usr/bin/env python3
"""Summarizes a ctest JUnit XML file (scripts/device_check.sh writes one on the GPU machine) as
markdown: counts, and every test with its status and time, CUDA tests first.

Usage: junit_summary.py ctest_junit.xml [title]
"""
import sys
import xml.etree.ElementTree as ET


def main(path, title):
    root = ET.parse(path).getroot()
    cases = []
    for tc in root.iter("testcase"):
        status = tc.get("status", "run")
        if tc.find("failure") is not None:
            status = "FAILED"
        elif tc.find("skipped") is not None or status == "notrun":
            status = "skipped"
        else:
            status = "passed"
        cases.append((tc.get("name"), status, float(tc.get("time", "0"))))
    n = len(cases)
    count = {s: sum(1 for c in cases if c[1] == s) for s in ("passed", "FAILED", "skipped")}
    print(f"# {title}\n")
    print(f"{n} tests: {count['passed']} passed, {count['FAILED']} failed, {count['skipped']} skipped.\n")
    gpu = [c for c in cases if "cuda" in c[0].lower() or "gpu" in c[0].lower()]
    print(f"GPU tests (name contains cuda/gpu): {len(gpu)}, "
          f"{sum(1 for c in gpu if c[1] == 'passed')} passed.\n")
    print("| test | status | seconds |\n|---|---|---|")
    for name, status, t in sorted(cases, key=lambda c: (c not in gpu, c[0])):
        print(f"| {name} | {status} | {t:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "GPU test run")
