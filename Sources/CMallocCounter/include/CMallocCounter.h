#ifndef NEARBYFUSION_MALLOC_COUNTER_H
#define NEARBYFUSION_MALLOC_COUNTER_H

/// Number of malloc/calloc/realloc and aligned-allocation (posix_memalign, aligned_alloc,
/// memalign, valloc, pvalloc) calls made by the whole process so far, or 0 where counting
/// is not available (only glibc Linux is instrumented).
unsigned long long nf_malloc_count(void);

/// 1 when the counter is live (glibc Linux), 0 otherwise.
int nf_malloc_counting_available(void);

#endif
