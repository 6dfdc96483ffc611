# The guarded heaps (include/rtmem/lock.h, include/rtmem/shared.h), the TLSF
# crash recovery they use, and the OS layer they need (src/os/).
list(APPEND RTMEM_SOURCES src/heaps/tlsf_rebuild.c src/os/mutex.c src/os/shm.c
     src/shared/guarded.c src/shared/pshared.c src/shared/pshared_ops.c
     src/shared/recovery.c)
