/* mark_kinds.h - the one list of mark kinds: what an engine adds to its ranges
 * and threads besides ranges (<opprof/opprof.h>'s counters, instants,
 * arguments, FLOPs, bytes, flows and async ranges). <opprof/capture.h>'s
 * opprof_mark_kind, the recorder's inline path, the Chrome writer and the
 * reader are all expanded from it: a new kind is one line here.
 *
 * X(NAME, VALUE, PHASE, OF_RANGE, HAS_ID, CATEGORY):
 *   NAME      OPPROF_MARK_NAME in opprof_mark_kind
 *   VALUE     its number (recorded in buffers and captures: never renumber)
 *   PHASE     the Chrome trace-event phase it is written as, or 0 for what is
 *             written inside its range's event (an argument, FLOPs, bytes)
 *   OF_RANGE  1: it belongs to the innermost open range (opprof_mark.event)
 *   HAS_ID    1: its value is an id (value.id) that pairs it with other marks
 *   CATEGORY  the event's "cat" (PHASE != 0), or its args' key's meaning
 */
#ifndef OPPROF_MARK_KINDS_H
#define OPPROF_MARK_KINDS_H

#define OPPROF_MARK_KINDS(X)                                                                \
    X(COUNTER, 0, 'C', 0, 0, "counter")   /* value.d: a sample of the counter `name` */     \
    X(INSTANT, 1, 'i', 0, 0, "instant")   /* value.i: its opprof_instant_scope */           \
    X(ARG_INT, 2, 0, 1, 0, "arg")         /* of `event`: key `name`, value.i */             \
    X(ARG_DOUBLE, 3, 0, 1, 0, "arg")      /* ... value.d */                                 \
    X(ARG_STR, 4, 0, 1, 0, "arg")         /* ... value.str: an opprof_capture_name index */ \
    X(FLOPS, 5, 0, 1, 0, "flops")         /* of `event`: value.i FLOPs */                   \
    X(BYTES, 6, 0, 1, 0, "bytes")         /* of `event`: value.i bytes */                   \
    X(FLOW_BEGIN, 7, 's', 0, 1, "flow")   /* value.id */                                    \
    X(FLOW_END, 8, 'f', 0, 1, "flow")     /* value.id */                                    \
    X(ASYNC_BEGIN, 9, 'b', 0, 1, "async") /* `name`, value.id */                            \
    X(ASYNC_END, 10, 'e', 0, 1, "async")  /* `name`, value.id */                            \
    X(FLOW_STEP, 11, 't', 0, 1, "flow")   /* value.id: the flow goes on through here */ \
    X(ASYNC_INSTANT, 12, 'n', 0, 1, "async") /* `name`, value.id: an instant of the async ranges of its id */

#endif /* OPPROF_MARK_KINDS_H */
