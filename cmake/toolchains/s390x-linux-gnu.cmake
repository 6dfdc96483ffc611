# SPDX-License-Identifier: MIT
# Cross build for s390x-linux-gnu: 64-bit big-endian IBM Z.
# Usage: cmake -S . -B build-cross-<arch> -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/s390x-linux-gnu.cmake
# (scripts/test-cross.sh does this and runs ctest under qemu-s390x-static).
set(RTMEM_CROSS_TRIPLE s390x-linux-gnu)
set(RTMEM_CROSS_PROCESSOR s390x)
set(RTMEM_CROSS_QEMU qemu-s390x-static)
include(${CMAKE_CURRENT_LIST_DIR}/linux-gnu-cross.cmake)
