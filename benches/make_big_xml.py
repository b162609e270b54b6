"""Builds a large compute-sanitizer memcheck XML by repeating the real
records of a capture, varying the thread index and source line so the
grouping has real work to do.

Usage: make_big_xml.py SOURCE.xml OUT.xml TARGET_MB
"""
import re
import sys


def main():
    source, out, target_mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
    text = open(source, encoding="utf-8").read()
    records = re.findall(r"  <record>.*?</record>\n", text, re.S)
    if not records:
        sys.exit(f"{source} holds no records")
    target = target_mb * 1024 * 1024
    written = 0
    i = 0
    with open(out, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="utf-8"?>\n<ComputeSanitizerOutput>\n')
        while written < target:
            rec = records[i % len(records)]
            rec = re.sub(r"<x>(\d+)</x>", lambda m: f"<x>{(int(m.group(1)) + i) % 1024}</x>", rec, count=1)
            rec = re.sub(r"<line>(\d+)</line>", lambda m: f"<line>{int(m.group(1)) + i % 50}</line>", rec, count=1)
            f.write(rec)
            written += len(rec)
            i += 1
        f.write("</ComputeSanitizerOutput>\n")
    print(f"{out}: {i} records, {written / 1024 / 1024:.0f} MB")


if __name__ == "__main__":
    main()
