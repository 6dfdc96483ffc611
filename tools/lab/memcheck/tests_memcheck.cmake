# SPDX-License-Identifier: MIT
# memcheck's arithmetic on known inputs (memcheck/tests/memcheck_math_test.c): the
# statistics shared by the lab, the overall block, OVRH% / FRAG% and the
# fragmentation probe on heaps whose answer is known, the ideal heap.
set(lab_memcheck_sources memcheck/memcheck.c memcheck/memcheck_run.c memcheck/memcheck_heap.c
    memcheck/memcheck_ideal.c memcheck/memcheck_report.c common/json.c common/table.c
    common/table_pivot.c common/machine.c common/clock.c common/rt.c common/opts.c
    common/summary.c common/hist.c)
lab_unit(memcheck.math lab_memcheck_math_test memcheck/tests/memcheck_math_test.c
         ${lab_memcheck_sources} LIBS rtmem::rtmem_static m)
set_target_properties(lab_memcheck_math_test PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                                                        ${CMAKE_CURRENT_BINARY_DIR})
