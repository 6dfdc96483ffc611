# SPDX-License-Identifier: MIT
# Tests of the thread-caching malloc (src/malloc, include/rtmem/malloc.h;
# docs/MALLOC.md, "Tests"). In-process tests link rtmem_malloc_api (the
# rtm_ API without the drop-in names) so that they run under every
# sanitizer; tests of the drop-in names link librtmem-malloc.a, and tests of
# real programs LD_PRELOAD librtmem-malloc.so: neither mixes with a
# sanitizer runtime (which owns malloc), so they are registered only in
# builds without RTMEM_SANITIZE, and only where the library matches the
# host's programs (not in -m32 builds).
function(rtmem_malloc_test name source library)
  add_executable(${name} ${CMAKE_CURRENT_SOURCE_DIR}/malloc/${source})
  target_link_libraries(${name} PRIVATE rtmem_testkit ${library} Threads::Threads)
  target_compile_options(${name} PRIVATE ${RTMEM_WARNINGS})
  target_compile_definitions(${name} PRIVATE _GNU_SOURCE)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
endfunction()

rtmem_malloc_test(test_malloc_model test_malloc_model.c rtmem_malloc_api)
target_sources(test_malloc_model PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/model/model_driver.c)
foreach(band small medium large)
  add_test(NAME malloc_model_${band} COMMAND test_malloc_model --band ${band})
endforeach()
rtmem_malloc_test(test_malloc_api test_malloc_api.c rtmem_malloc_api)
add_test(NAME malloc_api COMMAND test_malloc_api)

# Large blocks (the page heap as a bounded cache, decay, realloc in place)
# and the cache-line rule (no two threads' blocks on one line from a span,
# no foreign block reused: cache-scratch).
rtmem_malloc_test(test_malloc_large test_malloc_large.c rtmem_malloc_api)
add_test(NAME malloc_large COMMAND test_malloc_large)
# realloc of a huge block by mremap, apart: qemu-user for 32-bit guests
# cannot run it (scripts/test-cross.sh, NOQEMU_32)
add_test(NAME malloc_large_huge_realloc COMMAND test_malloc_large huge-realloc)
rtmem_malloc_test(test_malloc_lines test_malloc_lines.c rtmem_malloc_api)
add_test(NAME malloc_lines COMMAND test_malloc_lines)
set_tests_properties(malloc_lines PROPERTIES LABELS threads)
# Idle thread caches trimmed within a bounded time (a short decay period).
rtmem_malloc_test(test_malloc_idle test_malloc_idle.c rtmem_malloc_api)
add_test(NAME malloc_idle COMMAND test_malloc_idle)
set_tests_properties(malloc_idle PROPERTIES LABELS threads ENVIRONMENT RTMEM_DECAY_MS=20)

# Threads: producer/consumer stress, thread churn, fork while allocating.
rtmem_malloc_test(test_malloc_stress test_malloc_stress.c rtmem_malloc_api)
rtmem_malloc_test(test_malloc_churn test_malloc_churn.c rtmem_malloc_api)
rtmem_malloc_test(test_malloc_fork test_malloc_fork.c rtmem_malloc_api)
add_test(NAME malloc_stress COMMAND test_malloc_stress)
add_test(NAME malloc_churn COMMAND test_malloc_churn)
add_test(NAME malloc_fork COMMAND test_malloc_fork)
set_tests_properties(malloc_stress malloc_churn malloc_fork PROPERTIES LABELS threads)

# Real-time mode, enabled by the API and by the environment.
rtmem_malloc_test(test_malloc_arena test_malloc_arena.c rtmem_malloc_api)
add_test(NAME malloc_arena_api COMMAND test_malloc_arena --api)
add_test(NAME malloc_arena_env COMMAND test_malloc_arena --env)
set_tests_properties(malloc_arena_env PROPERTIES ENVIRONMENT "RTMEM_ARENA=48m;RTMEM_ARENA_THREADS=4")

# The drop-in names, from librtmem-malloc.a; only without sanitizers (their
# runtimes define malloc themselves).
if(NOT RTMEM_SANITIZE)
  rtmem_malloc_test(test_malloc_dropin test_malloc_dropin.c rtmem_malloc_static)
  add_test(NAME malloc_dropin COMMAND test_malloc_dropin)
  rtmem_malloc_test(test_malloc_fork_dropin test_malloc_fork.c rtmem_malloc_static)
  target_compile_definitions(test_malloc_fork_dropin PRIVATE FORK_DROPIN=1)
  add_test(NAME malloc_fork_dropin COMMAND test_malloc_fork_dropin)
  set_tests_properties(malloc_fork_dropin PROPERTIES LABELS threads)
endif()

