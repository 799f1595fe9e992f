# Fuzz targets (fuzz/) and the replay of their corpora as ordinary tests.
#
# Every build gets fuzz_replay_gguf: a plain main() that feeds the seed corpus
# and every input that ever crashed to the same entry point the fuzzer uses,
# registered as the ctest test fuzz_replay_gguf (run it in a PW_SANITIZE=ON
# build to replay under ASan+UBSan).
#
# The libFuzzer target itself needs clang and the sanitizers (-DPW_FUZZ=ON
# -DPW_SANITIZE=ON), in its own build directory: fuzz/README.md gives the commands.

set(PW_FUZZ_DIR ${PROJECT_SOURCE_DIR}/fuzz)

add_executable(fuzz_replay_gguf ${PW_FUZZ_DIR}/replay.c ${PW_FUZZ_DIR}/fuzz_gguf.c)
target_link_libraries(fuzz_replay_gguf PRIVATE packwise_static)
target_compile_options(fuzz_replay_gguf PRIVATE ${PW_WARNINGS} ${PW_COMMON_FLAGS})
target_compile_definitions(fuzz_replay_gguf PRIVATE _GNU_SOURCE)
add_test(NAME fuzz_replay_gguf
  COMMAND fuzz_replay_gguf ${PW_FUZZ_DIR}/corpus/gguf ${PW_FUZZ_DIR}/crashes/gguf)

if(PW_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang" OR NOT PW_SANITIZE)
    message(FATAL_ERROR "PW_FUZZ=ON needs clang (CC=clang-19, fuzz/README.md) and PW_SANITIZE=ON")
  endif()
  # Coverage feedback from the library too, not only from the target: from every source
  # but the ISA kernel files (src/kernel/x86/, src/kernel/arm/), whose branches follow the
  # shapes, never the bytes, and which still get ASan and UBSan. With coverage on top of
  # the sanitizers, clang 19 -O1 took 251 s for qb4w_ch16_avx512.c (50 s for ASan and
  # coverage, 112 s for ASan and UBSan), and the whole fuzz build 877 s.
  get_target_property(pw_fuzz_sources packwise_objects SOURCES)
  foreach(src IN LISTS pw_fuzz_sources)
    if(NOT src MATCHES "/src/kernel/(x86|arm)/")
      set_property(SOURCE ${src} TARGET_DIRECTORY packwise_objects APPEND PROPERTY
                   COMPILE_OPTIONS -fsanitize=fuzzer-no-link)
    endif()
  endforeach()
  add_executable(fuzz_gguf ${PW_FUZZ_DIR}/fuzz_gguf.c)
  target_link_libraries(fuzz_gguf PRIVATE packwise_static)
  target_compile_options(fuzz_gguf PRIVATE ${PW_WARNINGS} ${PW_COMMON_FLAGS} -fsanitize=fuzzer)
  target_link_options(fuzz_gguf PRIVATE -fsanitize=fuzzer)
endif()
