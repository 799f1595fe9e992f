# The Python package installed as users install it (tests/python/check_python_install.sh):
# cmake --install into a scratch prefix, then pip into a venv, each imported with a clean
# environment. Native unsanitized gcc builds only (the release suite): Python cannot load
# a sanitized library without a preload, cross builds cannot run it, and the clang suite
# would repeat the same install. Skipped (exit 77) without python3, numpy or venv.
if(NOT CMAKE_CROSSCOMPILING AND NOT PW_SANITIZE AND NOT PW_TSAN AND PW_INSTALL_PYTHON
   AND CMAKE_C_COMPILER_ID STREQUAL "GNU")
  add_test(NAME python_install
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/python/check_python_install.sh ${CMAKE_COMMAND}
            ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/python_install
            ${PW_PYTHON_INSTALL_DIR} ${CMAKE_INSTALL_LIBDIR})
  set_tests_properties(python_install PROPERTIES SKIP_RETURN_CODE 77 LABELS "python;install"
    TIMEOUT 300)
endif()
