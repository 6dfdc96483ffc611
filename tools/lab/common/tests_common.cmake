# SPDX-License-Identifier: MIT
# Unit tests of common/'s pieces that no command's tests cover on their
# own: the output tables (common/table.c, tests/table_test.c).
add_executable(lab_table_test ${CMAKE_CURRENT_SOURCE_DIR}/common/tests/table_test.c
                              ${CMAKE_CURRENT_SOURCE_DIR}/common/table.c
                              ${CMAKE_CURRENT_SOURCE_DIR}/common/json.c)
target_include_directories(lab_table_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(lab_table_test PRIVATE _GNU_SOURCE)
target_compile_options(lab_table_test PRIVATE ${RTMEM_WARNINGS})
target_link_libraries(lab_table_test PRIVATE m)
set_target_properties(lab_table_test PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
add_test(NAME lab.common.table COMMAND lab_table_test)
