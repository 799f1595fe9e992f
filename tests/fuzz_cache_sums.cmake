# The weights-cache reader behind its checksums (fuzz/fuzz_cache_sums.c): every input is
# sealed (all checksums recomputed) before it is parsed. The replay of its corpus and
# crash folder is an ordinary test in every build (see fuzz/README.md).
add_executable(fuzz_replay_cache_sums ${PROJECT_SOURCE_DIR}/fuzz/replay.c ${PROJECT_SOURCE_DIR}/fuzz/fuzz_cache_sums.c)
target_link_libraries(fuzz_replay_cache_sums PRIVATE packwise_static)
target_include_directories(fuzz_replay_cache_sums PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_options(fuzz_replay_cache_sums PRIVATE ${PW_WARNINGS} ${PW_COMMON_FLAGS})
target_compile_definitions(fuzz_replay_cache_sums PRIVATE _GNU_SOURCE)
add_test(NAME fuzz_replay_cache_sums
  COMMAND fuzz_replay_cache_sums ${PROJECT_SOURCE_DIR}/fuzz/corpus/cache_sums
          ${PROJECT_SOURCE_DIR}/fuzz/crashes/cache_sums)

if(PW_FUZZ)
  add_executable(fuzz_cache_sums ${PROJECT_SOURCE_DIR}/fuzz/fuzz_cache_sums.c)
  target_link_libraries(fuzz_cache_sums PRIVATE packwise_static)
  target_include_directories(fuzz_cache_sums PRIVATE ${PROJECT_SOURCE_DIR}/src)
  # PW_LIBFUZZER: the structure-aware custom mutator (it calls LLVMFuzzerMutate).
  target_compile_definitions(fuzz_cache_sums PRIVATE PW_LIBFUZZER)
  target_compile_options(fuzz_cache_sums PRIVATE ${PW_WARNINGS} ${PW_COMMON_FLAGS} -fsanitize=fuzzer)
  target_link_options(fuzz_cache_sums PRIVATE -fsanitize=fuzzer)
endif()
