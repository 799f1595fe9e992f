#!/usr/bin/env python3
"""`packwise fixtures`, an independent conversion, then `packwise verify` (issue 7, Must show 3).

For every format: write the canonical tag fixture with `packwise fixtures`,
convert it to the kernel order (input-block-major) with a small Python loop
over the bytes, and check that `packwise verify --order kernel` accepts it
(exit 0). Then a deliberately wrong conversion (rows rotated inside each input
block) must fail with exit 1 and a message naming the first
misplaced block, its expected flat index and the order.

usage: check_fixtures_cli.py PACKWISE WORK_DIR
"""
import json
import os
import subprocess
import sys

ROWS, BLOCKS = 7, 3


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def convert(canon, bb, wrong=False):
    """Canonical -> kernel order (b * rows + o). The wrong version makes a classic slip:
    it rotates the rows inside each input block (o + 1), a permutation that still looks fine."""
    out = bytearray(len(canon))
    for o in range(ROWS):
        for b in range(BLOCKS):
            dst = b * ROWS + ((o + 1) % ROWS if wrong else o)
            out[dst * bb:(dst + 1) * bb] = canon[(o * BLOCKS + b) * bb:(o * BLOCKS + b + 1) * bb]
    return bytes(out)


def main():
    packwise, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    formats = json.loads(run([packwise, "formats", "--json"]).stdout)
    failures = 0
    for f in formats:
        name, bb = f["name"], f["block_bytes"]
        canon_path = os.path.join(work, name + ".canonical.bin")
        p = run([packwise, "fixtures", "--format", name, "--rows", str(ROWS), "--blocks", str(BLOCKS),
                 "--order", "canonical", "-o", canon_path])
        if p.returncode != 0:
            print("%s: fixtures failed: %s" % (name, p.stderr)); failures += 1; continue
        canon = open(canon_path, "rb").read()
        good = os.path.join(work, name + ".kernel.bin")
        open(good, "wb").write(convert(canon, bb))
        verify = [packwise, "verify", "--format", name, "--rows", str(ROWS), "--blocks", str(BLOCKS),
                  "--order", "kernel"]
        p = run(verify + [good])
        ok_good = p.returncode == 0
        bad = os.path.join(work, name + ".wrong.bin")
        open(bad, "wb").write(convert(canon, bb, wrong=True))
        q = run(verify + [bad])
        ok_bad = (q.returncode == 1 and "expected at flat index" in q.stdout
                  and "(input_block_major)" in q.stdout and "block (" in q.stdout)
        print("%-7s good: exit %d %s| wrong: exit %d %s" % (name, p.returncode, p.stdout.strip(),
                                                           q.returncode, q.stdout.strip()))
        failures += (not ok_good) + (not ok_bad)
    # Value fixtures in kernel order: written in that order, verified in it, refused in the
    # other (named as the other order), and --rows/--blocks refused with --values.
    for name in (f["name"] for f in formats):
        out = os.path.join(work, name + ".values.kernel.bin")
        vals = os.path.join(work, name + ".values.f32")
        w = run([packwise, "fixtures", "--format", name, "--order", "kernel", "-o", out, "--values", vals])
        canon = os.path.join(work, name + ".values.canonical.bin")
        c = run([packwise, "fixtures", "--format", name, "-o", canon, "--values", vals])
        k_ok = run([packwise, "verify", "--format", name, "--values", "--order", "kernel", out])
        k_bad = run([packwise, "verify", "--format", name, "--values", "--order", "canonical", out])
        c_ok = run([packwise, "verify", "--format", name, "--values", "--order", "canonical", canon])
        differs = open(out, "rb").read() != open(canon, "rb").read() if w.returncode == 0 else False
        ok = (w.returncode == 0 and c.returncode == 0 and k_ok.returncode == 0 and c_ok.returncode == 0
              and k_bad.returncode == 1 and "the bytes are in the other order" in k_bad.stdout and differs)
        if not ok:
            print("%-7s values: write %d, kernel %d %s| canonical %d %s| differs %s" % (
                name, w.returncode, k_ok.returncode, k_ok.stdout.strip(), k_bad.returncode,
                k_bad.stdout.strip(), differs))
        failures += not ok
    r = run([packwise, "fixtures", "--format", "Q4_0", "--rows", "4", "-o", os.path.join(work, "x"),
             "--values", os.path.join(work, "y")])
    failures += not (r.returncode == 2 and "--rows" in r.stderr)
    print("%d formats, %d failures" % (len(formats), failures))
    return 1 if failures or not formats else 0


if __name__ == "__main__":
    sys.exit(main())
