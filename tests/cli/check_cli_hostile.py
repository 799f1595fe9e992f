#!/usr/bin/python3
"""The packwise command under hostile input (issue 13): every check runs the built tool.

usage: check_cli_hostile.py GROUP PACKWISE DATA_DIR WORK_DIR [PRELOAD]

Groups (one ctest test each):
  args     bad option values (names, numbers past 2^63, signs, blanks, junk): exit 2 and one
           line naming the option and the text as typed
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

    # Every numeric option: a number past 2^63 is refused (it was clamped to 2^63 - 1 and
    # then reported or used as that), and so are a sign, blanks and trailing junk (strtoll
    # skipped leading blanks and took '+'). The message quotes the text as typed.
    m = os.path.join(DATA, "ggml", "fixture_s1_in768_out40.gguf")
    o = os.path.join(WORK, "out.bin")
    huge = "99999999999999999999"
    numeric = [
        (["fixtures", "--format", "Q4_0", "-o", o, "--rows"], "--rows"),
        (["fixtures", "--format", "Q4_0", "-o", o, "--blocks"], "--blocks"),
        (["verify", "--format", "Q4_0", "--rows", "2", "--order", "kernel", o, "--blocks"], "--blocks"),
        (["prepack", m, "-o", o, "--threads"], "--threads"),
        (["prepack", m, "-o", o, "--chunk-mib"], "--chunk-mib"),
        (["matmul", m, "W.q4_0", "--x", o, "-o", o, "--threads"], "--threads"),
        (["matmul", m, "W.q4_0", "--x", o, "-o", o, "--repeat"], "--repeat"),
        (["synth", "-o", o, "--layers"], "--layers"),
        (["synth", "-o", o, "--dim"], "--dim"),
        (["synth", "-o", o, "--ffn"], "--ffn"),
        (["synth", "-o", o, "--seed"], "--seed"),
        (["bench", "--quick", "--batch"], "--batch"),
        (["bench", "--quick", "--threads"], "--threads"),
    ]
    for args, opt in numeric:
        for bad in [huge, "18446744073709551621", " 5", "+5", "5 ", "5x", "0x10", "-3", "", "1e3"]:
            if bad == "" and args[0] == "bench":
                continue  # a list: "empty list"
            one_line_usage_error(args + [bad], opt, "'%s'" % bad)
            rc, _, err = run(args + [bad])
            check(b"9223372036854775807" not in err, "%s %r: message names the clamped value: %r"
                  % (opt, bad, err))
    for bad in ["row_tiled_" + huge, "row_tiled_+4", "row_tiled_ 4", "row_tiled_4x"]:
        one_line_usage_error(["fixtures", "--format", "Q4_0", "--rows", "8", "-o", o, "--order", bad],
                             "--order", "'%s'" % bad)
    one_line_usage_error(["bench", "--quick", "--shapes", "64x" + huge], "--shapes", huge)


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
