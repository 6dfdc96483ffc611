# SPDX-License-Identifier: MIT
# The C++ layer (include/rtmem/pmr.hpp; docs/CPP.md): tests, the example
# examples/pmr_control_loop.cpp and the container benchmark
# bench/cpp/pmr_bench.cpp (build/rtmem-pmr-bench). The project is C; C++ is
# enabled here only, when a C++ compiler exists, and everything below is
# skipped with a message otherwise. The library itself stays C11.
#
#   cpp_pmr.api              rtmem::heap / locked_heap, equality, traits
#   cpp_pmr.<algorithm>      std containers through heap_resource and
#                            rtmem::allocator on tlsf, halffit, heapmem,
#                            slab, buddy:64, pool:256
#   cpp_pmr.threads          a locked heap shared by threads (label threads)
#   cpp_pmr.mt               an mt heap: attached threads, remote frees
#   cpp_pmr.noexcept         -fno-exceptions -fno-rtti: the failure handler
#   cpp_pmr.control_loop     the example's loop: no system call (seccomp
#                            strict mode), no page fault, no operator new
#   cpp_example.pmr_control_loop  the example program, a short run
#   cpp_pmr.mt_pipeline      examples/pmr_mt_pipeline.cpp: two threads on an
#                            mt heap, each in seccomp strict mode, no fault
#   cpp_example.pmr_mt_pipeline  that example program, a short run
#   cpp_pmr_bench.runs       the benchmark, a tiny run and its JSON
include(CheckLanguage)
check_language(CXX)
if(NOT CMAKE_CXX_COMPILER)
  message(STATUS "rtmem: no C++ compiler found: the C++ tests (tests/cpp/), "
                 "examples/pmr_control_loop and rtmem-pmr-bench are skipped")
  return()
endif()
enable_language(CXX)

# The C flags' target (-m32 in the 32-bit CI stage) apply to C++ as well:
# the C++ programs link the C library built with them.
set(rtmem_cxx_arch "")
if(CMAKE_C_FLAGS MATCHES "(^| )-m32( |$)" AND NOT CMAKE_CXX_FLAGS MATCHES "(^| )-m32( |$)")
  set(rtmem_cxx_arch -m32)
endif()

# C++17 with <memory_resource> (GCC 9+, Clang 9+ with libstdc++ or libc++ 16+).
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-std=c++17 ${rtmem_cxx_arch}")
set(CMAKE_REQUIRED_LINK_OPTIONS ${rtmem_cxx_arch})
check_cxx_source_compiles([=[
  #include <memory_resource>
  #include <vector>
  int main() {
      std::pmr::monotonic_buffer_resource r;
      std::pmr::vector<int> v(&r);
      v.push_back(1);
      return v[0] - 1;
  }]=] RTMEM_CXX17_PMR)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(NOT RTMEM_CXX17_PMR)
  message(STATUS "rtmem: ${CMAKE_CXX_COMPILER} cannot build and link C++17 std::pmr "
                 "programs (${rtmem_cxx_arch}): the C++ tests are skipped")
  return()
endif()

# The C build's "release with assertions" for C++ too.
set(CMAKE_CXX_FLAGS_RELEASE "-O2 -g")
set(RTMEM_CXX_WARNINGS -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wcast-align
    -Wundef -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual)
if(RTMEM_WERROR)
  list(APPEND RTMEM_CXX_WARNINGS -Werror)
endif()

