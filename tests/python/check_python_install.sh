#!/bin/sh
# The Python package as a user installs it (issue 17, must show 2), never the build tree:
#   1. cmake --install into a fresh prefix; with a clean environment (env -i, PYTHONPATH =
#      the prefix's package folder and nothing else) `import packwise` must load the
#      prefix's library and run a prepared-weight Q8_0 product (packwise.Weight) that
#      agrees with numpy; then the binding's own tests (bindings/python/tests) run on the
#      installed package;
#   2. pip install ./bindings/python (offline: --no-build-isolation --no-index, Debian's
#      setuptools) into a venv that uses the system site packages, without
#      PACKWISE_LIBRARY_DIR: with a clean environment the import fails with the binding's
#      "not found" message (when no libpackwise is installed system-wide), and loads the
#      prefix's library when LD_LIBRARY_PATH names its folder;
#   3. the same pip install with PACKWISE_LIBRARY_DIR=<prefix>/lib: with no environment
#      variable at all, the venv's package loads the prefix's library and runs the product.
# Exit 77 (ctest: skipped) when /usr/bin/python3, numpy, venv, setuptools or wheel is missing,
# or PW_PYTHON_INSTALL_DIR or CMAKE_INSTALL_LIBDIR is absolute.
# usage: check_python_install.sh CMAKE BUILD_DIR SOURCE_DIR WORK_DIR PYTHON_DIR LIBDIR
set -eu
cmake=$1; build=$2; src=$3; work=$4; pydir=$5; libdir=$6
py=/usr/bin/python3
skip() { echo "SKIPPED: $*"; exit 77; }
[ -x "$py" ] || skip "no $py (Debian's python3)"
"$py" -c "import numpy" 2>/dev/null || skip "no numpy for $py (apt-get install python3-numpy)"
"$py" -c "import ensurepip, venv" 2>/dev/null || skip "no venv/ensurepip for $py (apt-get install python3-venv)"
"$py" -c "import setuptools, wheel" 2>/dev/null ||
  skip "no setuptools or wheel for $py (apt-get install python3-setuptools python3-wheel)"

