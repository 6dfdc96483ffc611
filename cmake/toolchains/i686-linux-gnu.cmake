# SPDX-License-Identifier: MIT
# Cross build for i686-linux-gnu: 32-bit x86: 4-byte size_t, 4-byte alignment of long long and
# double inside structs.
# Usage: cmake -S . -B build-cross-<arch> -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/i686-linux-gnu.cmake
# (scripts/test-cross.sh does this and runs ctest under qemu-i386-static).
set(RTMEM_CROSS_TRIPLE i686-linux-gnu)
set(RTMEM_CROSS_PROCESSOR i686)
set(RTMEM_CROSS_QEMU qemu-i386-static)
include(${CMAKE_CURRENT_LIST_DIR}/linux-gnu-cross.cmake)
