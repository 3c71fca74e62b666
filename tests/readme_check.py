#!/usr/bin/env python3
"""test_readme: every command and option that README.md's shell blocks show exists,
and each command's help (and its entry in opprof(1)) starts with its task and ends
with examples that parse.

Each line of a ```sh block (or a bare ``` block) that runs `opprof` or
`profile_cpu` (as build/bin/opprof, or after environment assignments) is parsed:
its command must be one of `opprof help`'s, and each of its --options (up to a
`--` that starts the profiled program's own words) must be in that command's
help (`opprof help CMD`, `profile_cpu --help`), so that the README cannot name an
option that is gone or was never there.
usage: readme_check.py BIN_DIR README
"""
import os
import re
import subprocess
import sys

from pycheck import Checks, fenced_blocks

bin_dir, readme = sys.argv[1:3]
t = Checks("readme_check")
check = t.check


def run(*args):
    out = subprocess.run([f"{bin_dir}/{args[0]}", *args[1:]], capture_output=True, text=True)
    return out.stdout + out.stderr


def shell_lines(text):
    """The lines of the README's shell blocks, continuation lines joined."""
    lines = []
    for kind, body, _ in fenced_blocks(text):
        if kind in ("", "sh", "bash", "shell"):
            lines += body.replace("\\\n", " ").splitlines()
    return lines


commands_text = run("opprof", "help")
commands = set(re.findall(r"^  ([a-z]+) ", commands_text, re.M)) | {"help"}  # help: the tool's own
check(len(commands) >= 9, f"opprof help lists its commands: {sorted(commands)}")
helps = {}


def help_of(tool, command):
    key = (tool, command)
    if key not in helps:
        helps[key] = run("opprof", "help", command) if tool == "opprof" else run(tool, "--help")
    return helps[key]


def check_line(line, where):
    """One command line: its command exists, and each of its --options; True when it ran a tool."""
    code = line.split("#", 1)[0]
    words = code.split()
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):  # VAR=value before the command
        words.pop(0)
    if not words:
        return False
    tool = words[0].rsplit("/", 1)[-1]
    if tool not in ("opprof", "profile_cpu"):
        return False
    rest = words[1:]
    if tool == "opprof":
        if not rest or rest[0].startswith("-"):
            return True  # opprof --version and the like
        command = rest.pop(0)
        check(command in commands, f"{where}: 'opprof {command}' is no command ({line.strip()})")
        if command not in commands:
            return True
    else:
        command = None
    text = help_of(tool, command)
    for word in rest:
        if word == "--":
            break  # the profiled program's own words
        for option in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", word):
            named = re.search(re.escape(option) + r"(?![a-z0-9-])", text) is not None
            check(named, f"{where}: {tool} {command or ''} has no option {option} ({line.strip()})")
    return True


seen = sum(check_line(line, "README") for line in shell_lines(open(readme).read()))
# each command's help: its first line says the task, and its examples are commands it takes
for command in sorted(commands - {"help"}):
    text = help_of("opprof", command)
    check(text.startswith(f"opprof {command}: "), f"opprof help {command}: the first line names the task")
    examples = text.split("\nExamples:\n", 1)
    check(len(examples) == 2 and examples[1].strip(), f"opprof help {command}: examples at the end")
    for line in (examples[1].splitlines() if len(examples) == 2 else []):
        check(check_line(line, f"opprof help {command}'s examples"), f"opprof help {command}: {line}")
# opprof(1) has the same structure: each command's entry starts with its task, as its help
man = open(os.path.join(os.path.dirname(readme), "docs", "man", "opprof.1")).read()
for command in sorted(commands - {"help"}):
    task = help_of("opprof", command).split("\n", 1)[0].split(": ", 1)[-1]
    task = (task[:1].upper() + task[1:]).replace("-", "\\-")
    check(f".TP\n.B {command}\n\\fI{task}.\\fR\n" in man, f"opprof(1)'s {command} starts with its task: {task}")
check(seen >= 20, f"README's shell blocks run opprof and profile_cpu ({seen} lines seen)")
sys.exit(t.done())
