# Install into a scratch prefix and build a consumer against it (find_package and pkg-config).
# Native, unsanitized builds only: the consumer is built with plain flags.
if(NOT CMAKE_CROSSCOMPILING AND NOT PW_SANITIZE AND PW_BUILD_TOOLS)
  add_test(NAME install_and_consume
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_install.sh ${PROJECT_BINARY_DIR}
            ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/install_test ${CMAKE_C_COMPILER}
            $<IF:$<BOOL:${PW_INSTALL_DOCS}>,docs,nodocs>)
endif()
