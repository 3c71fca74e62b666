#!/usr/bin/env python3
"""perfetto_check.py - opprof's Perfetto traces, decoded by protoc with
Perfetto's own schema, against the same capture written as JSON.

For each trace given: `opprof convert TRACE out.pftrace` and `opprof convert
TRACE out.json` (the same capture, in opprof's JSON: the truth to compare
with); `protoc --decode=perfetto.protos.Trace perfetto_trace.proto` must
decode the first, and its packets must be what the capture holds:
  - one packet per track (process, thread, counter, async), the facts, a
    begin and an end per range, a sample per memory event, one per mark;
  - every name and category interned before it is used;
  - each slice's name, thread, begin and end time equal the JSON's event's;
  - begins and ends nest on each track (an end closes the latest begin, and
    a child lies within its parent);
  - each memory sample's allocator total, bytes and address equal the
    JSON's, the address an extra counter value on the counter track that the
    sequence's defaults name ("opprof: memory event address");
  - counters, instants, flows and async ranges as many as the JSON's;
  - and read back, every table, JSON and folded stack of the .pftrace is the
    JSON's, byte for byte.

Traces: profile_cpu's and opprof record's own .pftrace files (beside their
JSON), the example engine's and each TRACE through `opprof convert`; then
convert's errors.

usage: perfetto_check.py BIN_DIR PERFETTO_TRACE_PROTO.gz [--record PROG] [TRACE...]
"""
import collections
import gzip
import json
import os
import subprocess
import sys
import tempfile


def fail(msg):
    print("perfetto_check: FAIL: " + msg)
    sys.exit(1)


def parse_text(text):
    """protoc's text format: {field: [values]} with nested dicts."""
    root = {}
    stack = [root]
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.endswith("{"):
            child = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(child)
            stack.append(child)
        elif line == "}":
            stack.pop()
        else:
            key, _, value = line.partition(":")
            value = value.strip()
            if value.startswith('"'):
                value = bytes(value[1:-1], "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")
            stack[-1].setdefault(key.strip(), []).append(value)
    return root


def one(msg, key, default=None):
    v = msg.get(key)
    return v[0] if v else default


def load_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def convert(bin_dir, trace, tmp):
    """`opprof convert TRACE` to .pftrace and to .json: the same capture twice."""
    pf, js = os.path.join(tmp, "out.pftrace"), os.path.join(tmp, "out.json")
    for out in (pf, js):
        r = subprocess.run([os.path.join(bin_dir, "opprof"), "convert", trace, out], capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"{os.path.basename(trace)}: opprof convert {out}: {r.stderr}")
    return pf, js


