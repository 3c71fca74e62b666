// torch_forward - the libtorch (C++) peer of bench_forward: the seed's model
// under InferenceMode, one thread; prints "median_us: X".
//   torch_forward [REPS [BATCH]] Built by
// `make bench` when Debian's libtorch-dev is installed.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv) {
    int reps = argc > 1 ? std::atoi(argv[1]) : 400;
    int batch = argc > 2 ? std::atoi(argv[2]) : 128;
    torch::manual_seed(7);
    torch::set_num_threads(1);
    torch::nn::Sequential model(torch::nn::Linear(256, 512), torch::nn::ReLU(), torch::nn::Linear(512, 64));
    model->eval();
    torch::Tensor x = torch::randn({batch, 256});
    c10::InferenceMode guard;
    for (int i = 0; i < 50; i++) model->forward(x);
    std::vector<double> t;
    for (int i = 0; i < reps; i++) {
        auto t0 = std::chrono::steady_clock::now();
        torch::Tensor y = model->forward(x);
        auto t1 = std::chrono::steady_clock::now();
        t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    std::sort(t.begin(), t.end());
    std::printf("median_us: %f\n", t[t.size() / 2]);
    return 0;
}
