// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/fuzz_ops.c -- libFuzzer target: an operation stream on one
 * heap of any algorithm rtm_algorithms() lists, through the generic API,
 * against a shadow model (fuzz_model.c). Only correct calls: any report to
 * the error handler is a failure.
 */
#include "fuzz_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fz_model_run(data, size, 0); }
