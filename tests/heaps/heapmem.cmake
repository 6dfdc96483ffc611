# SPDX-License-Identifier: MIT
# Tests of the heapmem page/bucket heap (include/rtmem/heapmem.h): the
# white-box unit test and the model rig over typed heapmem heaps.
rtmem_test_program(test_heapmem unit/test_heapmem.c rtmem_static)
rtmem_test_program(test_model_heapmem model/test_model_heapmem.c rtmem_static)
target_compile_options(test_heapmem PRIVATE ${RTMEM_WARNINGS})
target_compile_options(test_model_heapmem PRIVATE ${RTMEM_WARNINGS})
add_test(NAME unit_heapmem COMMAND test_heapmem)
foreach(band small medium)
  add_test(NAME model_heapmem_${band} COMMAND test_model_heapmem --band ${band})
endforeach()
