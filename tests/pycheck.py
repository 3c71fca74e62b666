"""The Python tests' one checker, as tests/check.h is the C tests': each check counts,
a failed one says what, and `done()` prints the tally and gives the exit status; and
the one reader of a Markdown file's fenced blocks (`fenced_blocks`).

    from pycheck import Checks
    t = Checks("readme_check")
    t.check(cond, "what must hold")
    sys.exit(t.done())
"""
import re
import sys


class Checks:
    def __init__(self, name):
        self.name, self.checks, self.failures = name, 0, 0

    def check(self, cond, what):
        self.checks += 1
        if not cond:
            self.failures += 1
            print(f"{self.name}: FAILED: {what}", file=sys.stderr)
        return bool(cond)

    def done(self):
        print(f"{self.name}: {self.checks - self.failures} passed, {self.failures} failed")
        return 1 if self.failures else 0


def fenced_blocks(text):
    """(kind, body, the paragraph before it) of each fenced block."""
    found, body, kind, before = [], None, None, []
    for line in text.splitlines():
        fence = re.match(r"^```(\w*)", line)
        if fence and body is None:
            body, kind = [], fence.group(1)
        elif fence:
            found.append((kind, "\n".join(body), " ".join(before[-3:])))
            body, before = None, []
        elif body is not None:
            body.append(line)
        else:
            before = before + [line] if line.strip() else []
    return found
