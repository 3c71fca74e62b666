"""real_traces.py - opprof's tables of traces that other tools wrote, against an
independent computation of PyTorch's rules from the same events (for other
writers' traces, the same without PyTorch's duplicate-node merge: the
trace-event format's own meaning, recursion kept).

For each trace (PyTorch 1.9 to 2.x on CUDA, ROCm and MTIA; Chrome), this
script computes key averages the way torch/autograd/profiler.py and
profiler_util.py do (_parse_kineto_results, EventList._populate_cpu_children,
_remove_dup_nodes, append_kernel), with nothing of opprof's code, then runs
`opprof report --json` and compares every row: calls, self and total CPU time,
self device time. It also checks that every memory event has an owner (the
bytes of all rows add up to the bytes of the trace, per device) and that
Kineto's span and kernels are never CPU rows.

usage: python3 real_traces.py OPPROF_BIN_DIR TRACE...
Prints "real_traces: N passed, M failed"; exit status 1 when M > 0.
"""
import decimal
import re
import gzip
import json
import os
import subprocess
import sys
import tempfile

CPU_OP = {"cpu_op", "Operator"}
RUNTIME = {"cuda_runtime", "cuda_driver", "Runtime", "mtia_runtime"}
DEVICE = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync", "Kernel", "Memcpy", "Memset", "mtia_ccp_events",
          "cuda_profiler_range"}
DEVICE_ANNOTATION = {"gpu_user_annotation"}
NO_ROW = {"Trace", "python_function"}
FILTERED = {"[memory]", "[OutOfMemory]", "profiler::_record_function_enter", "profiler::_record_function_enter_new",
            "profiler::_record_function_exit", "aten::is_leaf", "aten::output_nr", "aten::_version"}


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=decimal.Decimal)  # exact: ts of 1.6e15 us lose ns as floats
    return doc


KINETO_CATS = CPU_OP | {"user_annotation"} | RUNTIME | DEVICE | DEVICE_ANNOTATION | NO_ROW


def producer_of(doc, events):
    """Who wrote the trace, as opprof names it: PyTorch's rules are for PyTorch's traces."""
    if isinstance(doc, dict) and "opprof_version" in doc:
        return "opprof"
    if isinstance(doc, dict) and any(k in doc for k in ("schemaVersion", "deviceProperties", "traceName")):
        return "PyTorch (Kineto)"
    if any(e.get("cat") in KINETO_CATS for e in events):
        return "PyTorch (Kineto)"
    if any(e.get("pid") == "CPU functions" for e in events):
        return "PyTorch (legacy exporter)"
    return "another trace-event writer"


def ns(us):
    return int((decimal.Decimal(us) * 1000).to_integral_value(decimal.ROUND_HALF_EVEN))


def tid_of(value):
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return value


def key_of(name):
    return "ProfilerStep*" if name.startswith("ProfilerStep#") else name


DEVICE_LABEL = re.compile(r"^(GPU|MTIA|HIP|XPU) [0-9]+$")


def device_pids(events):
    """Processes that Kineto labels as devices ("GPU 0", "MTIA 17"): their events are device rows."""
    return {e.get("pid") for e in events if e.get("ph") == "M" and e.get("name") in ("process_name", "process_labels")
            and DEVICE_LABEL.match(str((e.get("args") or {}).get("name") or (e.get("args") or {}).get("labels") or ""))}


class Ev:
    def __init__(self, e, index, on_device=False):
        self.name = e["name"]
        self.cat = e.get("cat")
        self.start = ns(e["ts"])
        self.end = self.start + ns(e["dur"])
        self.thread = (e.get("pid"), tid_of(e.get("tid")))
        args = e.get("args") or {}
        self.ext = args.get("External id")
        self.ext_lower = args.get("external id")
        self.corr = args.get("correlation")
        self.index = index
        self.parent = None
        self.children = []
        self.device = self.cat in DEVICE or self.cat in DEVICE_ANNOTATION or on_device
        self.kernels = 0  # ns of device activities this operator launched


def pair_begin_end(events):
    """"B"/"E" pairs as complete events: an "E" ends the innermost open "B" of
    its thread; a "B" never ended lasts to the trace's end (Chrome's viewer)."""
    out, open_by_thread, last = [], {}, 0
    for e in events:
        if e.get("ph") == "X" and "ts" in e and "dur" in e and decimal.Decimal(e["dur"]) >= 0:
            last = max(last, ns(e["ts"]) + ns(e["dur"]))
        elif "ts" in e and e.get("ph") != "M":
            last = max(last, ns(e["ts"]))
    for e in events:
        key = (e.get("pid"), tid_of(e.get("tid")))
        if e.get("ph") == "B" and "name" in e and "ts" in e:
            open_by_thread.setdefault(key, []).append(e)
        elif e.get("ph") == "E" and "ts" in e and open_by_thread.get(key):
            b = open_by_thread[key].pop()
            if ns(e["ts"]) >= ns(b["ts"]):
                out.append(dict(b, ph="X", dur=decimal.Decimal(ns(e["ts"]) - ns(b["ts"])) / 1000))
    for stack in open_by_thread.values():
        for b in stack:
            out.append(dict(b, ph="X", dur=decimal.Decimal(max(last - ns(b["ts"]), 0)) / 1000, _unended=True))
    return out


