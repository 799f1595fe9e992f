# The SME QC4W families (src/kernel/arm/qc4w_gemm_sme.c) under qemu at three
# streaming vector lengths: 16, 32 and 64 bytes (128, 256 and 512 bits), with
# PACKWISE_ISA=sme. test_qc4w must find and test the family of that length
# (PW_TEST_QC4W_KERNEL) bit for bit against the oracle; the other QC4W tests
# run with it as the QC4W kernel of choice. test_kernels is not among them: it
# checks the block-format kernels only (QC4W's are test_qc4w's), and no block
# kernel depends on the streaming vector length, so its [native] run covers them.
if(PW_ARCH STREQUAL "arm" AND CMAKE_CROSSCOMPILING_EMULATOR MATCHES "qemu-aarch64")
  set(pw_sme_tests test_qc4w test_qc4w_fc test_qc4w_pack test_qc4w_cache_file)
  foreach(bytes 16 32 64)
    math(EXPR bits "${bytes} * 8")
    math(EXPR nr "${bytes}")
    string(REPLACE ";max;" ";max,sme-default-vector-length=${bytes};" pw_sme_emulator
           "${CMAKE_CROSSCOMPILING_EMULATOR}")
    add_test(NAME test_qc4w_sme_vl[vl${bits}] COMMAND ${pw_sme_emulator} $<TARGET_FILE:test_qc4w_sme_vl>)
    set_tests_properties(test_qc4w_sme_vl[vl${bits}] PROPERTIES LABELS "sme")
    foreach(t IN LISTS pw_sme_tests)
      add_test(NAME ${t}[sme,vl${bits}] COMMAND ${pw_sme_emulator} $<TARGET_FILE:${t}>)
      set(env "PACKWISE_ISA=sme")
      if(t STREQUAL "test_qc4w")
        list(APPEND env "PW_TEST_QC4W_KERNEL=qc4w_vl${bits}_n${nr}k8s2_sme")
      endif()
      set_tests_properties(${t}[sme,vl${bits}] PROPERTIES ENVIRONMENT "${env};${PW_TEST_ENV}"
        LABELS "sme")
    endforeach()
  endforeach()
endif()

# A cache file and a packed buffer made at 256 bits, refused at 512 (and repacked
# through the cache): two processes, so the second reads what the first wrote.
if(PW_ARCH STREQUAL "arm" AND CMAKE_CROSSCOMPILING_EMULATOR MATCHES "qemu-aarch64")
  set(pw_sme_cache ${CMAKE_CURRENT_BINARY_DIR}/test_qc4w_sme_vl256.pwc)
  foreach(step write read)
    if(step STREQUAL "write")
      set(bytes 32)
    else()
      set(bytes 64)
    endif()
    string(REPLACE ";max;" ";max,sme-default-vector-length=${bytes};" pw_sme_emulator
           "${CMAKE_CROSSCOMPILING_EMULATOR}")
    add_test(NAME test_qc4w_sme_vl[${step}] COMMAND ${pw_sme_emulator}
             $<TARGET_FILE:test_qc4w_sme_vl> ${step} ${pw_sme_cache})
    set_tests_properties(test_qc4w_sme_vl[${step}] PROPERTIES LABELS "sme")
  endforeach()
  set_tests_properties(test_qc4w_sme_vl[write] PROPERTIES FIXTURES_SETUP pw_sme_vl256)
  set_tests_properties(test_qc4w_sme_vl[read] PROPERTIES FIXTURES_REQUIRED pw_sme_vl256)
endif()
