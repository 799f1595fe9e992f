# Library sources: every src/**.c; ISA-specific files are picked and flagged by
# pw_isa_sources (cmake/PackwiseIsa.cmake).
include(${PROJECT_SOURCE_DIR}/cmake/PackwiseIsa.cmake)
file(GLOB_RECURSE PW_ALL_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/*.c)

pw_isa_sources(PW_SOURCES ${PW_ALL_SOURCES})

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
