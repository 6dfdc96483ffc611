# SPDX-License-Identifier: MIT
# Tests of the binary buddy page allocator (include/rtmem/buddy.h): the
# white-box unit test and the model rig over typed buddy heaps.
rtmem_test_program(test_buddy unit/test_buddy.c rtmem_static)
rtmem_test_program(test_model_buddy model/test_model_buddy.c rtmem_static)
target_compile_options(test_buddy PRIVATE ${RTMEM_WARNINGS})
target_compile_options(test_model_buddy PRIVATE ${RTMEM_WARNINGS})
add_test(NAME unit_buddy COMMAND test_buddy)
foreach(band small medium)
  add_test(NAME model_buddy_${band} COMMAND test_model_buddy --band ${band})
endforeach()
