# SPDX-License-Identifier: MIT
# memcheck's arithmetic on known inputs (memcheck/tests/memcheck_math_test.c): the
# statistics shared by the lab, the overall block, OVRH% / FRAG% and the
# fragmentation probe on heaps whose answer is known, the ideal heap.
set(lab_memcheck_sources memcheck/memcheck.c memcheck/memcheck_run.c memcheck/memcheck_heap.c
    memcheck/memcheck_ideal.c memcheck/memcheck_report.c common/json.c common/table.c
    common/machine.c common/clock.c common/rt.c common/opts.c common/summary.c common/hist.c)
list(TRANSFORM lab_memcheck_sources PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
add_executable(lab_memcheck_math_test ${CMAKE_CURRENT_SOURCE_DIR}/memcheck/tests/memcheck_math_test.c
                                      ${lab_memcheck_sources})
target_include_directories(lab_memcheck_math_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(lab_memcheck_math_test PRIVATE _GNU_SOURCE)
target_compile_options(lab_memcheck_math_test PRIVATE ${RTMEM_WARNINGS})
target_link_libraries(lab_memcheck_math_test PRIVATE rtmem::rtmem_static m)
set_target_properties(lab_memcheck_math_test PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                                                        ${CMAKE_CURRENT_BINARY_DIR})
add_test(NAME lab.memcheck.math COMMAND lab_memcheck_math_test)
