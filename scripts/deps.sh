#!/bin/sh
# Install everything packwise needs to build, test, document and benchmark, from
# Debian 12's own packages (nothing is downloaded from anywhere else).
#   --fuzz   also clang 19 and its libFuzzer runtime, for the fuzz targets (fuzz/README.md)
set -eu
FUZZ=""
case "${1:-}" in
  "") ;;
  --fuzz) FUZZ="clang-19 libclang-rt-19-dev" ;;
  *) echo "usage: scripts/deps.sh [--fuzz]" >&2; exit 2 ;;
esac
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
# shellcheck disable=SC2086 # $FUZZ: none, or two package names
$SUDO apt-get install -y --no-install-recommends \
  build-essential cmake ninja-build pkg-config git ca-certificates time \
  clang libclang-rt-14-dev \
  libpthreadpool-dev libxxhash-dev \
  python3 python3-numpy python3-venv python3-pip python3-setuptools python3-wheel \
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user \
  doxygen gnuplot-nox $FUZZ
