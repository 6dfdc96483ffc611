# SPDX-License-Identifier: MIT
# Tests of the multi-threaded heap (include/rtmem/mt.h, src/mt/). Threaded
# tests carry LABELS threads (the TSan stage runs them).
rtmem_test_program(test_mt_api mt/test_mt_api.c rtmem_static)
add_test(NAME mt_api COMMAND test_mt_api)
set_tests_properties(mt_api PROPERTIES LABELS threads)

rtmem_test_program(test_mt_model mt/test_mt_model.c rtmem_static)
add_test(NAME mt_model COMMAND test_mt_model --seed 1)
add_test(NAME mt_model_seed2 COMMAND test_mt_model --seed 2 --steps 8000 --algorithm tlsf)
set_tests_properties(mt_model mt_model_seed2 PROPERTIES LABELS threads)
