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
foreach(band small medium large)
  add_test(NAME malloc_model_${band} COMMAND test_malloc_model --band ${band})
endforeach()
rtmem_malloc_test(test_malloc_api test_malloc_api.c rtmem_malloc_api)
add_test(NAME malloc_api COMMAND test_malloc_api)

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

# Real programs under LD_PRELOAD (tests/malloc/run_preloaded.sh): same
# results with and without the library. Not in sanitizer builds, and not
# where the library is 32-bit while the programs are 64-bit.
if(NOT RTMEM_SANITIZE AND CMAKE_SIZEOF_VOID_P EQUAL 8)
  foreach(workload python sqlite git gcc)
    add_test(NAME malloc_preload_${workload}
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/malloc/run_preloaded.sh
                     $<TARGET_FILE:rtmem_malloc_shared> ${workload})
    set_tests_properties(malloc_preload_${workload} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 240)
  endforeach()
endif()

# The seed-002 benchmark loop as a standalone program for tuning by hand
# (it uses plain malloc, for LD_PRELOAD): ctest only checks that it runs.
add_executable(seed002 ${CMAKE_CURRENT_SOURCE_DIR}/malloc/seed002.c)
target_link_libraries(seed002 PRIVATE Threads::Threads)
target_compile_options(seed002 PRIVATE ${RTMEM_WARNINGS})
target_compile_definitions(seed002 PRIVATE _GNU_SOURCE)
set_target_properties(seed002 PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
add_test(NAME malloc_seed002_runs COMMAND seed002 2 2000 2)
add_test(NAME malloc_seed002_pc_runs COMMAND seed002 2 2000 2 pc)
