# SPDX-License-Identifier: MIT
# Valgrind and ASan see rtm blocks (issue 17.3; src/core/track.h): buggy
# programs (tracking/buggy.c) over every heap, with the report each tool
# must give (tracking/expect_report.sh). Label "tracking".
#
#   -DRTMEM_VALGRIND=ON            tracking.valgrind.* (valgrind memcheck)
#   -DRTMEM_SANITIZE=address,...   tracking.asan.* (RTMEM_ASAN_TRACKING is
#                                  ON by default; OFF: tracking.skipped)
#   otherwise                      tracking.skipped, which says why (77)
#
# The drop-in malloc under valgrind: tracking.valgrind.dropin, at the end.
rtmem_test_program(tracking_buggy tracking/buggy.c rtmem_static)
set(rtmem_track_script ${CMAKE_CURRENT_SOURCE_DIR}/tracking/expect_report.sh)
# bug -> what the tool must name (extended regex; "none": nothing at all)
set(rtmem_track_valgrind
    "overflow=Invalid write of size 1" "overflow8=Invalid write of size 1"
    "uaf=Invalid read of size 1" "realloc-uaf=Invalid read of size 1"
    "leak=in 1 blocks are definitely lost" "clean=none")
set(rtmem_track_asan
    "overflow=ERROR: AddressSanitizer: (use-after-poison|heap-buffer-overflow)"
    "overflow8=ERROR: AddressSanitizer: (use-after-poison|heap-buffer-overflow)"
    "uaf=ERROR: AddressSanitizer: use-after-poison"
    "realloc-uaf=ERROR: AddressSanitizer: use-after-poison" "clean=none")
if(RTMEM_VALGRIND)
  set(rtmem_track_tool valgrind)
elseif(RTMEM_TRACK_ASAN)
  set(rtmem_track_tool asan)
else()
  set(rtmem_track_tool "")
  add_test(NAME tracking.skipped
           COMMAND sh -c "echo 'SKIP: this build tracks no rtm blocks; configure with -DRTMEM_VALGRIND=ON (valgrind) or -DRTMEM_SANITIZE=address,undefined (ASan)'; exit 77")
  set_tests_properties(tracking.skipped PROPERTIES LABELS tracking SKIP_RETURN_CODE 77)
endif()
foreach(entry IN LISTS rtmem_track_${rtmem_track_tool})
  string(FIND "${entry}" "=" eq)
  string(SUBSTRING "${entry}" 0 ${eq} bug)
  math(EXPR eq "${eq} + 1")
  string(SUBSTRING "${entry}" ${eq} -1 pattern)
  add_test(NAME tracking.${rtmem_track_tool}.${bug}
           COMMAND ${CMAKE_COMMAND} -E env TRACK_LOGS=${CMAKE_CURRENT_BINARY_DIR}/tracking-logs
                   ${rtmem_track_script} ${rtmem_track_tool} $<TARGET_FILE:tracking_buggy>
                   ${bug} ${pattern})
  set_tests_properties(tracking.${rtmem_track_tool}.${bug}
                       PROPERTIES LABELS tracking SKIP_RETURN_CODE 77)
endforeach()

# The drop-in malloc under valgrind (tracking/dropin_valgrind.sh): in the
# valgrind build, where CI runs the label (never under a sanitizer, whose
# runtime owns malloc).
if(RTMEM_VALGRIND)
  rtmem_test_program(tracking_dropin_program tracking/dropin_program.c "${CMAKE_DL_LIBS}")
  add_test(NAME tracking.valgrind.dropin
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tracking/dropin_valgrind.sh
                   $<TARGET_FILE:tracking_dropin_program> $<TARGET_FILE:rtmem_malloc_shared>)
  set_tests_properties(tracking.valgrind.dropin PROPERTIES LABELS tracking SKIP_RETURN_CODE 77)
endif()

# What tracking must leave unchanged (error-handler reports of misuse, the
# usable size usable) and, in an ASan-tracked build, the marks themselves
# (tracking/contract.c). Every build but the valgrind one, whose CI stage
# builds the buggy programs only.
if(NOT RTMEM_VALGRIND)
  rtmem_test_program(tracking_contract tracking/contract.c rtmem_static)
  target_include_directories(tracking_contract PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                                                       ${CMAKE_CURRENT_SOURCE_DIR}/tracking)
  add_test(NAME tracking.contract COMMAND tracking_contract)
  set_tests_properties(tracking.contract PROPERTIES LABELS tracking)
endif()
