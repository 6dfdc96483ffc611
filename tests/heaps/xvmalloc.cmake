# SPDX-License-Identifier: MIT
# The xvmalloc heap's tests ("xvmalloc:<page>", generic API only):
# unit/test_xvmalloc.c (every behaviour, misuse, check catching damage) and
# model/test_model_xvmalloc.c (the shared model rig over xvmalloc heaps).
rtmem_test_program(test_xvmalloc unit/test_xvmalloc.c rtmem_static)
rtmem_test_program(test_model_xvmalloc model/test_model_xvmalloc.c rtmem_static)
target_compile_options(test_xvmalloc PRIVATE ${RTMEM_WARNINGS})
target_compile_options(test_model_xvmalloc PRIVATE ${RTMEM_WARNINGS})
add_test(NAME unit_xvmalloc COMMAND test_xvmalloc)
foreach(band small medium)
  add_test(NAME model_xvmalloc_${band} COMMAND test_model_xvmalloc --band ${band})
endforeach()
