# The command refuses a thread count above PW_MAX_THREADS with the library's
# message naming the cap, exit 2, and writes nothing. Included from
# tests/CMakeLists.txt it registers the test; run with
# `cmake -DPACKWISE=<tool> -DWORKDIR=<dir> -P cli_threads.cmake` it is the check.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  if(TARGET packwise AND NOT CMAKE_CROSSCOMPILING)
    add_test(NAME cli_threads
      COMMAND ${CMAKE_COMMAND} -DPACKWISE=$<TARGET_FILE:packwise>
        -DDATA=${CMAKE_CURRENT_SOURCE_DIR}/data/ggml
        -DWORKDIR=${CMAKE_CURRENT_BINARY_DIR}/cli_threads -P ${CMAKE_CURRENT_LIST_FILE})
    set_tests_properties(cli_threads PROPERTIES TIMEOUT 120)
  endif()
  return()
endif()

cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORKDIR})
file(MAKE_DIRECTORY ${WORKDIR})
file(GLOB models ${DATA}/*.gguf)
list(GET models 0 model)
set(failures 0)
foreach(cmd "matmul;${model};w;--x;${WORKDIR}/x.bin;-o;${WORKDIR}/y.bin;--threads;1025"
            "prepack;${model};-o;${WORKDIR}/c.pwc;--threads;1025")
  execute_process(COMMAND ${PACKWISE} ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  list(GET cmd 0 name)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "PW_MAX_THREADS \\(1024\\)")
    message(SEND_ERROR "packwise ${name} --threads 1025: exit ${rc}, stderr: ${err}")
    math(EXPR failures "${failures} + 1")
  endif()
endforeach()
file(GLOB written ${WORKDIR}/*)
if(written)
  message(SEND_ERROR "refused commands wrote ${written}")
  math(EXPR failures "${failures} + 1")
endif()
if(failures)
  message(FATAL_ERROR "cli_threads: ${failures} failures")
endif()
