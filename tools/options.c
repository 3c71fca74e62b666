/* options.c - a tool's one list of options made into getopt_long's tables,
 * help lines and a synopsis (options.h). */
#define _GNU_SOURCE
#include "options.h"

#include <getopt.h>
#include <stdbool.h>
#include <string.h>

enum { MAX_OPTIONS = 64, FIRST_VAL = 256 /* above every character getopt returns */ };

static bool is_text(const tool_option *o) { return o->name == NULL && o->help != NULL; }
static bool at_end(const tool_option *o) { return o->name == NULL && o->help == NULL; }
/* Its letter ("-o", "o|output"), or 0. */
static char letter_of(const tool_option *o) {
    return o->name[0] == '-' ? o->name[1] : o->name[0] && o->name[1] == '|' ? o->name[0] : 0;
}
/* Its long name ("output" of "o|output"), or NULL. */
static const char *long_of(const tool_option *o) {
    return o->name[0] == '-' ? NULL : o->name[0] && o->name[1] == '|' ? o->name + 2 : o->name;
}

/* getopt_long's tables of `options`, made once per list. */
typedef struct tables {
    const tool_option *of;
    struct option longs[MAX_OPTIONS + 1];
    char shorts[2 + 2 * MAX_OPTIONS + 1];
} tables;

static const tables *tables_of(const tool_option *options, bool in_order) {
    static tables t;
    if (t.of == options) return &t;
    memset(&t, 0, sizeof t);
    t.of = options;
    size_t n_long = 0, n_short = 0;
    if (in_order) t.shorts[n_short++] = '+'; /* the first operand ends the options (record's CMD) */
    for (int k = 0; !at_end(&options[k]) && k < MAX_OPTIONS; k++) {
        const tool_option *o = &options[k];
        if (is_text(o)) continue;
        if (letter_of(o)) {
            t.shorts[n_short++] = letter_of(o);
            if (o->arg) t.shorts[n_short++] = ':';
        }
        if (long_of(o)) {
            int has = !o->arg ? no_argument : o->arg[0] == '[' ? optional_argument : required_argument;
            t.longs[n_long++] = (struct option){long_of(o), has, NULL, FIRST_VAL + k};
        }
    }
    return &t;
}

/* The id of the option a short letter names. */
static int short_id(const tool_option *options, int letter) {
    for (int k = 0; !at_end(&options[k]); k++)
        if (!is_text(&options[k]) && letter_of(&options[k]) == letter) return k;
    return TOOL_OPTIONS_BAD;
}

static int next_option(int argc, char **argv, const tool_option *options, bool in_order) {
    const tables *t = tables_of(options, in_order);
    int c = getopt_long(argc, argv, t->shorts, t->longs, NULL);
    if (c == -1) return TOOL_OPTIONS_END;
    if (c >= FIRST_VAL) return c - FIRST_VAL;
    if (c == '?') return TOOL_OPTIONS_BAD;
    return short_id(options, c);
}

int tool_next_option(int argc, char **argv, const tool_option *options) {
    return next_option(argc, argv, options, false);
}

int tool_next_option_in_order(int argc, char **argv, const tool_option *options) {
    return next_option(argc, argv, options, true);
}

/* "--row-limit N", "--sample[=HZ]", "-o FILE", "-o, --output FILE" (brief: "-o FILE"). */
static int label(const tool_option *o, bool brief, char *buf, size_t size) {
    const char *arg = o->arg ? o->arg : "", *space = o->arg && arg[0] != '[' ? " " : "";
    char letter = letter_of(o);
    if (!long_of(o) || (brief && letter)) return snprintf(buf, size, "-%c%s%s", letter, space, arg);
    return snprintf(buf, size, "%s%s%s--%s%s%s", letter ? "-" : "", letter ? (char[2]){letter, 0} : "",
                    letter ? ", " : "", long_of(o), space, arg);
}

void tool_options_help(FILE *out, const tool_option *options) {
    enum { WIDEST = 16 }; /* a longer label takes the line's start, two spaces before its help */
    int column = 0;
    char buf[128];
    for (int k = 0; !at_end(&options[k]); k++) {
        int n = is_text(&options[k]) ? 0 : label(&options[k], false, buf, sizeof buf);
        if (n <= WIDEST && n > column) column = n;
    }
    column += 4;
    for (int k = 0; !at_end(&options[k]); k++) {
        const tool_option *o = &options[k];
        if (is_text(o)) {
            fprintf(out, "%s\n", o->help);
            continue;
        }
        int n = label(o, false, buf, sizeof buf) + 2;
        fprintf(out, "  %s%*s", buf, n + 2 < column ? column - n : 2, "");
        for (const char *line = o->help; *line;) {
            const char *nl = strchr(line, '\n');
            int len = nl ? (int)(nl - line) : (int)strlen(line);
            fprintf(out, "%.*s\n", len, line);
            line += len + (nl != NULL);
            if (*line) fprintf(out, "%*s", column, "");
        }
    }
}

void tool_options_synopsis(FILE *out, const char *prefix, const char *usage, const tool_option *options, int indent) {
    enum { WIDTH = 100 };
    const char *at = strstr(usage, "[OPTIONS]");
    int before = at ? (int)(at - usage) : (int)strlen(usage);
    int column = fprintf(out, "%s%.*s", prefix, before, usage);
    bool first = true;
    char buf[160], item[170];
    for (int k = 0; !at_end(&options[k]); k++) {
        if (is_text(&options[k])) continue;
        label(&options[k], true, buf, sizeof buf);
        int n = snprintf(item, sizeof item, "%s[%s]", first && (at || before == 0) ? "" : " ", buf);
        if (column + n > WIDTH && !first) {
            column = fprintf(out, "\n%*s", indent, "") - 1;
            n = snprintf(item, sizeof item, "[%s]", buf);
        }
        column += fprintf(out, "%s", item);
        first = false;
    }
    fprintf(out, "%s\n", at ? at + strlen("[OPTIONS]") : "");
}
