# The slab heap ("slab:<page size>"): size classes over the buddy pages;
# include/rtmem/slab.h.
list(APPEND RTMEM_SOURCES src/heaps/slab.c)
