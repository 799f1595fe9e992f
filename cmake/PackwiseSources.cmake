# Library sources. Portable C is found by glob; ISA-specific files are picked
# by folder (x86/ or arm/) and get per-file target flags from their suffix, so
# the library as a whole is built for the baseline ISA and chooses kernels at
# run time (STYLE.md rule 4).
file(GLOB_RECURSE PW_ALL_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/*.c)

set(PW_SOURCES "")
foreach(src IN LISTS PW_ALL_SOURCES)
  if(src MATCHES "/x86/")
    if(NOT PW_ARCH STREQUAL "x86")
      continue()
    endif()
  elseif(src MATCHES "/arm/")
    if(NOT PW_ARCH STREQUAL "arm")
      continue()
    endif()
  endif()
  list(APPEND PW_SOURCES ${src})
  if(src MATCHES "_avx512\\.c$")
    set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS
      "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx512vnni;-mavx2;-mfma;-mf16c;-mbmi2")
  elseif(src MATCHES "_avx2\\.c$")
    set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c;-mbmi2")
  elseif(src MATCHES "_i8mm\\.c$")
    set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "-march=armv8.2-a+dotprod+i8mm")
  elseif(src MATCHES "_dotprod\\.c$")
    set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "-march=armv8.2-a+dotprod")
  endif()
endforeach()

add_library(packwise_objects OBJECT ${PW_SOURCES})
set_target_properties(packwise_objects PROPERTIES POSITION_INDEPENDENT_CODE ON
  C_VISIBILITY_PRESET hidden)
target_include_directories(packwise_objects
  PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_BINARY_DIR}/generated)
target_compile_options(packwise_objects PRIVATE ${PW_WARNINGS} ${PW_COMMON_FLAGS})
target_compile_definitions(packwise_objects PRIVATE _GNU_SOURCE PACKWISE_SHARED_BUILD
  PW_VERSION_STRING="${PROJECT_VERSION}")
if(PW_HAVE_PTHREADPOOL)
  target_compile_definitions(packwise_objects PRIVATE PW_HAVE_PTHREADPOOL=1)
  target_include_directories(packwise_objects PRIVATE ${PTHREADPOOL_INCLUDE_DIR})
endif()
if(XXHASH_INCLUDE_DIR)
  target_compile_definitions(packwise_objects PRIVATE PW_HAVE_XXHASH=1)
  target_include_directories(packwise_objects PRIVATE ${XXHASH_INCLUDE_DIR})
endif()

set(PW_LINK_LIBS Threads::Threads m)
if(PW_HAVE_PTHREADPOOL)
  list(APPEND PW_LINK_LIBS ${PTHREADPOOL_LIBRARY})
endif()

add_library(packwise_static STATIC $<TARGET_OBJECTS:packwise_objects>)
set_target_properties(packwise_static PROPERTIES OUTPUT_NAME packwise)
target_include_directories(packwise_static PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(packwise_static PUBLIC ${PW_LINK_LIBS})

add_library(packwise_shared SHARED $<TARGET_OBJECTS:packwise_objects>)
set_target_properties(packwise_shared PROPERTIES OUTPUT_NAME packwise
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR} C_VISIBILITY_PRESET hidden)
target_include_directories(packwise_shared PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(packwise_shared PRIVATE ${PW_LINK_LIBS})
