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
  - the producer named;
and `opprof diff` of the guide's MLP in PyTorch (tests/fixtures/pytorch-1.13)
and in nn (profile_cpu), each against ONNX Runtime, pairs its two layers (aten::linear + aten::relu with
FusedGemm, aten::linear with Gemm), each side's mean per step.
usage: check_ort.py BIN_DIR SOURCE_DIR ORT_DIR WORK_DIR
"""
import glob
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from pycheck import Checks  # noqa: E402 (tests/pycheck.py)

bin_dir, src_dir, ort_dir, work = sys.argv[1:5]
t = Checks("check_ort")
check = t.check


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


LINEAR = ("aten::linear", "aten::addmm")
RELU = ("aten::relu", "aten::clamp_min")


def torch_layers(path):
    """The guide's MLP in PyTorch's trace (its two steps): per step, the
    outermost linear and relu operators in order, summed as ORT's nodes
    cover them (FusedGemm = linear + relu, Gemm = linear): their means."""
    data = json.load(open(path))
    events = data if isinstance(data, list) else data["traceEvents"]
    steps = [e for e in events if e.get("name", "").startswith("ProfilerStep#")]
    ops = [e for e in events if e.get("ph") == "X" and e["name"] in LINEAR + RELU]

    def inside(e, outer):
        return outer["ts"] <= e["ts"] and e["ts"] + e["dur"] <= outer["ts"] + outer["dur"]

    sums = [0, 0]
    for st in steps:
        top = sorted((e for e in ops if inside(e, st) and not any(o is not e and inside(e, o) for o in ops)),
                     key=lambda e: e["ts"])
        check([e["name"] for e in top] == ["aten::linear", "aten::relu", "aten::linear"], f"{path}: the MLP's operators")
        sums[0] += top[0]["dur"] + top[1]["dur"]
        sums[1] += top[2]["dur"]
    return [x / len(steps) for x in sums]


def ort_layers(path):
    """FusedGemm's and Gemm's mean time per run in ORT's own profile."""
    events = json.load(open(path))
    runs = sum(1 for e in events if e.get("cat") == "Session" and e["name"] == "model_run")
    time = ort_groups(events)[0]
    return [time["FusedGemm"] / runs, time["Gemm"] / runs]


def check_across_runtimes(torch_trace, ort_profile):
    """`opprof diff` of the same MLP in PyTorch and ONNX Runtime pairs its layers, per step."""
    out = subprocess.run([os.path.join(bin_dir, "opprof"), "diff", "--json", torch_trace, ort_profile],
                         capture_output=True, text=True)
    check(out.returncode == 0, f"diff {torch_trace} {ort_profile}: {out.stderr}")
    got = json.loads(out.stdout)
    rows = {r["name"]: r for r in got["rows"]}
    before, after = torch_layers(torch_trace), ort_layers(ort_profile)
    for k, name in enumerate(("L1 aten::linear+aten::relu | FusedGemm", "L2 aten::linear | Gemm")):
        row = rows.get(name)
        check(row is not None, f"diff: no layer row {name}: {list(rows)}")
        if row:
            check(abs(row["self_cpu_us_before"] - before[k]) < 0.01, f"{name}: {row['self_cpu_us_before']} us, {before[k]}")
            check(abs(row["self_cpu_us_after"] - after[k]) < 0.01, f"{name}: {row['self_cpu_us_after']} us, {after[k]}")
    check(any("per step" in n for n in got["notes"]), "diff: per step said")
    named = subprocess.run([os.path.join(bin_dir, "opprof"), "diff", "--json", "--match", "name", torch_trace,
                            ort_profile], capture_output=True, text=True)
    check(named.returncode == 0 and "FusedGemm" in {r["name"] for r in json.loads(named.stdout)["rows"]},
          "diff --match name: rows by name")
    # what is refused, and said
    for args, says in ((["diff", "--match", "op", torch_trace, ort_profile], "--match takes name or layers, not 'op'"),
                       (["report", "--group-by", "op", ort_profile], "--group-by takes 'node'")):
        bad = subprocess.run([os.path.join(bin_dir, "opprof"), *args], capture_output=True, text=True)
        check(bad.returncode == 64 and says in bad.stderr, f"opprof {' '.join(args[:3])}: {bad.returncode} {bad.stderr}")


def main():
    shutil.rmtree(work, ignore_errors=True)  # a run's profiles only: ORT names each by its time
    os.makedirs(work)
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
    mlp = glob.glob(os.path.join(work, "mlp-1t_*.json"))
    check_across_runtimes(os.path.join(src_dir, "tests/fixtures/pytorch-1.13/cpu-step-4.legacy.json"), mlp[0])
    # nn's run of the same model (profile_cpu: the guide's schedule, 2 active steps) against ORT's
    subprocess.run([os.path.join(bin_dir, "profile_cpu"), "--quiet", os.path.join(work, "nn")], check=True)
    check_across_runtimes(os.path.join(work, "nn", "cpu-step-4.json"), mlp[0])
    return t.done()


sys.exit(main())
