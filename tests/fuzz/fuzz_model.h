// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/fuzz_model.h -- the engine of fuzz_ops and fuzz_misuse: one
 * heap of an algorithm the input picks, driven through the generic API by
 * an operation stream the input spells, against a shadow model of the live
 * blocks. tests/fuzz/README.md describes the input format, what is checked
 * after every step and which misuse each algorithm is sent.
 */
#ifndef RTM_FUZZ_MODEL_H
#define RTM_FUZZ_MODEL_H

#include <stddef.h>
#include <stdint.h>

/* Runs one input. misuse = 0: only correct calls, and any report to the
 * error handler is a failure; misuse = 1: misuse the algorithm documents
 * it survives is mixed in, each must be reported and refused. Returns 0;
 * a broken promise prints what broke and the last operations, then
 * abort()s, which libFuzzer records as a crash with the input. */
int fz_model_run(const uint8_t *data, size_t size, int misuse);

#endif /* RTM_FUZZ_MODEL_H */
