# Installation: headers, static and shared libraries (versioned SONAME), the
# packwise command, the layout fixtures with a manifest under share/, a
# pkg-config file and a CMake package (find_package(packwise) gives the
# imported targets packwise::packwise (shared) and packwise::packwise_static).
include(CMakePackageConfigHelpers)

set(PW_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/packwise)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")

set_target_properties(packwise_shared PROPERTIES EXPORT_NAME packwise)
set_target_properties(packwise_static PROPERTIES EXPORT_NAME packwise_static)
install(TARGETS packwise_shared packwise_static EXPORT packwiseTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT packwiseTargets NAMESPACE packwise:: DESTINATION ${PW_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/packwiseConfig.cmake.in
  ${PROJECT_BINARY_DIR}/packwiseConfig.cmake INSTALL_DESTINATION ${PW_CMAKE_DIR})
# 0.x: a minor version may change the API (rule 5: byte formats carry their own versions).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/packwiseConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/packwiseConfig.cmake
              ${PROJECT_BINARY_DIR}/packwiseConfigVersion.cmake DESTINATION ${PW_CMAKE_DIR})

# pkg-config: the shared library by default; --static adds what libpackwise.a needs.
set(PW_PC_PRIVATE "-lpthread -lm")
if(PW_HAVE_PTHREADPOOL)
  set(PW_PC_PRIVATE "-lpthreadpool ${PW_PC_PRIVATE}")
endif()
# Relocatable: the prefix is found from the .pc file's own folder, so `cmake --install
# --prefix P` anywhere gives a working file.
file(RELATIVE_PATH PW_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
configure_file(${PROJECT_SOURCE_DIR}/cmake/packwise.pc.in ${PROJECT_BINARY_DIR}/packwise.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/packwise.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

if(PW_BUILD_TOOLS)
  install(TARGETS packwise RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # The fixtures are written by the installed command itself, so the data and the
  # code that checks it can never disagree. Cross builds run it through the emulator.
  set(pw_fixture_cmd "")
  if(CMAKE_CROSSCOMPILING_EMULATOR)
    string(REPLACE ";" "\" \"" pw_fixture_cmd "${CMAKE_CROSSCOMPILING_EMULATOR}")
    set(pw_fixture_cmd "\"${pw_fixture_cmd}\"")
  endif()
  install(CODE "
    set(pw_dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/packwise/fixtures\")
    message(STATUS \"Writing layout fixtures to \${pw_dir}\")
    execute_process(COMMAND ${pw_fixture_cmd} \"$<TARGET_FILE:packwise>\" fixtures --all \"\${pw_dir}\"
                    RESULT_VARIABLE pw_rc)
    if(NOT pw_rc EQUAL 0)
      message(FATAL_ERROR \"packwise fixtures --all failed (\${pw_rc})\")
    endif()")
endif()

include(${PROJECT_SOURCE_DIR}/cmake/PackwisePython.cmake)

# The examples and the API reference, under share/doc/packwise: the HTML is made by
# Doxygen (Debian's doxygen) when it is installed, so an ordinary build never waits for it.
if(PW_INSTALL_DOCS)
  install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/CHANGELOG.md
          DESTINATION ${CMAKE_INSTALL_DOCDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/examples/gguf_matmul.c DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
  if(PW_DOXYGEN)
    # Written straight into the destination (its own Doxyfile including the build's, with
    # the output folder changed), so concurrent installs into other prefixes never share
    # an output folder.
    install(CODE "
      set(pw_doc \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DOCDIR}\")
      message(STATUS \"API reference (doxygen) into \${pw_doc}/html\")
      file(MAKE_DIRECTORY \"\${pw_doc}\")
      file(WRITE \"\${pw_doc}/.Doxyfile\" \"@INCLUDE = ${PROJECT_BINARY_DIR}/Doxyfile\\nOUTPUT_DIRECTORY = \${pw_doc}\\n\")
      execute_process(COMMAND \"${PW_DOXYGEN}\" \"\${pw_doc}/.Doxyfile\"
                      WORKING_DIRECTORY \"${PROJECT_BINARY_DIR}\" RESULT_VARIABLE pw_rc
                      OUTPUT_QUIET ERROR_VARIABLE pw_err)
      file(REMOVE \"\${pw_doc}/.Doxyfile\")
      if(NOT pw_rc EQUAL 0)
        message(FATAL_ERROR \"doxygen failed (\${pw_rc}): \${pw_err}\")
      endif()")
  else()
    message(STATUS "doxygen not found: the API reference is not installed")
  endif()
endif()
