# QB4W descriptors (fuzz/fuzz_qb4w.c): raw weights of any shape, block size, scale
# type, zero points, flags, scales, biases, options and ISA cap, products checked
# against a reference and NaN rows. The replay of its corpus and crash folder is an ordinary test in every build.
add_executable(fuzz_replay_qb4w ${PROJECT_SOURCE_DIR}/fuzz/replay.c ${PROJECT_SOURCE_DIR}/fuzz/fuzz_qb4w.c)
target_link_libraries(fuzz_replay_qb4w PRIVATE packwise_static)
target_compile_options(fuzz_replay_qb4w PRIVATE ${PW_WARNINGS} ${PW_COMMON_FLAGS})
target_compile_definitions(fuzz_replay_qb4w PRIVATE _GNU_SOURCE)
add_test(NAME fuzz_replay_qb4w
  COMMAND fuzz_replay_qb4w ${PROJECT_SOURCE_DIR}/fuzz/corpus/qb4w ${PROJECT_SOURCE_DIR}/fuzz/crashes/qb4w)

if(PW_FUZZ)
  add_executable(fuzz_qb4w ${PROJECT_SOURCE_DIR}/fuzz/fuzz_qb4w.c)
  target_link_libraries(fuzz_qb4w PRIVATE packwise_static)
  target_compile_options(fuzz_qb4w PRIVATE ${PW_WARNINGS} ${PW_COMMON_FLAGS} -fsanitize=fuzzer)
  target_link_options(fuzz_qb4w PRIVATE -fsanitize=fuzzer)
  target_compile_definitions(fuzz_qb4w PRIVATE _GNU_SOURCE)
endif()
