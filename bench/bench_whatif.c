/*
 * bench_whatif - does `--what-if` predict what a change gains, on this
 * machine, with the seed's model (256 -> 512 -> 64, batch 128)? Changes of
 * known effect: an operator slowed by a known share of its own time
 * (nn_debug_slow_down: busy, inside its range) on the BEFORE side, not on
 * the AFTER side; the prediction from BEFORE undoes it ("aten::addmm=0.5x"
 * for a doubled addmm) and is set against AFTER's measured median step.
 *
 *   addmm_halved     aten::addmm twice as long before: predicted =0.5x
 *   addmm_third      aten::addmm 1.5x before: =0.6667x
 *   clamp_halved     aten::clamp_min (memory-bound) twice as long: =0.5x
 *   gemm_kernel      nn's GEMM forced to a slower kernel before (nn_gemm_set_kernel:
 *                    the SIMD kernel auto did not choose, else scalar), auto's after:
 *                    =Kx, K the kernels' time ratio on the model's two products,
 *                    timed alone (nn_addmm, no profiler) in the same round
 *
 * Each round: STEPS steps a side, interleaved step by step, each step a
 * capture of its own; the prediction is the median over BEFORE's steps
 * replayed, the measurement AFTER's median step. Error: predicted over
 * measured - 1, per round (the miss); medians and IQRs over the rounds. The replay's
 * own error (BEFORE replayed unchanged) is given too.
 *
 *   build/bin/bench_whatif [--json] [--rounds N] [--steps N]
 */
#include "bench_util.h"
#include "bench_seed.h"

#include <nn/nn.h>
#include <opprof/capture.h>
#include <opprof/opprof.h>

enum { MAX_STEPS = 200, MAX_ROUNDS = 64 };

typedef struct change {
    const char *key, *op, *what_if; /* what_if NULL: the kernel swap's, measured */
    double slow;                    /* BEFORE's share of the op's own time added */
} change;

static const change CHANGES[] = {
    {"addmm_halved", "aten::addmm", "aten::addmm=0.5x", 1.0},
    {"addmm_third", "aten::addmm", "aten::addmm=0.6667x", 0.5},
    {"clamp_halved", "aten::clamp_min", "aten::clamp_min=0.5x", 1.0},
    {"gemm_kernel", "aten::addmm", NULL, 0},
};

/* The swap's kernels: the one auto runs on the first product (AFTER), and a
 * slower one (BEFORE): the other SIMD kernel where the CPU has both (auto
 * measured it slower), else scalar. Both are set by hand (auto set again
 * would measure again, inside a step). */
static void swap_kernels(const char **fast, const char **slow) {
    nn_gemm_choice c;
    if (nn_gemm_choice_for(BATCH, HIDDEN, IN, &c)) die("gemm choice", -22);
    *fast = c.kernel;
    if (!strcmp(c.kernel, "avx512"))
        *slow = "avx2";
    else if (!strcmp(c.kernel, "avx2") && nn_gemm_set_kernel("avx512") == 0)
        *slow = "avx512"; /* auto found it slower */
    else
        *slow = "scalar";
}

/* The model's two products (aten::addmm's calls: x W1^T + b1, h W2^T + b2), timed alone. */
static double products_ns(const char *kernel, int reps) {
    static nn_tensor *t[6];
    if (!t[0]) {
        const int64_t shapes[6][2] = {{BATCH, IN}, {IN, HIDDEN}, {1, HIDDEN}, {BATCH, HIDDEN}, {HIDDEN, OUT}, {1, OUT}};
        for (int i = 0; i < 6; i++)
            if (nn_tensor_randn(&t[i], shapes[i][0] == 1 ? 1 : 2, shapes[i][0] == 1 ? &shapes[i][1] : shapes[i]))
                die("tensors", -12);
    }
    if (nn_gemm_set_kernel(kernel)) die("kernel", -22);
    double best = INFINITY;
    for (int r = 0; r < reps; r++) {
        int64_t t0 = bench_now_ns();
        for (int p = 0; p < 2; p++) {
            nn_tensor *out = NULL;
            if (nn_addmm(t[3 * p + 2], t[3 * p], t[3 * p + 1], &out)) die("addmm", -22);
            nn_tensor_free(out);
        }
        double ns = (double)(bench_now_ns() - t0);
        if (ns < best) best = ns;
    }
    return best;
}
enum { N_CHANGES = sizeof CHANGES / sizeof *CHANGES };

