#!/usr/bin/python3
"""
Arm speed without Arm hardware: an llvm-mca throughput estimate of the inner
loop of every Arm GEMV and GEMM kernel (src/kernel/arm/), a report, not a test.

What it does, per kernel loop:
  1. compiles the kernel's file to assembly with aarch64-linux-gnu-gcc and the
     exact flags of the Release Arm64 build (taken from a configure-only cmake
     tree with compile_commands.json; nothing is built and the code is
     unchanged: no markers);
  2. takes the named function's innermost loop (backward branch, no loop
     inside) holding the most dot-product instructions (SDOT / SMMLA): the
     widest micro-tile's block loop;
  3. runs llvm-mca-19 on it for each model (-mcpu=neoverse-v2 and apple-m1;
     apple-m2, the nearest Apple core with FEAT_I8MM, for the i8mm loops);
  4. turns cycles per loop iteration into cycles per weight byte (GEMV,
     compared with a core's streaming rate) or int8 MACs per cycle (GEMM,
     compared with the core's int8 peak).

It writes docs/arm_mca.md and the "llvm-mca estimate" block of each Arm
kernel file's header comment (--write), or compares both with what is
committed (--check: exit 1 on drift; a report check, no time is asserted).
Without arguments it prints the report.

Needs: aarch64-linux-gnu-gcc (scripts/deps.sh), cmake, and llvm-mca from
Debian's llvm-19 (not in scripts/deps.sh, not used by CI):
    apt-get install llvm-19        # gives /usr/bin/llvm-mca-19
LLVM_MCA=/path/to/llvm-mca overrides the tool (other versions give other
numbers; the committed figures are llvm 19's).
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "arm_mca.md")
ITERATIONS = 500

# Per-core figures the estimates are compared with. B/cycle a core streams
# from DRAM (GEMV) and its int8 multiply-accumulates per cycle (GEMM).
# Sources: docs/arm_mca.md, "Reference figures" (kept in REFERENCE below).
CORES = {
    "neoverse-v2": {"stream": 10.0, "stream_note": "assumed, no source",
                    "peak": {"sdot": 64, "smmla": 128}},
    "apple-m1": {"stream": 18.1, "stream_note": "58 GB/s at 3.2 GHz", "peak": {"sdot": 64}},
    "apple-m2": {"stream": 18.1, "stream_note": "M1's, assumed",
                 "peak": {"sdot": 64, "smmla": 128}},
}
MACS = {"sdot": 16, "smmla": 32, "fmla": 4}  # multiply-adds of one 128-bit instruction

REFERENCE = """\
## Reference figures

