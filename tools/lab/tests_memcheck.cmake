# SPDX-License-Identifier: MIT
# memcheck's arithmetic on known inputs (tests/memcheck_math_test.c): the
# statistics shared by the lab, the overall block, OVRH% / FRAG% and the
# fragmentation probe on heaps whose answer is known, the ideal heap.
set(lab_memcheck_sources memcheck.c memcheck_run.c memcheck_heap.c memcheck_ideal.c
    memcheck_report.c json.c machine.c clock.c rt.c opts.c summary.c hist.c)
list(TRANSFORM lab_memcheck_sources PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
add_executable(lab_memcheck_math_test ${CMAKE_CURRENT_SOURCE_DIR}/tests/memcheck_math_test.c
                                      ${lab_memcheck_sources})
target_include_directories(lab_memcheck_math_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(lab_memcheck_math_test PRIVATE _GNU_SOURCE)
target_compile_options(lab_memcheck_math_test PRIVATE ${RTMEM_WARNINGS})
target_link_libraries(lab_memcheck_math_test PRIVATE rtmem::rtmem_static m)
set_target_properties(lab_memcheck_math_test PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                                                        ${CMAKE_CURRENT_BINARY_DIR})
add_test(NAME lab.memcheck.math COMMAND lab_memcheck_math_test)
