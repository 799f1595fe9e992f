#!/bin/sh
# The whole test suite, as CI runs it (.ci/run calls exactly this):
#   1. Release build with -Werror (gcc), every test under each ISA level;
#   2. ASan + UBSan build (gcc, -O1 -g: the sanitizers' own advice, and at -O2 gcc took
#      about 5 minutes for kernel/x86/qb4w_avx512.c alone and 8.5 for the build, against
#      2.5 at -O1), every test again, fuzz corpora replayed;
#   3. clang 14 build with -Werror (warnings check) and its tests;
#   4. Arm64 cross build (gcc-aarch64-linux-gnu), tests under qemu-aarch64 -cpu max (the SME
#      QC4W tests also at 128, 256 and 512-bit streaming vector lengths: tests/sme.cmake);
#   5. ThreadSanitizer build (clang 14, PW_TSAN: packwise's plain thread pool in place of
#      pthreadpool), the tests labelled tsan ("// pw-test: tsan" in their source), the
#      first report failing the test (TSAN_OPTIONS=halt_on_error=1, set by tests/CMakeLists.txt).
# Build trees go under build/ (ignored by git). JOBS overrides the parallelism.
set -eu
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
run_suite() {
  name=$1; shift
  echo "==== $name"
  cmake -S . -B "build/$name" -G Ninja -DPW_WERROR=ON "$@"
  cmake --build "build/$name" -j "$JOBS"
  ctest --test-dir "build/$name" --output-on-failure -j "$JOBS"
}
# A suite of the tests with one ctest label: only their programs are built.
run_label_suite() {
  name=$1; label=$2; shift 2
  echo "==== $name (ctest -L $label)"
  cmake -S . -B "build/$name" -G Ninja -DPW_WERROR=ON "$@"
  targets=$(ctest --test-dir "build/$name" -L "$label" -N |
            sed -n 's/^ *Test *#[0-9]*: \([A-Za-z0-9_]*\).*/\1/p' | sort -u)
  if [ -z "$targets" ]; then echo "no test is labelled $label" >&2; exit 1; fi
  # shellcheck disable=SC2086 # one target a word
  cmake --build "build/$name" -j "$JOBS" --target $targets
  ctest --test-dir "build/$name" --output-on-failure -j "$JOBS" -L "$label"
}
run_suite release -DCMAKE_BUILD_TYPE=Release
run_suite asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPW_SANITIZE=ON "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g -DNDEBUG"
run_suite clang -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang
run_suite arm64 -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
run_label_suite tsan tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DPW_TSAN=ON
echo "==== all suites passed"
