// simdjson_peer - the same job as `opprof report` on a trace, done with
// simdjson's On-Demand API (Debian's libsimdjson-dev): load the file, and for
// every complete event sum its duration per name. A peer for bench_reader's
// choice of parser (docs/DEPENDENCIES.md), built by `make bench` when the
// package is installed. Prints "seconds: S" (the load and the parse),
// "parse_seconds: P" (the parse alone, the file already in memory) and
// "peak_rss_mb: M".
#include <simdjson.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <sys/resource.h>
#include <unordered_map>

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: simdjson_peer TRACE.json\n");
        return 64;
    }
    auto t0 = std::chrono::steady_clock::now();
    simdjson::padded_string json;
    if (simdjson::padded_string::load(argv[1]).get(json)) return 1;
    auto loaded = std::chrono::steady_clock::now();
    simdjson::ondemand::parser parser;
    simdjson::ondemand::document doc;
    if (parser.iterate(json).get(doc)) return 1;
    std::unordered_map<std::string, double> sums;
    simdjson::ondemand::array events;
    if (doc["traceEvents"].get_array().get(events)) return 1;
    for (auto item : events) {
        simdjson::ondemand::object e;
        if (item.get_object().get(e)) return 1;
        std::string_view ph, name;
        double dur = 0;
        bool complete = false;
        for (auto field : e) {
            std::string_view key;
            if (field.unescaped_key().get(key)) return 1;
            if (key == "ph") {
                if (!field.value().get_string().get(ph)) complete = ph == "X";
            } else if (key == "name") {
                if (field.value().get_string().get(name)) return 1;
            } else if (key == "dur") {
                if (field.value().get_double().get(dur)) dur = 0;
            }
        }
        if (complete && !name.empty()) sums[std::string(name)] += dur;
    }
    auto end = std::chrono::steady_clock::now();
    double s = std::chrono::duration<double>(end - t0).count();
    double parse_s = std::chrono::duration<double>(end - loaded).count();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    std::printf("seconds: %f\nparse_seconds: %f\npeak_rss_mb: %f\nnames: %zu\n", s, parse_s,
                (double)ru.ru_maxrss / 1024.0, sums.size());
    return 0;
}
