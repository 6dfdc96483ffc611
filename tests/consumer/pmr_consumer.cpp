// SPDX-License-Identifier: MIT
// tests/consumer/pmr_consumer.cpp -- a C++17 user of an installed rtmem:
// the header-only <rtmem/pmr.hpp> found through the CMake package (or
// pkg-config), linked against rtmem::rtmem, with a std::pmr container and a
// standard-allocator container on one TLSF heap. Prints one line; any
// mismatch is exit status 1.
#include <rtmem/pmr.hpp>

#include <cstdio>
#include <map>
#include <memory_resource>
#include <vector>

int main()
{
    static unsigned char region[256 * 1024];
    rtmem::heap heap("tlsf", region, sizeof region);
    rtmem::heap_resource resource(heap.get());
    {
        std::pmr::vector<int> numbers(&resource);
        for (int i = 0; i < 1000; i++)
            numbers.push_back(i);
        std::map<int, long, std::less<int>, rtmem::allocator<std::pair<const int, long>>> squares(
            rtmem::allocator<std::pair<const int, long>>(heap.get()));
        for (int i = 0; i < 100; i++)
            squares[i] = static_cast<long>(i) * i;
        if (numbers[999] != 999 || squares[99] != 9801 || rtm_heap_stats(heap.get()).live_blocks == 0) {
            std::puts("pmr_consumer: containers did not allocate from the heap as expected");
            return 1;
        }
    }
    rtm_stats after = rtm_heap_stats(heap.get());
    if (after.live_blocks != 0 || rtm_heap_check(heap.get()) != 0) {
        std::printf("pmr_consumer: %zu blocks left after the containers died\n", after.live_blocks);
        return 1;
    }
    std::printf("pmr_consumer: ok, rtmem %s, std::pmr::vector and std::map on tlsf\n", rtm_version());
    return 0;
}
