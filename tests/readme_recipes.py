#!/usr/bin/env python3
"""test_readme_recipes: every recipe of README.md runs as written, and gives what it says.

Each ```sh block but the first (the two commands, which this suite is part of) runs
in order with `bash -euo pipefail`, in a fresh directory that stands for the top of a
clone after `make run`: build/ is the build tree, and the sources that the recipes
name (README.md, examples/, tests/, src/) are links to the clone's. A block must exit 0;
then the files the recipes say they write must hold what they say. A ```c block
introduced by a sentence that names `examples/NAME.c` must be a part of that file,
line for line, so that the README's code is code that compiles.
usage: readme_recipes.py SOURCE_DIR BUILD_DIR WORK_DIR
"""
import glob
import os
import re
import shutil
import subprocess
import sys

from pycheck import Checks, fenced_blocks

src_dir, build_dir, work = sys.argv[1:4]
t = Checks("readme_recipes")
check = t.check


readme = open(os.path.join(src_dir, "README.md")).read()
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
os.symlink(build_dir, os.path.join(work, "build"))
for name in ("README.md", "examples", "tests", "src"):
    os.symlink(os.path.join(src_dir, name), os.path.join(work, name))
# The llama.cpp recipe's compiles (through ccache, which llama.cpp's CMake takes
# where it is installed) with paths relative to the clone: a new clone's build
# of llama.cpp is the last one's, out of the cache.
clone = os.path.commonpath([os.path.realpath(p) for p in (src_dir, build_dir, work)])
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", CCACHE_BASEDIR=clone)

shell = [b for b in fenced_blocks(readme) if b[0] == "sh"]
check(shell and "make run" in shell[0][1] and "make test" in shell[0][1],
      "the README begins with the two commands")
for n, (kind, body, _) in enumerate(shell[1:], 2):
    out = subprocess.run(["bash", "-euo", "pipefail", "-c", body], cwd=work, env=env,
                         capture_output=True, text=True)
    first = body.strip().splitlines()[0]
    check(out.returncode == 0, f"sh block {n} ({first}) exits {out.returncode}: {out.stderr[-800:]}")


def read(path):
    full = os.path.join(work, path)
    return open(full, errors="replace").read() if os.path.isfile(full) else ""


def one(pattern):
    found = sorted(glob.glob(os.path.join(work, pattern)))
    return os.path.relpath(found[0], work) if found else pattern


# What the recipes say comes out.
expected = [
    ("guide/cpu-step-4.json", '"ProfilerStep#'), ("guide/cpu-step-4.html", "<html"),
    ("guide/cpu-step-4.time.txt", "aten::addmm"), ("guide/summary.json", "aten::linear"),
    (one("rec-py/trace-step-*.time.txt"), "ProfilerStep*"),
    (one("rec-py/trace-step-*.json"), '"ProfileChunk"'),          # the samples
    (one("rec-xz/trace-step-*.json"), '"ProfilerStep#2"'),        # lzma_code's calls as steps
    ("rec-cxx.json", "Accumulator<double>::add(double)"),         # demangled
    ("rec-cxx.json", '"mangled": "_ZN11AccumulatorIdE3addEd"'),
    ("first.txt", "my::scale"), ("trace.json", "batch_2"), ("report.html", "<html"),
    ("rec-ggml/trace-step-5.json", "ggml::MUL_MAT"), (one("rec-llama/trace-step-*.json"), '"cache_k_l3'),
    ("flow.html", "<html"), ("guide.folded", "aten::addmm"), ("guide.pftrace", "aten::addmm"),
    (one("flight/cpu-step-1500.flight.txt"), "ProfilerStep*"),
    ("inside-forward.csv", '"aten::linear",590000'), ("addmm-p99.csv", '"p99_ns"\n'),
    ("kernels-per-step.csv", '"step","kernel_ns"\n"ProfilerStep#10",96925000\n'),
    # idle and busy add up to the span from the first kernel to the last end (994.1 ms), busy to their sum
    ("gpu-idle.csv", '"kernels_running","ns"\n0,402568000\n1,591532000\n'),
    ("roofline.txt", "above roof in"), ("what-if.txt", "What if aten::clamp_min=0.5x"),
    ("prediction.txt", "Prediction (aten::clamp_min changed"),
    ("stats.txt", "Self p90"), ("ranks.txt", "rank"), ("merged.json", "aten::linear"),
]
for path, text in expected:
    content = read(path)
    check(text in content, f"{path} holds {text!r} ({len(content)} characters)")
check(len(glob.glob(os.path.join(work, "before/run-*/cpu-step-*.json"))) == 3, "3 runs before")
# llama.cpp's 4 layers, each with its matmuls and its flash attention (an unnamed node)
layer_rows = [line.split()[:2] for line in read("layers.txt").splitlines() if line.strip().startswith("ggml::")]
for op in ("ggml::MUL_MAT", "ggml::FLASH_ATTN_EXT"):
    layers = sorted(layer for name, layer in layer_rows if name == op and layer.isdigit())
    check(layers == ["0", "1", "2", "3"], f"layers.txt: a row of {op} for each layer ({layers})")
xz_steps = set(re.findall(r'"ProfilerStep#(\d+)"', read(one("rec-xz/trace-step-*.json"))))
check(len(xz_steps) >= 3, f"xz's lzma_code calls are steps ({len(xz_steps)})")

# The README's C that it says comes from an example is that example's.
for kind, body, before in fenced_blocks(readme):
    named = re.search(r"examples/(\w+\.c)", before)
    if kind != "c" or not named:
        continue
    source = [line.strip() for line in open(os.path.join(src_dir, "examples", named.group(1)))]
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    at = [i for i in range(len(source)) if source[i:i + len(lines)] == lines]
    check(bool(at), f"README's C block from examples/{named.group(1)} is in it, line for line")

sys.exit(t.done())
