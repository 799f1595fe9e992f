#!/usr/bin/python3
"""The packwise command under hostile input (issue 13): every check runs the built tool.

usage: check_cli_hostile.py GROUP PACKWISE DATA_DIR WORK_DIR [PRELOAD]

Groups (one ctest test each):
  args     --help of every subcommand; bad option values (names, numbers past 2^63, signs, blanks, junk): exit 2 and one
           line naming the option and the text as typed
  outputs  an output that is an input (path, symlink, hard link), a folder, a FIFO or a
           device: refused or written in place as each command documents, inputs intact
  enospc   a full file system (PRELOAD: tests/support/enospc_preload.c, then a 16 KiB tmpfs
           where a private mount namespace is allowed): exit 2 naming the path, no partial file
  inputs   a FIFO with no writer, /dev/zero and a folder as every input: an answer within 20 s
"""
import os
import shutil
import stat
import struct
import subprocess
import sys
import threading

FAILURES = []
TIMEOUT = 60


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(args, env=None, timeout=TIMEOUT, stdin=subprocess.DEVNULL, cwd=None):
    """Run packwise ARGS (in cwd); returns (rc, stdout, stderr); rc None when it timed out."""
    e = dict(os.environ)
    if env:
        e.update(env)
    try:
        p = subprocess.run([PW] + args, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=e, timeout=timeout, cwd=cwd)
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
    # Every subcommand answers --help (and -h) with its usage on stdout, exit 0 (DESIGN.md);
    # the commands that write files say what happens to special outputs.
    for cmd in ["formats", "inspect", "dequant", "matmul", "prepack", "fixtures", "verify", "bench",
                "synth"]:
        for flag in ["--help", "-h"]:
            rc, out, err = run([cmd, flag])
            check(rc == 0 and out.startswith(b"usage: packwise " + cmd.encode()) and err == b"",
                  "%s %s: exit %s, stdout %r, stderr %r" % (cmd, flag, rc, out[:80], err[:200]))
        rc, out, _ = run([cmd, "--help"])
        if cmd in ("dequant", "matmul", "fixtures"):
            check(b"written in place" in out and b"folder is refused" in out, "%s --help: %r" % (cmd, out))
        if cmd in ("prepack", "synth"):
            check(b"refused" in out and b"left alone" in out, "%s --help: %r" % (cmd, out))
    # "--help" as an option's value is that value, not help: `synth -o --help` writes a
    # file named --help, once, from main (the parse ran the command itself and printed the
    # help footer; the command-line fuzz target, which only parses, wrote a GGUF).
    d = os.path.join(WORK, "help_as_value")
    os.makedirs(d, exist_ok=True)
    target = os.path.join(d, "--help")
    if os.path.exists(target):
        os.remove(target)
    rc, out, err = run(["synth", "-o", "--help", "--layers", "1", "--dim", "64", "--ffn", "64",
                        "--formats", "Q4_0"], cwd=d)
    check(rc == 0 and os.path.isfile(target) and os.path.getsize(target) > 0 and b"Exit codes" not in out
          and b"usage" not in out, "synth -o --help: exit %s, file %s, stdout %r, stderr %r"
          % (rc, os.path.exists(target), out[:200], err[:200]))
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


def fresh_dir(name):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def entries(d):
    return sorted(os.listdir(d))


def no_temporaries(d, what):
    left = [e for e in os.listdir(d) if ".tmp." in e]
    check(not left, "%s: temporaries left behind: %s" % (what, left))


def kind(path):
    try:
        return stat.S_IFMT(os.lstat(path).st_mode)
    except FileNotFoundError:
        return None


def read(path):
    with open(path, "rb") as f:
        return f.read()


def make_device(path):
    """A character device node (the null device's numbers) where the system allows it."""
    try:
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        return True
    except (PermissionError, OSError):
        return False


MODEL = "fixture_s1_in768_out40.gguf"


