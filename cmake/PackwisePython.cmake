# The Python binding (bindings/python) installed as the package `packwise`, with the
# installed library's absolute path written into packwise/_install_path.py at install
# time, so `import packwise` loads the installed libpackwise.so.0 with no environment
# variable set (the folder must be on sys.path: it is for Debian's python3 and the
# default /usr/local prefix; a custom prefix needs PYTHONPATH).
option(PW_INSTALL_PYTHON "Install the Python binding (package packwise) with cmake --install" ON)
if(NOT PW_INSTALL_PYTHON)
  return()
endif()

# The default folder is the one the system's python3 reads for the prefix: Debian's
# python3 puts <prefix>/local/lib/python3.X/dist-packages on sys.path for prefix /usr,
# i.e. /usr/local/lib/python3.X/dist-packages, so the Debian default is
# lib/python3.X/dist-packages (relative: under the install-time prefix); any other
# python3 gives its own purelib folder (lib/python3.X/site-packages).
if(NOT DEFINED PW_PYTHON_INSTALL_DIR)
  find_program(PW_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
  find_program(PW_PYTHON3 python3)
  set(pw_py_default "")
  if(PW_PYTHON3)
    execute_process(COMMAND ${PW_PYTHON3} -c [=[
import os, sys, sysconfig
v = "%d.%d" % sys.version_info[:2]
if "deb_system" in sysconfig.get_scheme_names():
    print("lib/python%s/dist-packages" % v)
else:
    base = os.path.abspath(os.sep + "pw-prefix")
    p = sysconfig.get_path("purelib", "posix_prefix", vars={"base": base, "platbase": base})
    print(os.path.relpath(p, base))
]=] OUTPUT_VARIABLE pw_py_default OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE pw_py_rc)
    if(NOT pw_py_rc EQUAL 0)
      set(pw_py_default "")
    endif()
  endif()
  if(pw_py_default STREQUAL "")
    set(pw_py_default lib/python3/dist-packages)
  endif()
  set(PW_PYTHON_INSTALL_DIR ${pw_py_default} CACHE STRING
      "Folder the Python package packwise is installed to (relative: under the install prefix)")
endif()
message(STATUS "packwise: Python package installed to ${PW_PYTHON_INSTALL_DIR}")

install(DIRECTORY ${PROJECT_SOURCE_DIR}/bindings/python/packwise
        DESTINATION ${PW_PYTHON_INSTALL_DIR}
        FILES_MATCHING PATTERN "*.py" PATTERN "_install_path.py" EXCLUDE
        PATTERN "__pycache__" EXCLUDE)
# Written at install time: the prefix is known only then (cmake --install --prefix).
install(CODE "
  set(PW_PY_DIR \"${PW_PYTHON_INSTALL_DIR}\")
  set(PW_PY_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(PW_PY_LIBNAME \"$<TARGET_SONAME_FILE_NAME:packwise_shared>\")")
install(SCRIPT ${PROJECT_SOURCE_DIR}/cmake/PackwisePythonPath.cmake)
