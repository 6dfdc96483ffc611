# SPDX-License-Identifier: MIT
# Hardening tests of issue 12 for the TLSF heap (tests/hardening/
# test_harden_tlsf*.c). One ctest entry per case and API, named after the
# case it reproduces; heaps.cmake in this folder holds the other heaps'.
rtmem_test_program(test_harden_tlsf hardening/test_harden_tlsf.c rtmem_static)

# 1. add_pool over the heap's own control structure or pools
# 2. free / realloc / usable_size of a pointer that is not a live block
# 3. a create or add_pool size that wraps the address space
foreach(api typed generic locked)
  foreach(case overlap foreign interior stale header pool wrap)
    add_test(NAME harden_tlsf_${case}_${api} COMMAND test_harden_tlsf ${case} ${api})
  endforeach()
endforeach()

# White box (the TLSF layout and the guard): heaps only the old code could
# build. 1: a heap whose pools overlap must fail the check; 4: a shared
# heap's check on a garbage inner control must fail cleanly.
rtmem_test_program(test_harden_tlsf_check hardening/test_harden_tlsf_check.c rtmem_static)
target_include_directories(test_harden_tlsf_check PRIVATE ${PROJECT_SOURCE_DIR}/src)
add_test(NAME harden_tlsf_check_overlap_typed COMMAND test_harden_tlsf_check overlap typed)
add_test(NAME harden_tlsf_check_overlap_generic COMMAND test_harden_tlsf_check overlap generic)
add_test(NAME harden_tlsf_check_shared_garbage COMMAND test_harden_tlsf_check shared)

# What the fixes added: the validating typed usable size, the bounded check,
# the O(1) range free() validates against (white box).
rtmem_test_program(test_harden_tlsf_api hardening/test_harden_tlsf_api.c rtmem_static)
target_include_directories(test_harden_tlsf_api PRIVATE ${PROJECT_SOURCE_DIR}/src)
foreach(case usable region fast_range)
  add_test(NAME harden_tlsf_api_${case} COMMAND test_harden_tlsf_api ${case})
endforeach()
