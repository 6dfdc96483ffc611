# SPDX-License-Identifier: MIT
# Valgrind and ASan tracking of rtm heaps (src/core/track.h, issue 17.3).
#
# RTMEM_VALGRIND=ON: valgrind client requests (needs <valgrind/memcheck.h>,
# Debian: valgrind or valgrind-dev). RTMEM_SANITIZE with "address" (and
# RTMEM_ASAN_TRACKING, ON by default): manual ASan poisoning. Nothing
# otherwise: a plain build compiles the same code as without this file.
#
# Under ASan the files that read and write the heaps' own (poisoned)
# headers and free blocks are compiled without ASan instrumentation, with
# their __builtin_memcpy/memset replaced by uninstrumented loops
# (src/core/track_builtins.h) and without the loop-to-memset rewrite, which
# would reach ASan's checking memset. Those files: the allocator cores
# of the generic kinds (src/heaps/), the generic layer (core/heap.c,
# core/track.c) and the locked and shared layers (src/shared/), which read
# the first word of any handle they are given to tell a guarded heap from
# a plain one (rtm_shared_close of a plain heap reads its poisoned control
# structure). Source properties are per directory, so they are set for
# every directory that compiles RTMEM_SOURCES (rtmem_track_sources below,
# called after tests/ and tools/ are added).
if(RTMEM_VALGRIND AND RTMEM_SANITIZE MATCHES "address")
  message(FATAL_ERROR "RTMEM_VALGRIND and RTMEM_SANITIZE=address exclude each other "
                      "(valgrind does not run ASan-instrumented programs)")
endif()
# ASan tracking is on by default whenever RTMEM_SANITIZE contains "address"
# (the option means nothing otherwise), so every ASan build, CI's included,
# reports a user's overflow past an rtm block or read of a freed one.
# -DRTMEM_ASAN_TRACKING=OFF gives the other trade: the allocator sources are
# then instrumented like the rest, so ASan checks the heaps' own accesses
# (an allocator bug reading past its region) but sees no rtm block. The fuzz
# targets (tests/fuzz/, a CMake project of their own that does not include
# this file) take that side: they hunt bugs in the heaps themselves, against
# a shadow model that already checks the blocks' bounds and contents.
option(RTMEM_ASAN_TRACKING "With RTMEM_SANITIZE=address: ASan sees rtm blocks" ON)
set(RTMEM_TRACK_ASAN OFF)
if(RTMEM_SANITIZE MATCHES "address" AND RTMEM_ASAN_TRACKING)
  if(CMAKE_VERSION VERSION_LESS 3.18)
    message(STATUS "rtmem: ASan tracking of rtm heaps needs CMake 3.18 (per-directory "
                   "source properties); off")
  else()
    set(RTMEM_TRACK_ASAN ON)
  endif()
endif()
if(RTMEM_VALGRIND)
  include(CheckIncludeFile)
  check_include_file(valgrind/memcheck.h RTMEM_HAVE_MEMCHECK_H)
  if(NOT RTMEM_HAVE_MEMCHECK_H)
    message(FATAL_ERROR "RTMEM_VALGRIND=ON needs <valgrind/memcheck.h> (Debian: valgrind)")
  endif()
  add_compile_definitions(RTM_TRACK_VALGRIND=1)
elseif(RTMEM_TRACK_ASAN)
  add_compile_definitions(RTM_TRACK_ASAN=1)
endif()

function(rtmem_track_sources)
  if(NOT RTMEM_TRACK_ASAN)
    return()
  endif()
  set(files "")
  foreach(src IN LISTS RTMEM_SOURCES)
    if(src MATCHES "^src/(heaps|shared|mt)/" OR src MATCHES "^src/core/(heap|track)\\.c$")
      list(APPEND files ${PROJECT_SOURCE_DIR}/${src})
    endif()
  endforeach()
  set(options -fno-sanitize=address -include ${PROJECT_SOURCE_DIR}/src/core/track_builtins.h)
  if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
    list(APPEND options -fno-tree-loop-distribute-patterns)
  else()
    list(APPEND options -fno-builtin-memset -fno-builtin-memcpy)
  endif()
  set(dirs ${PROJECT_SOURCE_DIR})
  if(RTMEM_BUILD_TESTS)
    list(APPEND dirs ${PROJECT_SOURCE_DIR}/tests)
  endif()
  if(RTMEM_BUILD_TOOLS)
    list(APPEND dirs ${PROJECT_SOURCE_DIR}/tools)
  endif()
  set_source_files_properties(${files} DIRECTORY ${dirs} PROPERTIES COMPILE_OPTIONS "${options}")
endfunction()
