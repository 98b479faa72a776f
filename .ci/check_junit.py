"""Fail a CI run that ran no test, or that skipped (or never ran) a browser test."""

import sys
import xml.etree.ElementTree as ET

tree = ET.parse(sys.argv[1])
cases = list(tree.iter("testcase"))
skipped = [c for c in cases if c.find("skipped") is not None]
browser = [c for c in cases if "browser" in c.get("classname", "")]
browser_skipped = [c for c in browser if c.find("skipped") is not None]
problems = []
if not cases:
    problems.append("no tests ran")
if not browser:
    problems.append("no browser test ran")
for case in browser_skipped:
    problems.append(f"browser test skipped: {case.get('classname')}::{case.get('name')}")
print(f"{len(cases)} tests, {len(skipped)} skipped, {len(browser)} browser tests")
if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
