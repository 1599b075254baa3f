// Counts heap allocations for `nearby-fusion bench`. Linked into the executable, these
// definitions of malloc, calloc, realloc and the aligned allocators (posix_memalign,
// aligned_alloc, memalign, valloc, pvalloc: the Swift runtime's `swift_slowAlloc` takes
// posix_memalign for a temporary allocation too large for the stack) take precedence over
// libc's for every shared library of the process (the executable comes first in the
// dynamic linker's lookup order); each forwards to glibc's own implementation (__libc_*),
// so behaviour is unchanged and the only cost is one relaxed atomic increment per call.
#include "CMallocCounter.h"
#include <stddef.h>
#include <stdlib.h>  /* defines __GLIBC__ on glibc */

#if defined(__linux__) && defined(__GLIBC__)
#include <errno.h>
#include <stdatomic.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

static _Atomic unsigned long long counter;

void *malloc(size_t size) {
    atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
    return __libc_realloc(pointer, size);
}

/* As glibc's: EINVAL unless the alignment is a power of two and a multiple of sizeof(void *). */
int posix_memalign(void **pointer, size_t alignment, size_t size) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment % sizeof(void *) != 0) return EINVAL;
    atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
    void *result = __libc_memalign(alignment, size);
    if (result == NULL) return ENOMEM;
    *pointer = result;
    return 0;
}

void *aligned_alloc(size_t alignment, size_t size) {
    atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
    return __libc_memalign(alignment, size);
}

void *memalign(size_t alignment, size_t size) {
    atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
    return __libc_memalign(alignment, size);
}

void *valloc(size_t size) {
    atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
    return __libc_valloc(size);
}

void *pvalloc(size_t size) {
    atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
    return __libc_pvalloc(size);
}

unsigned long long nf_malloc_count(void) { return atomic_load_explicit(&counter, memory_order_relaxed); }
int nf_malloc_counting_available(void) { return 1; }
#else
unsigned long long nf_malloc_count(void) { return 0; }
int nf_malloc_counting_available(void) { return 0; }
#endif
