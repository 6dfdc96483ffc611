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

# The targets read as printed (tests/targets_printed.sh says why seed 3).
add_test(NAME lab.memcheck.targets_printed
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/memcheck/tests/targets_printed.sh ${rtmem_lab_exe} 3)
set_tests_properties(lab.memcheck.targets_printed PROPERTIES TIMEOUT 300)
# Misuse that used to run: no rounds (every figure nan, exit 0), a CPU that
# is not there (pinning "not permitted", the run measured elsewhere).
lab_expect(memcheck.misuse.zero-random-rounds 2 SAYS "--random-rounds" memcheck --random-rounds 0)
lab_expect(memcheck.misuse.zero-pattern-rounds 2 SAYS "--pattern-rounds" memcheck --pattern-rounds 0)
lab_expect(memcheck.misuse.absent-cpu 2 SAYS "--cpu 999 is not a CPU" memcheck --cpu 999)
# --help names every algorithm rtm_algorithms() lists (tests/help_lists_all.sh).
add_test(NAME lab.memcheck.help_lists_all
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/memcheck/tests/help_lists_all.sh ${rtmem_lab_exe})
