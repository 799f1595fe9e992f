# QC4W descriptors (fuzz/fuzz_qc4w.c): raw weights of any shape, zero point, flags,
# scales, biases, options and ISA cap, products checked against a reference and
# NaN rows. The replay of its corpus and crash folder is an ordinary test in every build.
add_executable(fuzz_replay_qc4w ${PROJECT_SOURCE_DIR}/fuzz/replay.c ${PROJECT_SOURCE_DIR}/fuzz/fuzz_qc4w.c)
target_link_libraries(fuzz_replay_qc4w PRIVATE packwise_static)
target_compile_options(fuzz_replay_qc4w PRIVATE ${PW_WARNINGS} ${PW_COMMON_FLAGS})
target_compile_definitions(fuzz_replay_qc4w PRIVATE _GNU_SOURCE)
add_test(NAME fuzz_replay_qc4w
  COMMAND fuzz_replay_qc4w ${PROJECT_SOURCE_DIR}/fuzz/corpus/qc4w ${PROJECT_SOURCE_DIR}/fuzz/crashes/qc4w)

if(PW_FUZZ)
  add_executable(fuzz_qc4w ${PROJECT_SOURCE_DIR}/fuzz/fuzz_qc4w.c)
  target_link_libraries(fuzz_qc4w PRIVATE packwise_static)
  target_compile_options(fuzz_qc4w PRIVATE ${PW_WARNINGS} ${PW_COMMON_FLAGS} -fsanitize=fuzzer)
  target_link_options(fuzz_qc4w PRIVATE -fsanitize=fuzzer)
  target_compile_definitions(fuzz_qc4w PRIVATE _GNU_SOURCE)
endif()
