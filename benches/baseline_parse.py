"""The Python baseline: stream a compute-sanitizer XML with
xml.etree.ElementTree.iterparse and group records the way cudawatch does
(tool kind, kernel, file, line, pc), counting them and keeping the first
few thread samples. Prints the number of sites and records.

Usage: baseline_parse.py FILE.xml
"""
import sys
import xml.etree.ElementTree as ET


def main():
    sites = {}
    records = 0
    for event, elem in ET.iterparse(sys.argv[1], events=("end",)):
        if elem.tag != "record":
            continue
        records += 1
        key = (
            elem.findtext("kind"),
            elem.findtext("where/func"),
            elem.findtext("where/path"),
            elem.findtext("where/line"),
            elem.findtext("where/pc"),
            elem.findtext("what/api"),
        )
        site = sites.setdefault(key, {"count": 0, "samples": []})
        site["count"] += 1
        if len(site["samples"]) < 5:
            site["samples"].append((elem.findtext("who/threadIdx/x"), elem.findtext("who/blockIdx/x"), elem.findtext("what/address")))
        elem.clear()
    print(f"{len(sites)} sites from {records} records")


if __name__ == "__main__":
    main()