def check(proto, pf, js, name):
    with open(pf, "rb") as f:
        data = f.read()
    r = subprocess.run(["protoc", "--decode=perfetto.protos.Trace", "-I", os.path.dirname(proto), proto],
                       input=data, capture_output=True)
    if r.returncode != 0:
        fail(f"{name}: protoc cannot decode it: {r.stderr.decode()}")
    packets = parse_text(r.stdout.decode("utf-8")).get("packet", [])
    want = load_json(js)
    events = want["traceEvents"]
    xs = [e for e in events if e.get("ph") == "X"]
    mem = [e for e in events if e.get("ph") == "i" and e.get("name") == "[memory]"]
    marks = collections.Counter(e["ph"] for e in events if e.get("ph") in ("C", "i", "s", "f", "b", "e")
                                and e.get("name") != "[memory]" and e.get("cat") != "memory")

    names, categories, note_names, tracks = {}, {}, {}, {}
    begins, ends, counters, instants = [], [], [], []
    edges = collections.defaultdict(list)  # per track: (ts, order, begin or end, name)
    slices = []
    facts = None
    clock = {"default": None, "at": None, "to_boot": 0}  # the sequence's delta clock (64)
    for p in packets:
        if one(p, "trusted_packet_sequence_id") != "1":
            fail(f"{name}: a packet off sequence 1")
        for d in p.get("trace_packet_defaults", []):
            clock["default"] = one(d, "timestamp_clock_id")
            for e in d.get("track_event_defaults", []):
                clock["track"] = one(e, "track_uuid")  # the track of events that name none
                clock["extra"] = one(e, "extra_counter_track_uuids")  # a memory sample's address
        for snap in p.get("clock_snapshot", []):
            at = {one(c, "clock_id"): int(one(c, "timestamp")) for c in snap.get("clocks", [])}
            if "64" in at:
                if "6" not in at:
                    fail(f"{name}: a clock snapshot of the delta clock without BOOTTIME")
                clock["at"], clock["to_boot"] = at["64"], at["6"] - at["64"]
        ts = None
        if one(p, "timestamp") is not None:  # on its clock: BOOTTIME, or deltas on clock 64
            raw, on = int(one(p, "timestamp")), one(p, "timestamp_clock_id") or clock["default"] or "6"
            if on == "64":
                if clock["at"] is None:
                    fail(f"{name}: a delta timestamp before any clock snapshot")
                clock["at"] += raw
                ts = clock["at"] + clock["to_boot"]
            else:
                ts = raw
        for interned in p.get("interned_data", []):
            for n in interned.get("event_names", []):
                names[one(n, "iid")] = one(n, "name")
            for c in interned.get("event_categories", []):
                categories[one(c, "iid")] = one(c, "name")
            for a in interned.get("debug_annotation_names", []):
                note_names[one(a, "iid")] = one(a, "name")
        for t in p.get("track_descriptor", []):
            tracks[one(t, "uuid")] = t
        for ev in p.get("track_event", []):
            if ts is None:
                fail(f"{name}: a track event without a timestamp")
            kind = one(ev, "type")
            track = one(ev, "track_uuid") or clock.get("track")
            if track not in tracks:
                fail(f"{name}: an event on track {track} before its descriptor")
            if one(ev, "name") == "opprof capture":
                facts = ev
                continue
            iid = one(ev, "name_iid")
            if iid is not None and iid not in names:
                fail(f"{name}: name iid {iid} used before it was interned")
            for a in ev.get("debug_annotations", []):
                if one(a, "name_iid") is not None and one(a, "name_iid") not in note_names:
                    fail(f"{name}: annotation name iid {one(a, 'name_iid')} used before it was interned")
                a["name"] = [one(a, "name") or note_names.get(one(a, "name_iid"))]
            for c in ev.get("category_iids", []):
                if c not in categories:
                    fail(f"{name}: category iid {c} used before it was interned")
            if kind in ("TYPE_SLICE_BEGIN", "TYPE_SLICE_END"):
                (begins if kind == "TYPE_SLICE_BEGIN" else ends).append(ev)
                edges[track].append((ts, len(edges[track]), kind, names.get(iid), ev))
            elif kind == "TYPE_COUNTER":
                counters.append((track, ev, ts))
            else:
                instants.append(ev)
    # as the trace processor does: each track's edges by time, the stream's order for
    # ties; an end closes the latest begin; a child lies within the slice around it
    for track, items in edges.items():
        items.sort(key=lambda x: (x[0], x[1]))
        stack, done = [], []
        for ts, _, kind, n, ev in items:
            if kind == "TYPE_SLICE_BEGIN":
                stack.append({"name": n, "start": ts, "end": None, "parent": stack[-1] if stack else None,
                              "args": shown_args(ev)})
                continue
            if not stack:
                fail(f"{name}: an end on track {track} with no begin open")
            s = stack.pop()
            s["end"] = ts
            if ts < s["start"]:
                fail(f"{name}: '{s['name']}' ends before it begins")
            done.append(s)
            slices.append((track, s["name"], s["start"], ts, s["args"]))
        if stack:
            fail(f"{name}: slices never ended on track {track}")
        for s in done:
            p = s["parent"]
            if p and not (p["start"] <= s["start"] and s["end"] <= p["end"]):
                fail(f"{name}: '{s['name']}' lies outside '{p['name']}' around it")
    if facts is None:
        fail(f"{name}: no 'opprof capture' facts")
    step = {one(a, "name"): one(a, "int_value") for a in facts.get("debug_annotations", [])}
    if int(step.get("step_num", -1)) != int(want.get("step_num", 0)):
        fail(f"{name}: step_num {step.get('step_num')}, the JSON's {want.get('step_num')}")

    # slices against the JSON's complete events: (thread, name, start, end), ns
    origin = int(step["time_origin"])
    thread_tracks = thread_of(tracks)
    got = sorted((thread_tracks[t], n, s - origin, e - origin, a) for t, n, s, e, a in slices if t in thread_tracks)
    exp = sorted(((int(e["pid"]), int(e["tid"])), e["name"], round(e["ts"] * 1000),
                  round(e["ts"] * 1000) + round(e["dur"] * 1000), json_args(e)) for e in xs)
    got_tid = sorted((tid, n, s, e, a) for (pid, tid), n, s, e, a in got)
    exp_tid = sorted((tid, n, s, e, a) for (pid, tid), n, s, e, a in exp)
    if len(got_tid) != len(exp_tid):
        fail(f"{name}: {len(got_tid)} slices, the JSON has {len(exp_tid)} complete events")
    for a, b in zip(got_tid, exp_tid):
        if a != b:
            fail(f"{name}: slice {a}, the JSON's event {b}")
    memory = [(t, ev, ts) for t, ev, ts in counters if (tracks[t].get("counter") and one(tracks[t], "name", "").endswith("memory"))]
    if len(memory) != len(mem):
        fail(f"{name}: {len(memory)} memory samples, the JSON has {len(mem)} memory events")
    # a sample's bytes: its "Bytes", else the change of its track's total since the sample before
    got_mem, last_total = [], collections.defaultdict(int)
    for t, ev, ts in memory:
        total = int(one(ev, "counter_value"))
        notes = {one(a, "name"): one(a, "int_value") for a in ev.get("debug_annotations", [])}
        extra = ev.get("extra_counter_values", [])
        if len(extra) != 1:
            fail(f"{name}: a memory sample with {len(extra)} extra counter values, not its address")
        got_mem.append((ts - origin, total, int(notes["Bytes"]) if "Bytes" in notes else total - last_total[t],
                        int(extra[0])))
        last_total[t] = total
    got_mem.sort()
    exp_mem = sorted((round(e["ts"] * 1000), int(e["args"]["Total Allocated"]), int(e["args"]["Bytes"]),
                      int(e["args"]["Addr"])) for e in mem)
    if mem:
        address = tracks.get(clock.get("extra"))
        if address is None or not address.get("counter") or one(address, "name") != "opprof: memory event address":
            fail(f"{name}: the defaults' extra counter track is not the memory event address's counter track")
    if got_mem != exp_mem:
        fail(f"{name}: memory samples differ from the JSON's (first: {got_mem[:1]} vs {exp_mem[:1]})")
    user_counters = len(counters) - len(memory)
    if user_counters != marks["C"]:
        fail(f"{name}: {user_counters} counter samples, the JSON has {marks['C']}")
    n_instants = sum(1 for ev in instants)
    if n_instants != marks["i"] + marks["s"] + marks["f"]:
        fail(f"{name}: {n_instants} instants and flow ends, the JSON has {marks['i'] + marks['s'] + marks['f']}")
    flows = sum(len(ev.get("flow_ids", [])) for ev in instants), sum(len(ev.get("terminating_flow_ids", [])) for ev in instants)
    if flows != (marks["s"], marks["f"]):
        fail(f"{name}: flows {flows}, the JSON's {(marks['s'], marks['f'])}")
    if len(begins) != len(xs) + marks["b"] or len(ends) != len(xs) + marks["e"]:
        fail(f"{name}: {len(begins)} begins and {len(ends)} ends for {len(xs)} events and {marks['b']} async ranges")
    n_tracks = sum(1 for p in packets if p.get("track_descriptor"))
    # clock snapshots: one after the first packet, and one wherever a time goes back
    n_clocks = sum(1 for p in packets if p.get("clock_snapshot"))
    if n_clocks < 1 or not packets[1].get("clock_snapshot") or any(
            p.get("clock_snapshot") and (p.get("track_event") or p.get("timestamp")) for p in packets):
        fail(f"{name}: the delta clock is not set by a clock snapshot of its own after the first packet")
    expected_packets = 1 + n_clocks + n_tracks + 1 + 2 * len(xs) + len(mem) + sum(marks.values())
    if len(packets) != expected_packets:
        fail(f"{name}: {len(packets)} packets, expected {expected_packets}")
    print(f"perfetto_check: {name}: {len(packets)} packets, {len(xs)} slices, {len(mem)} memory samples, "
          f"{sum(marks.values())} marks; {len(data)} bytes ({os.path.getsize(js)} as JSON)")


