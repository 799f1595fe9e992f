# packwise matmul against ggml's results, for every kernel of every fixture
# weight (issue 4). Runs the built tool, so only for native builds.
if(NOT CMAKE_CROSSCOMPILING)
  find_program(PW_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
  if(PW_PYTHON3)
    foreach(isa IN LISTS PW_TEST_ISAS)
      add_test(NAME cli_matmul_ggml[${isa}]
        COMMAND ${PW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_matmul_ggml.py
                $<TARGET_FILE:packwise> ${CMAKE_CURRENT_SOURCE_DIR}/data/ggml
                ${CMAKE_CURRENT_BINARY_DIR}/cli_matmul_${isa})
      set_tests_properties(cli_matmul_ggml[${isa}] PROPERTIES ENVIRONMENT "PACKWISE_ISA=${isa}")
    endforeach()
  endif()
endif()