def pytorch_averages(events, pytorch):
    evs = []
    on_device = device_pids(events)
    for i, e in enumerate(list(events) + pair_begin_end(events)):
        if e.get("ph") != "X" or e.get("cat") in NO_ROW or e.get("name") in FILTERED:
            continue
        if "dur" not in e or "ts" not in e or float(e["dur"]) < 0:
            continue
        evs.append(Ev(e, i, e.get("pid") in on_device))
    cpu = [e for e in evs if not e.device]
    # _populate_cpu_children: per thread, by (start, -end)
    by_thread = {}
    for e in cpu:
        by_thread.setdefault(e.thread, []).append(e)
    for group in by_thread.values():
        group.sort(key=lambda e: (e.start, -e.end, e.index))
        stack = []
        for e in group:
            while stack:
                parent = stack[-1]
                if e.start >= parent.end or e.end > parent.end:
                    stack.pop()
                else:
                    parent.children.append(e)
                    e.parent = parent
                    break
            stack.append(e)
    # device activities to their launching operators (append_kernel)
    ops_by_ext = {}
    for e in cpu:
        if e.cat not in RUNTIME and e.cat != "user_annotation" and e.ext is not None:
            ops_by_ext.setdefault(e.ext, e)
    runtime_by_corr = {}
    for e in cpu:
        if e.cat in RUNTIME and e.corr is not None:
            runtime_by_corr.setdefault(e.corr, e)
    for d in evs:
        if d.cat not in DEVICE:
            continue
        op = None
        if d.ext_lower is not None:
            op = ops_by_ext.get(d.ext_lower)
        elif d.ext is not None and d.ext != d.corr:
            op = ops_by_ext.get(d.ext)
        elif d.corr is not None and d.corr in runtime_by_corr:
            rt = runtime_by_corr[d.corr]
            # the innermost operator on the runtime call's thread that encloses it
            candidates = [o for o in by_thread.get(rt.thread, []) if o.cat not in RUNTIME and o.cat != "user_annotation"
                          and o.start <= rt.start and o.end >= rt.end]
            if candidates:
                op = max(candidates, key=lambda o: (o.start, -o.end))
        if op is not None:
            op.kernels += d.end - d.start
    # _remove_dup_nodes: PyTorch's rule, for PyTorch's traces; in another
    # writer's, a call nested in a call of the same name is recursion
    while pytorch:
        merged = False
        for e in cpu:
            p = e.parent
            if p is not None and p.name == e.name and len(p.children) == 1 and p.children[0] is e:
                p.children = e.children
                p.kernels += e.kernels
                for ch in e.children:
                    ch.parent = p
                e.parent = None
                e.merged = True
                merged = True
        cpu = [e for e in cpu if not getattr(e, "merged", False)]
        if not merged:
            break
    # device time totals: own launches plus children's, bottom up
    def device_total(e):
        if not hasattr(e, "dtotal"):
            e.dtotal = e.kernels + sum(device_total(ch) for ch in e.children)
        return e.dtotal

    sys.setrecursionlimit(100000)
    rows = {}
    for e in cpu:
        r = rows.setdefault((key_of(e.name), False), [0, 0, 0, 0])
        r[0] += 1
        r[1] += (e.end - e.start) - sum(ch.end - ch.start for ch in e.children)
        r[2] += e.end - e.start
        r[3] += e.kernels
    for d in evs:
        if d.device:
            r = rows.setdefault((key_of(d.name), True), [0, 0, 0, 0])
            r[0] += 1
            r[3] += d.end - d.start
    return rows


def owned_memory_bytes(events):
    """Bytes of the memory events that an operator owns (one open on the
    event's thread at its time: start <= ts < end, or ts == start for an
    event of no duration), per device (0: CPU, 1: another)."""
    spans = {}
    for e in events:
        if e.get("ph") == "X" and "dur" in e and e.get("cat") not in NO_ROW and e.get("cat") not in DEVICE \
                and e.get("cat") not in DEVICE_ANNOTATION and e.get("name") not in FILTERED:
            s = ns(e["ts"])
            spans.setdefault((e.get("pid"), tid_of(e.get("tid"))), []).append((s, s + ns(e["dur"])))
    per_device, count = {}, 0
    for e in events:
        if e.get("ph") in ("i", "I") and e.get("name") == "[memory]":
            args = e.get("args") or {}
            t = ns(e["ts"])
            if any(s <= t < end or s == end == t for s, end in spans.get((e.get("pid"), tid_of(e.get("tid"))), [])):
                dev = 0 if args.get("Device Type", 0) == 0 else 1
                per_device[dev] = per_device.get(dev, 0) + int(args.get("Bytes", 0))
                count += 1
    return per_device, count


