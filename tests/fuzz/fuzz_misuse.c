// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/fuzz_misuse.c -- libFuzzer target: fuzz_ops's operation
 * stream with misuse mixed in (foreign, interior, stale and double frees,
 * realloc of freed blocks), only the misuse each algorithm's header says it
 * detects (table in tests/fuzz/README.md). Each must be reported once to
 * the error handler and leave the heap exactly as it was.
 */
#include "fuzz_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fz_model_run(data, size, 1); }
