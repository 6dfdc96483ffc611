# SPDX-License-Identifier: MIT
# Tests of the slab heap (include/rtmem/slab.h): the white-box unit test and
# the model rig over typed slab heaps.
rtmem_test_program(test_slab unit/test_slab.c rtmem_static)
rtmem_test_program(test_model_slab model/test_model_slab.c rtmem_static)
target_compile_options(test_slab PRIVATE ${RTMEM_WARNINGS})
target_compile_options(test_model_slab PRIVATE ${RTMEM_WARNINGS})
add_test(NAME unit_slab COMMAND test_slab)
foreach(band small medium)
  add_test(NAME model_slab_${band} COMMAND test_model_slab --band ${band})
endforeach()
