/* fuzz_reader.c - libFuzzer target: any bytes into the trace reader, with
 * the checks on. It must return an error or a capture; never crash, hang,
 * leak or read out of bounds (built with ASan and UBSan by `make fuzz`).
 * Read again from a file on one thread and on two, it must give the same;
 * written as .pftrace and as JSON and read back, the same tables and stacks. */
#define _GNU_SOURCE /* memfd_create, open_memstream (read_one.h) */
#include "read_one.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    opprof_read_error err;
    read_one(data, size, &err);
    int joined;
    if (read_both_ways(data, size, &joined)) abort(); /* two threads said something else */
    if (round_trip_differs(data, size)) abort();      /* written and read back, it said something else */
    return 0;
}
