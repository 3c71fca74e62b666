/* html_page.c - what every opprof page shares (the report, diff's page):
 * the head with its style, the name cells, the tail with the script that
 * sorts a table by the column clicked. */
#include "render/render.h"

enum { MAX_NAME_CELL = 80 }; /* characters of a name in a table (whole on hover) */

static const char STYLE[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}"
    "h1{font-size:20px}h2{font-size:16px;margin-top:28px}"
    "table{border-collapse:collapse}th,td{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right}"
    "th{cursor:pointer;background:#f4f4f4;position:sticky;top:0}th:first-child,td:first-child{text-align:left}"
    "td:first-child{font-family:monospace}.facts td{text-align:left;font-family:inherit}"
    ".warn{color:#a40}svg text{font:11px monospace;pointer-events:none}"
    "svg rect:hover{stroke:#000;stroke-width:1}.note{color:#666}"
    ".bar{height:6px;margin:1px 0}.bar.b{background:#aaa}.bar.a{background:#36c}.bar.a.worse{background:#c33}"
    ".bar.a.better{background:#3a3}svg.dist line{stroke:#666}svg.dist rect{fill:#9bd;stroke:#36c}"
    "svg.dist line.med{stroke:#c33;stroke-width:2}";

/* Click a header: sort its table's rows by that column (again: reverse). */
static const char SCRIPT[] =
    "document.querySelectorAll('table.sortable th').forEach(function(th,col){th.onclick=function(){"
    "var tb=th.closest('table').tBodies[0],rows=Array.from(tb.rows),down=th.dataset.down!=='1';"
    "th.dataset.down=down?'1':'0';rows.sort(function(a,b){var x=a.cells[col].dataset.v,y=b.cells[col].dataset.v,"
    "nx=parseFloat(x),ny=parseFloat(y),c=th.dataset.text?String(x).localeCompare(y):nx-ny;"
    "return down?-c:c;});rows.forEach(function(r){tb.appendChild(r);});};});";

void opprof__html_begin(opprof__strbuf *sb, const char *title) {
    opprof__sb_printf(sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>");
    opprof__sb_html(sb, title);
    opprof__sb_printf(sb, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", STYLE);
    opprof__sb_html(sb, title);
    opprof__sb_puts(sb, "</h1>\n");
}

void opprof__html_name_cell(opprof__strbuf *sb, const char *name) {
    opprof__sb_puts(sb, "<td data-v=\"");
    opprof__sb_html(sb, name);
    opprof__sb_puts(sb, "\" title=\"");
    opprof__sb_html(sb, name);
    opprof__sb_puts(sb, "\">");
    opprof__sb_html_cut(sb, name, MAX_NAME_CELL);
    opprof__sb_puts(sb, "</td>");
}

void opprof__html_end(opprof__strbuf *sb) {
    opprof__sb_printf(sb, "<p class=\"note\">Written by opprof %s.</p>\n<script>%s</script>\n</body>\n</html>\n",
                      OPPROF_VERSION_STRING, SCRIPT);
}
