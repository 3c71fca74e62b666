/* steps.h - `opprof record --step FUNCTION` inside libopprof_record.so (steps.c). */
#ifndef OPPROF_PRELOAD_STEPS_H
#define OPPROF_PRELOAD_STEPS_H

#include <stdbool.h>

/* Redirect the calls of `name` (NULL or "": none) through the step trampoline. */
void opprof__steps_setup(const char *name);
/* At exit: say that no call was seen, when none was. */
void opprof__steps_said(void);
/* The function named `name` is FUNCTION. */
bool opprof__steps_is(const char *name);
/* An instrumented function that is FUNCTION was entered (-finstrument-functions):
 * a step, unless the trampoline made this call's step already. */
void opprof__steps_function_entered(void);
/* What the trampoline calls: a step. */
void opprof__step_enter(void);

#endif
