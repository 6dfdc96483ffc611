# SPDX-License-Identifier: MIT
# Tests of the multi-threaded heap (include/rtmem/mt.h, src/mt/). Threaded
# tests carry LABELS threads (the TSan stage runs them).
rtmem_test_program(test_mt_api mt/test_mt_api.c rtmem_static)
add_test(NAME mt_api COMMAND test_mt_api)
set_tests_properties(mt_api PROPERTIES LABELS threads)
