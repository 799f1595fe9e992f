"""Run by check_python_install.sh with a clean environment: `import packwise` must come from
the installed package and load the installed library, then run a prepared-weight product on it
(packwise.Weight: prepared once, run many times, on a Context with trace events).

usage: python3 check_installed.py PACKAGE_ROOT LIBRARY_ROOT [--dist]
  PACKAGE_ROOT  packwise/__init__.py must lie under this folder (the prefix, or the venv)
  LIBRARY_ROOT  every libpackwise mapped into this process must lie under this folder
  --dist        the package was installed by pip: its metadata version must equal the
                library's pw_version()
"""
import os
import sys

import numpy as np


def under(path, root):
    path, root = os.path.realpath(path), os.path.realpath(root)
    return os.path.commonpath([path, root]) == root


def main():
    pkg_root, lib_root = sys.argv[1], sys.argv[2]
    for var in ("PACKWISE_LIBRARY", "LD_LIBRARY_PATH", "LD_PRELOAD"):
        if var in os.environ:
            sys.exit("FAIL: %s is set; this check runs with a clean environment" % var)
    import packwise

    print("packwise %s from %s, library %s" % (packwise.version(), packwise.__file__,
                                               packwise.library_path))
    if not under(packwise.__file__, pkg_root):
        sys.exit("FAIL: packwise was imported from %s, outside %s" % (packwise.__file__, pkg_root))
    if not under(packwise.library_path, lib_root):
        sys.exit("FAIL: packwise loaded %s, outside %s" % (packwise.library_path, lib_root))
    with open("/proc/self/maps", encoding="utf-8") as f:
        mapped = {line.split(None, 5)[5].strip() for line in f
                  if len(line.split(None, 5)) == 6 and "libpackwise" in line}
    if not mapped:
        sys.exit("FAIL: no libpackwise is mapped into the process")
    for path in sorted(mapped):
        if not under(path, lib_root):
            sys.exit("FAIL: %s is mapped, outside %s" % (path, lib_root))

    # A Q8_0 weight [8, 96]: three blocks per row, each an f16 scale and 32 int8 values.
    out, in_, n = 8, 96, 4
    rng = np.random.default_rng(17)
    scales = (rng.uniform(0.5, 2.0, size=(out, in_ // 32)) / 64).astype(np.float16)
    qs = rng.integers(-127, 128, size=(out, in_ // 32, 32), dtype=np.int8)
    blocks = np.zeros((out, in_ // 32), dtype=[("d", "<f2"), ("qs", "i1", 32)])
    blocks["d"], blocks["qs"] = scales, qs
    data = blocks.tobytes()
    w = (scales.astype(np.float32)[:, :, None] * qs.astype(np.float32)).reshape(out, in_)
    if not np.array_equal(packwise.decode(data, "Q8_0", out, in_, order="canonical"), w):
        sys.exit("FAIL: the decoded Q8_0 weight differs from numpy's")
    x = rng.standard_normal((n, in_)).astype(np.float32)
    # The prepared-weight operator: planned and packed once, run many times, on a context
    # of its own (two threads, trace events kept as Python objects).
    ctx = packwise.Context(threads=2, trace=True)
    with packwise.Weight(data, "Q8_0", out, in_, order="canonical", name="q8", context=ctx) as wt:
        wt.prepare()
        kinds = sorted({e.kind for e in ctx.events()})
        if "kernel" not in kinds and "fallback" not in kinds:
            sys.exit("FAIL: preparing the weight traced no kernel choice (events: %s)" % ctx.events())
        y = wt(x)
        for again in range(3):
            if not np.array_equal(wt(x), y):
                sys.exit("FAIL: run %d of the prepared weight differs from the first" % (again + 2))
        if not np.array_equal(wt(x.astype(np.float16)), wt(x.astype(np.float16).astype(np.float32))):
            sys.exit("FAIL: f16 X differs from the same values as f32")
        info = wt.info
    if not np.array_equal(packwise.matmul_wt(x, data, "Q8_0", out, in_, order="canonical",
                                             kernel=info.kernel_gemm), y):
        sys.exit("FAIL: the prepared weight differs from the one-shot product with its kernel (%s)"
                 % info.kernel_gemm)
    want = x.astype(np.float64) @ w.T.astype(np.float64)
    # The kernels quantize x to 8 bits per 32-value block: each x_j moves by at most half a
    # step, amax(block)/254; twice that bounds every element, plus f32 rounding.
    amax = np.abs(x).reshape(n, in_ // 32, 32).max(axis=2).repeat(32, axis=1)
    bound = (amax / 127) @ np.abs(w.T).astype(np.float64) + 1e-5 * (np.abs(x) @ np.abs(w.T))
    err = np.abs(y.astype(np.float64) - want)
    rel = np.sqrt(np.mean(err ** 2) / np.mean(want ** 2))
    if y.shape != (n, out) or not np.all(err <= bound) or not rel < 1e-2:
        sys.exit("FAIL: Y = X W^T off numpy's: max error %g (bound %g), relative rms %g"
                 % (err.max(), bound.min(), rel))
    print("prepared Q8_0 [%d, %d] (%s, %s; trace: %s) x %d rows: relative rms error %.2e"
          % (out, in_, info.kernel_gemv, info.kernel_gemm, ", ".join(kinds), n, rel))

    if "--dist" in sys.argv[3:]:
        from importlib import metadata
        dist = metadata.version("packwise")
        if dist != packwise.version():
            sys.exit("FAIL: the package says version %s, the library %s (bindings/python/"
                     "pyproject.toml and project() in CMakeLists.txt must agree)"
                     % (dist, packwise.version()))
    print("ok")


if __name__ == "__main__":
    main()
