# SPDX-License-Identifier: MIT
# The thread-caching drop-in malloc (docs/MALLOC.md): build/librtmem-malloc.so
# for LD_PRELOAD and build/librtmem-malloc.a for static linking, both
# defining malloc, free, ... and C++ new/delete. Deliberately not part of
# librtmem: linking librtmem must never replace a program's malloc.
#
# rtmem_malloc_api is the same allocator without the drop-in names (only
# the rtm_ API of include/rtmem/malloc.h): the in-process tests link it, so
# that they run under ASan, UBSan and TSan, whose runtimes own malloc.
set(RTMEM_MALLOC_SOURCES
    src/os/pages.c
    src/malloc/lock.c
    src/malloc/sizeclass.c
    src/malloc/pagemap.c
    src/malloc/meta.c
    src/malloc/pageheap.c
    src/malloc/central.c
    src/malloc/tcache.c
    src/malloc/options.c
    src/malloc/malloc.c
    src/malloc/stats.c)
list(TRANSFORM RTMEM_MALLOC_SOURCES PREPEND ${PROJECT_SOURCE_DIR}/)

# -fno-builtin-*: gcc may otherwise turn malloc + memset into a call to
# calloc, inside calloc. -fexceptions: C++ exceptions thrown by libstdc++'s
# operator new (the fallback in dropin.c) unwind through our frames.
# _GNU_SOURCE: mmap flags, dlsym(RTLD_NEXT), pthread_atfork under -std=c11.
# Hidden visibility (rtmem_library_defaults): only RTM_MALLOC_EXPORT
# functions and the drop-in names are exported.
set(RTMEM_MALLOC_FLAGS ${RTMEM_WARNINGS} -fexceptions
    -fno-builtin-malloc -fno-builtin-free -fno-builtin-calloc -fno-builtin-realloc)

function(rtmem_malloc_target name kind)
  add_library(${name} ${kind} ${ARGN})
  rtmem_library_defaults(${name})
  target_include_directories(${name} PUBLIC ${RTMEM_PUBLIC_INCLUDE}
                                     PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(${name} PRIVATE ${RTMEM_MALLOC_FLAGS})
  target_compile_definitions(${name} PRIVATE _GNU_SOURCE)
  target_link_libraries(${name} PUBLIC Threads::Threads ${CMAKE_DL_LIBS})
endfunction()

rtmem_malloc_target(rtmem_malloc_api STATIC ${RTMEM_MALLOC_SOURCES})
rtmem_malloc_target(rtmem_malloc_shared SHARED ${RTMEM_MALLOC_SOURCES}
                    ${PROJECT_SOURCE_DIR}/src/malloc/dropin.c)
rtmem_malloc_target(rtmem_malloc_static STATIC ${RTMEM_MALLOC_SOURCES}
                    ${PROJECT_SOURCE_DIR}/src/malloc/dropin.c)
set_target_properties(rtmem_malloc_shared PROPERTIES OUTPUT_NAME rtmem-malloc
                      EXPORT_NAME malloc_shared
                      VERSION ${PROJECT_VERSION} SOVERSION ${RTMEM_SOVERSION})
set_target_properties(rtmem_malloc_static PROPERTIES OUTPUT_NAME rtmem-malloc
                      EXPORT_NAME malloc_static)
set_target_properties(rtmem_malloc_api PROPERTIES ARCHIVE_OUTPUT_DIRECTORY
                                                  ${PROJECT_BINARY_DIR}/malloc)
# Only the tests need it: not built by default when they are off.
if(NOT RTMEM_BUILD_TESTS)
  set_target_properties(rtmem_malloc_api PROPERTIES EXCLUDE_FROM_ALL ON)
endif()

# rtmem::malloc names one of the two, by the rule of rtmem::rtmem
# (CMakeLists.txt): the static library unless BUILD_SHARED_LIBS is ON.
add_library(rtmem_malloc_default INTERFACE)
if(BUILD_SHARED_LIBS)
  target_link_libraries(rtmem_malloc_default INTERFACE rtmem_malloc_shared)
else()
  target_link_libraries(rtmem_malloc_default INTERFACE rtmem_malloc_static)
endif()
set_target_properties(rtmem_malloc_default PROPERTIES EXPORT_NAME malloc)
add_library(rtmem::malloc ALIAS rtmem_malloc_default)
add_library(rtmem::malloc_static ALIAS rtmem_malloc_static)
add_library(rtmem::malloc_shared ALIAS rtmem_malloc_shared)
