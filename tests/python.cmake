# The Python binding's tests (ctypes over the shared library, numpy from Debian).
# Native builds only; under the sanitizers the ASan runtime is preloaded into python.
if(NOT CMAKE_CROSSCOMPILING)
  find_program(PW_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
  if(PW_PYTHON3)
    set(pw_py_env
      "PACKWISE_LIBRARY=$<TARGET_FILE:packwise_shared>"
      "PACKWISE_TEST_DATA=${CMAKE_CURRENT_SOURCE_DIR}/data"
      "PYTHONPATH=${PROJECT_SOURCE_DIR}/bindings/python"
      "PYTHONDONTWRITEBYTECODE=1")
    if(PW_SANITIZE)
      execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so
                      OUTPUT_VARIABLE pw_libasan OUTPUT_STRIP_TRAILING_WHITESPACE)
      list(APPEND pw_py_env "LD_PRELOAD=${pw_libasan}" "ASAN_OPTIONS=detect_leaks=0")
    endif()
    add_test(NAME python_binding
      COMMAND ${PW_PYTHON3} -m unittest discover -s ${PROJECT_SOURCE_DIR}/bindings/python/tests -v)
    set_tests_properties(python_binding PROPERTIES ENVIRONMENT "${pw_py_env}")
    add_test(NAME cli_fixtures_all
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_fixtures_all.sh $<TARGET_FILE:packwise>
              ${CMAKE_CURRENT_SOURCE_DIR}/data ${CMAKE_CURRENT_BINARY_DIR}/fixtures_all)
    add_test(NAME cli_help_readme
      COMMAND ${PW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_help_readme.py
              $<TARGET_FILE:packwise> ${PROJECT_SOURCE_DIR}/README.md)
    add_test(NAME cli_prepack_pty
      COMMAND ${PW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_prepack_pty.py
              $<TARGET_FILE:packwise> ${CMAKE_CURRENT_BINARY_DIR}/cli_prepack_pty)
    add_test(NAME cli_fixtures_verify
      COMMAND ${PW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_fixtures_cli.py
              $<TARGET_FILE:packwise> ${CMAKE_CURRENT_BINARY_DIR}/cli_fixtures)
  endif()
endif()
