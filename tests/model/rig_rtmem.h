/*
 * tests/model/rig_rtmem.h -- rig_ops for rtmem's own heaps: the generic API
 * (rtm_heap_*) and the typed TLSF API (rtm_tlsf_*). Every test that runs
 * the rig over an rtmem heap builds its ops here, so the adapters exist
 * once; other allocators (a malloc replacement, the benchmark's peers)
 * write their own rig_ops the same way.
 */
#ifndef RTM_TESTS_RIG_RTMEM_H
#define RTM_TESTS_RIG_RTMEM_H

#include "rig.h"
#include "rtmem.h"

/* Ops driving h through rtmem.h, promising the full rtmem contract; the
 * caller adds region bounds (ops.regions / region_count). */
rig_ops rig_ops_heap(rtm_heap *h);

/* The same through rtmem/tlsf.h. */
rig_ops rig_ops_tlsf(rtm_tlsf *t);

#endif /* RTM_TESTS_RIG_RTMEM_H */
