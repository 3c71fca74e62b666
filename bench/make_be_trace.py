"""make_be_trace.py EVENTS OUT - a large trace of "B" and "E" events only, as
uftrace's `dump --chrome` writes them: calls of 41 functions nested 1 to 8
deep on two threads, which take turns every 64 events, so that calls of every
depth straddle the middle of the file (where a two-thread read splits it).
Seeded: the same file each time. For timing `opprof report` on one CPU and two
(docs/DEPENDENCIES.md)."""
import random
import sys

count, out_path = int(sys.argv[1]), sys.argv[2]
random.seed(7)
open_calls = {1: [], 2: []}
ts = 1000.0
lines = []
with open(out_path, "w") as out:
    out.write('{"traceEvents": [\n')
    for i in range(count):
        tid = 1 if (i // 64) % 4 else 2
        calls = open_calls[tid]
        if not calls or (len(calls) < 8 and random.random() < 0.5):
            name = "func_%d" % random.randint(0, 40)
            calls.append(name)
            lines.append('{"ph":"B","pid":4242,"tid":%d,"ts":%.3f,"name":"%s","cat":"uftrace"}' % (tid, ts, name))
        else:
            calls.pop()
            lines.append('{"ph":"E","pid":4242,"tid":%d,"ts":%.3f,"cat":"uftrace"}' % (tid, ts))
        ts += random.randint(1, 40) / 1000.0
        if len(lines) >= 100000:
            out.write(",\n".join(lines) + ",\n")
            lines = []
    for tid, calls in open_calls.items():
        while calls:
            calls.pop()
            ts += 0.001
            lines.append('{"ph":"E","pid":4242,"tid":%d,"ts":%.3f,"cat":"uftrace"}' % (tid, ts))
    out.write(",\n".join(lines) + "\n]}\n")
