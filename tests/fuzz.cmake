# Fuzz targets (fuzz/) and the replay of their corpora as ordinary tests.
#
# Every build gets fuzz_replay_gguf: a plain main() that feeds the seed corpus
# and every input that ever crashed to the same entry point the fuzzer uses,
# registered as the ctest test fuzz_replay_gguf (run it in a PW_SANITIZE=ON
# build to replay under ASan+UBSan).
#
# The libFuzzer target itself needs clang and the sanitizers, in its own
# build directory:
#   CC=clang-14 cmake -S . -B build-fuzz -G Ninja -DPW_SANITIZE=ON -DPW_FUZZ=ON
#   cmake --build build-fuzz --target fuzz_gguf
#   build-fuzz/tests/fuzz_gguf -max_total_time=1800 fuzz/corpus/gguf   (see fuzz/README.md)

set(PW_FUZZ_DIR ${PROJECT_SOURCE_DIR}/fuzz)

add_executable(fuzz_replay_gguf ${PW_FUZZ_DIR}/replay.c ${PW_FUZZ_DIR}/fuzz_gguf.c)
target_link_libraries(fuzz_replay_gguf PRIVATE packwise_static)
target_compile_options(fuzz_replay_gguf PRIVATE ${PW_WARNINGS} ${PW_COMMON_FLAGS})
target_compile_definitions(fuzz_replay_gguf PRIVATE _GNU_SOURCE)
add_test(NAME fuzz_replay_gguf
  COMMAND fuzz_replay_gguf ${PW_FUZZ_DIR}/corpus/gguf ${PW_FUZZ_DIR}/crashes/gguf)

if(PW_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang" OR NOT PW_SANITIZE)
    message(FATAL_ERROR "PW_FUZZ=ON needs clang (CC=clang-14) and PW_SANITIZE=ON")
  endif()
  # Coverage feedback from the library too, not only from the target.
  target_compile_options(packwise_objects PRIVATE -fsanitize=fuzzer-no-link)
  add_executable(fuzz_gguf ${PW_FUZZ_DIR}/fuzz_gguf.c)
  target_link_libraries(fuzz_gguf PRIVATE packwise_static)
  target_compile_options(fuzz_gguf PRIVATE ${PW_WARNINGS} ${PW_COMMON_FLAGS} -fsanitize=fuzzer)
  target_link_options(fuzz_gguf PRIVATE -fsanitize=fuzzer)
endif()
