# The weights-cache reader's fuzz target and the replay of its corpus (see fuzz/README.md).
add_executable(fuzz_replay_cache ${PROJECT_SOURCE_DIR}/fuzz/replay.c ${PROJECT_SOURCE_DIR}/fuzz/fuzz_cache.c)
target_link_libraries(fuzz_replay_cache PRIVATE packwise_static)
target_include_directories(fuzz_replay_cache PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_options(fuzz_replay_cache PRIVATE ${PW_WARNINGS} ${PW_COMMON_FLAGS})
target_compile_definitions(fuzz_replay_cache PRIVATE _GNU_SOURCE)
add_test(NAME fuzz_replay_cache
  COMMAND fuzz_replay_cache ${PROJECT_SOURCE_DIR}/fuzz/corpus/cache ${PROJECT_SOURCE_DIR}/fuzz/crashes/cache)

if(PW_FUZZ)
  add_executable(fuzz_cache ${PROJECT_SOURCE_DIR}/fuzz/fuzz_cache.c)
  target_link_libraries(fuzz_cache PRIVATE packwise_static)
  target_include_directories(fuzz_cache PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(fuzz_cache PRIVATE ${PW_WARNINGS} ${PW_COMMON_FLAGS} -fsanitize=fuzzer)
  target_link_options(fuzz_cache PRIVATE -fsanitize=fuzzer)
endif()
