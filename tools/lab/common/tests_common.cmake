# SPDX-License-Identifier: MIT
# common/: unit tests of the pieces every command shares (included by
# tools/lab/CMakeLists.txt). aut: the allocator-under-test type.
add_executable(lab_aut_test ${CMAKE_CURRENT_SOURCE_DIR}/common/tests/aut_test.c
                            ${CMAKE_CURRENT_SOURCE_DIR}/common/aut.c
                            ${CMAKE_CURRENT_SOURCE_DIR}/common/peers.c)
target_include_directories(lab_aut_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(lab_aut_test PRIVATE _GNU_SOURCE)
target_compile_options(lab_aut_test PRIVATE ${RTMEM_WARNINGS})
target_link_libraries(lab_aut_test PRIVATE rtmem::rtmem_static ${CMAKE_DL_LIBS})
add_test(NAME lab.common.aut COMMAND lab_aut_test)
