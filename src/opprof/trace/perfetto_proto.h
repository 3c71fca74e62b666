/* perfetto_proto.h - what opprof's .pftrace writer (perfetto_writer.c) and
 * reader (perfetto_reader.c) must agree on, written once: the field numbers
 * of Perfetto's perfetto_trace.proto that they use, the track uuids and
 * track names by which the reader knows a track's kind, and the names of
 * opprof's own debug annotations. A new field, track or annotation is added
 * here, then written and read (docs/TRACE_FORMAT.md says what each means). */
#ifndef OPPROF_TRACE_PERFETTO_PROTO_H
#define OPPROF_TRACE_PERFETTO_PROTO_H

#include <stdint.h>

/* Field numbers of perfetto_trace.proto, by message. */
enum {
    TRACE_PACKET = 1, /* Trace */
    PACKET_CLOCK_SNAPSHOT = 6,
    PACKET_TIMESTAMP = 8,
    PACKET_SEQUENCE_ID = 10,
    PACKET_TRACK_EVENT = 11,
    PACKET_INTERNED = 12,
    PACKET_FLAGS = 13,
    PACKET_TIMESTAMP_CLOCK = 58,
    PACKET_DEFAULTS = 59,
    PACKET_TRACK_DESCRIPTOR = 60,
    PACKET_PERF_SAMPLE = 66, /* TracePacket */
    DEFAULTS_CLOCK = 58,
    DEFAULTS_TRACK_EVENT = 11, /* TracePacketDefaults */
    TRACK_EVENT_DEFAULT_TRACK = 11,
    TRACK_EVENT_DEFAULT_EXTRA_COUNTERS = 31, /* TrackEventDefaults */
    SNAPSHOT_CLOCK = 1,
    CLOCK_ID = 1,
    CLOCK_TIMESTAMP = 2,
    CLOCK_INCREMENTAL = 3, /* ClockSnapshot(.Clock) */
    SAMPLE_PID = 2,
    SAMPLE_TID = 3,
    SAMPLE_CALLSTACK = 4,
    SAMPLE_CPU_MODE = 5, /* PerfSample */
    INTERNED_CATEGORIES = 1,
    INTERNED_NAMES = 2,
    INTERNED_ANNOTATION_NAMES = 3,
    INTERNED_FUNCTION_NAMES = 5,
    INTERNED_FRAMES = 6,
    INTERNED_CALLSTACKS = 7,
    INTERNED_SOURCE_PATHS = 18, /* InternedData */
    IID = 1,
    IID_NAME = 2, /* EventName, InternedString... */
    FRAME_IID = 1,
    FRAME_FUNCTION_NAME = 2,
    FRAME_SOURCE_PATH = 5,
    FRAME_LINE = 6, /* Frame */
    CALLSTACK_IID = 1,
    CALLSTACK_FRAMES = 2, /* Callstack */
    TRACK_UUID = 1,
    TRACK_NAME = 2,
    TRACK_PROCESS = 3,
    TRACK_THREAD = 4,
    TRACK_PARENT = 5,
    TRACK_COUNTER = 8, /* TrackDescriptor */
    PROCESS_PID = 1,
    PROCESS_NAME = 6, /* ProcessDescriptor */
    THREAD_PID = 1,
    THREAD_TID = 2,
    THREAD_NAME = 5,  /* ThreadDescriptor */
    COUNTER_UNIT = 3, /* CounterDescriptor */
    EVENT_CATEGORY_IIDS = 3,
    EVENT_ANNOTATIONS = 4,
    EVENT_TYPE = 9,
    EVENT_NAME_IID = 10,
    EVENT_TRACK = 11,
    EVENT_EXTRA_COUNTER_VALUES = 12,
    EVENT_NAME = 23,
    EVENT_COUNTER = 30,
    EVENT_DOUBLE_COUNTER = 44,
    EVENT_FLOW_IDS = 47,
    EVENT_TERMINATING_FLOWS = 48, /* TrackEvent */
    NOTE_NAME_IID = 1,
    NOTE_UINT = 3,
    NOTE_INT = 4,
    NOTE_DOUBLE = 5,
    NOTE_STRING = 6,
    NOTE_NAME = 10, /* DebugAnnotation */
};
/* TrackEvent.Type, PerfSample's cpu mode, the sequence's flags and clocks,
 * CounterDescriptor.Unit. Timestamps are deltas on a clock of the
 * sequence's own (64, incremental), which a clock snapshot ties to BOOTTIME
 * (6), the trace's clock. */
