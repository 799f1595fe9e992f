"""Build hook for the packwise package (metadata is in pyproject.toml).

With PACKWISE_LIBRARY_DIR set when the package is built (pip install), the absolute
path of the libpackwise found there is written into the built package as
packwise/_install_path.py, the same file `cmake --install` writes: the installed package
then loads that library with no environment variable set. Without it, the package finds
the library at import time ($PACKWISE_LIBRARY, the loader's path, /usr/local/lib, /usr/lib).
"""
import os

from setuptools import setup
from setuptools.command.build_py import build_py

LIBRARY_NAMES = ("libpackwise.so.0", "libpackwise.so")


def baked_library():
    folder = os.environ.get("PACKWISE_LIBRARY_DIR")
    if not folder:
        return None
    folder = os.path.abspath(os.path.expanduser(folder))
    for name in LIBRARY_NAMES:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    raise SystemExit("PACKWISE_LIBRARY_DIR=%s holds neither %s; point it at the folder the "
                     "library was installed to (for example <prefix>/lib)"
                     % (folder, " nor ".join(LIBRARY_NAMES)))


class BuildPy(build_py):
    def run(self):
        super().run()
        path = baked_library()
        target = os.path.join(self.build_lib, "packwise", "_install_path.py")
        if path is None:
            if os.path.exists(target):  # left by an earlier build with the variable set
                os.remove(target)
            return
        with open(target, "w", encoding="utf-8") as f:
            f.write("# Written by setup.py from PACKWISE_LIBRARY_DIR when this package was built.\n")
            f.write("LIBRARY = %r\n" % path)


setup(cmdclass={"build_py": BuildPy})
