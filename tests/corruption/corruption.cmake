# SPDX-License-Identifier: MIT
# What each heap does with 1..8 bytes written past a block (issue 17.4,
# docs/CORRUPTION.md). The test carries the expected table; it runs against
# the library of this build (release or debug table, by RTMEM_DEBUG) and
# against the RTM_DEBUG test variant (debug table), and checks that the doc
# holds the table line for line.
rtmem_test_program(test_corruption corruption/test_corruption.c rtmem_static)
rtmem_test_program(test_corruption_debug corruption/test_corruption.c rtmem_debug_variant)
if(RTMEM_DEBUG)
  target_compile_definitions(test_corruption PRIVATE RTM_CORRUPTION_DEBUG=1)
else()
  target_compile_definitions(test_corruption PRIVATE RTM_CORRUPTION_DEBUG=0)
endif()
target_compile_definitions(test_corruption_debug PRIVATE RTM_CORRUPTION_DEBUG=1)
foreach(t test_corruption test_corruption_debug)
  target_link_libraries(${t} PRIVATE Threads::Threads)
endforeach()
# Under sanitizers the outcomes are the sanitizer's (UBSan stops at the
# corrupted heap's first undefined operation): rows printed, not asserted.
if(RTMEM_SANITIZE)
  set(rtmem_corruption_mode --observe)
else()
  set(rtmem_corruption_mode "")
endif()
add_test(NAME corruption_table COMMAND test_corruption ${rtmem_corruption_mode})
add_test(NAME corruption_table_debug COMMAND test_corruption_debug ${rtmem_corruption_mode})
add_test(NAME corruption_doc COMMAND test_corruption --doc ${PROJECT_SOURCE_DIR}/docs/CORRUPTION.md)
set_tests_properties(corruption_table corruption_table_debug corruption_doc
                     PROPERTIES LABELS corruption)