KEPT_PHASES = ("s", "t", "f", "i", "I", "b", "e", "n")  # flows, instants, async edges: kept by convert


def converted_same(bin_dir, path, events, doc, check):
    """opprof convert writes the trace again without losing its flows,
    instants and async edges, and the converted trace reports the same rows."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "converted.json")
        run = subprocess.run([bin_dir + "/opprof", "convert", path, out], capture_output=True, text=True)
        check(run.returncode == 0, "%s: opprof convert exit %d: %s" % (path, run.returncode, run.stderr))
        if run.returncode != 0:
            return
        again = load(out)["traceEvents"]
        for ph in KEPT_PHASES:
            n_in = sum(1 for e in events if e.get("ph") == ph and "name" in e and "ts" in e)
            n_out = sum(1 for e in again if e.get("ph") == ph)
            check(n_in == n_out, "%s: convert: %d '%s' events in, %d out" % (path, n_in, ph, n_out))
        rep = subprocess.run([bin_dir + "/opprof", "report", "--json", "--row-limit", "0", "--sort", "none", out],
                             capture_output=True, text=True)
        rows = json.loads(rep.stdout)["rows"] if rep.returncode == 0 else None
        check(rows == doc["rows"], "%s: the converted trace's rows differ: %s" % (path, rep.stderr[:300]))


def main():
    bin_dir, traces = sys.argv[1], sys.argv[2:]
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("real_traces: FAILED: " + what, file=sys.stderr)

    for path in traces:
        doc = load(path)
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        producer = producer_of(doc, events)
        want = pytorch_averages(events, producer.startswith("PyTorch"))
        out = subprocess.run([bin_dir + "/opprof", "report", "--json", "--row-limit", "0", "--sort", "none", path],
                             capture_output=True, text=True)
        check(out.returncode == 0, "%s: opprof report exit %d: %s" % (path, out.returncode, out.stderr))
        flows = sum(1 for e in events if e.get("ph") in ("s", "t", "f"))
        if flows:  # valid events that are no row are said, never dropped silently
            check("not in the tables: %d flow events (s/t/f)" % flows in out.stderr,
                  "%s: %d flow events not said on stderr: %s" % (path, flows, out.stderr))
        if out.returncode != 0:
            continue
        doc = json.loads(out.stdout)
        check(doc.get("producer") == producer, "%s: producer %s, not %s" % (path, doc.get("producer"), producer))
        got = {}
        for r in doc["rows"]:
            key = (r["name"], bool(r.get("device", False)))
            check(key not in got, "%s: two rows for %s" % (path, key))
            got[key] = r
        check(set(got) == set(want), "%s: rows differ: only opprof %s; only PyTorch's rules %s" % (
            path, sorted(set(got) - set(want))[:5], sorted(set(want) - set(got))[:5]))
        for key, (calls, self_ns, total_ns, dev_ns) in want.items():
            r = got.get(key)
            if r is None:
                continue
            tol = 0.0015 * (calls + 1)
            ok = (r["calls"] == calls and abs(r["self_cpu_us"] - self_ns / 1e3) <= tol * 10 and
                  abs(r["total_cpu_us"] - total_ns / 1e3) <= tol and
                  abs(r.get("self_device_us", 0.0) - dev_ns / 1e3) <= tol * 10)
            check(ok, "%s: row %s: opprof calls %d self %.3f total %.3f device %.3f; PyTorch's rules %d %.3f %.3f %.3f" % (
                path, key, r["calls"], r["self_cpu_us"], r["total_cpu_us"], r.get("self_device_us", 0.0), calls,
                self_ns / 1e3, total_ns / 1e3, dev_ns / 1e3))
        if "catapult__" in path:  # valid Chrome traces: every phase is the format's
            chk = subprocess.run([bin_dir + "/opprof", "check", path], capture_output=True, text=True)
            # begins never ended are valid (read to the end) but listed, one each
            unended = sum(1 for line in chk.stdout.splitlines() if ") never ended: read as lasting" in line)
            want_unended = len([1 for e in pair_begin_end(events) if e.get("_unended")])
            check(chk.returncode == (1 if want_unended else 0) and unended == want_unended,
                  "%s: opprof check: %d begins never ended listed, %d in the trace: %s" % (
                      path, unended, want_unended, chk.stdout[:500]))
        converted_same(bin_dir, path, events, doc, check)
        for key in got:
            if key[0].startswith("PyTorch Profiler ("):
                check(False, "%s: Kineto's span is a row" % path)
        mem, owned = owned_memory_bytes(events)
        if owned:
            cpu_bytes = sum(r["self_cpu_bytes"] for r in doc["rows"])
            dev_bytes = sum(r.get("self_device_bytes", 0) for r in doc["rows"])
            check(cpu_bytes == mem.get(0, 0) and dev_bytes == mem.get(1, 0),
                  "%s: memory rows %d CPU + %d device bytes, trace %s: an event without an owner" % (
                      path, cpu_bytes, dev_bytes, mem))
    print("real_traces: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
