/* ranks.h - `opprof merge` and `opprof report --ranks` (ranks.c), commands
 * of tools/opprof.c for the captures of a distributed run. */
#ifndef OPPROF_TOOLS_RANKS_H
#define OPPROF_TOOLS_RANKS_H

#include <stdbool.h>

/** argv[0] is the program, argv[1...] the command's options and traces. */
int opprof_cmd_merge(int argc, char **argv);

/** The cross-rank report of DIR/rank-K/ (each rank's last capture). */
int opprof_ranks_report(const char *dir, bool json);

#endif