def group_outputs():
    """Outputs: refused when they are an input (path, symlink, hard link) or a folder;
    prepack, synth and --plot refuse every special file; dequant, matmul and fixtures write
    a character device or FIFO in place; a symlink's target is replaced, the link kept."""
    d = fresh_dir("outputs")
    m = os.path.join(d, "m.gguf")
    shutil.copy(os.path.join(DATA, "ggml", MODEL), m)
    model = read(m)
    os.symlink("m.gguf", os.path.join(d, "link.gguf"))
    os.link(m, os.path.join(d, "hard.gguf"))
    x = os.path.join(d, "x.f32")
    with open(x, "wb") as f:
        f.write(struct.pack("<768f", *[0.25] * 768))
    xbytes = read(x)
    cache = os.path.join(d, "m.pwc")
    rc, _, err = run(["prepack", m, "-o", cache])
    check(rc == 0, "prepack: %s %r" % (rc, err))
    cbytes = read(cache)
    before = entries(d)
    for out in ["m.gguf", "link.gguf", "hard.gguf"]:
        o = os.path.join(d, out)
        for args in (["dequant", m, "W.q4_0", "-o", o], ["prepack", m, "-o", o],
                     ["matmul", m, "W.q4_0", "--x", x, "-o", o]):
            one_line_usage_error(args, "'%s'" % o, "same file", what="%s -o %s" % (args[0], out))
            check(read(m) == model, "%s -o %s changed the model" % (args[0], out))
            check(kind(os.path.join(d, "link.gguf")) == stat.S_IFLNK, "the symlink was replaced")
    # Every input of matmul: X (raw, or FILE.gguf:TENSOR), the cache.
    for args, o, keep in ((["--x", x], x, xbytes), (["--x", x, "--cache", cache], cache, cbytes),
                          (["--x", os.path.join(d, "link.gguf") + ":x"], m, model)):
        one_line_usage_error(["matmul", m, "W.q4_0"] + args + ["-o", o], "'%s'" % o, "same file")
        check(read(o) == keep, "matmul -o %s changed it" % o)
    check(entries(d) == before, "outputs: the folder changed: %s -> %s" % (before, entries(d)))

    # Special destinations. prepack, synth and bench --plot refuse every one and leave it.
    os.mkfifo(os.path.join(d, "fifo"))
    os.mkdir(os.path.join(d, "folder"))
    have_dev = make_device(os.path.join(d, "dev"))
    specials = [("fifo", stat.S_IFIFO), ("folder", stat.S_IFDIR)] + ([("dev", stat.S_IFCHR)] if have_dev else [])
    have_gnuplot = shutil.which("gnuplot") is not None
    for name, k in specials:
        o = os.path.join(d, name)
        cmds = [["prepack", m, "-o", o], ["synth", "-o", o, "--layers", "1", "--dim", "256", "--ffn", "256"]]
        if have_gnuplot:
            cmds.append(["bench", "--quick", "--formats", "Q8_0", "--batch", "1", "--threads", "1", "--plot", o])
        for args in cmds:
            one_line_usage_error(args, "'%s'" % o, what="%s onto %s" % (args[0], name))
            check(kind(o) == k, "%s replaced %s" % (args[0], name))
        # dequant, matmul and fixtures refuse a folder and write the others in place.
    o = os.path.join(d, "folder")
    for args in (["dequant", m, "W.q4_0", "-o", o], ["matmul", m, "W.q4_0", "--x", x, "-o", o],
                 ["fixtures", "--format", "Q4_0", "-o", o]):
        one_line_usage_error(args, "'%s'" % o, "directory")
    if have_dev:
        for args in (["dequant", m, "W.q4_0", "-o"], ["matmul", m, "W.q4_0", "--x", x, "-o"],
                     ["fixtures", "--format", "Q4_0", "-o"]):
            rc, _, err = run(args + [os.path.join(d, "dev")])
            check(rc == 0 and kind(os.path.join(d, "dev")) == stat.S_IFCHR,
                  "%s -o a device: %s %r" % (args[0], rc, err))
    rc, _, err = run(["dequant", m, "W.q4_0", "-o", "/dev/null"])
    check(rc == 0, "dequant -o /dev/null: %s %r" % (rc, err))
    # A FIFO with a reader gets the same bytes a file does.
    ref = os.path.join(d, "w.f32")
    rc, _, err = run(["dequant", m, "W.q4_0", "-o", ref])
    check(rc == 0, "dequant: %s %r" % (rc, err))
    got = {}

    def reader():
        with open(os.path.join(d, "fifo"), "rb") as f:
            got["bytes"] = f.read()
    t = threading.Thread(target=reader)
    t.start()
    rc, _, err = run(["dequant", m, "W.q4_0", "-o", os.path.join(d, "fifo")])
    t.join(TIMEOUT)
    check(rc == 0 and got.get("bytes") == read(ref), "dequant -o FIFO: %s %r" % (rc, err))
    rc, out, err = run(["dequant", m, "W.q4_0", "-o", "-"])
    check(rc == 0 and out == read(ref), "dequant -o -: %s %r" % (rc, err))

    # A symlink destination: its target is replaced, the link stays.
    os.symlink("w.f32", os.path.join(d, "wl.f32"))
    with open(ref, "wb") as f:
        f.write(b"old")
    rc, _, err = run(["dequant", m, "W.q4_0", "-o", os.path.join(d, "wl.f32")])
    check(rc == 0 and kind(os.path.join(d, "wl.f32")) == stat.S_IFLNK and len(read(ref)) == 40 * 768 * 4,
          "dequant -o a symlink: %s %r" % (rc, err))
    # fixtures: -o and --values naming one file.
    f1 = os.path.join(d, "fx.bin")
    for v in (f1, os.path.join(d, ".", "fx.bin")):
        one_line_usage_error(["fixtures", "--format", "Q4_0", "-o", f1, "--values", v], "same file")
        check(not os.path.exists(f1), "fixtures -o X --values X wrote X")
    no_temporaries(d, "outputs")


