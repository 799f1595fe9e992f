#!/usr/bin/python3
"""The packwise command under hostile input (issue 13): every check runs the built tool.

usage: check_cli_hostile.py GROUP PACKWISE DATA_DIR WORK_DIR [PRELOAD]

Groups (one ctest test each):
  args     bad option values: exit 2 and one line naming the option and the text as typed
"""
import os
import subprocess
import sys

FAILURES = []
TIMEOUT = 60


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(args, env=None, timeout=TIMEOUT, stdin=subprocess.DEVNULL):
    """Run packwise ARGS; returns (rc, stdout, stderr); rc None when it timed out."""
    e = dict(os.environ)
    if env:
        e.update(env)
    try:
        p = subprocess.run([PW] + args, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=e, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, b"", b"timed out"
    return p.returncode, p.stdout, p.stderr


def one_line_usage_error(args, *needles, what=None):
    """ARGS exits 2 with a single stderr line holding every needle."""
    rc, _, err = run(args)
    text = err.decode(errors="replace")
    ok = rc == 2 and text.count("\n") == 1 and all(n in text for n in needles)
    check(ok, "%s: expected exit 2 and one line with %r, got %s: %r"
          % (what or " ".join(args), needles, rc, text))


def group_args():
    # The format list is parsed from a copy that is freed afterwards: the message must
    # still quote what was typed (it printed freed memory).
    one_line_usage_error(["synth", "-o", os.path.join(WORK, "s.gguf"), "--formats", "Q4_0,Q9"],
                         "'Q9'")
    one_line_usage_error(["synth", "-o", os.path.join(WORK, "s.gguf"), "--formats", "Q9_LONG_NAME"],
                         "'Q9_LONG_NAME'")


GROUPS = {"args": group_args}

if __name__ == "__main__":
    if len(sys.argv) < 5 or sys.argv[1] not in GROUPS:
        sys.exit(__doc__)
    GROUP, PW, DATA, WORK = sys.argv[1:5]
    PRELOAD = sys.argv[5] if len(sys.argv) > 5 else ""
    os.makedirs(WORK, exist_ok=True)
    GROUPS[GROUP]()
    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        sys.exit(1)
    print("cli_hostile %s: ok" % GROUP)
