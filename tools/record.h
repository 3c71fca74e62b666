/* record.h - `opprof record` (record.c), a command of tools/opprof.c. */
#ifndef OPPROF_TOOLS_RECORD_H
#define OPPROF_TOOLS_RECORD_H

/** argv[0] is the program, argv[1...] the command's options and CMD. */
int opprof_cmd_record(int argc, char **argv);

#endif