rm -rf "$work"; mkdir -p "$work/home" "$work/run"
prefix="$work/prefix"
# An absolute folder would be installed to outside the scratch prefix: not here.
case $pydir in /*) skip "PW_PYTHON_INSTALL_DIR=$pydir is absolute (outside any scratch prefix)" ;; esac
case $libdir in /*) skip "CMAKE_INSTALL_LIBDIR=$libdir is absolute (outside any scratch prefix)" ;; esac
site="$prefix/$pydir"
lib="$prefix/$libdir"
check="$src/tests/python/check_installed.py"
# A clean environment: no PACKWISE_LIBRARY, LD_LIBRARY_PATH, PYTHON* or pip settings.
clean() { env -i PATH=/usr/bin:/bin HOME="$work/home" "$@"; }
logged() {  # logged LOG CMD...: run, showing the log on failure
  log=$1; shift
  if ! "$@" > "$log" 2>&1; then cat "$log"; echo "FAILED: $*"; exit 1; fi
}
cd "$work/run"

echo "== 1. cmake --install --prefix $prefix; PYTHONPATH=$site"
logged "$work/install.log" "$cmake" --install "$build" --prefix "$prefix"
test -f "$site/packwise/__init__.py" || { echo "FAILED: no $site/packwise/__init__.py"; exit 1; }
grep -q "^LIBRARY = \"$lib/libpackwise.so" "$site/packwise/_install_path.py" ||
  { cat "$site/packwise/_install_path.py"; echo "FAILED: _install_path.py does not name $lib"; exit 1; }
clean PYTHONPATH="$site" "$py" "$check" "$prefix" "$prefix"
echo "== 1b. the binding's own tests (bindings/python/tests) on the installed package"
logged "$work/unittest.log" clean PYTHONPATH="$site" PACKWISE_TEST_DATA="$src/tests/data" \
  "$py" -B -c "if True:
    import os, sys, unittest, packwise
    print('testing packwise from', packwise.__file__, 'with', packwise.library_path)
    sys.exit(0 if unittest.main(module=None, argv=['unittest', 'discover', '-s', sys.argv[1]],
                                exit=False).result.wasSuccessful() else 1)" \
  "$src/bindings/python/tests"
grep "^testing packwise\|^Ran " "$work/unittest.log"

echo "== 2. pip install into a venv, no PACKWISE_LIBRARY_DIR"
cp -R "$src/bindings/python" "$work/pysrc"
rm -rf "$work/pysrc/build" "$work/pysrc"/*.egg-info "$work/pysrc/packwise/_install_path.py"
venv="$work/venv"
if ! clean "$py" -m venv --system-site-packages "$venv" > "$work/venv.log" 2>&1; then
  cat "$work/venv.log"; skip "$py -m venv failed (apt-get install python3-venv)"
fi
pip=$venv/bin/pip
pipenv="PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1"
# As the README says (numpy is found in the system site packages, nothing is downloaded):
# shellcheck disable=SC2086 # pipenv: two words
logged "$work/pip.log" clean $pipenv "$pip" install --no-build-isolation --no-index "$work/pysrc"
# The folders the package searches last (packwise/__init__.py: _candidates), and ld.so's cache.
system_lib=$(ls /usr/local/lib/libpackwise.so* /usr/local/lib/*/libpackwise.so* \
  /usr/local/lib64/libpackwise.so* /usr/lib/libpackwise.so* /usr/lib/*/libpackwise.so* \
  /usr/lib64/libpackwise.so* 2>/dev/null || true)
system_lib="$system_lib$("$py" -c 'import ctypes.util; print(ctypes.util.find_library("packwise") or "")')"
if [ -n "$system_lib" ]; then
  echo "(a libpackwise is installed on this machine: the not-found check is skipped)"
else
  if clean "$venv/bin/python" -c "import packwise" > "$work/notfound.log" 2>&1; then
    echo "FAILED: import packwise succeeded with no library to be found"; exit 1
  fi
  grep -q "libpackwise not found" "$work/notfound.log" ||
    { cat "$work/notfound.log"; echo "FAILED: no 'libpackwise not found' message"; exit 1; }
  echo "without a library: $(tail -n 1 "$work/notfound.log" | cut -c1-100)..."
fi
# Through the loader's path: the package's own fallback (ctypes.util.find_library).
clean LD_LIBRARY_PATH="$lib" "$venv/bin/python" -c "if True:
    import os, sys, packwise
    maps = [l.split()[-1] for l in open('/proc/self/maps') if 'libpackwise' in l]
    print('LD_LIBRARY_PATH=$lib: %s from %s' % (packwise.library_path, packwise.__file__))
    real = lambda p: os.path.realpath(p) + os.sep
    ok = (real(packwise.__file__).startswith(real('$venv'))
          and real(packwise.library_path).startswith(real('$lib'))
          and maps and all(real(m).startswith(real('$lib')) for m in maps))
    sys.exit(0 if ok else 'FAILED: not the venv package with the prefix library: %s' % maps)"
grep -q "^LIBRARY" "$venv"/lib/python3*/site-packages/packwise/_install_path.py 2>/dev/null &&
  { echo "FAILED: a path was baked without PACKWISE_LIBRARY_DIR"; exit 1; }

echo "== 3. pip install with PACKWISE_LIBRARY_DIR=$lib; no environment at run time"
# shellcheck disable=SC2086 # pipenv: two words
logged "$work/pip2.log" clean $pipenv PACKWISE_LIBRARY_DIR="$lib" "$pip" install --no-build-isolation \
  --no-index --force-reinstall --no-deps "$work/pysrc"
clean "$venv/bin/python" "$check" "$venv" "$prefix" --dist
echo "python install ok"
