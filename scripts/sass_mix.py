"""Summarizes Nsight Compute's SASS source view (`ncu -i REPORT --page source
--csv --print-source sass`, as `scripts/gpu.sh run profile` writes it): warp
instructions executed per opcode, their share and their stall samples, and
with --lines every executed instruction with its count and stall samples
(for finding where a kernel's time goes).

    python3 scripts/sass_mix.py sass.csv [--lines]
"""
import collections
import csv
import sys


def main():
    args = sys.argv[1:]
    lines = "--lines" in args
    rows = list(csv.reader(open([a for a in args if a != "--lines"][0])))
    header = rows[1]
    source = header.index("Source")
    executed = header.index("Instructions Executed")
    stalls = header.index("Warp Stall Sampling (All Samples)")
    total = 0
    by_opcode = collections.Counter()
    stalled = collections.Counter()
    listing = []
    for row in rows[2:]:
        if len(row) <= executed or not row[executed].isdigit():
            continue
        words = row[source].split()
        if not words:
            continue
        opcode = (words[1] if words[0].startswith("@") and len(words) > 1 else words[0]).split(".")[0]
        count, samples = int(row[executed]), int(row[stalls] or 0)
        by_opcode[opcode] += count
        stalled[opcode] += samples
        total += count
        listing.append((count, samples, row[source].strip()))
    print(f"warp instructions executed: {total}")
    for opcode, count in by_opcode.most_common(30):
        print(f"{opcode:10s} {count:14d} {100 * count / max(total, 1):5.1f}%  stall samples {stalled[opcode]}")
    if lines:
        for count, samples, text in listing:
            if count:
                print(f"{count:12d} {samples:6d} {text}")


if __name__ == "__main__":
    main()
