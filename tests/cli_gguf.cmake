# packwise inspect / dequant against ggml's fixtures, an independent GGUF
# parser, multi-rank files and malformed input (issue 3). Runs the built tool,
# so only for native builds.
if(NOT CMAKE_CROSSCOMPILING AND PW_BUILD_TOOLS)
  find_program(PW_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
  if(PW_PYTHON3)
    add_test(NAME cli_gguf
      COMMAND ${PW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_gguf_cli.py
              $<TARGET_FILE:packwise> ${CMAKE_CURRENT_SOURCE_DIR}/data
              ${CMAKE_CURRENT_BINARY_DIR}/cli_gguf)
  endif()
endif()
