/* strbuf.c - a growing string with JSON escaping, for tables and JSON. */
#include "base/base.h"

#include <string.h>

static int reserve(opprof__strbuf *sb, size_t extra) {
    if (sb->error) return sb->error;
    if (sb->len + extra + 1 <= sb->cap) return 0;
    size_t cap = sb->cap ? sb->cap : 256;
    while (cap < sb->len + extra + 1) cap *= 2;
    char *p = opprof__realloc(sb->data, cap);
    if (!p) return sb->error = OPPROF_ENOMEM;
    sb->data = p;
    sb->cap = cap;
    return 0;
}

void opprof__sb_put(opprof__strbuf *sb, const char *s, size_t n) {
    if (reserve(sb, n)) return;
    if (n) memcpy(sb->data + sb->len, s, n); /* s may be NULL when n is 0 (an empty buffer's data) */
    sb->len += n;
    sb->data[sb->len] = '\0';
}

void opprof__sb_puts(opprof__strbuf *sb, const char *s) { opprof__sb_put(sb, s, strlen(s)); }

/* Formats into the room left; only when that is too small, grows and formats again. */
void opprof__sb_printf(opprof__strbuf *sb, const char *fmt, ...) {
    if (reserve(sb, 64)) return;
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(sb->data + sb->len, sb->cap - sb->len, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n >= sb->cap - sb->len && reserve(sb, (size_t)n) == 0)
        vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    if (n >= 0 && !sb->error) sb->len += (size_t)n;
    if (sb->data) sb->data[sb->len] = '\0';
}

/* ---- numbers: one formatter for integers, one for nanoseconds as microseconds ---- */

void opprof__sb_int(opprof__strbuf *sb, int64_t v) {
    char tmp[OPPROF__NUMBER_TEXT];
    char *p = opprof__int_text(v, tmp + sizeof tmp);
    opprof__sb_put(sb, p, (size_t)(tmp + sizeof tmp - p));
}

void opprof__sb_us(opprof__strbuf *sb, int64_t ns) {
    char tmp[OPPROF__NUMBER_TEXT];
    char *p = opprof__us_text(ns, tmp + sizeof tmp);
    opprof__sb_put(sb, p, (size_t)(tmp + sizeof tmp - p));
}

void opprof__sb_repeat(opprof__strbuf *sb, char c, size_t n) {
    if (reserve(sb, n)) return;
    memset(sb->data + sb->len, c, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if invalid. */
static size_t utf8_sequence(const unsigned char *s) {
    unsigned c = s[0];
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if ((s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && s[1] < 0xA0) return 0;  /* overlong */
        if (c == 0xED && s[1] >= 0xA0) return 0; /* surrogates */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if ((s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80) return 0;
        if (c == 0xF0 && s[1] < 0x90) return 0;  /* overlong */
        if (c == 0xF4 && s[1] >= 0x90) return 0; /* above U+10FFFF */
        return 4;
    }
    return 0;
}

void opprof__sb_json_string(opprof__strbuf *sb, const char *str) {
    const unsigned char *s = (const unsigned char *)str;
    opprof__sb_put(sb, "\"", 1);
    while (*s) {
        const unsigned char *run = s; /* plain ASCII, put in one copy */
        while (*s >= 0x20 && *s < 0x80 && *s != '"' && *s != '\\') s++;
        if (s > run) opprof__sb_put(sb, (const char *)run, (size_t)(s - run));
        unsigned c = *s;
        if (!c) break;
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            opprof__sb_put(sb, esc, 2);
            s++;
        } else if (c < 0x20) {
            switch (c) {
            case '\n': opprof__sb_put(sb, "\\n", 2); break;
            case '\r': opprof__sb_put(sb, "\\r", 2); break;
            case '\t': opprof__sb_put(sb, "\\t", 2); break;
            case '\b': opprof__sb_put(sb, "\\b", 2); break;
            case '\f': opprof__sb_put(sb, "\\f", 2); break;
            default: opprof__sb_printf(sb, "\\u%04x", c); break;
            }
            s++;
        } else {
            size_t n = utf8_sequence(s);
            if (n == 0) {
                opprof__sb_put(sb, "\xEF\xBF\xBD", 3); /* U+FFFD */
                s++;
            } else {
                opprof__sb_put(sb, (const char *)s, n);
                s += n;
            }
        }
    }
    opprof__sb_put(sb, "\"", 1);
}

void opprof__sb_free(opprof__strbuf *sb) {
    opprof__free(sb->data);
    *sb = (opprof__strbuf){0};
}

void opprof__sb_html(opprof__strbuf *sb, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '&': opprof__sb_puts(sb, "&amp;"); break;
        case '<': opprof__sb_puts(sb, "&lt;"); break;
        case '>': opprof__sb_puts(sb, "&gt;"); break;
        case '"': opprof__sb_puts(sb, "&quot;"); break;
        case '\'': opprof__sb_puts(sb, "&#39;"); break;
        default: opprof__sb_put(sb, s, 1);
        }
    }
}

