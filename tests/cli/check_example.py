#!/usr/bin/env python3
"""Run examples/gguf_matmul on a ggml fixture, without and then with a weights cache.

Without a cache, loading shows one adapter event per packed weight and no step shows
any (prepared once, at load). After `packwise prepack`, a run with the cache shows no
adapter at all and one "served from the cache file" event per packed weight.

usage: check_example.py EXAMPLE PACKWISE MODEL.gguf WORK_DIR"""
import os
import re
import subprocess
import sys


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    print("$ " + " ".join(cmd))
    print(p.stdout + p.stderr)
    if p.returncode != 0:
        raise SystemExit(1)
    return p.stdout


def steps(out):
    """The load section, then one section per step."""
    return re.split(r"^step \d+$", out, flags=re.M)


def main():
    example, packwise, model, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    cache = os.path.join(work, "model.pwc")
    if os.path.exists(cache):
        os.unlink(cache)
    first = steps(run([example, model, "3", cache]))
    adapters = re.findall(r"trace adapter tensor=(\S+)", first[0])
    ok = len(first) == 4 and len(adapters) > 0 and len(adapters) == len(set(adapters))
    ok &= all("trace adapter" not in s for s in first[1:])
    run([packwise, "prepack", model, "-o", cache])
    second = run([example, model, "3", cache])
    served = re.findall(r"trace cache tensor=(\S+) reason=\"served from the cache file\"", second)
    ok &= "trace adapter" not in second and sorted(served) == sorted(adapters)
    print("without cache: %d adapters (one per packed weight) at load, none in a step; with cache: %d adapters, "
          "%d weights served from the file" % (len(adapters), second.count("trace adapter"), len(served)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
