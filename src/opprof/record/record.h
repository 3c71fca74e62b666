/* record/record.h - the recording layer: the recorder's windows and the
 * capture built from its buffers, for the session (record/session.c). The
 * recorder's own state is record/recorder_state.h, seen only by this layer.
 * Above the capture layer. */
#ifndef OPPROF_RECORD_LAYER_H
#define OPPROF_RECORD_LAYER_H

#include "capture/capture.h"

/* ---- recorder (record/recorder.c, record/snapshot.c), used by record/session.c ---- */
typedef struct opprof__recorder_config {
    bool profile_memory;
    bool record_shapes;
    bool with_stack;
    bool with_native_stack;
    uint64_t max_events;
} opprof__recorder_config;
/* Begin a new recording window (new epoch); threads reset their buffers lazily. */
OPPROF__HIDDEN void opprof__recorder_window_open(const opprof__recorder_config *cfg);
/* Stop recording; events already written stay readable. */
OPPROF__HIDDEN uint64_t opprof__recorder_window_close(void);
/* Copy the current window's events into a new capture (finished). */
OPPROF__HIDDEN int opprof__recorder_snapshot(opprof_capture **out, uint64_t window_start_ticks,
                                             uint64_t window_end_ticks);
OPPROF__HIDDEN uint64_t opprof__recorder_window_start_ticks(void);
/* The calling thread recorded in the current window and dropped nothing. */
OPPROF__HIDDEN bool opprof__recorder_thread_clean(void);


/* Called by opprof_session_start before it starts a session: a layer above
 * registers itself here (OPPROF_TRACE's session yields, autostart/). NULL: none. */
extern OPPROF__HIDDEN void (*opprof__before_session_start)(void);

#endif /* OPPROF_RECORD_LAYER_H */
