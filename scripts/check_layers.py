#!/usr/bin/env python3
"""check_layers.py - the layering rules of docs/ARCHITECTURE.md, checked.

src/opprof/ is one folder per layer, lowest first:

    base < capture < {record, trace} < analysis < render < autostart

Rules (each broken one is printed as FILE:LINE: reason; exit 1):
  1. A file of a layer includes opprof's private headers only from its own
     folder and from lower layers, and of a lower layer only that layer's one
     header, LAYER/LAYER.h. record and trace are side by side: neither
     includes the other.
  2. Nothing outside src/opprof (nn, mpi, preload, tools, examples, bench,
     tests) includes a private header of opprof: they use include/ only.
  3. With --objects BUILD_DIR, the same order holds for calls: no object of a
     layer uses a symbol that an object of a higher (or a side) layer defines.

usage: check_layers.py [--objects BUILD_DIR] [SOURCE_DIR]
"""
import os
import re
import subprocess
import sys

RANK = {"base": 0, "capture": 1, "record": 2, "trace": 2, "analysis": 3, "render": 4, "autostart": 5}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def may_use(own, other):
    """May a file of layer `own` use layer `other`?"""
    return other == own or RANK[other] < RANK[own]


def included_layer(own_dir, target):
    """The layer a quoted include names (first folder of the path as written
    relative to src/opprof, or the file's own folder), and the header."""
    parts = target.split("/")
    if len(parts) >= 2 and parts[0] in RANK:
        return parts[0], "/".join(parts[1:])
    if len(parts) == 1:
        return own_dir, parts[0]
    return None, target


def check_includes(src, problems):
    layers_root = os.path.join(src, "src", "opprof")
    for layer in sorted(os.listdir(layers_root)):
        folder = os.path.join(layers_root, layer)
        if not os.path.isdir(folder):
            continue
        if layer not in RANK:
            problems.append(f"{folder}: a folder that is no layer (known: {', '.join(RANK)})")
            continue
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if not name.endswith((".c", ".h")):
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = m.group(1)
                    other, header = included_layer(layer, target)
                    where = f"{os.path.relpath(path, src)}:{number}"
                    if other is None:
                        if target.startswith("../../common/"):
                            continue  # shared with nn, below every layer
                        if target == "report_js.h" and layer == "render":
                            continue  # generated from render/report.js
                        problems.append(f"{where}: includes \"{target}\", which is no layer's header")
                    elif not may_use(layer, other):
                        side = "beside" if RANK[other] == RANK[layer] else "above"
                        problems.append(f"{where}: {layer}/ includes \"{target}\" of {other}/, a layer {side} it")
                    elif other != layer and header != f"{other}.h":
                        problems.append(f"{where}: {layer}/ includes \"{target}\": of a lower layer, only "
                                        f"{other}/{other}.h")


def check_outside(src, problems):
    for top in ("src/nn", "src/mpi", "src/preload", "tools", "examples", "bench", "tests"):
        root = os.path.join(src, top)
        for dirpath, _, files in os.walk(root):
            if "fixtures" in dirpath:
                continue
            for name in files:
                if not name.endswith((".c", ".h", ".cpp", ".hpp")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m and (m.group(1).split("/")[0] in RANK or "src/opprof" in m.group(1)):
                            problems.append(f"{os.path.relpath(path, src)}:{number}: includes opprof's private "
                                            f"header \"{m.group(1)}\" (outside src/opprof, use include/)")


def layer_of_object(path):
    m = re.search(r"src/opprof/([a-z_]+)/[^/]+\.c\.o$", path)
    return m.group(1) if m and m.group(1) in RANK else None


def nm(args):
    return subprocess.run(["nm"] + args, check=True, capture_output=True, text=True).stdout


def check_objects(build, problems):
    objects = []
    for dirpath, _, files in os.walk(os.path.join(build, "CMakeFiles", "opprof_objects.dir")):
        objects += [os.path.join(dirpath, n) for n in files if n.endswith(".c.o")]
    if not objects:
        problems.append(f"{build}: no objects of the opprof library (build it first)")
        return
    defined = {}
    for obj in objects:
        for line in nm(["--defined-only", obj]).splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBRVW" + "tdbr".upper():
                defined[parts[2]] = obj
    for obj in sorted(objects):
        own = layer_of_object(obj)
        for line in nm(["-u", obj]).splitlines():
            symbol = line.split()[-1]
            other_obj = defined.get(symbol)
            other = layer_of_object(other_obj) if other_obj else None
            if own and other and not may_use(own, other):
                rel = lambda p: re.sub(r".*src/opprof/", "src/opprof/", p)[:-2]
                problems.append(f"{rel(obj)}: calls {symbol} of {rel(other_obj)}, a layer above or beside {own}/")


def main(argv):
    build = None
    if len(argv) >= 2 and argv[0] == "--objects":
        build, argv = argv[1], argv[2:]
    src = argv[0] if argv else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    problems = []
    check_includes(src, problems)
    check_outside(src, problems)
    if build:
        check_objects(build, problems)
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} rule(s) broken (docs/ARCHITECTURE.md, 'Layers')")
        return 1
    print("check_layers: every include" + (" and call" if build else "") + " follows the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