enum { SLICE_BEGIN = 1, SLICE_END = 2, INSTANT = 3, COUNTER = 4 };
enum { MODE_USER = 2 };
enum { SEQ_CLEARED = 1, SEQ_NEEDS_STATE = 2, SEQUENCE = 1 };
enum { CLOCK_BOOTTIME = 6, CLOCK_DELTAS = 64 };
enum { UNIT_SIZE_BYTES = 3 };

/* Track uuids, apart: threads the smallest (a slice's track is a byte or
 * two), then processes, allocators (a device's type and id + 1 in the low
 * 32 bits), counters, async ranges, a thread's lanes. */
#define THREAD_UUID(t) ((uint64_t)(t) + 1)
#define PROCESS_UUID(k) (UINT64_C(1) << 32 | (uint64_t)(k))
#define MEMORY_UUID(type, id) (UINT64_C(2) << 32 | (uint64_t)(uint16_t)(type) << 16 | (uint64_t)(uint16_t)((id) + 1))
#define MEMORY_UUID_TYPE(uuid) ((int)(uint16_t)((uuid) >> 16))
#define MEMORY_UUID_ID(uuid) ((int)(uint16_t)(uuid)-1)
#define COUNTER_UUID(name) (UINT64_C(3) << 32 | (uint64_t)(name))
#define ASYNC_UUID(k) (UINT64_C(4) << 40 | (uint64_t)(k))
#define LANE_UUID(t, k) (UINT64_C(5) << 40 | (uint64_t)(t) << 6 | (uint64_t)(k))
#define OFF_CPU_UUID(t) (UINT64_C(6) << 40 | (uint64_t)(t))
#define ADDRESS_UUID (UINT64_C(7) << 40)

/* Track names that say a track's kind: a thread's times off the CPU (a
 * counter under its track: 1 blocked, 2 preempted, 0 back), every memory
 * event's address (the extra counter the defaults name), and an
 * allocator's ("CPU memory", "device T:I memory": it ends so). */
#define OFF_CPU_TRACK "opprof: off CPU"
#define ADDRESS_TRACK "opprof: memory event address"
#define MEMORY_TRACK_SUFFIX "memory"
/* The capture's facts: an instant of this name. */
#define FACTS_EVENT "opprof capture"

/* Debug annotations of opprof's own on events (interned past the capture's
 * names by the writer), and those of the facts that are not numbers. */
#define OPPROF__PFTRACE_NOTES(X)                                                                              \
    X(BYTES, "Bytes")                                                                                         \
    X(THREAD, "Thread") X(DIMS, "Input Dims") X(TYPES, "Input type") X(STACK, "Call stack") X(SCOPE, "scope") \
        X(EXTERNAL, "External id") X(FLOW_STEP, "flow step")
#define OPPROF__PFTRACE_FACT_TEXTS(X)                                                                      \
    X(WARNING, "warning")                                                                                  \
    X(DEVICE_NAME, "device_name")                                                                          \
    X(READ_FROM, "read_from") X(DEMANGLED, "demangled") X(MANGLED, "mangled") X(MACHINE, "opprof_machine") \
        X(HOST_NAME, "host_name")
enum {
#define OPPROF__PFTRACE_NOTE_ENUM(id, text) NOTE_##id,
    OPPROF__PFTRACE_NOTES(OPPROF__PFTRACE_NOTE_ENUM) N_OWN_NOTES,
    OPPROF__PFTRACE_FACT_TEXTS(OPPROF__PFTRACE_NOTE_ENUM) N_NOTE_TEXTS
#undef OPPROF__PFTRACE_NOTE_ENUM
};
static const char *const OPPROF__PFTRACE_NOTE_TEXT[] = {
#define OPPROF__PFTRACE_NOTE_TEXT_OF(id, text) text,
    OPPROF__PFTRACE_NOTES(OPPROF__PFTRACE_NOTE_TEXT_OF) "", OPPROF__PFTRACE_FACT_TEXTS(OPPROF__PFTRACE_NOTE_TEXT_OF)
#undef OPPROF__PFTRACE_NOTE_TEXT_OF
};

#endif
