// SPDX-License-Identifier: MIT
/*
 * status.c -- the name table of the lab's one status (status.h).
 */
#include "common/status.h"

const char *lab_status_name(lab_status s)
{
    static const char *const names[LAB_NSTATUS] = {
        [LAB_OK] = "ok",
        [LAB_NOT_INSTALLED] = "not installed",
        [LAB_NOT_BUILT] = "not built",
        [LAB_INVALID] = "invalid",
        [LAB_ERROR] = "error",
        [LAB_REFUSED] = "refused",
        [LAB_NA] = "n/a",
        [LAB_FAILED] = "failed",
        [LAB_SKIPPED] = "skipped",
        [LAB_NOT_RUN] = "not run",
    };
    return (unsigned)s < LAB_NSTATUS ? names[s] : "error";
}
