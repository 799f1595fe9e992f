# Views and layout arithmetic (fuzz/fuzz_view.c): hand-made views, narrowing, transpose,
# decode, prepack, flat indices and the bytes-level converters, checked against
# invariants. The replay of its corpus and crash folder is an ordinary test in every build.
add_executable(fuzz_replay_view ${PROJECT_SOURCE_DIR}/fuzz/replay.c ${PROJECT_SOURCE_DIR}/fuzz/fuzz_view.c)
target_link_libraries(fuzz_replay_view PRIVATE packwise_static)
target_include_directories(fuzz_replay_view PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_options(fuzz_replay_view PRIVATE ${PW_WARNINGS} ${PW_COMMON_FLAGS})
target_compile_definitions(fuzz_replay_view PRIVATE _GNU_SOURCE)
add_test(NAME fuzz_replay_view
  COMMAND fuzz_replay_view ${PROJECT_SOURCE_DIR}/fuzz/corpus/view ${PROJECT_SOURCE_DIR}/fuzz/crashes/view)

if(PW_FUZZ)
  add_executable(fuzz_view ${PROJECT_SOURCE_DIR}/fuzz/fuzz_view.c)
  target_link_libraries(fuzz_view PRIVATE packwise_static)
  target_include_directories(fuzz_view PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(fuzz_view PRIVATE ${PW_WARNINGS} ${PW_COMMON_FLAGS} -fsanitize=fuzzer)
  target_link_options(fuzz_view PRIVATE -fsanitize=fuzzer)
  target_compile_definitions(fuzz_view PRIVATE _GNU_SOURCE)
endif()
