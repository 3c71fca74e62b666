// torch_overhead - the libtorch (C++) peer of bench_overhead: what PyTorch's
// profiler costs from C++, the fairer peer for C code. Prints "key: value"
// lines:
//   range_off_ns          an empty RECORD_USER_SCOPE range, profiler off
//   range_ns              the same with the profiler on (the API that
//                         torch.profiler drives: enableProfiler, CPU activity)
//   forward_us            the seed's model (one thread, InferenceMode), median
//   forward_profiled_us   the same under the profiler (one capture per batch)
//   disable_s             disableProfiler() after N ranges: the capture handed over
//   events                the events in it
// (Debian's libtorch is built without Kineto, so ProfilerResult::save(), the
// C++ Chrome-trace export, throws "requires ... USE_KINETO=1": no export time.)
// Built by `make bench` when Debian's libtorch-dev is installed.
//   torch_overhead [N ranges, default 100000]
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace torch::autograd::profiler;
using clock_type = std::chrono::steady_clock;

static double seconds_since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

static void profiler_on() {
    ProfilerConfig config(ProfilerState::KINETO, /*report_input_shapes=*/false, /*profile_memory=*/false);
    std::set<torch::profiler::impl::ActivityType> cpu{torch::profiler::impl::ActivityType::CPU};
    prepareProfiler(config, cpu);
    enableProfiler(config, cpu);
}

// ns per empty range, median over batches.
static double time_ranges(int batches, int per_batch) {
    std::vector<double> t;
    for (int b = 0; b < batches; b++) {
        auto t0 = clock_type::now();
        for (int i = 0; i < per_batch; i++) {
            RECORD_USER_SCOPE("empty");
        }
        t.push_back(seconds_since(t0) * 1e9 / per_batch);
    }
    return median(t);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? std::atoi(argv[1]) : 100000;
    torch::manual_seed(7);
    torch::set_num_threads(1);

    std::printf("range_off_ns: %f\n", time_ranges(21, 20000));

    // Batches of 20000 under one profiler each, so that no capture grows past
    // what the measured loop would hold in a real window.
    std::vector<double> on;
    for (int b = 0; b < 11; b++) {
        profiler_on();
        auto t0 = clock_type::now();
        for (int i = 0; i < 20000; i++) {
            RECORD_USER_SCOPE("empty");
        }
        on.push_back(seconds_since(t0) * 1e9 / 20000);
        disableProfiler();
    }
    std::printf("range_ns: %f\n", median(on));

    torch::nn::Sequential model(torch::nn::Linear(256, 512), torch::nn::ReLU(), torch::nn::Linear(512, 64));
    model->eval();
    torch::Tensor x = torch::randn({128, 256});
    {
        c10::InferenceMode guard;
        for (int i = 0; i < 50; i++) model->forward(x);
        std::vector<double> plain, profiled;
        for (int round = 0; round < 5; round++) { // interleaved, as bench_overhead does
            for (int i = 0; i < 40; i++) {
                auto t0 = clock_type::now();
                torch::Tensor y = model->forward(x);
                plain.push_back(seconds_since(t0) * 1e6);
            }
            profiler_on();
            for (int i = 0; i < 40; i++) {
                auto t0 = clock_type::now();
                torch::Tensor y = model->forward(x);
                profiled.push_back(seconds_since(t0) * 1e6);
            }
            disableProfiler();
        }
        std::printf("forward_us: %f\nforward_profiled_us: %f\n", median(plain), median(profiled));
    }

    // A capture of n ranges: taking it, then writing it.
    profiler_on();
    for (int i = 0; i < n; i++) {
        RECORD_USER_SCOPE("empty");
    }
    auto t0 = clock_type::now();
    std::unique_ptr<ProfilerResult> result = disableProfiler();
    std::printf("disable_s: %f\n", seconds_since(t0));
    std::printf("events: %zu\n", result->events().size());
    return 0;
}
