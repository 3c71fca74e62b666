// alloc_contract.cpp - what a program may rely on of its allocator, printed
// one line per case, for test_record_cli: the same lines with and without
// `opprof record --memory` (which interposes every one of these functions).
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <malloc.h>
#include <new>

static int handler_calls;
static void *reserve;
static void release_reserve() { // a new_handler that frees memory once, then gives up
    handler_calls++;
    std::free(reserve);
    reserve = nullptr;
    std::set_new_handler(nullptr);
}

int main() {
    volatile std::size_t huge_v = SIZE_MAX / 2; // volatile: the compiler may not see the size is absurd
    const std::size_t huge = huge_v;
    try {
        void *p = ::operator new(huge);
        std::printf("new: returned %s\n", p ? "a block" : "NULL");
    } catch (const std::bad_alloc &) {
        std::printf("new: threw bad_alloc\n");
    }
    try {
        void *p = ::operator new[](huge);
        std::printf("new[]: returned %s\n", p ? "a block" : "NULL");
    } catch (const std::bad_alloc &) {
        std::printf("new[]: threw bad_alloc\n");
    }
    std::printf("new(nothrow): %s\n", ::operator new(huge, std::nothrow) ? "a block" : "NULL");
    try {
        void *p = ::operator new(huge, std::align_val_t(64));
        std::printf("aligned new: returned %s\n", p ? "a block" : "NULL");
    } catch (const std::bad_alloc &) {
        std::printf("aligned new: threw bad_alloc\n");
    }
    reserve = std::malloc(1000);
    std::set_new_handler(release_reserve);
    try {
        (void)::operator new(huge);
    } catch (const std::bad_alloc &) {
        std::printf("new_handler: called %d time(s), then bad_alloc\n", handler_calls);
    }
    errno = 0;
    std::printf("pvalloc(SIZE_MAX - 10): %s\n", pvalloc(SIZE_MAX - 10) ? "a block" : "NULL");
    std::printf("calloc(huge, 4): %s\n", std::calloc(huge, 4) ? "a block" : "NULL");
    std::printf("reallocarray(huge, 4): %s\n", reallocarray(nullptr, huge, 4) ? "a block" : "NULL");
    std::printf("aligned_alloc(3, 8): %s\n", aligned_alloc(3, 8) ? "a block" : "NULL");
    void *page = pvalloc(1);
    std::printf("pvalloc(1): %s\n", page && malloc_usable_size(page) >= 4096 ? "a page" : "not a page");
    std::free(page);
    int *v = new int[1000];
    v[999] = 7;
    std::printf("new int[1000]: %d\n", v[999]);
    delete[] v;
    return 0;
}
