# Run by cmake --install (install(SCRIPT) from PackwisePython.cmake, after
# PW_PY_DIR, PW_PY_LIBDIR and PW_PY_LIBNAME are set): writes
# <python dir>/packwise/_install_path.py naming the installed library by its absolute
# path (DESTDIR is a staging root, never part of the path the package will load).
foreach(var PW_PY_DIR PW_PY_LIBDIR)
  if(IS_ABSOLUTE "${${var}}")
    set(${var}_FULL "${${var}}")
  else()
    set(${var}_FULL "${CMAKE_INSTALL_PREFIX}/${${var}}")
  endif()
endforeach()
set(pw_lib "${PW_PY_LIBDIR_FULL}/${PW_PY_LIBNAME}")
if(pw_lib MATCHES "[\n\r]")
  message(FATAL_ERROR "packwise: the library path holds a line break: ${pw_lib}")
endif()
# A Python string literal: backslashes and quotes escaped.
string(REPLACE "\\" "\\\\" pw_lit "${pw_lib}")
string(REPLACE "\"" "\\\"" pw_lit "${pw_lit}")
set(pw_file "$ENV{DESTDIR}${PW_PY_DIR_FULL}/packwise/_install_path.py")
message(STATUS "Installing: ${pw_file}")
file(WRITE "${pw_file}"
  "# Written by cmake --install: the libpackwise this package loads (see __init__.py).\n"
  "LIBRARY = \"${pw_lit}\"\n")
list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${pw_file}")
