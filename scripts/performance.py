#!/usr/bin/env python3
"""The performance figures of docs/PERFORMANCE.md, and the rule that every figure has a bench.

  performance.py record NAME [--runs N] -- CMD...   run CMD (a bench that prints --json) N
                                                    times; save bench/results/NAME.json with
                                                    the host, the command and every run
  performance.py update                             rewrite docs/PERFORMANCE.md's figures and
                                                    hosts from bench/results/
  performance.py check                              fail (exit 1) on a figure that is not what
                                                    its results give, a figure with no bench,
                                                    or a measurement left in another document

A figure is a table row of docs/PERFORMANCE.md whose last cell names its source,
`bench_x key` (a key of the bench's --json): the value cell is the range of that key
over the saved runs, in the unit that the key's words name (ns, us, ms, s, mb_s,
mb_per_s, mib, bytes, gflops, gbps, pct, pp; over, ratio and speedup are times; a rate
or an error is a percentage). A section's host line
(`Host: ...` right under a heading that names `bench_x`) is the saved run's host.
Outside those rows and lines, a number with a unit of time, speed or ratio is refused,
in docs/PERFORMANCE.md and in README.md and docs/*.md alike (code is not prose: code
blocks and `code spans` are skipped); README.md may quote a figure of
docs/PERFORMANCE.md on a line that links to it.
usage: performance.py record|update|check [ROOT]
"""
import datetime
import json
import os
import platform
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A measurement in prose: a number with a unit of time, speed or ratio.
NUMBER = r"(?<![\w.-])\d(?:[\d,.]*\d)?(?:-\d(?:[\d,.]*\d)?)?"
FIGURE = re.compile(NUMBER + r"\s?(?:ns|µs|us|ms|s|MB/s|GB/s|GFLOP/s|x|×)(?![\w/])"
                    r"|" + NUMBER + r" times (?:as|faster|slower|smaller|larger)")
BENCH_NAMED = re.compile(r"bench_\w+|paired whole runs?|PERFORMANCE\.md")
SOURCE = re.compile(r"^`(bench_\w+) (\w+(?:\.\w+)*)`$")  # a nested key: batch_1.ratio_vs_torch


def results_dir(root):
    return os.path.join(root, "bench", "results")


def host_facts():
    """The host as the brief asks it stated: lscpu's model, the ISA, the CPUs."""
    model, flags = "unknown", ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and model == "unknown":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags") and not flags:
                flags = line.split(":", 1)[1]
    isa = "AVX-512" if " avx512f" in flags else "AVX2" if " avx2" in flags else "SSE"
    virt = subprocess.run(["systemd-detect-virt"], capture_output=True, text=True).stdout.strip() \
        if os.path.exists("/usr/bin/systemd-detect-virt") else ""
    return {"model": model, "isa": isa, "cpus": os.cpu_count(), "kernel": platform.release(),
            "virtualization": virt or "unknown"}


def record(root, args):
    if "--" not in args or args.index("--") == 0:
        sys.exit("performance.py record: usage: record NAME [--runs N] -- CMD...")
    cut = args.index("--")
    opts, cmd = args[:cut], args[cut + 1:]
    name, runs = opts[0], 3
    if "--runs" in opts:
        runs = int(opts[opts.index("--runs") + 1])
    outputs = []
    for i in range(runs):
        out = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"performance.py record: {' '.join(cmd)} exited {out.returncode}: {out.stderr[-400:]}")
        try:
            outputs.append(json.loads(out.stdout))
        except json.JSONDecodeError as e:
            sys.exit(f"performance.py record: {' '.join(cmd)} printed no JSON ({e})")
        print(f"performance.py: {name}: run {i + 1} of {runs}", file=sys.stderr)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                            text=True).stdout.strip()
    saved = {"bench": name, "command": " ".join(cmd), "host": host_facts(),
             "date": datetime.date.today().isoformat(), "commit": commit, "runs": outputs}
    os.makedirs(results_dir(root), exist_ok=True)
    path = os.path.join(results_dir(root), name + ".json")
    with open(path + ".tmp", "w") as f:
        json.dump(saved, f, indent=1)
        f.write("\n")
    os.replace(path + ".tmp", path)


