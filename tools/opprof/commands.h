/* commands.h - the one list of `opprof`'s commands, in the order `opprof help`
 * lists them. A command is a file cmd_NAME.c that defines
 * `const tool_command tool_cmd_NAME` and one word here. */
#ifndef OPPROF_TOOLS_COMMANDS_H
#define OPPROF_TOOLS_COMMANDS_H

#include "tool.h"

#define TOOL_COMMANDS(X) \
    X(report) X(machine) X(sql) X(stacks) X(html) X(check) X(diff) X(merge) X(convert) X(record) X(dump)

#define TOOL_COMMAND_DECLARE(name) extern const tool_command tool_cmd_##name;
TOOL_COMMANDS(TOOL_COMMAND_DECLARE)
#undef TOOL_COMMAND_DECLARE

#endif
