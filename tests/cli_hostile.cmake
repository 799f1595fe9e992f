# The packwise command under hostile input (issue 13): tests/cli/check_cli_hostile.py, one
# ctest test per group. Runs the built tool, so only for native builds.
if(NOT CMAKE_CROSSCOMPILING AND PW_BUILD_TOOLS)
  find_program(PW_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
  if(PW_PYTHON3)
    foreach(group args outputs)
      add_test(NAME cli_hostile_${group}
        COMMAND ${PW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_cli_hostile.py ${group}
                $<TARGET_FILE:packwise> ${CMAKE_CURRENT_SOURCE_DIR}/data
                ${CMAKE_CURRENT_BINARY_DIR}/cli_hostile_${group})
      set_tests_properties(cli_hostile_${group} PROPERTIES TIMEOUT 600)
    endforeach()
  endif()
endif()
