// many_calls.cpp - a template-heavy C++ program that knows nothing of opprof,
// compiled with -finstrument-functions: N iterations of four small calls
// (a template function in a namespace, a class template's static member, a
// container's accessor, a member function), 4 * N instrumented calls in all.
//
//   many_calls [N]        (default 25000000: 10^8 calls)
#include <cstdio>
#include <cstdlib>
#include <vector>

template <typename T, int K> struct Scale {
    static T apply(T x) { return x * T(K) / T(K + 1); }
};

template <typename T> struct Accumulator {
    T sum{};
    void add(T x) { sum += x; }
};

namespace engine {
template <typename T> T step(const std::vector<T> &v, std::size_t i) { return Scale<T, 3>::apply(v[i]); }
} // namespace engine

int main(int argc, char **argv) {
    long n = argc > 1 ? std::atol(argv[1]) : 25000000;
    std::vector<float> v(1024, 1.0f);
    Accumulator<double> acc;
    for (long i = 0; i < n; i++) acc.add(engine::step(v, (std::size_t)(i & 1023)));
    std::printf("many_calls: %ld iterations, %.1f\n", n, acc.sum);
    return 0;
}
