# The command-line parser's fuzz target (fuzz/fuzz_cli.c over the tool's own parser, the
# packwise_cli library) and the replay of its corpus (see fuzz/README.md).
if(PW_BUILD_TOOLS)
  add_executable(fuzz_replay_cli ${PROJECT_SOURCE_DIR}/fuzz/replay.c ${PROJECT_SOURCE_DIR}/fuzz/fuzz_cli.c)
  target_link_libraries(fuzz_replay_cli PRIVATE packwise_cli)
  target_compile_options(fuzz_replay_cli PRIVATE ${PW_WARNINGS} ${PW_COMMON_FLAGS})
  add_test(NAME fuzz_replay_cli
    COMMAND fuzz_replay_cli ${PROJECT_SOURCE_DIR}/fuzz/corpus/cli ${PROJECT_SOURCE_DIR}/fuzz/crashes/cli)

  if(PW_FUZZ)
    # Coverage feedback from the tool's sources too (the library's are instrumented by fuzz.cmake).
    target_compile_options(packwise_cli PRIVATE -fsanitize=fuzzer-no-link)
    add_executable(fuzz_cli ${PROJECT_SOURCE_DIR}/fuzz/fuzz_cli.c)
    target_link_libraries(fuzz_cli PRIVATE packwise_cli)
    target_compile_options(fuzz_cli PRIVATE ${PW_WARNINGS} ${PW_COMMON_FLAGS} -fsanitize=fuzzer)
    target_link_options(fuzz_cli PRIVATE -fsanitize=fuzzer)
  endif()
endif()
