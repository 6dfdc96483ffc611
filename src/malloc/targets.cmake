# The thread-caching drop-in malloc (docs/MALLOC.md): build/librtmem-malloc.so
# for LD_PRELOAD and build/librtmem-malloc.a for static linking, both
# defining malloc, free, ... and C++ new/delete. Deliberately not part of
# librtmem: linking librtmem must never replace a program's malloc.
#
# rtmem_malloc_api is the same allocator without the drop-in names (only
# rtm_malloc, rtm_free, ...): the in-process tests link it, so that they run
# under ASan, UBSan and TSan, whose runtimes own malloc.
set(RTMEM_MALLOC_SOURCES
    src/os/pages.c
    src/malloc/lock.c
    src/malloc/sizeclass.c
    src/malloc/pagemap.c
    src/malloc/meta.c
    src/malloc/pageheap.c
    src/malloc/central.c
    src/malloc/tcache.c
    src/malloc/malloc.c
    src/malloc/stats.c)
list(TRANSFORM RTMEM_MALLOC_SOURCES PREPEND ${CMAKE_SOURCE_DIR}/)

# -fno-builtin-*: gcc may otherwise turn malloc + memset into a call to
# calloc, inside calloc. -fexceptions: C++ exceptions thrown by libstdc++'s
# operator new (the fallback in dropin.c) unwind through our frames.
# _GNU_SOURCE: mmap flags, dlsym(RTLD_NEXT), pthread_atfork under -std=c11.
set(RTMEM_MALLOC_FLAGS ${RTMEM_WARNINGS} -fvisibility=hidden -fexceptions
    -fno-builtin-malloc -fno-builtin-free -fno-builtin-calloc -fno-builtin-realloc)

function(rtmem_malloc_target name kind)
  add_library(${name} ${kind} ${ARGN})
  target_include_directories(${name} PUBLIC ${CMAKE_SOURCE_DIR}/include
                                     PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_compile_options(${name} PRIVATE ${RTMEM_MALLOC_FLAGS})
  target_compile_definitions(${name} PRIVATE _GNU_SOURCE)
  target_link_libraries(${name} PUBLIC Threads::Threads ${CMAKE_DL_LIBS})
endfunction()

rtmem_malloc_target(rtmem_malloc_api STATIC ${RTMEM_MALLOC_SOURCES})
rtmem_malloc_target(rtmem_malloc_shared SHARED ${RTMEM_MALLOC_SOURCES}
                    ${CMAKE_SOURCE_DIR}/src/malloc/dropin.c)
rtmem_malloc_target(rtmem_malloc_static STATIC ${RTMEM_MALLOC_SOURCES}
                    ${CMAKE_SOURCE_DIR}/src/malloc/dropin.c)
set_target_properties(rtmem_malloc_shared PROPERTIES OUTPUT_NAME rtmem-malloc)
set_target_properties(rtmem_malloc_static PROPERTIES OUTPUT_NAME rtmem-malloc)
set_target_properties(rtmem_malloc_api PROPERTIES ARCHIVE_OUTPUT_DIRECTORY
                                                  ${CMAKE_BINARY_DIR}/malloc)
