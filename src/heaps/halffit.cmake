list(APPEND RTMEM_SOURCES src/heaps/halffit.c src/heaps/halffit_check.c)
