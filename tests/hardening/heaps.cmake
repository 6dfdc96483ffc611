# SPDX-License-Identifier: MIT
# Hardening tests of issue 12 for the slab, half-fit and creation paths
# (tests/hardening/test_harden_*.c). One ctest entry per case, each named
# after the case it reproduces; tlsf.cmake in this folder holds TLSF's.
rtmem_test_program(test_harden_slab hardening/test_harden_slab.c rtmem_static)
rtmem_test_program(test_harden_halffit hardening/test_harden_halffit.c rtmem_static)
rtmem_test_program(test_harden_create hardening/test_harden_create.c rtmem_static)

# 1. slab: pages stranded in cached empty slabs after everything is freed
add_test(NAME harden_slab_strand_scenario COMMAND test_harden_slab scenario)
add_test(NAME harden_slab_strand_random COMMAND test_harden_slab random)
# 2. half-fit: a second free of a block merged into its lower buddy
add_test(NAME harden_halffit_double_free_merged COMMAND test_harden_halffit merged)
add_test(NAME harden_halffit_double_free_stale COMMAND test_harden_halffit stale)
# 3. creation: a region size that wraps the address space
add_test(NAME harden_create_wrap_generic COMMAND test_harden_create generic)
add_test(NAME harden_create_wrap_typed COMMAND test_harden_create typed)
add_test(NAME harden_create_wrap_locked COMMAND test_harden_create locked)
