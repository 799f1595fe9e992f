#!/bin/sh
# Install this build into a scratch prefix, then build and run a consumer program
# against the installed tree twice: through find_package(packwise) (shared and
# static targets) and through pkg-config. Also checks the installed fixtures.
# usage: check_install.sh BUILD_DIR SOURCE_DIR WORK_DIR C_COMPILER [docs|nodocs]
set -eu
build=$1; src=$2; work=$3; cc=$4; docs=${5:-docs}
rm -rf "$work"; mkdir -p "$work"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
test -f "$prefix/include/packwise.h"
test -f "$prefix/share/packwise/fixtures/MANIFEST.txt"
test -f "$prefix/share/packwise/fixtures/Q4_K.tags.input_block_major.bin"
libdir=$(ls -d "$prefix"/lib*/ | head -n 1)
ls "$libdir" | grep -q '^libpackwise\.so\.[0-9]*$'
test -x "$prefix/bin/packwise"
# the examples and the README, and the API reference where doxygen is installed
if [ "$docs" = docs ]; then
test -f "$prefix/share/doc/packwise/examples/gguf_matmul.c"
test -f "$prefix/share/doc/packwise/README.md"
fi
if [ "$docs" = docs ] && command -v doxygen > /dev/null; then
  test -f "$prefix/share/doc/packwise/html/index.html"
  grep -q pw_weight_create "$prefix/share/doc/packwise/html/weight_8h.html"
  test ! -e "$prefix/share/doc/packwise/.Doxyfile"
fi
"$prefix/bin/packwise" verify --format Q4_K --rows 8 --blocks 3 --order kernel \
  "$prefix/share/packwise/fixtures/Q4_K.tags.input_block_major.bin"

echo "== find_package"
cmake -S "$src/tests/consumer" -B "$work/cmake" -G Ninja -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_PREFIX_PATH="$prefix" > "$work/cmake.log"
cmake --build "$work/cmake" > "$work/cmake-build.log"
"$work/cmake/consumer_shared"
"$work/cmake/consumer_static"

echo "== pkg-config"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046
"$cc" -std=c11 -o "$work/consumer_pc" "$src/tests/consumer/consumer.c" $(pkg-config --cflags --libs packwise) -lm
LD_LIBRARY_PATH="$libdir" "$work/consumer_pc"
# shellcheck disable=SC2046
"$cc" -std=c11 -o "$work/consumer_pc_static" "$src/tests/consumer/consumer.c" \
  $(pkg-config --cflags packwise) "$libdir/libpackwise.a" $(pkg-config --static --libs-only-l packwise | sed 's/-lpackwise//') -lm
"$work/consumer_pc_static"
echo "install-and-consume ok"
