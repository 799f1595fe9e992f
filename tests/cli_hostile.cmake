# The packwise command under hostile input (issue 13): tests/cli/check_cli_hostile.py, one
# ctest test per group. Runs the built tool, so only for native builds. The enospc group
# preloads tests/support/enospc_preload.c (a full file system without privileges). In
# sanitizer builds the tool carries the ASan runtime (statically, CMakeLists.txt), so the
# preload, not instrumented, is linked without one: two runtimes in a process fail.
if(NOT CMAKE_CROSSCOMPILING AND PW_BUILD_TOOLS)
  find_program(PW_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
  if(PW_PYTHON3)
    add_library(pw_enospc MODULE ${CMAKE_CURRENT_SOURCE_DIR}/support/enospc_preload.c)
    target_compile_options(pw_enospc PRIVATE -Wall -Wextra)
    target_link_libraries(pw_enospc PRIVATE ${CMAKE_DL_LIBS})
    if(PW_SANITIZE)
      target_link_options(pw_enospc PRIVATE -fno-sanitize=all)
    endif()
    set(pw_preload "$<TARGET_FILE:pw_enospc>")
    foreach(group args outputs enospc inputs)
      add_test(NAME cli_hostile_${group}
        COMMAND ${PW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_cli_hostile.py ${group}
                $<TARGET_FILE:packwise> ${CMAKE_CURRENT_SOURCE_DIR}/data
                ${CMAKE_CURRENT_BINARY_DIR}/cli_hostile_${group} ${pw_preload})
      set_tests_properties(cli_hostile_${group} PROPERTIES TIMEOUT 600)
    endforeach()
  endif()
endif()
