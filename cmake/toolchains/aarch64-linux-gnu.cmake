# SPDX-License-Identifier: MIT
# Cross build for aarch64-linux-gnu: 64-bit little-endian ARMv8.
# Usage: cmake -S . -B build-cross-<arch> -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
# (scripts/test-cross.sh does this and runs ctest under qemu-aarch64-static).
set(RTMEM_CROSS_TRIPLE aarch64-linux-gnu)
set(RTMEM_CROSS_PROCESSOR aarch64)
set(RTMEM_CROSS_QEMU qemu-aarch64-static)
include(${CMAKE_CURRENT_LIST_DIR}/linux-gnu-cross.cmake)
