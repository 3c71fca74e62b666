#!/usr/bin/env python3
"""test_performance_check: scripts/performance.py refuses what it must.

On a small tree of its own (two saved runs of a bench, a PERFORMANCE.md, a README
and another document), each case changes one thing and runs `check` (or `update`):
a figure that is not its runs' range, a key or a bench with no runs, a number in
prose with no bench, a README figure that PERFORMANCE.md does not give, a paragraph
of another document that names no bench. Each must fail with its reason; the
untouched tree and `update`'s rewrite must pass.
usage: performance_check.py SOURCE_DIR WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

from pycheck import Checks

src_dir, work = sys.argv[1:3]
script = os.path.join(src_dir, "scripts", "performance.py")
t = Checks("performance_check")
check = t.check

RESULTS = {"bench": "bench_x", "command": "build/bin/bench_x --json",
           "host": {"model": "Test CPU", "isa": "AVX2", "cpus": 2, "kernel": "6.1",
                    "virtualization": "kvm"},
           "date": "2026-12-03", "commit": "abc1234",
           "runs": [{"range_ns": 18.25, "peer_range_ns": 6500.0, "ratio_vs_peer": 356.0},
                    {"range_ns": 19.5, "peer_range_ns": 6900.0, "ratio_vs_peer": 354.0}]}
HOST = ("Host: Test CPU (AVX2), 2 CPUs, kvm, Linux 6.1; 2 runs of `build/bin/bench_x --json` "
        "on 2026-12-03 at abc1234.")
PERFORMANCE = f"""# Performance

## Recording (bench_x)

{HOST}

| what | value | source |
|---|---|---|
| a range | 18.2-19.5 ns | `bench_x range_ns` |
| the peer's range | 6.50-6.90 µs | `bench_x peer_range_ns` |
| peer over opprof | 354-356× | `bench_x ratio_vs_peer` |

The peer runs in the same process, interleaved.
"""
README = "# t\n\n- A range: 18.2-19.5 ns ([PERFORMANCE.md](docs/PERFORMANCE.md)).\n"
OTHER = "# o\n\nThe reader went from slow to fast (`bench_x`: 500 MB/s).\n"


def tree(performance=PERFORMANCE, readme=README, other=OTHER, results=RESULTS):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "docs"))
    os.makedirs(os.path.join(work, "bench", "results"))
    for path, text in (("docs/PERFORMANCE.md", performance), ("README.md", readme),
                       ("docs/OTHER.md", other)):
        with open(os.path.join(work, path), "w") as f:
            f.write(text)
    if results is not None:
        with open(os.path.join(work, "bench", "results", "bench_x.json"), "w") as f:
            json.dump(results, f)


def run(mode="check"):
    out = subprocess.run([sys.executable, script, mode, work], capture_output=True, text=True)
    return out.returncode, out.stdout + out.stderr


def refused(what, reason, **changes):
    tree(**changes)
    rc, text = run()
    check(rc == 1 and reason in text, f"{what}: exit {rc}, says {reason!r}: {text.strip()[:300]}")


tree()
rc, text = run()
check(rc == 0 and "3 figures" in text, f"the untouched tree passes: {text.strip()}")

refused("a stale figure", "is not what bench_x gives for range_ns (18.2-19.5 ns)",
        performance=PERFORMANCE.replace("18.2-19.5 ns", "12.0-13.0 ns"))
refused("a key that the runs do not have", "bench_x's runs have no number speed_mb_s",
        performance=PERFORMANCE.replace("`bench_x peer_range_ns`", "`bench_x speed_mb_s`"))
refused("a bench with no saved runs", "no bench/results/bench_x.json", results=None)
refused("a figure in PERFORMANCE.md's prose", "a figure with no bench: '20 ns'",
        performance=PERFORMANCE + "\nA range costs about 20 ns.\n")
refused("a figure in a row's description", "a figure in a row's description",
        performance=PERFORMANCE.replace("| a range |", "| a range of 5 ns |"))
refused("a host that is not the runs'", "the host is not bench_x's",
        performance=PERFORMANCE.replace("Test CPU (AVX2)", "Other CPU (AVX2)"))
refused("a README figure that PERFORMANCE.md does not give", "'12 ns'",
        readme=README.replace("18.2-19.5 ns", "12 ns"))
refused("a README figure without its link", "'18.2-19.5 ns'",
        readme="# t\n\nA range costs 18.2-19.5 ns.\n")
refused("a measurement in another document with no bench", "docs/OTHER.md:3",
        other=OTHER.replace("(`bench_x`: 500 MB/s)", "(500 MB/s)"))
tree(other="# o\n\nMeasured with `bench_x --json`:\n\n| a | b |\n|---|---|\n| x | 500 MB/s |\n")
rc, text = run()
check(rc == 0, f"a table's bench in the sentence before it: {text.strip()[:300]}")
tree(other="# o\n\nCode is not prose: `50ms` and\n\n```sh\nsleep 1s; echo 3x\n```\n")
rc, text = run()
check(rc == 0, f"code spans and blocks are not figures: {text.strip()[:300]}")

# update rewrites a stale figure and host from the runs, and check then passes
tree(performance=PERFORMANCE.replace("18.2-19.5 ns", "1 ns").replace("Test CPU", "Old CPU"))
rc, _ = run("update")
rc2, text = run()
with open(os.path.join(work, "docs", "PERFORMANCE.md")) as f:
    updated = f.read()
check(rc2 == 0 and updated == PERFORMANCE, f"update gives the runs' figures back: {text.strip()[:300]}")

sys.exit(t.done())
