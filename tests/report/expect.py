#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""expect.py -- runs a command and requires its exit status and, when given,
a text in its output (stdout and stderr together).

Why not ctest's PASS_REGULAR_EXPRESSION: it replaces the exit-status check,
so a validator that crashed while printing the expected words would pass.
Here both must hold.

usage: expect.py STATUS [TEXT] -- COMMAND [ARGS...]
"""
import subprocess
import sys


def main(argv):
    if "--" not in argv or argv.index("--") < 2:
        sys.stderr.write(__doc__)
        return 2
    sep = argv.index("--")
    want = int(argv[1])
    text = argv[2] if sep > 2 else None
    cmd = argv[sep + 1:]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    sys.stdout.write(p.stdout)
    if p.returncode != want:
        print("expect.py: exit status %d, expected %d: %s" % (p.returncode, want, " ".join(cmd)))
        return 1
    if text is not None and text not in p.stdout:
        print("expect.py: output lacks %r" % text)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