function(rtmem_cpp_program name)
  add_executable(${name} ${ARGN})
  set_target_properties(${name} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                        CXX_EXTENSIONS OFF RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(${name} PRIVATE ${RTMEM_CXX_WARNINGS} ${rtmem_cxx_arch})
  target_link_options(${name} PRIVATE ${rtmem_cxx_arch})
  target_link_libraries(${name} PRIVATE rtmem_static Threads::Threads)
endfunction()

rtmem_cpp_program(test_pmr ${CMAKE_CURRENT_SOURCE_DIR}/cpp/test_pmr.cpp)
target_link_libraries(test_pmr PRIVATE rtmem_testkit)
add_test(NAME cpp_pmr.api COMMAND test_pmr --api)
foreach(algorithm tlsf halffit heapmem slab buddy pool)
  add_test(NAME cpp_pmr.${algorithm} COMMAND test_pmr --algorithm ${algorithm})
endforeach()
# xvmalloc: requests above a page (4 KiB) are refused, the rest as the others.
add_test(NAME cpp_pmr.xvmalloc COMMAND test_pmr --algorithm xvmalloc)
add_test(NAME cpp_pmr.threads COMMAND test_pmr --threads)
add_test(NAME cpp_pmr.mt COMMAND test_pmr --mt)
set_tests_properties(cpp_pmr.threads cpp_pmr.mt PROPERTIES LABELS threads)

# Without exceptions and RTTI: failures go to the handler
# (rtmem::set_allocation_failure_handler) or abort; the program forks a
# child per case and checks how each ends.
rtmem_cpp_program(test_pmr_noexcept ${CMAKE_CURRENT_SOURCE_DIR}/cpp/test_pmr_noexcept.cpp)
target_compile_options(test_pmr_noexcept PRIVATE -fno-exceptions -fno-rtti)
add_test(NAME cpp_pmr.noexcept COMMAND test_pmr_noexcept)

# The example, built as users would (examples/pmr_control_loop.cpp), and a
# short run of it (200 cycles of 200 us); then its loop checked: no system
# call (seccomp strict mode), no page fault, no operator new after start-up.
rtmem_cpp_program(pmr_control_loop ${PROJECT_SOURCE_DIR}/examples/pmr_control_loop.cpp)
add_test(NAME cpp_example.pmr_control_loop COMMAND pmr_control_loop 200 200)
rtmem_cpp_program(test_pmr_control_loop ${CMAKE_CURRENT_SOURCE_DIR}/cpp/test_pmr_control_loop.cpp)
add_test(NAME cpp_pmr.control_loop COMMAND test_pmr_control_loop)
set_tests_properties(cpp_pmr.control_loop PROPERTIES SKIP_RETURN_CODE 77)

# The multi-threaded pipeline (examples/pmr_mt_pipeline.cpp) on an mt heap:
# a short run, then its loop checked: both threads in seccomp strict mode,
# no page fault, every block back.
rtmem_cpp_program(pmr_mt_pipeline ${PROJECT_SOURCE_DIR}/examples/pmr_mt_pipeline.cpp)
add_test(NAME cpp_example.pmr_mt_pipeline COMMAND pmr_mt_pipeline 5000)
rtmem_cpp_program(test_pmr_mt_pipeline ${CMAKE_CURRENT_SOURCE_DIR}/cpp/test_pmr_mt_pipeline.cpp)
add_test(NAME cpp_pmr.mt_pipeline COMMAND test_pmr_mt_pipeline)
set_tests_properties(cpp_pmr.mt_pipeline PROPERTIES SKIP_RETURN_CODE 77)

# The container benchmark (bench/cpp/pmr_bench.cpp), beside the lab as
# build/rtmem-pmr-bench; not part of `make bench`. ctest runs it tiny and
# reads its JSON back.
rtmem_cpp_program(rtmem-pmr-bench ${PROJECT_SOURCE_DIR}/bench/cpp/pmr_bench.cpp)
set_target_properties(rtmem-pmr-bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
target_link_libraries(rtmem-pmr-bench PRIVATE ${CMAKE_DL_LIBS})
if(CMAKE_VERSION VERSION_LESS 3.19) # string(JSON) reads the output back
  add_test(NAME cpp_pmr_bench.runs COMMAND rtmem-pmr-bench --rounds 1 --ops 4096)
else()
  rtmem_runnable(rtmem_pmr_bench_exe rtmem-pmr-bench) # its qemu wrapper in cross builds
  add_test(NAME cpp_pmr_bench.runs
           COMMAND ${CMAKE_COMMAND} -DBENCH=${rtmem_pmr_bench_exe}
                   -DJSON=${CMAKE_CURRENT_BINARY_DIR}/pmr_bench_smoke.json
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/cpp/scripts/run_pmr_bench.cmake)
endif()
