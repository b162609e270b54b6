"""Counts initcheck's host-API records in a compute-sanitizer XML by
(access size, whether the record has a host stack, the line of PROGRAM in
it): `copy_stacks_xml.py FILE.xml PROGRAM.py`."""
import collections
import re
import sys

text = open(sys.argv[1]).read()
program = re.escape(sys.argv[2])
counts = collections.Counter()
for record in re.findall(r"<record>.*?</record>", text, re.S):
    if "InitcheckApiError" not in record:
        continue
    size = re.search(r"<accessSize>(\d+)", record).group(1)
    line = re.search(program + r"</path>\s*<line>(\d+)", record)
    counts[(size, "<hostStack>" in record, line.group(1) if line else None)] += 1
for (size, stack, line), n in sorted(counts.items()):
    print(f"{size} bytes: {n} records, host stack {'yes' if stack else 'no'}, line {line}")
