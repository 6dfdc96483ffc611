# SPDX-License-Identifier: MIT
# Shared body of the Linux cross toolchain files beside it (each sets
# RTMEM_CROSS_TRIPLE, RTMEM_CROSS_PROCESSOR and RTMEM_CROSS_QEMU, then
# includes this). Debian's cross compilers (gcc-<triple>, g++-<triple>) and
# their libraries under /usr/<triple>; tests run under qemu-user.
#
# Why CMAKE_CROSSCOMPILING_EMULATOR names qemu explicitly instead of relying
# on binfmt_misc: containers and CI runners often have no binfmt_misc
# registration (this project's sandbox has none), and ctest then runs every
# test executable as `qemu-<arch>-static -L /usr/<triple> <test> ...`, which
# works everywhere. -L points qemu's dynamic loader and libraries at the
# target's sysroot. Tests that run a target program from a script get the
# same emulator through rtmem_test_command() (cmake/cross.cmake).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${RTMEM_CROSS_PROCESSOR})

set(CMAKE_C_COMPILER ${RTMEM_CROSS_TRIPLE}-gcc)
# C++ only when the g++ cross compiler is installed: tests/cpp/ checks for a
# working C++ compiler and skips the C++ tests with a message otherwise.
find_program(RTMEM_CROSS_CXX ${RTMEM_CROSS_TRIPLE}-g++)
if(RTMEM_CROSS_CXX)
  set(CMAKE_CXX_COMPILER ${RTMEM_CROSS_CXX})
endif()

# Headers and libraries from the target's sysroot only; programs (python3,
# sh, the host's cmake) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/${RTMEM_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

find_program(RTMEM_CROSS_QEMU_PATH ${RTMEM_CROSS_QEMU})
if(NOT RTMEM_CROSS_QEMU_PATH)
  set(RTMEM_CROSS_QEMU_PATH ${RTMEM_CROSS_QEMU})
endif()
set(CMAKE_CROSSCOMPILING_EMULATOR ${RTMEM_CROSS_QEMU_PATH} -L /usr/${RTMEM_CROSS_TRIPLE})
