# SPDX-License-Identifier: MIT
# The half-fit heap's tests (included from tests/CMakeLists.txt):
# unit/test_halffit.c (typed API, misuse, check, the worst-case bound) and
# model/test_model_halffit.c (the shared model rig over half-fit heaps).
rtmem_test_program(test_halffit unit/test_halffit.c rtmem_static)
rtmem_test_program(test_model_halffit model/test_model_halffit.c rtmem_static)
target_compile_options(test_halffit PRIVATE ${RTMEM_WARNINGS})
target_compile_options(test_model_halffit PRIVATE ${RTMEM_WARNINGS})
add_test(NAME unit_halffit COMMAND test_halffit)
foreach(band small medium)
  add_test(NAME model_halffit_${band} COMMAND test_model_halffit --band ${band})
endforeach()
