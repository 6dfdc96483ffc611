// SPDX-License-Identifier: MIT
/*
 * status.h -- the one status every command gives a row, a cell, a probe or a
 * test (random, sweep and zram rows, threads cells, limits probes, latency
 * tests), and its one name table, so that text and JSON say the same word
 * for the same thing everywhere. A command uses the values that apply to it
 * (latency: ok, failed, skipped, not run; limits: ok, n/a, not installed,
 * invalid, error; ...). The names are part of the JSON (docs/schema/).
 */
#ifndef RTM_LAB_STATUS_H
#define RTM_LAB_STATUS_H

typedef enum lab_status {
    LAB_OK = 0,        /* "ok": measured (zero, so a zeroed row is ok)          */
    LAB_NOT_INSTALLED, /* "not installed": the peer library was not found       */
    LAB_NOT_BUILT,     /* "not built": rtmem's own library is not beside the lab */
    LAB_INVALID,       /* "invalid": the preload did not take (peers.h)         */
    LAB_ERROR,         /* "error": the child failed, a heap check failed        */
    LAB_REFUSED,       /* "refused": an allocation was refused                  */
    LAB_NA,            /* "n/a": the allocator cannot serve this                */
    LAB_FAILED,        /* "failed": a latency test could not measure            */
    LAB_SKIPPED,       /* "skipped": not possible here (permissions, CPUs)      */
    LAB_NOT_RUN,       /* "not run"                                             */
    LAB_NSTATUS
} lab_status;

/* The status's word in text and JSON ("ok", "not installed", ...). */
const char *lab_status_name(lab_status s);

#endif /* RTM_LAB_STATUS_H */