def writing_commands(d, m, x):
    """(name, args, output paths, writes more than 64 KiB) for every writing command. Outputs
    are listed so the test can check each is absent or intact afterwards."""
    o = lambda n: os.path.join(d, n)
    cmds = [
        ("dequant", ["dequant", m, "W.q4_0", "-o", o("w.f32")], [o("w.f32")], True),
        ("matmul", ["matmul", m, "W.q4_0", "--x", x, "-o", o("y.f32")], [o("y.f32")], True),
        # fastest: every form a weight may use (under compact a model this small has
        # none, and its cache is a bare header of 4 KiB)
        ("prepack", ["prepack", m, "-o", o("m.pwc"), "--policy", "fastest"], [o("m.pwc")], True),
        ("fixtures", ["fixtures", "--format", "Q6_K", "--rows", "64", "--blocks", "8", "-o", o("t.bin")],
         [o("t.bin")], True),
        ("fixtures --values", ["fixtures", "--format", "Q8_0", "-o", o("v.bin"), "--values", o("v.f32")],
         [o("v.bin"), o("v.f32")], False),
        ("synth", ["synth", "-o", o("s.gguf"), "--layers", "1", "--dim", "256", "--ffn", "512"],
         [o("s.gguf")], True),
    ]
    if shutil.which("gnuplot"):
        cmds.append(("bench --plot", ["bench", "--quick", "--formats", "Q8_0", "--batch", "1",
                                      "--threads", "1", "--plot", o("p.svg")], [o("p.svg")], False))
    return cmds


def failed_cleanly(name, rc, err, outputs, old, d, what):
    """Exit 2, the failing output's path and the reason in the message, every output either
    absent or holding its old bytes, no temporary left."""
    text = err.decode(errors="replace")
    check(rc == 2, "%s %s: exit %s, expected 2: %r" % (name, what, rc, text))
    check(any("'%s'" % p in text or "%s:" % p in text for p in outputs),
          "%s %s: the message names none of %s: %r" % (name, what, outputs, text))
    check("No space left on device" in text or "gnuplot" in text,
          "%s %s: the message does not say why: %r" % (name, what, text))
    for p in outputs:
        now = read(p) if os.path.exists(p) else None
        check(now == old.get(p), "%s %s: %s is %s" % (name, what, p,
              "a partial file" if old.get(p) is None else "changed"))
    no_temporaries(d, "%s %s" % (name, what))


def preload_env(name, env):
    """env with the preload; gnuplot inherits it, and with the ASan runtime in it LeakSanitizer
    would fail gnuplot for gnuplot's own leaks."""
    e = dict(env, LD_PRELOAD=PRELOAD)
    if name == "bench --plot":
        e["ASAN_OPTIONS"] = "detect_leaks=0"
    return e