| core | streaming rate (one core, B/cycle) | int8 peak (MAC/cycle) |
|---|---|---|
| Neoverse V2 | 10 (assumption, see below) | SDOT 64, SMMLA 128 |
| Apple M1 (Firestorm) | 18.1 (58 GB/s at 3.2 GHz) | SDOT 64; no i8mm |
| Apple M2 (i8mm rows only) | 18.1 (M1's figure, assumed) | SDOT 64, SMMLA 128 (assumed) |

- **Neoverse V2 int8 peak**: four 128-bit FP/ASIMD pipes (V0-V3), each
  taking one SDOT (16 MACs) or one SMMLA (2x2x8 = 32 MACs) per cycle:
  Arm Neoverse V2 Software Optimization Guide (PJDOC-466751330-593177),
  from which LLVM's model (AArch64SchedNeoverseV2.td) is written; the
  model gives the same ceiling (8 independent SDOT or SMMLA: 2.0 cycles).
  NVIDIA's Grace tuning guide also lists "4x 128b SVE2" per V2 core.
- **Neoverse V2 streaming rate: an assumption, not a sourced figure.** No
  single-core DRAM bandwidth measurement of a V2 core (Grace, Graviton 4)
  was found in the sources this report could read. 10 B/cycle (34 GB/s at
  3.4 GHz) is assumed; change CORES in scripts/arm_mca.py and rerun
  --write when a measurement is at hand (every GEMV fraction scales with
  it). The core's L1 ceiling is 48 B/cycle (three 128-bit loads per cycle:
  pipes L01 x2 and L2 in the optimization guide and LLVM's model).
- **Apple M1 streaming rate**: AnandTech, "The 2020 Mac Mini Unleashed:
  Putting Apple Silicon M1 To The Test" (Nov 2020): Firestorm at 3.2 GHz,
  and a single Firestorm core reading memory at about 58 GB/s (the
  article's memory section; quoted from the article, whose bandwidth page
  was not among the excerpts this report could re-read): 58 / 3.2 = 18.1
  B/cycle.
- **Apple M1 int8 peak**: Firestorm has four 128-bit NEON pipes
  (AnandTech's A14/Firestorm microarchitecture article), one SDOT each per
  cycle: 64 MAC/cycle. M1 has no FEAT_I8MM (A15/M2 added it); the i8mm
  loops are run on -mcpu=apple-m2 and their peak of 4 x 32 MACs assumes
  SMMLA is pipelined like SDOT, which Apple does not document.
- **LLVM 19's Apple model**: every Apple CPU (apple-a7 .. apple-m4) uses
  the Cyclone (A7, 2013) scheduling model: 6-wide, three vector pipes, so
  its ceiling is 48 MAC/cycle of SDOT where Firestorm has 64. Apple
  figures here are pessimistic for vector-bound loops; the Neoverse V2
  model is the one written from its core's optimization guide.
"""


class Loop:
    """One kernel loop to estimate."""

    def __init__(self, src, func, label, kernels, kind, dots, wbytes, note="", extra=0,
                 dot=None, level=None):
        self.src = src            # file under src/kernel/arm/
        self.func = func          # assembly function holding the loop
        # its name in the report; level: src is another file built again at that level
        # (q4x_i8mm.c: q4x_dotprod.c with +i8mm), whose functions keep their names
        self.name = func + (" (%s)" % level if level else "")
        self.label = label        # short name of the loop in the report
        self.kernels = kernels    # kernel_list.h names it serves
        self.kind = kind          # "GEMV" or "GEMM"
        self.dots = dots          # dot instructions in one source iteration
        self.wbytes = wbytes      # weight bytes one source iteration reads
        self.note = note
        self.extra = extra        # more dot instructions per iteration that are not the
                                  # product's multiply-adds (QB4W's weight sums)
        self.dot = dot            # the loop's multiply-add instruction where not a dot
                                  # (the float kernels' "fmla"); None: SDOT / SMMLA


def q32(fmt, nbytes):
    return Loop("rm_%s_dotprod.c" % fmt, "%s_row" % fmt,
                "block loop, 2 blocks/iter", ["%s_rm_dotprod" % fmt, "%s_ibm_dotprod" % fmt],
                "GEMV", 4, 2 * nbytes)


def rmf(fmt, ebytes):
    # the float formats' NEON GEMV (rm_float_neon.c): 32 elements a step, eight FMLA
    return Loop("rm_float_neon.c", "%s_rm_neon" % fmt, "element loop, 32/iter",
                ["%s_rm_neon" % fmt], "GEMV", 8, 32 * ebytes, dot="fmla")


def q32o(fmt, nbytes):
    # the other 32-element formats, all in one file (rm_q32_dotprod.c)
    return Loop("rm_q32_dotprod.c", "%s_row" % fmt,
                "block loop, 2 blocks/iter", ["%s_rm_dotprod" % fmt, "%s_ibm_dotprod" % fmt],
                "GEMV", 4, 2 * nbytes)


def sb(fmt, nbytes, dots, src=None):
    # src: the file when it is not rm_<fmt>_dotprod.c (rm_kq_dotprod.c holds four)
    return Loop(src or "rm_%s_dotprod.c" % fmt, "%s_row" % fmt,
                "super-block loop, 256 weights/iter", ["%s_rm_dotprod" % fmt, "%s_ibm_dotprod" % fmt],
                "GEMV", dots, nbytes)


def i8g(g, has_min, formats):
    # one group of a half tile (8 rows) by 4 rows of X: G/16 quads of 32 SDOT;
    # the half's share of the group record (G*16 + corr 64 + scale 64 + min 64 B)
    rec = g * 16 + 128 + (64 if has_min else 0)
    return Loop("i8g_dotprod.c", "micro_g%d%s" % (g, "_min" if has_min else ""),
                "group loop, 8 rows x 4 X rows",
                ["%s_i8g%d_dotprod" % (f, g) for f in formats], "GEMM", 2 * g, rec // 2)


NG_MR = 6  # tile32_neon.h: PW__T32NG_MR, the L1-sum GEMM panels' most rows of X

LOOPS = [
    q32("q4_0", 18),
    q32("q8_0", 34),
    q32o("q4_1", 20),
    q32o("q5_0", 22),
    q32o("q5_1", 24),
    q32o("iq4_nl", 18),
    rmf("f32", 4),
    rmf("f16", 2),
    rmf("bf16", 2),
    sb("q4_k", 144, 16),
    sb("q6_k", 210, 16),
    sb("tq2_0", 66, 16),
    sb("q2_k", 84, 16, "rm_kq_dotprod.c"),
    sb("q3_k", 110, 16, "rm_kq_dotprod.c"),
    sb("q5_k", 176, 16, "rm_kq_dotprod.c"),
    sb("tq1_0", 54, 16, "rm_kq_dotprod.c"),
    i8g(32, 0, ["q4_0", "q5_0", "q8_0", "iq4_nl", "tq1_0", "tq2_0"]),
    i8g(32, 1, ["q4_1", "q5_1", "q4_k", "q5_k"]),
    i8g(16, 0, ["q3_k", "q6_k"]),
    i8g(16, 1, ["q2_k"]),
    # one 32-k group of the 8-row tile by 4 rows of X (two SMMLA pairs): 32 SMMLA;
    # the group record: 8 x 32 int8 + scale 32 (+ min 32) B
    Loop("gemm_i8mm.c", "micro_plain", "group loop, 8 rows x 4 X rows",
         ["%s_i8g32x8k8_i8mm" % f for f in ["q4_0", "q5_0", "q8_0", "iq4_nl", "tq1_0", "tq2_0"]], "GEMM", 32, 288),
    Loop("gemm_i8mm.c", "micro_min", "group loop, 8 rows x 4 X rows",
         ["%s_i8g32x8k8_i8mm" % f for f in ["q4_1", "q5_1", "q4_k", "q5_k"]], "GEMM", 32, 320),
    # 32-row tilings (tile32_neon.h), GEMV: one block record of the tile with one row
    # of X (64 SDOT: 8 steps x 4 q registers x 2 nibbles / x 8 registers); the record,
    # scales included
    Loop("q4x_dotprod.c", "q4xn_run", "record loop, 32 rows x 1 block",
         ["q4_0_q4x32k4_dotprod"], "GEMV", 64, 576),
    Loop("q4x_dotprod.c", "q5xn_run", "record loop, 32 rows x 1 block",
         ["q5_0_q5x32k4_dotprod"], "GEMV", 64, 704),
    Loop("q4x_dotprod.c", "iq4xn_run", "record loop, 32 rows x 1 block",
         ["iq4_nl_iq4x32k4_dotprod"], "GEMV", 64, 576),
    Loop("q4x_dotprod.c", "q41xn_run", "record loop, 32 rows x 1 block",
         ["q4_1_q41x32k4_dotprod"], "GEMV", 64, 640),
    Loop("q4x_dotprod.c", "q51xn_run", "record loop, 32 rows x 1 block",
         ["q5_1_q51x32k4_dotprod"], "GEMV", 64, 768),
    # the same records on i8mm (q4x_i8mm.c, q4x_dotprod.c built again): 32 SDOT on the
    # low nibbles, 32 USDOT on the whole bytes
    Loop("q4x_i8mm.c", "q4xn_run", "record loop, 32 rows x 1 block",
         ["q4_0_q4x32k4_i8mm"], "GEMV", 64, 576, level="i8mm"),
    Loop("q4x_i8mm.c", "q41xn_run", "record loop, 32 rows x 1 block",
         ["q4_1_q41x32k4_i8mm"], "GEMV", 64, 640, level="i8mm"),
    Loop("q8x_dotprod.c", "q8xn_run", "record loop, 32 rows x 1 block",
         ["q8_0_q8x32k4_dotprod"], "GEMV", 64, 1088),
    # GEMM: a quarter of a record (8 rows: one q register a step and nibble / two
    # registers a step) by NG_MR rows of X (tile32_neon.h's PW__T32NG_MR): 16 SDOT a row
    # of X; a quarter of the record's bytes
    Loop("q4x_dotprod.c", "q4xn_gemm_run", "record quarter, 8 rows x %d X rows" % NG_MR,
         ["q4_0_q4x32k4_gemm_dotprod"], "GEMM", 16 * NG_MR, 576 // 4),
    Loop("q4x_dotprod.c", "q5xn_gemm_run", "record quarter, 8 rows x %d X rows" % NG_MR,
         ["q5_0_q5x32k4_gemm_dotprod", "q5_0_ibm_gemm_dotprod"], "GEMM", 16 * NG_MR, 704 // 4),
    Loop("q4x_dotprod.c", "iq4xn_gemm_run", "record quarter, 8 rows x %d X rows" % NG_MR,
         ["iq4_nl_iq4x32k4_gemm_dotprod", "iq4_nl_ibm_gemm_dotprod"], "GEMM", 16 * NG_MR, 576 // 4),
    Loop("q4x_dotprod.c", "q41xn_gemm_run", "record quarter, 8 rows x %d X rows" % NG_MR,
         ["q4_1_q41x32k4_gemm_dotprod", "q4_1_ibm_gemm_dotprod"], "GEMM", 16 * NG_MR, 640 // 4),
    Loop("q4x_dotprod.c", "q51xn_gemm_run", "record quarter, 8 rows x %d X rows" % NG_MR,
         ["q5_1_q51x32k4_gemm_dotprod", "q5_1_ibm_gemm_dotprod"], "GEMM", 16 * NG_MR, 768 // 4),
    Loop("q8x_dotprod.c", "q8xn_gemm_run", "record quarter, 8 rows x %d X rows" % NG_MR,
         ["q8_0_q8x32k4_gemm_dotprod"], "GEMM", 16 * NG_MR, 1088 // 4),
    # K-quant 32-row tilings, GEMV: one sub-block of a record with one row of X (Q4_K:
    # 8 steps x 4 q registers x 2 nibbles = 64 SDOT; Q6_K and Q3_K: 4 steps x 4 registers x 2
    # groups = 32 SDOT) and its share of the record, scales included (Q4_K 4608 / 8,
    # Q5_K 5632 / 8, Q6_K 6720 / 16, Q3_K 3520 / 16); the scale work after the steps, once a
    # record, is outside the loop
    Loop("q4kx_dotprod.c", "q4kxn_run", "sub-block loop, 32 rows x 32 k (the scale work once a record after it not counted)",
         ["q4_k_q4kx32k4_dotprod"], "GEMV", 64, 4608 // 8),
    Loop("q4kx_i8mm.c", "q4kxn_run", "sub-block loop, 32 rows x 32 k (the scale work once a record after it not counted)",
         ["q4_k_q4kx32k4_i8mm"], "GEMV", 64, 4608 // 8, level="i8mm"),
    Loop("q4kx_dotprod.c", "q5kxn_run", "sub-block loop, 32 rows x 32 k (the scale work once a record after it not counted)",
         ["q5_k_q5kx32k4_dotprod"], "GEMV", 64, 5632 // 8),
    Loop("q6kx_dotprod.c", "q6kxn_run", "sub-block loop, 32 rows x 16 k (the scale work once a record after it not counted)",
         ["q6_k_q6kx32k4_dotprod"], "GEMV", 32, 6720 // 16),
    Loop("q3kx_dotprod.c", "q3kxn_run", "sub-block loop, 32 rows x 16 k (the scale work once a record after it not counted)",
         ["q3_k_q3kx32k4_dotprod"], "GEMV", 32, 3520 // 16),
    # Q2_K: 4 steps x 4 registers x 2 groups = 32 SDOT, a sixteenth of the 2688-byte record
    Loop("q2kx_dotprod.c", "q2kxn_run", "sub-block loop, 32 rows x 16 k (the scale work once a record after it not counted)",
         ["q2_k_q2kx32k4_dotprod"], "GEMV", 32, 2688 // 16),
    # TQ2_0 (q2kx's quant bytes, no scales): the same 32 SDOT, a sixteenth of the 2112-byte record
    Loop("tq2x_dotprod.c", "tq2xn_run", "sub-block loop, 32 rows x 16 k (the d work once a record after it not counted)",
         ["tq2_0_tq2x32k4_dotprod"], "GEMV", 32, 2112 // 16),
    # TQ1_0: one dword of qs[0..32) of the 32 rows (128 B) with one row of X, 8 registers x 5
    # trits = 40 SDOT (the 5 other dwords and d, once a record, outside the loop)
    Loop("tq1x_dotprod.c", "tq1xn_run", "dword loop, 32 rows x 20 k (the other 5 dwords and d not counted)",
         ["tq1_0_tq1x32k4_dotprod"], "GEMV", 40, 128),
    # GEMM: one sub-block of a record quarter (8 rows) by 4 rows of X (Q4_K: 8 steps x 2
    # nibbles x 4 = 64 SDOT; Q6_K and Q3_K: 4 steps x 2 groups x 4 = 32 SDOT) and its share
    # of the record (Q4_K 4608 / 32, Q5_K 5632 / 32, Q6_K 6720 / 64, Q3_K 3520 / 64)
    Loop("q4kx_dotprod.c", "q4kxn_panel_any", "sub-block of a quarter, 8 rows x 4 X rows",
         ["q4_k_q4kx32k4_gemm_dotprod", "q4_k_ibm_gemm_dotprod"], "GEMM", 64, 4608 // 32),
    Loop("q4kx_dotprod.c", "q5kxn_panel_any", "sub-block of a quarter, 8 rows x 4 X rows",
         ["q5_k_q5kx32k4_gemm_dotprod", "q5_k_ibm_gemm_dotprod"], "GEMM", 64, 5632 // 32),
    Loop("q6kx_dotprod.c", "q6kxn_panel_any", "sub-block of a quarter, 8 rows x 4 X rows",
         ["q6_k_q6kx32k4_gemm_dotprod", "q6_k_ibm_gemm_dotprod"], "GEMM", 32, 6720 // 64),
    Loop("q3kx_dotprod.c", "q3kxn_panel_any", "sub-block of a quarter, 8 rows x 4 X rows",
         ["q3_k_q3kx32k4_gemm_dotprod", "q3_k_ibm_gemm_dotprod"], "GEMM", 32, 3520 // 64),
    Loop("q2kx_dotprod.c", "q2kxn_panel_any", "sub-block of a quarter, 8 rows x 4 X rows",
         ["q2_k_q2kx32k4_gemm_dotprod", "q2_k_ibm_gemm_dotprod"], "GEMM", 32, 2688 // 64),
    Loop("tq2x_dotprod.c", "tq2xn_panel_any", "sub-block of a quarter, 8 rows x 4 X rows",
         ["tq2_0_tq2x32k4_gemm_dotprod", "tq2_0_ibm_gemm_dotprod"], "GEMM", 32, 2112 // 64),
    # TQ1_0: one dword of one group (4 rows, 16 B) by 4 rows of X: 5 trits x 4 = 20 SDOT
    Loop("tq1x_dotprod.c", "tq1xn_panel_any", "dword of a group, 4 rows x 20 k x 4 X rows",
         ["tq1_0_tq1x32k4_gemm_dotprod", "tq1_0_ibm_gemm_dotprod"], "GEMM", 20, 16),
    # one 8-k chunk of 8 channels (32 B of nibbles) by 4 rows of X: 16 SDOT
    Loop("qc4w_gemm_dotprod.c", "run_dotprod", "chunk loop, 8 ch x 4 rows",
         ["qc4w_n8k8s2_dotprod"], "GEMM", 16, 32),
    # one 16-k chunk of 4 channels (32 B of nibbles) by 8 rows (four pairs): 16 SMMLA
    Loop("qc4w_gemm_i8mm.c", "run_i8mm", "chunk loop, 4 ch x 8 rows",
         ["qc4w_n4k16s2_i8mm"], "GEMM", 16, 32),
    # the same chunk by one row (n = 1, or an odd last row): 4 SDOT
    Loop("qc4w_gemm_i8mm.c", "qc4w_i8mm_row", "chunk loop, 4 ch x 1 row",
         ["qc4w_n4k16s2_i8mm"], "GEMV", 4, 32),
    # QB4W: one 8-k chunk of 8 channels (32 B) by 4 rows: 16 SDOT on q (4 more on ones
    # for the block's weight sums, not counted as multiply-adds)
    Loop("qb4w_dotprod.c", "run_dotprod", "chunk loop, 8 ch x 4 rows",
         ["qb4w_n8k8s2_dotprod"], "GEMM", 16, 32, extra=4),
    # QB4W: one 16-k chunk of 4 channels (32 B) by 8 rows (four pairs): 16 SMMLA
    Loop("qb4w_i8mm.c", "run_i8mm", "chunk loop, 4 ch x 8 rows",
         ["qb4w_n4k16s2_i8mm"], "GEMM", 16, 32, extra=4),
    # the same chunk by one row (n = 1, or an odd last row): 4 SDOT on q, 4 on ones
    Loop("qb4w_i8mm.c", "qb4w_i8mm_row", "chunk loop, 4 ch x 1 row",
         ["qb4w_n4k16s2_i8mm"], "GEMV", 4, 32, extra=4),
]

# SME: the assembly's mode-0 chunk loop (pw__qc4w_sme_tile, label 1 and the
# pw__qc4w_sme_weights macro), tried on every model.
SME_KERNELS = ["qc4w_vl128_n16k8s2_sme", "qc4w_vl256_n32k8s2_sme", "qc4w_vl512_n64k8s2_sme",
               "qc4w_vl1024_n128k8s2_sme", "qc4w_vl2048_n256k8s2_sme"]


def die(msg):
    sys.stderr.write("arm_mca: %s\n" % msg)
    sys.exit(2)


def find_mca():
    mca = os.environ.get("LLVM_MCA") or shutil.which("llvm-mca-19")
    if not mca:
        die("llvm-mca-19 not found: install Debian's llvm-19 (apt-get install llvm-19), "
            "or set LLVM_MCA")
    return mca


def compile_flags(build):
    """Flags of every Arm kernel file in the Release Arm64 build, from a configure-only tree."""
    cc = os.path.join(build, "compile_commands.json")
    if not os.path.exists(cc):
        if not shutil.which("aarch64-linux-gnu-gcc"):
            die("aarch64-linux-gnu-gcc not found (scripts/deps.sh installs gcc-aarch64-linux-gnu)")
        subprocess.run(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                        "-DCMAKE_TOOLCHAIN_FILE=" + os.path.join(ROOT, "cmake", "aarch64-linux-gnu.cmake"),
                        "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"],
                       check=True, stdout=subprocess.DEVNULL)
    flags = {}
    for e in json.load(open(cc)):
        if "/src/kernel/arm/" not in e["file"] or "packwise_objects" not in e["command"]:
            continue
        args = shlex.split(e["command"])
        out, skip = [], False
        for a in args[1:]:
            if skip:
                skip = False
                continue
            if a in ("-o", "-c"):
                skip = a == "-o"
                continue
            if a == e["file"] or a.startswith("-W"):
                continue
            out.append(a)
        flags[os.path.basename(e["file"])] = (args[0], out, e["directory"])
    return flags


def assembly(flags, src):
    cc, args, cwd = flags[src]
    r = subprocess.run([cc] + args + ["-S", "-o", "-", os.path.join(ROOT, "src", "kernel", "arm", src)],
                       cwd=cwd, check=True, stdout=subprocess.PIPE, universal_newlines=True)
    return r.stdout.splitlines()


LABEL = re.compile(r"^(\.L\w+|[A-Za-z_][\w.$]*):")
BRANCH = re.compile(r"^\s*(b|b\.?(?:eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le)|cbn?z|tbn?z)\s+"
                    r".*?(\.L\w+)\s*$")
DOT = re.compile(r"^\s*(sdot|usdot|smmla|usmopa)\b")


def function_lines(lines, func):
    start = None
    for i, l in enumerate(lines):
        m = LABEL.match(l)
        if m and (m.group(1) == func or m.group(1).startswith(func + ".")):
            start = i
            continue
        if start is not None and l.strip().startswith(".size") and func in l:
            return lines[start:i]
    die("function %s not found in the assembly" % func)


def innermost_loop(body, dot=DOT):
    """The loop without a loop inside that holds the most dot instructions."""
    labels = {}
    loops = []
    for i, l in enumerate(body):
        m = LABEL.match(l)
        if m:
            labels[m.group(1)] = i
        b = BRANCH.match(l)
        if b and b.group(2) in labels:
            loops.append((labels[b.group(2)], i))
    inner = [(s, e) for (s, e) in loops
             if not any((s2, e2) != (s, e) and s <= s2 and e2 <= e for (s2, e2) in loops)]
    best = None
    for s, e in inner:
        n = sum(1 for l in body[s:e + 1] if dot.match(l))
        if best is None or n > best[0]:
            best = (n, s, e)
    if best is None or best[0] == 0:
        die("no loop with dot instructions")
    return body[best[1]:best[2] + 1]


def instructions(loop):
    """Instruction lines of a loop, directives and labels dropped, branch targets one label."""
    out = ["mca_loop:"]
    for l in loop:
        t = l.split("//")[0].rstrip()
        if not t.strip() or LABEL.match(t) or t.strip().startswith("."):
            continue
        out.append(re.sub(r"\.L\w+", "mca_loop", t))
    return out


def sme_loop():
    text = open(os.path.join(ROOT, "src", "kernel", "arm", "qc4w_gemm_sme.c")).read()
    lines = [l for l in re.findall(r'"((?:[^"\\]|\\.)*)\\n"', text)]
    macro = lines[lines.index(".macro pw__qc4w_sme_weights") + 1:lines.index(".endm")]
    s = lines.index("1:")
    body = []
    for l in lines[s + 1:]:
        if l.strip() == "pw__qc4w_sme_weights":
            body += macro
        elif l.strip().startswith("b.ne 1b"):
            body.append("    b.ne mca_loop")
            break
        else:
            body.append(l)
    return ["mca_loop:"] + body


def mca(tool, cpu, asm):
    r = subprocess.run([tool, "-mtriple=aarch64", "-mcpu=" + cpu, "-mattr=+dotprod,+i8mm,+sve2,+sme",
                        "-iterations=%d" % ITERATIONS, "-bottleneck-analysis", "-"],
                       input="\n".join(asm) + "\n", stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    if r.returncode != 0:
        err = [l.strip() for l in r.stdout.splitlines() if l.strip()]
        return None, " ".join(err[:2])
    cyc = int(re.search(r"Total Cycles:\s+(\d+)", r.stdout).group(1))
    mca.bound = float(re.search(r"Block RThroughput:\s+([\d.]+)", r.stdout).group(1))
    res = re.search(r"Resource Pressure\s+\[\s*([\d.]+)%", r.stdout)
    dep = re.search(r"Data Dependencies:\s+\[\s*([\d.]+)%", r.stdout)
    res, dep = (float(res.group(1)) if res else 0.0), (float(dep.group(1)) if dep else 0.0)
    mca.cause = "dependencies" if dep > res else "pipe pressure"
    return cyc / ITERATIONS, None


def models(loop_asm):
    uses_mmla = any(re.match(r"^\s*smmla\b", l) for l in loop_asm)
    # i8mm's USDOT (by element) runs on M2 and later, not M1
    uses_i8mm = uses_mmla or any(re.match(r"^\s*usdot\b", l) for l in loop_asm)
    return ["neoverse-v2", "apple-m2" if uses_i8mm else "apple-m1"], ("smmla" if uses_mmla else "sdot")


def estimate(tool, flags):
    rows = []
    for lp in LOOPS:
        dot = re.compile(r"^\s*%s\b" % lp.dot) if lp.dot else DOT
        body = innermost_loop(function_lines(assembly(flags, lp.src), lp.func), dot)
        asm = instructions(body)
        ndot = sum(1 for l in asm if dot.match(l))
        if ndot % (lp.dots + lp.extra):
            die("%s: %d dot instructions in the loop, not a multiple of %d" % (lp.func, ndot, lp.dots + lp.extra))
        per = ndot // (lp.dots + lp.extra)  # source iterations per assembly iteration (unrolling)
        cpus, ins = models(asm)
        ins = lp.dot or ins
        for cpu in cpus:
            cyc, err = mca(tool, cpu, asm)
            if err:
                die("%s on %s: %s" % (lp.func, cpu, err))
            wb = lp.wbytes * per
            macs = per * lp.dots * MACS[ins]
            kinds = {}
            for l in asm:
                m = dot.match(l)
                if m:
                    k = l.split()[0].upper()
                    kinds[k] = kinds.get(k, 0) + 1
            dots = " + ".join("%d %s" % (n, k) for k, n in sorted(kinds.items(), key=lambda e: -e[1]))
            row = dict(loop=lp, cpu=cpu, insns=len(asm) - 1, ndot=ndot, dots=dots, ins=ins, cyc=cyc,
                       bound=mca.bound, cause=mca.cause, wb=wb,
                       cpb=cyc / wb, macs=macs, mpc=macs / cyc)
            core = CORES[cpu]
            if lp.kind == "GEMV":
                row["frac"] = (wb / cyc) / core["stream"]
                row["ref"] = "%.1f B/cycle, %s" % (core["stream"], core["stream_note"])
            else:
                row["frac"] = (macs / cyc) / core["peak"][ins]
                row["ref"] = "%s: %d MAC/cycle" % (ins.upper(), core["peak"][ins])
            rows.append(row)
    sme = sme_loop()
    sme_res = []
    for cpu in ("neoverse-v2", "apple-m4"):
        cyc, err = mca(tool, cpu, sme)
        sme_res.append((cpu, cyc, err))
    return rows, sme_res


def model_ceilings(tool):
    """int8 MAC/cycle of 8 independent SDOT / SMMLA through each model."""
    out = []
    for cpu, ins in (("neoverse-v2", "sdot"), ("neoverse-v2", "smmla"), ("apple-m1", "sdot"),
                     ("apple-m2", "smmla")):
        asm = ["%s v%d.4s, v16.16b, v17.16b" % (ins, i) for i in range(8)]
        cyc, err = mca(tool, cpu, asm)
        if err:
            die("%s %s: %s" % (cpu, ins, err))
        out.append((cpu, ins, 8 * MACS[ins] / cyc))
    return out


def fmt_pct(x):
    return "%d%%" % round(100 * x)


def header_block(rows, src, sme_res):
    """The llvm-mca lines of one kernel file's header comment."""
    out = [" * llvm-mca estimate (llvm 19, scripts/arm_mca.py; docs/arm_mca.md has the sources):"]
    if src == "qc4w_gemm_sme.c":
        out.append(" *   not modelled: llvm 19 has no scheduling model for SME (USMOPA unresolved")
        out.append(" *   on neoverse-v2, LD1B/SVE unsupported on apple-m4); no figure.")
        return out
    for r in rows:
        lp = r["loop"]
        if lp.src != src:
            continue
        head = " *   %s, %s: %.2f cycles/iter, %.3f cycles/weight byte," % (
            lp.name, r["cpu"], r["cyc"], r["cpb"])
        if lp.kind == "GEMV":
            out.append(head)
            out.append(" *     %.1f B/cycle: %s of a core's streaming rate (%s)" % (
                r["wb"] / r["cyc"], fmt_pct(r["frac"]), r["ref"]))
        else:
            out.append(head)
            out.append(" *     %.1f int8 MAC/cycle: %s of the core's int8 peak (%s)" % (
                r["mpc"], fmt_pct(r["frac"]), r["ref"]))
    return out


def report(rows, sme_res, ceilings, tool):
    ver = subprocess.run([tool, "--version"], stdout=subprocess.PIPE, universal_newlines=True).stdout
    m = re.search(r"LLVM version (\S+)", ver)
    o = []
    o.append("# llvm-mca estimates of the Arm kernels' inner loops")
    o.append("")
    o.append("Generated by `scripts/arm_mca.py --write` (LLVM %s's llvm-mca, %d iterations); "
             "`scripts/arm_mca.py --check` reports drift. An estimate from a model, not a "
             "measurement: no Arm hardware was used." % (m.group(1) if m else "?", ITERATIONS))
    o.append("")
    o.append("Each loop is the innermost loop of the named function as aarch64-linux-gnu-gcc "
             "compiles the file with the Release Arm64 build's flags (-O3, the file's -march), "
             "the one holding the most dot instructions (the widest micro-tile). "
             "*cycles/iter* is llvm-mca's total cycles over its iterations, so loop-carried "
             "dependencies count. *weight B/iter* counts the bytes of the weight stream one "
             "iteration consumes (the packed record's share for GEMM, metadata included). "
             "*resource bound* is llvm-mca's Block RThroughput, the cycles the busiest "
             "pipes need per iteration without dependencies. "
             "GEMV: *fraction* = (weight B/cycle) / the core's one-core streaming rate; over "
             "100% means the loop outruns memory (memory-bound), under 100% means the loop "
             "is the limit. GEMM: *fraction* = (int8 MAC/cycle) / the core's int8 peak. "
             "The `_ibm_` kernels run the same row functions a few block columns at a time "
             "(`pw__arm_ibm_loop`): the same inner loop.")
    o.append("")
    o.append("| kernel(s) | loop (function) | model | insns | dot | cycles/iter | resource bound | "
             "weight B/iter | cycles/weight B | MAC/cycle | fraction |")
    o.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        lp = r["loop"]
        ks = ", ".join(lp.kernels)
        o.append("| %s | %s (`%s`) | %s | %d | %s | %.2f | %.2f | %d | %.3f | %.1f | %s %s |" % (
            ks, lp.label, lp.name, r["cpu"], r["insns"], r["dots"], r["cyc"],
            r["bound"],
            r["wb"], r["cpb"], r["mpc"], fmt_pct(r["frac"]),
            "of stream" if lp.kind == "GEMV" else "of int8 peak"))
    o.append("| %s | mode-0 chunk loop (`pw__qc4w_sme_tile`) | neoverse-v2, apple-m4 | | 8 USMOPA | "
             "not modelled | | | | | |" % ", ".join(SME_KERNELS))
    o.append("")
    o.append("SME (qc4w_gemm_sme.c): llvm 19 does not model it, so there is no figure. Its tries:")
    o.append("")
    for cpu, cyc, err in sme_res:
        o.append("- `-mcpu=%s`: %s" % (cpu, ("%.2f cycles/iter" % cyc) if cyc else "`" + err + "`"))
    o.append("")
    o.append("Reading the GEMV rows: weight B/cycle = 1 / (cycles/weight B); at 100% or more "
             "one core's loop keeps up with memory (the kernel is memory-bound on one core), "
             "below it the loop is the limit. By this estimate:")
    o.append("")
    for cpu in ("neoverse-v2", "apple-m1", "apple-m2"):
        g = [r for r in rows if r["cpu"] == cpu and r["loop"].kind == "GEMV"]
        if not g:
            continue
        over = [r["loop"].name for r in g if r["frac"] >= 1.0]
        under = ["%s %s" % (r["loop"].name, fmt_pct(r["frac"])) for r in g if r["frac"] < 1.0]
        o.append("- %s (%.1f B/cycle): memory-bound: %s; loop-bound: %s." % (
            cpu, CORES[cpu]["stream"], ", ".join(over) or "none", ", ".join(under) or "none"))
    o.append("")
    slow = ["%s on %s (%.2f vs %.2f: %s)" % (r["loop"].name, r["cpu"], r["cyc"], r["bound"],
                                             r["cause"])
            for r in rows if r["cyc"] > 1.5 * r["bound"]]
    o.append("Loops whose cycles/iter exceed 1.5x their resource bound, with the larger cause in "
             "llvm-mca's -bottleneck-analysis (dependencies: loop-carried register chains; "
             "pipe pressure: instructions confined to a subset of the vector pipes): %s."
             % ("; ".join(slow) or "none"))
    o.append("")
    o.append("The model's own int8 ceiling (8 independent dot instructions through llvm-mca, "
             "the same check as the loops):")
    o.append("")
    for cpu, ins, mpc in ceilings:
        o.append("- %s %s: %.1f MAC/cycle" % (cpu, ins.upper(), mpc))
    o.append("")
    o.append("Apple rows come from LLVM's Cyclone model (three vector pipes, see below), so "
             "they understate Firestorm on vector-bound loops.")
    o.append("")
    o.append(REFERENCE.rstrip())
    o.append("")
    return "\n".join(o)


def update_header(path, block, write):
    """Replace (or insert) the block before the first comment's closing ' */'; True if unchanged."""
    lines = open(path).read().split("\n")
    try:
        b = next(i for i, l in enumerate(lines) if l.startswith(" * llvm-mca estimate"))
        e = next(i for i in range(b, len(lines)) if lines[i].startswith(" */"))
        new = lines[:b] + block + lines[e:]
    except StopIteration:
        e = next(i for i, l in enumerate(lines) if l.startswith(" */"))
        new = lines[:e] + [" *"] + block + lines[e:]
    same = new == lines
    if write and not same:
        open(path, "w").write("\n".join(new))
    return same


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--write", action="store_true", help="write docs/arm_mca.md and the kernel headers")
    g.add_argument("--check", action="store_true", help="compare them with the files; exit 1 on drift")
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "arm_mca"),
                    help="configure-only cmake tree for the compile flags (default build/arm_mca)")
    ap.add_argument("--dump", metavar="FUNC", help="print the loop extracted from FUNC and exit")
    a = ap.parse_args()
    tool = find_mca()
    flags = compile_flags(a.build)
    if a.dump:
        lp = next(l for l in LOOPS if l.func == a.dump)
        print("\n".join(instructions(innermost_loop(function_lines(assembly(flags, lp.src), lp.func)))))
        return 0
    rows, sme_res = estimate(tool, flags)
    text = report(rows, sme_res, model_ceilings(tool), tool)
    if not a.write and not a.check:
        print(text)
        return 0
    ok = True
    old = open(DOC).read() if os.path.exists(DOC) else ""
    if old != text:
        ok = False
        if a.write:
            open(DOC, "w").write(text)
        else:
            print("arm_mca: docs/arm_mca.md differs from the estimate")
    srcs = sorted({lp.src for lp in LOOPS} | {"qc4w_gemm_sme.c"})
    for s in srcs:
        path = os.path.join(ROOT, "src", "kernel", "arm", s)
        if not update_header(path, header_block(rows, s, sme_res), a.write):
            ok = False
            if not a.write:
                print("arm_mca: the llvm-mca block of src/kernel/arm/%s differs" % s)
    if a.check:
        print("arm_mca: %s" % ("report and headers match" if ok else "drift (run --write)"))
        return 0 if ok else 1
    print("arm_mca: written" if not ok else "arm_mca: unchanged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
