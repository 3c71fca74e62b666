/* html_roofline.c - the HTML report's roofline chart: log-log, arithmetic
 * intensity (FLOPs per byte) across, attained GFLOP/s up; each memory level's
 * ceiling (its bandwidth times the intensity, up to the FMA peak) as a line,
 * the peak as the roof; one dot per modelled row with FLOPs, its area its
 * share of the time, its numbers on hover. Rows without FLOPs have no place
 * on it: their count is said under it (the table has them). */
#include "render/render.h"

#include <math.h>
#include <string.h>

enum { CHART_W = 720, CHART_H = 360, LEFT = 60, BOTTOM = 30, TOP = 10, RIGHT = 10 };

typedef struct axes {
    double x_lo, x_hi, y_lo, y_hi; /* decades (log10) */
} axes;

static double px_x(const axes *a, double ai) {
    return LEFT + (log10(ai) - a->x_lo) / (a->x_hi - a->x_lo) * (CHART_W - LEFT - RIGHT);
}
static double px_y(const axes *a, double gflops) {
    return TOP + (a->y_hi - log10(gflops)) / (a->y_hi - a->y_lo) * (CHART_H - TOP - BOTTOM);
}

/* The decades that hold the dots and the ridge points. */
static axes axes_of(const opprof_averages *avg, const opprof_machine *m, const opprof_machine_ceilings *c) {
    double x_lo = -2, x_hi = 2, y_lo = log10(c->fma_peak_gflops) - 3, y_hi = ceil(log10(c->fma_peak_gflops)) + 0.2;
    for (int l = 0; l < OPPROF_MACHINE_LEVELS; l++) {
        double bw = fmax(c->levels[l].load_gbs, c->levels[l].copy_gbs);
        if (bw > 0) x_hi = fmax(x_hi, ceil(log10(c->fma_peak_gflops / bw)) + 1);
    }
    size_t n = 0;
    opprof_averages_rows(avg, &n);
    for (size_t i = 0; i < n; i++) { /* every dot inside */
        opprof_roofline f = opprof_averages_roofline(avg, i, m);
        if (!(f.intensity > 0) || !(f.gflops > 0)) continue;
        x_lo = fmin(x_lo, floor(log10(f.intensity)));
        x_hi = fmax(x_hi, ceil(log10(f.intensity)));
        y_lo = fmin(y_lo, floor(log10(f.gflops)));
        y_hi = fmax(y_hi, log10(f.gflops) + 0.2);
    }
    return (axes){floor(x_lo), x_hi, floor(y_lo), y_hi};
}

static void ceilings(opprof__strbuf *sb, const axes *a, const opprof_machine_ceilings *c) {
    static const char *const COLOURS[OPPROF_MACHINE_LEVELS] = {"#2a7", "#39c", "#96c", "#c63"};
    for (int l = 0; l < OPPROF_MACHINE_LEVELS; l++) {
        double bw = fmax(c->levels[l].load_gbs, c->levels[l].copy_gbs);
        if (!(bw > 0)) continue;
        double ridge = c->fma_peak_gflops / bw, x0 = pow(10, a->x_lo), y0 = bw * x0;
        if (y0 < pow(10, a->y_lo)) x0 = pow(10, a->y_lo) / bw, y0 = pow(10, a->y_lo);
        opprof__sb_printf(sb,
                          "<polyline class=\"ceiling\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
                          "points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"><title>%s: %.1f GB/s, ridge at %.2f FLOPs/B"
                          "</title></polyline>\n<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\" font-size=\"11\">%s %.0f GB/s"
                          "</text>\n",
                          COLOURS[l], px_x(a, x0), px_y(a, y0), px_x(a, ridge), px_y(a, c->fma_peak_gflops),
                          px_x(a, pow(10, a->x_hi)), px_y(a, c->fma_peak_gflops), c->levels[l].name, bw, ridge,
                          LEFT + 8.0, TOP + 14.0 + 14 * l, COLOURS[l], c->levels[l].name, bw); /* a legend */
    }
    opprof__sb_printf(sb,
                      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\">FMA peak %.1f GFLOP/s</text>\n",
                      (double)CHART_W - RIGHT, px_y(a, c->fma_peak_gflops) - 4, c->fma_peak_gflops);
}