def group_enospc():
    """A full file system: every writing command exits 2 naming the path and leaves no partial
    file (the old one intact). Injected with the preload library at several points (first
    write, one byte in, 4 KiB in, and at fsync), then on a real 16 KiB tmpfs where the
    machine lets the test mount one in a private namespace."""
    if not PRELOAD or not all(os.path.exists(p) for p in PRELOAD.split(":")):
        sys.exit("enospc: the preload library %r is missing" % PRELOAD)
    d = fresh_dir("enospc")
    m = os.path.join(DATA, "ggml", MODEL)
    x = os.path.join(d, "x.f32")
    with open(x, "wb") as f:
        f.write(struct.pack("<%df" % (768 * 512), *([0.5] * (768 * 512))))
    inputs = {x: read(x)}
    for name, args, outputs, big in writing_commands(d, m, x):
        for env, what in (({"PW_ENOSPC_AFTER": "0"}, "failing at the first byte"),
                          ({"PW_ENOSPC_AFTER": "1"}, "failing after 1 byte"),
                          ({"PW_ENOSPC_AFTER": "4096"}, "failing after 4 KiB"),
                          ({"PW_ENOSPC_FSYNC": "1"}, "failing at fsync")):
            if not big and what == "failing after 4 KiB":
                continue  # it writes less
            # gnuplot writes the chart through stdio, which the preload cannot reach, and each
            # run measures for seconds: the temporary's fsync is the point checked.
            if name == "bench --plot" and what != "failing at fsync":
                continue
            for existing in (False, True):
                old = {}
                for p in outputs:
                    if existing:
                        with open(p, "wb") as f:
                            f.write(b"old bytes of " + p.encode())
                        old[p] = read(p)
                    elif os.path.exists(p):
                        os.unlink(p)
                rc, _, err = run(args, env=preload_env(name, env))
                failed_cleanly(name, rc, err, outputs, old, d,
                               what + (" over an old file" if existing else ""))
        for p in outputs:
            if os.path.exists(p):
                os.unlink(p)
        # Without the failure the same command works (the injection is what failed it).
        rc, _, err = run(args, env=preload_env(name, {}))
        check(rc == 0, "%s without a failure under the preload: %s %r" % (name, rc, err))
    check(read(x) == inputs[x], "an input changed")

    # fixtures --all: every file it leaves is complete (equal to an unhindered run's) and
    # MANIFEST.txt, written last, is absent.
    ref = os.path.join(d, "all-ref")
    rc, _, err = run(["fixtures", "--all", ref])
    check(rc == 0, "fixtures --all: %s %r" % (rc, err))
    for after in ("0", "100", "20000"):
        a = os.path.join(d, "all-" + after)
        rc, _, err = run(["fixtures", "--all", a], env={"LD_PRELOAD": PRELOAD, "PW_ENOSPC_AFTER": after})
        text = err.decode(errors="replace")
        check(rc == 2 and "'%s/" % a in text and "No space left" in text,
              "fixtures --all failing after %s bytes: %s %r" % (after, rc, text))
        check(not os.path.exists(os.path.join(a, "MANIFEST.txt")), "fixtures --all wrote MANIFEST.txt")
        for e in os.listdir(a):
            check(read(os.path.join(a, e)) == read(os.path.join(ref, e)),
                  "fixtures --all failing after %s bytes left %s partial" % (after, e))
        no_temporaries(a, "fixtures --all")

    # A real full file system, where a private mount namespace is allowed.
    if subprocess.run(["unshare", "-rm", "true"], stderr=subprocess.DEVNULL).returncode != 0:
        print("enospc: unshare -rm is not allowed here: the tmpfs part is skipped")
        return
    t = fresh_dir("tmpfs")
    for name, args, outputs, big in writing_commands(t, m, x):
        for full in (True, False):
            if not full and not big:
                continue  # it fits in 16 KiB
            # In the namespace: mount a 16 KiB tmpfs over the folder (filled up with a filler
            # file, or empty), run the command, list what is left.
            script = ('mount -t tmpfs -o size=16k pwtest "$0" || exit 99; %s"$@"; rc=$?; '
                      'echo "rc=$rc"; ls -A "$0"'
                      % ('cat /dev/zero > "$0/filler" 2>/dev/null; ' if full else ''))
            p = subprocess.run(["unshare", "-rm", "sh", "-c", script, t, PW] + args,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
            out = p.stdout.decode(errors="replace").splitlines()
            if p.returncode == 99:
                print("enospc: mounting a tmpfs is not allowed here: the tmpfs part is skipped")
                return
            rcs = [l for l in out if l.startswith("rc=")]
            left = out[out.index(rcs[-1]) + 1:] if rcs else out
            text = p.stderr.decode(errors="replace")
            what = "%s on a %s tmpfs" % (name, "full" if full else "16 KiB")
            check(rcs == ["rc=2"], "%s: %s %r" % (what, rcs, text))
            check(any(o in text for o in outputs) and
                  ("No space left" in text or "gnuplot" in text), "%s: message %r" % (what, text))
            check(left == (["filler"] if full else []), "%s left %s" % (what, left))


def group_inputs():
    """Inputs that never end or never open: a FIFO with no writer (open() blocked), /dev/zero
    (verify read until memory ran out) and a folder. Each command answers within the timeout,
    exit 2 naming the input (verify: a FIFO with no writer is an empty input, exit 1)."""
    d = fresh_dir("inputs")
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    m = os.path.join(DATA, "ggml", MODEL)
    y = os.path.join(d, "y.f32")
    grid = ["--format", "Q4_0", "--rows", "4", "--blocks", "2", "--order", "kernel"]
    for bad in (fifo, "/dev/zero", d):
        cmds = [(["inspect", bad], bad), (["dequant", bad, "x", "-o", y], bad),
                (["prepack", bad, "-o", y + ".pwc"], bad),
                (["matmul", bad, "W.q4_0", "--x", m + ":x", "-o", y], bad),
                (["matmul", m, "W.q4_0", "--x", bad, "-o", y], bad),
                (["matmul", m, "W.q4_0", "--x", m + ":x", "--cache", bad, "-o", y], bad)]
        if bad != d:
            # a FIFO or device in FILE.gguf:TENSOR form (a folder cannot end in .gguf)
            link = os.path.join(d, "in-%d.gguf" % len(bad))
            if not os.path.lexists(link):
                os.symlink(bad, link)
            cmds.append((["matmul", m, "W.q4_0", "--x", link + ":x", "-o", y], link))
        if bad != fifo:
            cmds.append((["verify"] + grid + [bad], bad))
        for args, named in cmds:
            rc, _, err = run(args, timeout=20)
            text = err.decode(errors="replace")
            check(rc == 2 and named in text and text.count("\n") == 1,
                  "%s: expected exit 2 naming %s within 20 s, got %s: %r" % (" ".join(args), named, rc, text))
        check(not os.path.exists(y), "a refused input left an output")
    rc, out, err = run(["verify"] + grid + [fifo], timeout=20)
    check(rc == 1 and b"0 bytes given, 144 expected: the buffer is short" in out, "verify FIFO without a writer: %s %r %r" % (rc, out, err))
    # verify reads a pipe up to the fixture's size: the fixture agrees, one byte more is refused.
    rc, fx, err = run(["fixtures"] + grid + ["-o", "-"])
    check(rc == 0 and len(fx) == 4 * 2 * 18, "fixtures -o -: %s %r" % (rc, err))
    for data, want in ((fx, 0), (fx[:-1], 1), (fx + b"\0", 2)):
        p = subprocess.run([PW, "verify"] + grid + ["/dev/stdin"], input=data, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=20)
        check(p.returncode == want, "verify of %d piped bytes: %s, expected %s: %r"
              % (len(data), p.returncode, want, p.stderr))
    # A long regular file is still a disagreement that says how long it is (exit 1).
    long_file = os.path.join(d, "long.bin")
    with open(long_file, "wb") as f:
        f.write(fx + fx)
    rc, out, _ = run(["verify"] + grid + [long_file])
    check(rc == 1 and b"288 bytes given, 144 expected: the buffer is long" in out, "verify of a long file: %s %r" % (rc, out))


GROUPS = {"args": group_args, "outputs": group_outputs, "enospc": group_enospc, "inputs": group_inputs}

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
