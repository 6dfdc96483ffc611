// SPDX-License-Identifier: MIT
/*
 * core/error.c -- the process-wide error handler.
 *
 * The library never prints: misuse it detects goes to one user-installed
 * function. A plain global (not atomic) because it is set once, before heaps
 * are used (documented), and freestanding builds have no atomics library.
 */
#include "core/internal.h"

static rtm_error_handler user_handler;
static void *user_arg;

void rtm_set_error_handler(rtm_error_handler handler, void *arg)
{
    user_handler = handler;
    user_arg = arg;
}

RTM_COLD void rtm_report(rtm_error_kind kind, const void *heap, const void *ptr, const char *detail)
{
    if (user_handler)
        user_handler(kind, heap, ptr, detail, user_arg);
}

/* The default RTM_ASSERT of debug builds (core/bits.h): the handler hears
 * of it, then the program stops where the invariant broke. */
RTM_COLD void rtm_assert_failed(const char *what)
{
    rtm_report(RTM_ERR_CHECK_FAILED, NULL, NULL, what);
    __builtin_trap();
}
