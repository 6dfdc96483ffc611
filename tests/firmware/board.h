// SPDX-License-Identifier: MIT
/*
 * tests/firmware/board.h -- included first (-include) by every file of a
 * firmware test image (scripts/test-firmware.sh): fills in what the test kit
 * takes from a hosted C library and a bare-metal one lacks.
 *
 * picolibc 1.8 (Debian 12's) has no C11 timespec_get; check.h times each
 * test with it. board.c implements it over time(), which picolibc's
 * semihosting layer answers from the host clock (whole seconds: the
 * durations a firmware log prints are coarse, never wrong).
 */
#ifndef RTM_TESTS_FIRMWARE_BOARD_H
#define RTM_TESTS_FIRMWARE_BOARD_H

#include <time.h>

#ifndef TIME_UTC
#define TIME_UTC 1
int timespec_get(struct timespec *ts, int base);
#endif

/* check.h asks board.c which test functions this image leaves out. */
#define CHECK_LEFT_OUT_HOOK board_left_out

#endif /* RTM_TESTS_FIRMWARE_BOARD_H */
