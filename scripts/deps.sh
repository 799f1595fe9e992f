#!/bin/sh
# Install everything packwise needs to build, test, document and benchmark, from
# Debian 12's own packages (nothing is downloaded from anywhere else).
set -eu
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends \
  build-essential cmake ninja-build pkg-config git ca-certificates time \
  clang libclang-rt-14-dev \
  libpthreadpool-dev libxxhash-dev \
  python3 python3-numpy python3-venv python3-pip python3-setuptools python3-wheel \
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user \
  doxygen gnuplot-nox
