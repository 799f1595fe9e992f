# The example program runs in the suite (native builds): without, then with a cache file.
if(NOT CMAKE_CROSSCOMPILING AND PW_BUILD_TOOLS)
  find_program(PW_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
  if(PW_PYTHON3)
    add_test(NAME example_gguf_matmul
      COMMAND ${PW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_example.py $<TARGET_FILE:gguf_matmul>
              $<TARGET_FILE:packwise> ${CMAKE_CURRENT_SOURCE_DIR}/data/ggml/fixture_s2_in1280_out64_align128.gguf
              ${CMAKE_CURRENT_BINARY_DIR}/example)
  endif()
endif()
