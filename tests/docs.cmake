# The API reference builds with no warning: every public function, type, field and
# enum value is documented (Doxyfile: WARN_AS_ERROR). Needs Doxygen (Debian package).
if(PW_DOXYGEN)
  add_test(NAME api_reference COMMAND ${PW_DOXYGEN} ${PROJECT_BINARY_DIR}/Doxyfile
           WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
endif()