def load_results(root):
    found = {}
    directory = results_dir(root)
    for entry in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
        if entry.endswith(".json"):
            with open(os.path.join(directory, entry)) as f:
                found[entry[:-5]] = json.load(f)
    return found


def unit_of(key):
    """The unit that a key's words name: (unit, scale)."""
    words = key.split("_")
    if "over" in words or "ratio" in words or "speedup" in words:
        return "×", 1
    if "rate" in words or "error" in words:
        return "%", 100
    for word, unit in (("ns", "ns"), ("us", "µs"), ("ms", "ms"), ("mib", "MiB"), ("bytes", "B"),
                       ("gflops", "GFLOP/s"), ("gbps", "GB/s"), ("pct", "%"), ("pp", "pp")):
        if word in words:
            return unit, 1
    if "mb" in words:
        return ("MB/s" if words[words.index("mb") + 1:words.index("mb") + 2] in (["s"], ["per"]) else "MB"), 1
    if words[-1] == "s" or words[-2:] == ["s", "median"]:
        return ("/s" if words[-2:] == ["per", "s"] else "s"), 1
    return "", 1


def number(v):
    """Three significant digits, no exponent."""
    if v == int(v) and abs(v) < 1e15:
        return f"{int(v):,}"
    digits = max(0, 2 - int(f"{abs(v):e}".split("e")[1]))
    return f"{v:,.{digits}f}"


def lookup(run, key):
    for part in key.split("."):
        run = run.get(part) if isinstance(run, dict) else None
    return run


def figure(results, bench, key):
    """The range of KEY over BENCH's saved runs, with its unit; or the reason there is none."""
    if bench not in results:
        return None, f"no bench/results/{bench}.json"
    values = [lookup(run, key) for run in results[bench]["runs"]]
    if not values or any(not isinstance(v, (int, float)) or isinstance(v, bool) for v in values):
        return None, f"{bench}'s runs have no number {key}"
    unit, scale = unit_of(key.split(".")[-1])
    lo, hi = min(values) * scale, max(values) * scale
    for small, large in (("ns", "µs"), ("µs", "ms"), ("ms", "s")):  # 6,170 ns as 6.17 µs
        if unit == small and lo >= 1000:
            unit, lo, hi = large, lo / 1000, hi / 1000
    if unit == "s" and hi < 1:
        unit, lo, hi = "ms", lo * 1000, hi * 1000
    low, high = number(lo), number(hi)
    text = low if low == high else f"{low} to {high}" if lo < 0 else f"{low}-{high}"
    return (f"{text}{unit}" if unit in ("×", "%", "") else f"{text} {unit}"), None


def host_line(saved):
    h = saved["host"]
    return (f"Host: {h['model']} ({h['isa']}), {h['cpus']} CPUs, {h['virtualization']}, "
            f"Linux {h['kernel']}; {len(saved['runs'])} runs of `{saved['command']}` on "
            f"{saved['date']} at {saved['commit']}.")


def rows_of(line):
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def prose(line):
    return re.sub(r"`[^`]*`", "", re.sub(r"\]\([^)]*\)", "]", line))


