"""The Python tests' one checker, as tests/check.h is the C tests': each check counts,
a failed one says what, and `done()` prints the tally and gives the exit status.

    from pycheck import Checks
    t = Checks("readme_check")
    t.check(cond, "what must hold")
    sys.exit(t.done())
"""
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
