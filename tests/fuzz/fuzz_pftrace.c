/* fuzz_pftrace.c - libFuzzer target for the .pftrace reader: the input is
 * the packets after a valid head (a process, the capture's facts, a thread
 * on track 2), so that mutations reach the slices, memory samples, counters,
 * flows, interning and samples rather than stop at "no facts". It must
 * return an error or a capture (never crash, hang, leak or read out of
 * bounds), and a capture it reads, written again as .pftrace and as JSON
 * and read back, must give the same tables and stacks. */
#define _GNU_SOURCE /* memfd_create, open_memstream (read_one.h) */
#include "read_one.h"

/* Track 1: process 5; the facts at 0 on it; track 2: thread 6 of process 5. */
static const uint8_t HEAD[] = {0x0a, 0x09, 0xe2, 0x03, 0x06, 0x08, 0x01, 0x1a, 0x02, 0x08, 0x05, 0x0a, 0x2a, 0x40, 0x00,
                               0x5a, 0x26, 0x48, 0x03, 0x58, 0x01, 0xba, 0x01, 0x0e, 'o',  'p',  'p',  'r',  'o',  'f',
                               ' ',  'c',  'a',  'p',  't',  'u',  'r',  'e',  0x22, 0x0f, 0x52, 0x0b, 't',  'i',  'm',
                               'e',  '_',  'o',  'r',  'i',  'g',  'i',  'n',  0x20, 0x00, 0x0a, 0x11, 0xe2, 0x03, 0x0e,
                               0x08, 0x02, 0x22, 0x0a, 0x08, 0x05, 0x10, 0x06, 0x2a, 0x04, 'm',  'a',  'i',  'n'};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *trace = malloc(sizeof HEAD + size);
    if (!trace) return 0;
    memcpy(trace, HEAD, sizeof HEAD);
    memcpy(trace + sizeof HEAD, data, size);
    opprof_read_error err;
    read_one(trace, sizeof HEAD + size, &err);
    if (round_trip_differs(trace, sizeof HEAD + size)) abort(); /* written and read back, it said something else */
    free(trace);
    return 0;
}