def shown_args(ev):
    """A slice's input shapes and call stack, as the JSON's args compare."""
    notes = {one(a, "name"): one(a, "string_value") for a in ev.get("debug_annotations", [])}
    dims = notes.get("Input Dims")
    return (json.dumps(json.loads(dims)) if dims else None, notes.get("Call stack"))


def json_args(e):
    args = e.get("args", {})
    return (json.dumps(args["Input Dims"]) if "Input Dims" in args else None, args.get("Call stack"))


def thread_of(tracks):
    """Thread tracks' uuid -> (pid, tid); a thread's lanes (tracks under it) too."""
    out = {}
    for uuid, t in tracks.items():
        th = one(t, "thread")
        if th:
            out[uuid] = (int(one(th, "pid")), int(one(th, "tid")))
    for uuid, t in tracks.items():
        if one(t, "parent_uuid") in out and not one(t, "thread"):
            out[uuid] = out[one(t, "parent_uuid")]
    return out


READ_BACK = [["report", "--json", "--row-limit", "0"], ["report", "--memory", "--row-limit", "0"],
             ["report", "--stats", "--row-limit", "0"], ["report", "--group-by-input-shape", "--row-limit", "0"],
             ["stacks"], ["stacks", "--memory"]]


def read_back(bin_dir, pf, js, name):
    """Every command on the .pftrace gives what it gives on the JSON, cell for cell."""
    opprof = os.path.join(bin_dir, "opprof")
    for args in READ_BACK:
        a = subprocess.run([opprof] + args + [js], capture_output=True, text=True)
        b = subprocess.run([opprof] + args + [pf], capture_output=True, text=True)
        if a.returncode != 0 or b.returncode != 0:
            fail(f"{name}: opprof {' '.join(args)}: exit {a.returncode} on the JSON, {b.returncode} on the .pftrace: "
                 f"{b.stderr.strip()[:300]}")
        if a.stdout != b.stdout:
            diff = next((i for i, (x, y) in enumerate(zip(a.stdout.splitlines(), b.stdout.splitlines())) if x != y), -1)
            fail(f"{name}: opprof {' '.join(args)} differs on the .pftrace (line {diff + 1})")


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)}: {r.stderr}")