static void grid(opprof__strbuf *sb, const axes *a) {
    for (double d = a->x_lo; d <= a->x_hi + 1e-9; d++)
        opprof__sb_printf(sb,
                          "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>"
                          "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\">%g</text>\n",
                          px_x(a, pow(10, d)), TOP, px_x(a, pow(10, d)), CHART_H - BOTTOM, px_x(a, pow(10, d)),
                          CHART_H - BOTTOM + 12, pow(10, d));
    for (double d = ceil(a->y_lo); d <= a->y_hi; d++)
        opprof__sb_printf(sb,
                          "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>"
                          "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"10\">%g</text>\n",
                          LEFT, px_y(a, pow(10, d)), CHART_W - RIGHT, px_y(a, pow(10, d)), LEFT - 4,
                          px_y(a, pow(10, d)) + 3, pow(10, d));
    opprof__sb_printf(sb,
                      "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"11\">FLOPs per byte</text>"
                      "<text x=\"12\" y=\"%d\" font-size=\"11\" transform=\"rotate(-90 12 %d)\" "
                      "text-anchor=\"middle\">GFLOP/s</text>\n",
                      (LEFT + CHART_W) / 2, CHART_H - 4, CHART_H / 2, CHART_H / 2);
}

int opprof__html_roofline(opprof__strbuf *sb, const opprof_averages *avg, const opprof_machine *m) {
    const opprof_machine_ceilings *one = opprof_machine_for_threads(m, 1);
    if (!one || !(one->fma_peak_gflops > 0)) return OPPROF_EINVAL;
    axes a = axes_of(avg, m, one);
    size_t n = 0, without = 0, dots = 0;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    int64_t total = 0;
    for (size_t i = 0; i < n; i++) total += rows[i].device ? 0 : rows[i].self_ns;
    opprof__sb_printf(sb,
                      "<h2>Roofline <span class=\"note\">(%s, %s FMAs; hover a dot for its row)</span></h2>\n"
                      "<svg class=\"roofline\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                      "xmlns=\"http://www.w3.org/2000/svg\">\n",
                      m->cpu, m->isa, CHART_W, CHART_H, CHART_W, CHART_H);
    grid(sb, &a);
    ceilings(sb, &a, one);
    for (size_t i = 0; i < n; i++) {
        opprof_roofline f = opprof_averages_roofline(avg, i, m);
        if (!f.modelled || !(rows[i].flops > 0) || !(f.intensity > 0) || !(f.gflops > 0)) {
            without += f.modelled;
            continue;
        }
        double share =
            total > 0 ? (double)(rows[i].wall_ns > 0 ? rows[i].wall_ns : rows[i].total_ns) / (double)total : 0;
        double r = 3 + 20 * sqrt(fmin(1, share));
        char time[32];
        opprof_format_time_us((double)(rows[i].wall_ns > 0 ? rows[i].wall_ns : rows[i].total_ns) / 1e3, time,
                              sizeof time);
        opprof__sb_printf(sb,
                          "<circle class=\"op\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"#c33\" fill-opacity=\"0.6\">"
                          "<title>",
                          px_x(&a, f.intensity), px_y(&a, f.gflops), r);
        opprof__sb_html(sb, rows[i].key);
        opprof__sb_printf(sb,
                          ": %lld calls, %s; %.2f FLOPs/B, %.1f GFLOP/s; %s bound, %.1f %% of roof, %.3f us above it"
                          "</title></circle>\n",
                          (long long)rows[i].calls, time, f.intensity, f.gflops,
                          f.compute_bound ? "compute"
                                          : opprof_machine_for_threads(m, rows[i].threads)->levels[f.level].name,
                          f.roof_percent, f.above_roof_ns / 1e3);
        dots++;
    }
    opprof__sb_puts(sb, "</svg>\n");
    opprof__sb_printf(sb,
                      "<p class=\"note\">%zu operator(s) on the chart; %zu modelled without FLOPs (bytes only: "
                      "memory-bound by construction) are in the table's roofline columns only. Bytes where an "
                      "operator states none are its compulsory traffic from its input shapes: a model, not "
                      "measured traffic.</p>\n",
                      dots, without);
    return 0;
}