/* The first `max` bytes of s, escaped, with "..." when cut (never inside a
 * UTF-8 sequence). */
void opprof__sb_html_cut(opprof__strbuf *sb, const char *s, size_t max) {
    size_t n = strlen(s);
    if (n <= max) {
        opprof__sb_html(sb, s);
        return;
    }
    size_t keep = max > 3 ? max - 3 : 0;
    while (keep && ((unsigned char)s[keep] & 0xC0) == 0x80) keep--;
    char buf[256];
    if (keep >= sizeof buf) keep = sizeof buf - 1;
    memcpy(buf, s, keep);
    buf[keep] = '\0';
    opprof__sb_html(sb, buf);
    opprof__sb_puts(sb, "...");
}

int opprof__sb_finish(opprof__strbuf *sb, int rc, char **out) {
    if (!rc) rc = sb->error;
    if (!rc && !(*out = opprof__public_string(sb->data ? sb->data : "", sb->len))) rc = OPPROF_ENOMEM;
    opprof__sb_free(sb);
    return rc;
}

int opprof_json_string_to_string(const char *text, char **out_text) {
    if (!text || !out_text) return OPPROF_EINVAL;
    opprof__strbuf sb = {0};
    opprof__sb_json_string(&sb, text);
    return opprof__sb_finish(&sb, 0, out_text);
}

/* ---- text for a terminal ---- */

static bool is_c1(const char *s) { /* U+0080 to U+009F as UTF-8 */
    return (unsigned char)s[0] == 0xc2 && (unsigned char)s[1] >= 0x80 && (unsigned char)s[1] < 0xa0;
}

static bool is_control(const char *s) { return (unsigned char)*s < 0x20 || *s == 0x7f || is_c1(s); }

void opprof__show_controls(char *buf, size_t size) {
    size_t len = strlen(buf), i = 0;
    while (i < len && !is_control(buf + i)) i++;
    if (i == len) return;
    opprof__strbuf shown = {0};
    opprof__sb_put(&shown, buf, i);
    for (; i < len; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c == '\n' || c == '\t' || c == '\r')
            opprof__sb_puts(&shown, c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r");
        else if (c < 0x20 || c == 0x7f)
            opprof__sb_printf(&shown, "\\x%02x", c);
        else if (is_c1(buf + i))
            opprof__sb_printf(&shown, "\\u%04x", (unsigned char)buf[++i]);
        else
            opprof__sb_put(&shown, buf + i, 1);
    }
    if (!shown.error)
        snprintf(buf, size, "%s", shown.data);
    else
        for (i = 0; i < len; i++) { /* no memory: each byte of a control shown as '?' */
            size_t n = is_c1(buf + i) ? 2 : is_control(buf + i) ? 1 : 0;
            for (size_t k = 0; k < n; k++) buf[i + k] = '?';
            if (n) i += n - 1;
        }
    opprof__free(shown.data);
}
