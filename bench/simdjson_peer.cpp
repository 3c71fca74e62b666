// simdjson_peer - the same job as `opprof report` on a trace, done with
// simdjson's On-Demand API (Debian's libsimdjson-dev): load the file, and for
// every complete event sum its duration per name. A peer for bench_reader's
// choice of parser (docs/DEPENDENCIES.md), built by `make bench` when the
// package is installed. Prints "seconds: S" (the load and the parse),
// "parse_seconds: P" (the parse alone, the file already in memory),
// "warm_parse_seconds: W" (the same parser's second parse of the file: its
// buffers, as large as the file, already touched) and "peak_rss_mb: M".
#include <simdjson.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <sys/resource.h>
#include <unordered_map>

using sums_by_name = std::unordered_map<std::string, double>;

// Each complete event's duration summed by name into sums; false on a parse error.
static bool sum_durations(simdjson::ondemand::parser &parser, const simdjson::padded_string &json,
                          sums_by_name &sums) {
    simdjson::ondemand::document doc;
    if (parser.iterate(json).get(doc)) return false;
    simdjson::ondemand::array events;
    if (doc["traceEvents"].get_array().get(events)) return false;
    for (auto item : events) {
        simdjson::ondemand::object e;
        if (item.get_object().get(e)) return false;
        std::string_view ph, name;
        double dur = 0;
        bool complete = false;
        for (auto field : e) {
            std::string_view key;
            if (field.unescaped_key().get(key)) return false;
            if (key == "ph") {
                if (!field.value().get_string().get(ph)) complete = ph == "X";
            } else if (key == "name") {
                if (field.value().get_string().get(name)) return false;
            } else if (key == "dur") {
                if (field.value().get_double().get(dur)) dur = 0;
            }
        }
        if (complete && !name.empty()) sums[std::string(name)] += dur;
    }
    return true;
}

static double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

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
    sums_by_name sums;
    if (!sum_durations(parser, json, sums)) return 1;
    double s = seconds_since(t0), parse_s = seconds_since(loaded);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru); /* the peak of the one-shot job, before the second parse */
    sums_by_name again;
    auto warm = std::chrono::steady_clock::now();
    if (!sum_durations(parser, json, again) || again != sums) return 1;
    double warm_s = seconds_since(warm);
    std::printf("seconds: %f\nparse_seconds: %f\nwarm_parse_seconds: %f\npeak_rss_mb: %f\nnames: %zu\n", s, parse_s,
                warm_s, (double)ru.ru_maxrss / 1024.0, sums.size());
    return 0;
}
