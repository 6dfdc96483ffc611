# SPDX-License-Identifier: MIT
# Hardening tests of issue 32, item 1: rtm_usable_size of a pointer that is
# not a live block (foreign, next to a PROT_NONE page, interior, freed,
# stale, NULL) on every algorithm and every kind of heap over it
# (tests/hardening/test_harden_usable.c). Shared heaps are TLSF only.
rtmem_test_program(test_harden_usable hardening/test_harden_usable.c rtmem_static)

set(rtmem_usable_algorithms tlsf pool buddy halffit slab heapmem xvmalloc tlsf_cached)
add_test(NAME harden_usable_covers_all
         COMMAND test_harden_usable --covers ${rtmem_usable_algorithms})
foreach(algorithm ${rtmem_usable_algorithms})
  foreach(kind plain locked)
    add_test(NAME harden_usable_${algorithm}_${kind}
             COMMAND test_harden_usable ${algorithm} ${kind})
  endforeach()
endforeach()
add_test(NAME harden_usable_tlsf_shared COMMAND test_harden_usable tlsf shared)
