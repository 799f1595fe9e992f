#!/usr/bin/env python3
"""packwise matmul against ggml's own results (issue 4, Must show 2).

For every weight W.<type> in the ggml-written fixtures and every kernel that
`packwise formats --json` lists for that format on this CPU (reference
included), run `packwise matmul FILE W.<type> --x FILE:x --kernel K` and
compare with yexact.<type> (a double-precision product of ggml's own
dequantized weight with x). The relative RMS error must be within twice
ggml's own y-versus-yexact error, as MANIFEST.txt lists it.

At a forced level (PACKWISE_ISA set, not native) only that level's own kernels
run (the name's last part starts with the level: q4_0_rm_avx2 at avx2; the
reference kernels, ref_*, at scalar): the native run covers every kernel, and each
lower level's run its own (as test_kernels does). A level with none of its own
on this CPU checks every kernel listed.

usage: check_matmul_ggml.py PACKWISE DATA_DIR WORK_DIR
"""
import json
import os
import re
import subprocess
import sys

import numpy as np


def manifest_errors(path):
    """{(file, type): y_vs_yexact} from MANIFEST.txt."""
    errors, current = {}, None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"FILE (\S+)", line)
        if m:
            current = m.group(1)
            continue
        m = re.match(r"\s+(\S+)\s+block=.*y_vs_yexact=(\S+)", line)
        if m and current:
            errors[(current, m.group(1))] = float(m.group(2))
    return errors


def own_level(kernels, level):
    """The kernels of level alone, or all of them where level is native or names none."""
    if not level or level == "native":
        return kernels

    def mine(k):
        return k.rsplit("_", 1)[-1].startswith(level) or (level == "scalar" and k.startswith("ref_"))

    own = {f: [k for k in ks if mine(k)] for f, ks in kernels.items()}
    return own if any(own.values()) else kernels


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
    return p.stdout


def main():
    packwise, data, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    errors = manifest_errors(os.path.join(data, "MANIFEST.txt"))
    kernels = {f["name"].lower(): f["kernels"] for f in json.loads(run([packwise, "formats", "--json"]))}
    kernels = own_level(kernels, os.environ.get("PACKWISE_ISA", ""))
    failures, checked = 0, 0
    for (fname, ftype), ggml_err in sorted(errors.items()):
        path = os.path.join(data, fname)
        yexact_path = os.path.join(work, "yexact.bin")
        run([packwise, "dequant", path, "yexact." + ftype, "-o", yexact_path])
        yexact = np.fromfile(yexact_path, dtype="<f4").astype(np.float64)
        for kernel in kernels[ftype.lower()]:
            if "_ibm_" in kernel:
                continue  # reads input-block-major bytes only; a file holds row-major (test_kernels)
            out = os.path.join(work, "y.bin")
            run([packwise, "matmul", path, "W." + ftype, "--x", path + ":x", "--kernel", kernel, "-o", out])
            y = np.fromfile(out, dtype="<f4").astype(np.float64)
            rel = np.sqrt(np.mean((y - yexact) ** 2)) / np.sqrt(np.mean(yexact ** 2))
            ok = y.shape == yexact.shape and rel <= 2 * ggml_err
            checked += 1
            print("%-40s %-8s %-26s rel_rms=%.3e ggml=%.3e %s"
                  % (fname, ftype, kernel, rel, ggml_err, "ok" if ok else "FAIL"))
            if not ok:
                failures += 1
    print("%d cases, %d failures" % (checked, failures))
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