def walk_performance(text, results, problems, fix):
    """Check (and with FIX, rewrite) docs/PERFORMANCE.md; returns the text and its figures."""
    out, figures, bench, in_code = [], set(), None, False
    for n, line in enumerate(text.split("\n"), 1):
        if line.startswith("```"):
            in_code = not in_code
        elif in_code:
            pass
        elif line.startswith("#"):
            names = re.findall(r"bench_\w+", line)
            bench = names[0] if names else None
        elif line.startswith("Host:"):
            if bench not in results:
                problems.append(f"PERFORMANCE.md:{n}: a host line with no bench results above it")
            elif line != host_line(results[bench]):
                if fix:
                    line = host_line(results[bench])
                else:
                    problems.append(f"PERFORMANCE.md:{n}: the host is not {bench}'s: run update")
        elif line.startswith("|") and SOURCE.match(rows_of(line)[-1]):
            cells = rows_of(line)
            src_bench, key = SOURCE.match(cells[-1]).groups()
            value, why = figure(results, src_bench, key)
            if why:
                problems.append(f"PERFORMANCE.md:{n}: {why}")
            elif cells[-2] != value:
                if fix:
                    cells[-2] = value
                    line = "| " + " | ".join(cells) + " |"
                else:
                    problems.append(f"PERFORMANCE.md:{n}: {cells[-2]!r} is not what {src_bench} gives "
                                    f"for {key} ({value}): run update")
            if value:
                figures.add(value)
            if FIGURE.search(prose(" ".join(cells[:-2]))):
                problems.append(f"PERFORMANCE.md:{n}: a figure in a row's description")
        elif FIGURE.search(prose(line)):
            problems.append(f"PERFORMANCE.md:{n}: a figure with no bench: {FIGURE.search(prose(line)).group(0)!r}")
        out.append(line)
    return "\n".join(out), figures


def prose_lines(path):
    """(line number, line) of each line outside code blocks."""
    in_code = False
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if line.startswith("```"):
                in_code = not in_code
            elif not in_code:
                yield n, line.rstrip("\n")


def paragraphs(path):
    """(first line, text) of each paragraph or table outside code blocks."""
    found, lines, first = [], [], 0
    for n, line in prose_lines(path):
        if not line.strip() or line.startswith("#"):
            if lines:
                found.append((first, " ".join(lines)))
            lines = []
        else:
            first = first if lines else n
            lines.append(line.strip())
    if lines:
        found.append((first, " ".join(lines)))
    return found


def check_other(path, name, figures, problems):
    """README.md: no measurement but a quote of PERFORMANCE.md's figures on a line that links
    it. Other documents: a measurement only in a paragraph that names its bench (a table or
    a list: or in the paragraph that introduces it)."""
    units = list(prose_lines(path)) if name == "README.md" else paragraphs(path)
    before = ""
    for n, text in units:
        introduced, before = before, text  # a table or list names its bench in the sentence before it
        for m in FIGURE.finditer(prose(text)):
            if name == "README.md":
                ok = "PERFORMANCE.md" in text and any(m.group(0) in fig for fig in figures)
            else:
                ok = BENCH_NAMED.search(text) is not None or (
                    text.startswith(("|", "- ")) and BENCH_NAMED.search(introduced) is not None)
            if not ok:
                problems.append(f"{name}:{n}: a measurement with no bench behind it: {m.group(0)!r} "
                                f"(docs/PERFORMANCE.md holds the figures, each from its bench)")


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("record", "update", "check"):
        sys.exit(__doc__.split("\n\n")[0] + "\nusage: performance.py record|update|check [ROOT]")
    mode = sys.argv[1]
    if mode == "record":
        return record(ROOT, sys.argv[2:])
    root = sys.argv[2] if len(sys.argv) > 2 else ROOT
    results, problems = load_results(root), []
    path = os.path.join(root, "docs", "PERFORMANCE.md")
    with open(path) as f:
        text = f.read()
    fixed, figures = walk_performance(text, results, problems, mode == "update")
    if mode == "update" and fixed != text:
        with open(path + ".tmp", "w") as f:
            f.write(fixed)
        os.replace(path + ".tmp", path)
    docs = [("README.md", os.path.join(root, "README.md"))]
    docs += [(f"docs/{d}", os.path.join(root, "docs", d)) for d in sorted(os.listdir(os.path.join(root, "docs")))
             if d.endswith(".md") and d != "PERFORMANCE.md"]
    for name, doc in docs:
        check_other(doc, name, figures, problems)
    for p in problems:
        print(f"performance.py: {p}", file=sys.stderr)
    if not problems:
        print(f"performance.py: {len(figures)} figures, each from its bench; no measurement elsewhere")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
