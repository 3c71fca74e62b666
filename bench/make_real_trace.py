"""make_real_trace.py SRC COPIES OUT - a large real Kineto trace for
bench_reader: SRC's events (a trace PyTorch wrote) COPIES times over, each copy
shifted after the previous one in time and in its ids (External id,
correlation, flow ids), so that it reads as one long profile. Written compact,
as PyTorch writes large traces."""
import gzip
import json
import sys

src, copies, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with (gzip.open if src.endswith(".gz") else open)(src, "rt") as f:
    doc = json.load(f)
events = doc["traceEvents"]
meta = [e for e in events if e.get("ph") == "M"]
body = [e for e in events if e.get("ph") != "M"]
start = min(e["ts"] for e in body if "ts" in e)
span = max(e["ts"] + e.get("dur", 0) for e in body if "ts" in e) - start + 1000
ID_SHIFT = 10_000_000
result = list(meta)
for k in range(copies):
    for e in body:
        e2 = dict(e)
        if "ts" in e2:
            e2["ts"] = e2["ts"] + k * span
        if isinstance(e2.get("id"), int):
            e2["id"] += k * ID_SHIFT
        args = e2.get("args")
        if isinstance(args, dict):
            a = dict(args)
            for key in ("External id", "external id", "correlation"):
                if isinstance(a.get(key), int):
                    a[key] += k * ID_SHIFT
            e2["args"] = a
        result.append(e2)
doc["traceEvents"] = result
with open(out, "w") as f:
    json.dump(doc, f)