typedef struct round_result {
    double predicted_ns, measured_ns, error, replay_error;
} round_result;

static double median_of(double *v, int n) { return bench_stats_of(v, n).median; }

static round_result one_round(const model *m, const change *ch, int steps) {
    double predicted[MAX_STEPS], measured[MAX_STEPS], replay[MAX_STEPS];
    opprof_what_if_change w[4];
    size_t n = 0;
    char why[128], swap[64] = "";
    const char *fast = NULL, *slow = NULL;
    if (!ch->what_if) { /* K: the kernels' ratio alone, best of 20 each, interleaved */
        swap_kernels(&fast, &slow);
        double fast_ns = INFINITY, slow_ns = INFINITY;
        for (int k = 0; k < 5; k++)
            fast_ns = fmin(fast_ns, products_ns(fast, 4)), slow_ns = fmin(slow_ns, products_ns(slow, 4));
        snprintf(swap, sizeof swap, "%s=%.6fx", ch->op, fast_ns / slow_ns);
    }
    if (opprof_what_if_parse(slow ? swap : ch->what_if, w, 4, &n, why, sizeof why)) die(why, -22);
    for (int i = 0; i < 2 * steps; i++) {
        bool before = i % 2 == 0;
        nn_debug_slow_down(ch->op, before ? ch->slow : 0);
        if (slow && nn_gemm_set_kernel(before ? slow : fast)) die("kernel", -22);
        opprof_capture *c = one_step(m);
        opprof_what_if_result r;
        if (opprof_capture_what_if(c, NULL, w, n, &r)) die("what if", -22);
        if (before) {
            predicted[i / 2] = r.predicted_step_ns;
            replay[i / 2] = r.replay_error_percent;
        } else {
            measured[i / 2] = r.measured_step_ns;
        }
        opprof_capture_free(c);
    }
    nn_debug_slow_down(NULL, 0);
    round_result out = {median_of(predicted, steps), median_of(measured, steps), 0, median_of(replay, steps)};
    out.error = 100 * (out.predicted_ns / out.measured_ns - 1);
    return out;
}

int main(int argc, char **argv) {
    bool json = false;
    int rounds = 12, steps = 40;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_whatif [--json] [--rounds N (1-64)] [--steps N (1-200)]\n");
            return 64;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || steps < 1 || steps > MAX_STEPS) return 64;
    model m = seed_model();
    for (int i = 0; i < 20; i++) forward(&m); /* warm: the GEMM kernel chosen, the pages touched */
    double err[N_CHANGES][MAX_ROUNDS], pred[N_CHANGES][MAX_ROUNDS], meas[N_CHANGES][MAX_ROUNDS],
        rep[N_CHANGES][MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) /* the changes interleaved round by round */
        for (int k = 0; k < N_CHANGES; k++) {
            round_result x = one_round(&m, &CHANGES[k], steps);
            err[k][r] = x.error, pred[k][r] = x.predicted_ns / 1e3, meas[k][r] = x.measured_ns / 1e3;
            rep[k][r] = x.replay_error;
        }
    char model_name[256];
    const char *isa;
    bench_host(model_name, sizeof model_name, &isa);
    if (json)
        printf("{\n");
    else
        printf("host: %s (%s); %d rounds of %d steps a side\n", model_name, isa, rounds, steps);
    for (int k = 0; k < N_CHANGES; k++) {
        bench_stats e = bench_stats_of(err[k], rounds), p = bench_stats_of(pred[k], rounds),
                    mm = bench_stats_of(meas[k], rounds), rp = bench_stats_of(rep[k], rounds);
        if (json) {
            printf("  \"%s\": {\"predicted_step_us\": %.3f, \"measured_step_us\": %.3f, \"miss_pct\": %.3f, "
                   "\"miss_iqr_pct\": %.3f, \"replay_miss_pct\": %.3f}%s\n",
                   CHANGES[k].key, p.median, mm.median, e.median, e.iqr, rp.median, k + 1 < N_CHANGES ? "," : "");
        } else {
            printf("%-14s %-22s predicted %8.1f us, measured %8.1f us: error %+.2f %% (IQR %.2f), replay %.2f %%\n",
                   CHANGES[k].key, CHANGES[k].what_if ? CHANGES[k].what_if : "aten::addmm=Kx (swap)", p.median,
                   mm.median, e.median, e.iqr, rp.median);
        }
    }
    if (json) printf("}\n");
    return 0;
}