def written_live(bin_dir, tmp, toy):
    """Captures written as .pftrace by the tools themselves, beside their JSON:
    profile_cpu --perfetto (memory, shapes, call sites) and, given a program
    to record (--record PROG), opprof record --outputs trace,perfetto (memory
    of an unchanged program)."""
    out = os.path.join(tmp, "run")
    run([os.path.join(bin_dir, "profile_cpu"), "--quiet", "--record-shapes", "--with-stack", "--perfetto", out])
    pairs = [(os.path.join(out, "cpu-step-4.pftrace"), os.path.join(out, "cpu-step-4.json"), "profile_cpu --perfetto")]
    if toy:
        rec = os.path.join(tmp, "rec")
        run([os.path.join(bin_dir, "opprof"), "record", "--memory", "--outputs", "trace,perfetto", "-o", rec, "--", toy])
        pairs.append((os.path.join(rec, "trace-step-0.pftrace"), os.path.join(rec, "trace-step-0.json"),
                      "opprof record --outputs trace,perfetto"))
    return pairs


def made_traces(bin_dir, tmp):
    """The example engine's capture (counters, instants, flows, async)."""
    eng = os.path.join(tmp, "eng")
    run([os.path.join(bin_dir, "engine"), eng])
    return [os.path.join(eng, "engine.json")]


def gzip_form(bin_dir, tmp):
    """OUT.pftrace.gz: the same bytes, compressed; read back as the plain file."""
    good = os.path.join(tmp, "eng", "engine.json")
    plain, packed = os.path.join(tmp, "g.pftrace"), os.path.join(tmp, "g.pftrace.gz")
    for out in (plain, packed):
        run([os.path.join(bin_dir, "opprof"), "convert", good, out])
    with open(plain, "rb") as f, gzip.open(packed, "rb") as g:
        if f.read() != g.read():
            fail("convert to .pftrace.gz: not the .pftrace's bytes")
    read_back(bin_dir, packed, plain, "engine.json as .pftrace.gz")


def convert_errors(bin_dir, tmp):
    """`opprof convert`'s errors name the thing and leave no file."""
    opprof = os.path.join(bin_dir, "opprof")
    good = os.path.join(tmp, "eng", "engine.json")
    cases = [([good, os.path.join(tmp, "x.txt")], 64, "must end in .pftrace"),
             ([os.path.join(tmp, "missing.json"), os.path.join(tmp, "y.pftrace")], 2, "missing.json"),
             ([good, os.path.join(tmp, "no", "such", "dir.pftrace")], 2, "dir.pftrace")]
    for args, status, text in cases:
        r = subprocess.run([opprof, "convert"] + args, capture_output=True, text=True)
        if r.returncode != status or text not in r.stderr:
            fail(f"opprof convert {args}: exit {r.returncode}, stderr {r.stderr!r}; wanted {status} and {text!r}")
        if os.path.exists(args[1]):
            fail(f"opprof convert {args}: left {args[1]} behind")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(64)
    bin_dir, proto_gz, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    toy = None
    if rest[:1] == ["--record"]:
        toy, rest = rest[1], rest[2:]
    with tempfile.TemporaryDirectory() as tmp:
        proto = os.path.join(tmp, "perfetto_trace.proto")
        with gzip.open(proto_gz, "rb") as f, open(proto, "wb") as out:
            out.write(f.read())
        for pf, js, what in written_live(bin_dir, tmp, toy):
            check(proto, pf, js, what)
            read_back(bin_dir, pf, js, what)
        for trace in made_traces(bin_dir, tmp) + rest:
            pf, js = convert(bin_dir, trace, tmp)
            check(proto, pf, js, os.path.basename(trace))
            read_back(bin_dir, pf, js, os.path.basename(trace))
        gzip_form(bin_dir, tmp)
        convert_errors(bin_dir, tmp)


if __name__ == "__main__":
    main()
