// SPDX-License-Identifier: MIT
/*
 * tests/common/recorder.h -- an rtm_error_handler that remembers what the
 * library reported, so a test can assert "this misuse was reported as that
 * kind, exactly once, about this pointer".
 *
 * The library calls the handler from inside the allocator call; the
 * recorder only copies the arguments (it must not call back into the heap).
 */
#ifndef RTM_TESTS_RECORDER_H
#define RTM_TESTS_RECORDER_H

#include "rtmem/common.h"

typedef struct error_record {
    unsigned calls;      /* reports since the last recorder_reset()    */
    unsigned by_kind[8]; /* indexed by rtm_error_kind                  */
    rtm_error_kind last_kind;
    const void *last_heap;
    const void *last_ptr;
    const char *last_detail;
} error_record;

static inline error_record *recorder(void)
{
    static error_record rec;
    return &rec;
}

static inline void recorder_handler(rtm_error_kind kind, const void *heap, const void *ptr,
                                    const char *detail, void *arg)
{
    error_record *rec = arg;
    rec->calls++;
    if ((unsigned)kind < 8u)
        rec->by_kind[kind]++;
    rec->last_kind = kind;
    rec->last_heap = heap;
    rec->last_ptr = ptr;
    rec->last_detail = detail;
}

/* Installs the recorder as the process-wide handler and clears it. */
static inline void recorder_install(void)
{
    error_record *rec = recorder();
    *rec = (error_record){0};
    rtm_set_error_handler(recorder_handler, rec);
}

static inline void recorder_reset(void) { *recorder() = (error_record){0}; }

static inline const char *recorder_kind_name(rtm_error_kind kind)
{
    switch (kind) {
    case RTM_ERR_DOUBLE_FREE:
        return "RTM_ERR_DOUBLE_FREE";
    case RTM_ERR_FOREIGN_POINTER:
        return "RTM_ERR_FOREIGN_POINTER";
    case RTM_ERR_CORRUPT_HEADER:
        return "RTM_ERR_CORRUPT_HEADER";
    case RTM_ERR_CHECK_FAILED:
        return "RTM_ERR_CHECK_FAILED";
    }
    return "(none)";
}

#endif /* RTM_TESTS_RECORDER_H */