# The heap library and the malloc in one program (docs/MALLOC.md, "Names"):
# both headers in one file, linked with rtmem_malloc_api (every build) and
# with both static archives (drop-in names: not with sanitizers); a
# heap-API program on librtmem.so, plainly and with librtmem-malloc.so
# preloaded (not with sanitizers, whose runtimes own malloc; the program is
# built like the library, so this also runs in -m32 builds); and nm: no
# global symbol defined by both libraries, shared or static.
rtmem_malloc_test(test_malloc_coexist test_malloc_coexist.c rtmem_malloc_api)
target_link_libraries(test_malloc_coexist PRIVATE rtmem_static)
add_test(NAME malloc_coexist COMMAND test_malloc_coexist)
rtmem_malloc_test(test_malloc_coexist_preload test_malloc_coexist_preload.c rtmem_shared)
target_link_libraries(test_malloc_coexist_preload PRIVATE ${CMAKE_DL_LIBS})
add_test(NAME malloc_coexist_shared COMMAND test_malloc_coexist_preload)
add_test(NAME malloc_coexist_symbols
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/malloc/check_symbols.sh
                 $<TARGET_FILE:rtmem_shared> $<TARGET_FILE:rtmem_malloc_shared>
                 $<TARGET_FILE:rtmem_static> $<TARGET_FILE:rtmem_malloc_static>)
set_tests_properties(malloc_coexist_symbols PROPERTIES SKIP_RETURN_CODE 77)
if(NOT RTMEM_SANITIZE)
  rtmem_malloc_test(test_malloc_coexist_static test_malloc_coexist.c rtmem_malloc_static)
  target_link_libraries(test_malloc_coexist_static PRIVATE rtmem_static)
  target_compile_definitions(test_malloc_coexist_static PRIVATE COEXIST_DROPIN=1)
  add_test(NAME malloc_coexist_static COMMAND test_malloc_coexist_static)
  add_test(NAME malloc_coexist_preload COMMAND test_malloc_coexist_preload --preloaded)
  set_tests_properties(malloc_coexist_preload PROPERTIES
                       ENVIRONMENT "LD_PRELOAD=$<TARGET_FILE:rtmem_malloc_shared>")
endif()

# Real programs under LD_PRELOAD (tests/malloc/run_preloaded.sh): same
# results with and without the library. Not in sanitizer builds, and not
# where the library is 32-bit while the programs are 64-bit (the C
# compiler's pointer size: CMAKE_SIZEOF_VOID_P is the last enabled
# language's, and the C++ tests' compiler has no -m32).
if(NOT RTMEM_SANITIZE AND CMAKE_C_SIZEOF_DATA_PTR EQUAL 8)
  foreach(workload python sqlite git gcc)
    add_test(NAME malloc_preload_${workload}
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/malloc/run_preloaded.sh
                     $<TARGET_FILE:rtmem_malloc_shared> ${workload})
    set_tests_properties(malloc_preload_${workload} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 240)
  endforeach()
endif()

# The tcmalloc-style pool benchmark's loop as a standalone program for tuning by hand
# (it uses plain malloc, for LD_PRELOAD): ctest only checks that it runs.
add_executable(pool_benchmark ${CMAKE_CURRENT_SOURCE_DIR}/malloc/pool_benchmark.c)
target_link_libraries(pool_benchmark PRIVATE Threads::Threads)
target_compile_options(pool_benchmark PRIVATE ${RTMEM_WARNINGS})
target_compile_definitions(pool_benchmark PRIVATE _GNU_SOURCE)
set_target_properties(pool_benchmark PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
add_test(NAME malloc_pool_benchmark_runs COMMAND pool_benchmark 2 2000 2)
add_test(NAME malloc_pool_benchmark_pc_runs COMMAND pool_benchmark 2 2000 2 pc)

# The options (docs/MALLOC.md, "Options"): every bad value of every
# variable in a fresh process (a message, then the documented behaviour; a
# huge arena refused, not pre-faulted into the OOM killer), the statistics'
# program/pid line and RTMEM_STATS_FILE. Over the rtm_ API (every build),
# and over malloc from librtmem-malloc.a (not with sanitizers).
rtmem_malloc_test(test_malloc_options test_malloc_options.c rtmem_malloc_api)
add_test(NAME malloc_options COMMAND test_malloc_options)
if(NOT RTMEM_SANITIZE)
  rtmem_malloc_test(test_malloc_options_dropin test_malloc_options.c rtmem_malloc_static)
  target_compile_definitions(test_malloc_options_dropin PRIVATE OPTIONS_DROPIN=1)
  add_test(NAME malloc_options_dropin COMMAND test_malloc_options_dropin)
endif()
