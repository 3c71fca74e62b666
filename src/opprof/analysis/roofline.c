/* roofline.c - each row of key averages against its roof: the row's FLOPs
 * and bytes (stated, else from its shapes) over its wall time, on the
 * ceilings of the threads it ran on (a machine profile: analysis/machine.c,
 * trace/machine_file.c). */
#include "analysis/analysis.h"

#include <math.h>

enum { LLC = OPPROF_MACHINE_LEVELS - 2, DRAM = OPPROF_MACHINE_LEVELS - 1 };

int opprof__roof_level(const opprof_machine_ceilings *c, double call_bytes, double step_bytes) {
    int level = DRAM;
    for (int l = 0; l < DRAM; l++)
        if (c->levels[l].bytes > 0 && call_bytes <= (double)c->levels[l].bytes) {
            level = l;
            break;
        }
    if (level == LLC && step_bytes > (double)c->levels[LLC].bytes) level = DRAM;
    return level;
}

double opprof__roof_ns(const opprof_machine_ceilings *c, double flops, double bytes, double call_bytes,
                       double step_bytes, int *level, bool *compute_bound) {
    int l = opprof__roof_level(c, call_bytes, step_bytes);
    const opprof_machine_level *lv = &c->levels[l];
    double bw = lv->load_gbs > lv->copy_gbs ? lv->load_gbs : lv->copy_gbs; /* GB/s = bytes per ns */
    double compute_ns = c->fma_peak_gflops > 0 ? flops / c->fma_peak_gflops : 0, memory_ns = bw > 0 ? bytes / bw : 0;
    if (level) *level = l;
    if (compute_bound) *compute_bound = compute_ns >= memory_ns;
    return compute_ns >= memory_ns ? compute_ns : memory_ns;
}

static opprof_roofline roofline_of(const opprof_machine *m, const opprof_average_row *r, double step_bytes) {
    opprof_roofline f = {.intensity = NAN, .gflops = NAN, .gbs = NAN, .roof_percent = NAN, .above_roof_ns = NAN};
    const opprof_machine_ceilings *c = opprof_machine_for_threads(m, r ? r->threads : 1);
    if (!c || !r || (r->flops <= 0 && r->bytes <= 0)) return f;
    double time = (double)(r->wall_ns > 0 ? r->wall_ns : r->total_ns), flops = (double)r->flops,
           bytes = (double)r->bytes;
    double per_call = r->calls > 0 ? bytes / (double)r->calls : bytes;
    f.modelled = true;
    f.roof_ns = opprof__roof_ns(c, flops, bytes, per_call, step_bytes, &f.level, &f.compute_bound);
    f.intensity = bytes > 0 ? flops / bytes : NAN;
    f.gflops = time > 0 && flops > 0 ? flops / time : NAN;
    f.gbs = time > 0 && bytes > 0 ? bytes / time : NAN;
    f.roof_percent = time > 0 ? f.roof_ns / time * 100 : NAN;
    f.above_roof_ns = time - f.roof_ns;
    return f;
}

opprof_roofline opprof_averages_roofline(const opprof_averages *avg, size_t row, const opprof_machine *m) {
    size_t n = 0;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    if (row >= n) return roofline_of(NULL, NULL, 0);
    opprof_average_row r = rows[row];
    if (r.bytes <= 0) r.bytes = opprof__averages_model_bytes(avg, &rows[row]); /* stated bytes first */
    return roofline_of(m, &r, opprof__averages_step_bytes(avg));
}
