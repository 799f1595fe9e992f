# One place that knows how a source file's name selects its ISA: files under
# x86/ or arm/, or named *_avx2.c, *_avx512.c, *_avxvnni.c, *_dotprod.c or
# *_i8mm.c, build only on their architecture, with per-file target flags; the
# rest is baseline code. The library (PackwiseSources.cmake) and the tool
# (tools/CMakeLists.txt) both use it, so a build is always for the baseline
# ISA and picks kernels at run time (STYLE.md rule 4).
function(pw_isa_sources out)
  set(kept "")
  foreach(src IN LISTS ARGN)
    if(src MATCHES "/x86/" OR src MATCHES "_(avx2|avx512|avxvnni)\\.c$")
      if(NOT PW_ARCH STREQUAL "x86")
        continue()
      endif()
    elseif(src MATCHES "/arm/" OR src MATCHES "_(dotprod|i8mm)\\.c$")
      if(NOT PW_ARCH STREQUAL "arm")
        continue()
      endif()
    endif()
    list(APPEND kept ${src})
    if(src MATCHES "_avx512\\.c$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS
        "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx512vnni;-mavx2;-mfma;-mf16c;-mbmi2")
    elseif(src MATCHES "_avxvnni\\.c$")
      # the AVX2 flags too: the *_avxvnni.c kernels are AVX2 sources built again (avx2_level.h)
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c;-mbmi2;-mavxvnni")
    elseif(src MATCHES "_avx2\\.c$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c;-mbmi2")
    elseif(src MATCHES "_i8mm\\.c$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "-march=armv8.2-a+dotprod+i8mm")
    elseif(src MATCHES "_dotprod\\.c$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "-march=armv8.2-a+dotprod")
    endif()
  endforeach()
  set(${out} ${kept} PARENT_SCOPE)
endfunction()
