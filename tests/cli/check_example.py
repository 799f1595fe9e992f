#!/usr/bin/env python3
"""Run examples/gguf_matmul on a ggml fixture: the first step shows one adapter event
per packed weight and the later steps none (prepared once, reused).

usage: check_example.py EXAMPLE MODEL.gguf"""
import re
import subprocess
import sys


def main():
    example, model = sys.argv[1:3]
    p = subprocess.run([example, model, "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    print(p.stdout)
    if p.returncode != 0:
        print(p.stderr)
        return 1
    steps = re.split(r"^step \d+$", p.stdout, flags=re.M)[1:]
    if len(steps) != 3:
        print("expected 3 steps")
        return 1
    adapters = re.findall(r"trace adapter tensor=(\S+)", steps[0])
    ok = len(adapters) > 0 and len(adapters) == len(set(adapters))
    ok &= all("trace adapter" not in s for s in steps[1:])
    print("first step: %d adapters for %d weights; later steps: %d" %
          (len(adapters), len(set(adapters)), sum(s.count("trace adapter") for s in steps[1:])))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
