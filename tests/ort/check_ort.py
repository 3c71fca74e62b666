#!/usr/bin/env python3
"""test_onnxruntime: profiles written by ONNX Runtime itself, read by its rules.

ONNX Runtime (onnxruntime-node, scripts/ort.sh) profiles the guide's MLP and a
small conv net (tests/ort/make_models.py), each on one thread and on two; then,
for each profile, what `opprof report --json` says is checked against ONNX
Runtime's own grouping, computed here from the JSON alone as ORT's tool does
(onnxruntime/python/tools/transformers/profile_result_processor.py,
group_node_results: the "Node" events with a provider, summed by args.op_name,
Scan/Loop/If left out):
  - one row per operator type, whose self time is ORT's total for that type and
    whose calls are its node runs;
  - one step per model_run, the total being the runs' (start-up kept out, said);
  - `--group-by node`: one row per node;
  - the producer named.
usage: check_ort.py BIN_DIR SOURCE_DIR ORT_DIR WORK_DIR
"""
import glob
import json
import os
import subprocess
import sys

bin_dir, src_dir, ort_dir, work = sys.argv[1:5]
failures = 0
checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print(f"check_ort: FAILED: {what}", file=sys.stderr)


def ort_groups(events):
    """ORT's own per-operator-type kernel time, and node runs, in microseconds."""
    time, calls = {}, {}
    for e in events:
        args = e.get("args", {})
        if e.get("cat") != "Node" or "dur" not in e or "op_name" not in args:
            continue
        if args["op_name"] in ("Scan", "Loop", "If") or "provider" not in args:
            continue
        time[args["op_name"]] = time.get(args["op_name"], 0) + e["dur"]
        calls[args["op_name"]] = calls.get(args["op_name"], 0) + 1
    return time, calls


def report(path, *options):
    out = subprocess.run([os.path.join(bin_dir, "opprof"), "report", "--json", "--row-limit", "0", "--sort", "none",
                          *options, path], capture_output=True, text=True)
    check(out.returncode == 0, f"opprof report {path}: {out.stderr}")
    return json.loads(out.stdout), out.stderr


def check_profile(path, runs):
    events = json.load(open(path))
    time, calls = ort_groups(events)
    got, said = report(path)
    rows = {r["name"]: r for r in got["rows"]}
    for op, us in time.items():
        row = rows.get(op)
        check(row is not None, f"{path}: no row {op}")
        if row:
            check(abs(row["self_cpu_us"] - us) < 0.01, f"{path}: {op} self {row['self_cpu_us']} us, ORT {us}")
            check(row["calls"] == calls[op], f"{path}: {op} calls {row['calls']}, ORT {calls[op]}")
    nodes = [e for e in events if e.get("cat") == "Node"]
    check(not any(r["name"].endswith("_kernel_time") for r in got["rows"]), f"{path}: a row named by a node event")
    check(rows.get("ProfilerStep*", {}).get("calls") == runs, f"{path}: {runs} steps")
    run_us = sum(e["dur"] for e in events if e.get("cat") == "Session" and e["name"] == "model_run")
    check(abs(got["self_cpu_us_total"] - run_us) < 0.01, f"{path}: total {got['self_cpu_us_total']}, runs {run_us}")
    check("session_initialization" not in rows and "model_loading_uri" not in rows, f"{path}: start-up rows")
    check(any("start-up, not in the totals" in w for w in got["warnings"]), f"{path}: start-up said")
    check(got["producer"] == "ONNX Runtime", f"{path}: producer {got['producer']}")
    by_node, _ = report(path, "--group-by", "node")
    node_names = {e["name"][: -len("_kernel_time")] for e in nodes if e["name"].endswith("_kernel_time")}
    check(node_names <= {r["name"] for r in by_node["rows"]}, f"{path}: rows by node")


def main():
    os.makedirs(work, exist_ok=True)
    # Debian's python3-onnx is the system Python's (a python3 earlier in PATH may not have it)
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    subprocess.run([python, os.path.join(src_dir, "tests/ort/make_models.py"), work], check=True)
    env = dict(os.environ, NODE_PATH=os.path.join(ort_dir, "node_modules"))
    runs = 5
    for model in ("mlp", "convnet"):
        for threads in (1, 2):
            prefix = os.path.join(work, f"{model}-{threads}t")
            subprocess.run(["node", os.path.join(src_dir, "tests/ort/run_ort.js"), os.path.join(work, model + ".onnx"),
                            str(runs), prefix, str(threads)], check=True, env=env)
            profiles = glob.glob(prefix + "_*.json")
            check(len(profiles) == 1, f"{prefix}: ONNX Runtime wrote {len(profiles)} profile(s)")
            for path in profiles:
                check_profile(path, runs)
    print(f"check_ort: {checks - failures} passed, {failures} failed")
    return 1 if failures else 0


sys.exit(main())
