# The McKusick-Karels page/bucket heap ("heapmem:<page>"): include/rtmem/heapmem.h.
list(APPEND RTMEM_SOURCES src/heaps/heapmem.c)
