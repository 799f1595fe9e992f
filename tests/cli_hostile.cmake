# The packwise command under hostile input (issue 13): tests/cli/check_cli_hostile.py, one
# ctest test per group. Runs the built tool, so only for native builds. The enospc group
# preloads tests/support/enospc_preload.c (a full file system without privileges); in
# sanitizer builds the ASan runtime goes first in LD_PRELOAD, as it must.
if(NOT CMAKE_CROSSCOMPILING AND PW_BUILD_TOOLS)
  find_program(PW_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
  if(PW_PYTHON3)
    add_library(pw_enospc MODULE ${CMAKE_CURRENT_SOURCE_DIR}/support/enospc_preload.c)
    target_compile_options(pw_enospc PRIVATE -Wall -Wextra)
    target_link_libraries(pw_enospc PRIVATE ${CMAKE_DL_LIBS})
    set(pw_preload "$<TARGET_FILE:pw_enospc>")
    if(PW_SANITIZE AND CMAKE_C_COMPILER_ID STREQUAL "GNU") # gcc links the ASan runtime dynamically
      execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so
                      OUTPUT_VARIABLE pw_asan_rt OUTPUT_STRIP_TRAILING_WHITESPACE)
      set(pw_preload "${pw_asan_rt}:$<TARGET_FILE:pw_enospc>")
    endif()
    foreach(group args outputs enospc inputs)
      add_test(NAME cli_hostile_${group}
        COMMAND ${PW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_cli_hostile.py ${group}
                $<TARGET_FILE:packwise> ${CMAKE_CURRENT_SOURCE_DIR}/data
                ${CMAKE_CURRENT_BINARY_DIR}/cli_hostile_${group} ${pw_preload})
      set_tests_properties(cli_hostile_${group} PROPERTIES TIMEOUT 600)
    endforeach()
  endif()
endif()
