# The binary buddy page allocator ("buddy:<page size>"): include/rtmem/buddy.h.
list(APPEND RTMEM_SOURCES src/heaps/buddy.c)
