# SPDX-License-Identifier: MIT
# README.md checked against the code (included by tests/CMakeLists.txt with
# every tests/*/*.cmake fragment):
#   readme.snippets        tests/readme/run.sh: every snippet and command of
#                          the README built and run as written
#   deps.suite_packages    scripts/deps.sh installs, for every mode that runs
#                          the ctest suite, what the suite needs
#   readme.firmware        docs/FIRMWARE.md names every heap's sources and
#                          RTM_ALGORITHMS' default count
# The snippets are host programs built with this build's compiler and flags
# against its libraries; cross builds leave them out (the programs would be
# the target's), and they need the install rules for the pkg-config part.
if(RTMEM_INSTALL AND NOT CMAKE_CROSSCOMPILING)
  set(readme_dropin ON)
  set(readme_flags "${CMAKE_C_FLAGS}")
  if(RTMEM_SANITIZE)
    # A sanitized librtmem needs the runtime; the sanitizer owns malloc, so
    # the drop-in's lines are left out.
    set(readme_dropin OFF)
    string(APPEND readme_flags " -fsanitize=${RTMEM_SANITIZE} -fno-omit-frame-pointer")
  endif()
  set(readme_cxx "")
  if(CMAKE_CXX_COMPILER)
    set(readme_cxx CXX=${CMAKE_CXX_COMPILER})
  endif()
  add_test(NAME readme.snippets
           COMMAND ${CMAKE_COMMAND} -E env CC=${CMAKE_C_COMPILER} ${readme_cxx} CMAKE=${CMAKE_COMMAND}
                   "EXTRA_CFLAGS=${readme_flags}" WITH_DROPIN=${readme_dropin}
                   ${CMAKE_CURRENT_LIST_DIR}/run.sh ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/readme)
  set_tests_properties(readme.snippets PROPERTIES LABELS package SKIP_RETURN_CODE 77)
endif()

add_test(NAME deps.suite_packages
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/deps_suite.sh ${PROJECT_SOURCE_DIR})
add_test(NAME readme.firmware COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/firmware_doc.sh ${PROJECT_SOURCE_DIR})
