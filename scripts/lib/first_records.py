"""Keeps the first record of each kernel of a compute-sanitizer log, as
the capture scripts keep a flood's evidence small enough to commit: the
banner (or the XML's header), one record per kernel (named by the text's
`at` line or the XML's `<where><func>`) and the text's summary lines.

Usage: first_records.py IN OUT   (XML when IN ends in .xml, text otherwise)
"""
import re
import sys


def text_records(lines):
    record, kernel = [], None
    for i, line in enumerate(lines):
        if i == 0:
            yield "banner", [line]
        elif re.search(r"SUMMARY|errors were skipped|errors were not printed", line):
            yield "summary", [line]
        elif line.startswith("========= ") and line[10:11].isupper():
            record, kernel = [line], None
        elif record and line.rstrip() == "=========":
            record.append(line)
            if kernel:
                yield kernel, record
            record = []
        elif record:
            record.append(line)
            at = re.match(r"=========     at (.*?)(\+0x[0-9a-f]+)?$", line.rstrip("\n"))
            if at and kernel is None:
                kernel = at.group(1)


def xml_records(lines):
    record, header = None, []
    for line in lines:
        if line.strip() == "<record>":
            record = [line]
            if header:
                yield "banner", header
                header = []
        elif record is not None:
            record.append(line)
            if line.strip() == "</record>":
                body = "".join(record)
                where = re.search(r"<where>\s*<func>([^<]*)</func>", body)
                if where:
                    yield where.group(1), record
                record = None
        elif "</ComputeSanitizerOutput>" in line:
            yield "summary", [line]
        else:
            header.append(line)
    if header:
        yield "banner", header


def main(src, dst):
    records = xml_records if src.endswith(".xml") else text_records
    seen = set()
    with open(src, errors="replace") as lines, open(dst, "w") as out:
        for kernel, record in records(lines):
            if kernel in ("banner", "summary") or kernel not in seen:
                seen.add(kernel)
                out.writelines(record)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
