#!/bin/sh
# The whole test suite, as CI runs it (.ci/run calls exactly this):
#   1. Release build with -Werror (gcc), every test under each ISA level;
#   2. ASan + UBSan build (gcc), every test again, fuzz corpora replayed;
#   3. clang 14 build with -Werror (warnings check) and its tests;
#   4. Arm64 cross build (gcc-aarch64-linux-gnu), tests under qemu-aarch64 -cpu max.
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
run_suite release -DCMAKE_BUILD_TYPE=Release
run_suite asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPW_SANITIZE=ON
run_suite clang -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang
run_suite arm64 -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
echo "==== all suites passed"
