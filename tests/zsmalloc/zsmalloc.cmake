# SPDX-License-Identifier: MIT
# Tests of zsmalloc (include/rtmem/zsmalloc.h): the unit test of every call
# and the model test of its own (random malloc/map/write/unmap/free/compact
# against a shadow of every object's bytes), several reproducible seeds.
rtmem_test_program(test_zs_unit zsmalloc/test_zs_unit.c rtmem_static)
rtmem_test_program(test_zs_model zsmalloc/test_zs_model.c rtmem_static)
add_test(NAME zsmalloc_unit COMMAND test_zs_unit)
foreach(seed 1 2 3 20261125)
  add_test(NAME zsmalloc_model_seed${seed} COMMAND test_zs_model --seed ${seed})
endforeach()
# Pins held across many steps and a small pool: compaction around pinned
# spans, and refusals when pages run out.
add_test(NAME zsmalloc_model_tight COMMAND test_zs_model --seed 7 --region 262144 --pin-rate 30)
