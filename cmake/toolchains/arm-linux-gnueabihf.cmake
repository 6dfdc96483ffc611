# SPDX-License-Identifier: MIT
# Cross build for arm-linux-gnueabihf: 32-bit ARMv7 hard-float (the boards users have): 4-byte
# size_t and pointers, 8-byte alignment of doubles and long long.
# Usage: cmake -S . -B build-cross-<arch> -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/arm-linux-gnueabihf.cmake
# (scripts/test-cross.sh does this and runs ctest under qemu-arm-static).
set(RTMEM_CROSS_TRIPLE arm-linux-gnueabihf)
set(RTMEM_CROSS_PROCESSOR armv7l)
set(RTMEM_CROSS_QEMU qemu-arm-static)
include(${CMAKE_CURRENT_LIST_DIR}/linux-gnu-cross.cmake)
