/* test_record_cxx.c - `opprof record --functions` of a template-heavy C++
 * program (many_calls, -finstrument-functions): 10^8 calls stay within the
 * default budget, said at exit; C++ names demangled in the table, the flame
 * graph, the HTML report and the JSON rows, the mangled name kept. */
#include "check.h"
#include "testutil.h"

#include <sys/resource.h>
#include <sys/stat.h>

static char dir[256];

static const char *many_calls(void) {
    static char path[1024];
    snprintf(path, sizeof path, "%s/../tests/many_calls", bin_dir());
    return path;
}

TEST_CASE(bounded_functions) {
    char *out = NULL, path[600];
    CHECK_INT(run_commandf(&out, "'%s/opprof' record --functions --outputs trace,tables -o '%s/big' -- '%s'", bin_dir(),
                           dir, many_calls()),
              0);
    CHECK_CONTAINS(out, "many_calls: 25000000 iterations"); /* 10^8 calls, as without opprof */
    CHECK_CONTAINS(out, "call(s) of 4 function(s) not recorded, past each function's first 100000");
    CHECK_CONTAINS(out, "(25000000 calls)"); /* demangled names with their counts, the most called first */
    const char *said = out ? strstr(out, "most called") : NULL;
    CHECK(said && !memmem(said, strcspn(said, "\n"), "_Z", 2)); /* names as people read them */
    free(out);
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    CHECK(ru.ru_maxrss < 512 * 1024); /* KiB: the program and its capture, bounded */
    struct stat st;
    snprintf(path, sizeof path, "%s/big/trace-step-0.json", dir);
    CHECK_INT(stat(path, &st), 0);
    CHECK(st.st_size < 256ll << 20);
}

/* A budget that is no number is said, and the default kept. */
TEST_CASE(bad_budget_said) {
    char *out = NULL;
    CHECK_INT(run_commandf(&out,
                           "OPPROF_FUNCTION_CALLS=lots '%s/opprof' record --functions --outputs trace -o '%s/bad' "
                           "-- '%s' 200000",
                           bin_dir(), dir, many_calls()),
              0);
    CHECK_CONTAINS(out, "OPPROF_FUNCTION_CALLS='lots' ignored: not a number >= 1; 100000 kept");
    CHECK_CONTAINS(out, "call(s) of 4 function(s) not recorded, past each function's first 100000");
    free(out);
}

TEST_CASE(demangled_names) {
    char *out = NULL, path[600];
    CHECK_INT(
        run_commandf(&out, "'%s/opprof' record --functions -o '%s/small' -- '%s' 1000", bin_dir(), dir, many_calls()),
        0);
    CHECK_CONTAINS(out, "Accumulator<double>::add(double)"); /* the table */
    free(out);
    snprintf(path, sizeof path, "%s/small/trace-step-0.json", dir);
    CHECK_INT(run_commandf(&out, "'%s/opprof' stacks '%s'", bin_dir(), path), 0);
    CHECK_CONTAINS(out,
                   ";main;float engine::step<float>(std::vector<float, std::allocator<float> > const&, unsigned long);"
                   "Scale<float, 3>::apply(float) ");
    free(out);
    snprintf(path, sizeof path, "%s/small/trace-step-0.html", dir);
    out = read_text(path);
    CHECK_CONTAINS(out, "Accumulator&lt;double&gt;::add(double)"); /* the table and the flame graph */
    free(out);
    snprintf(path, sizeof path, "%s/small/trace-step-0.json", dir);
    CHECK_INT(run_commandf(&out, "'%s/opprof' report --json '%s'", bin_dir(), path), 0);
    CHECK_CONTAINS(out, "\"name\": \"Accumulator<double>::add(double)\"");
    CHECK_CONTAINS(out, "\"mangled\": \"_ZN11AccumulatorIdE3addEd\"");
    free(out);
    out = read_text(path);
    CHECK_CONTAINS(out, "[\"Accumulator<double>::add(double)\", \"_ZN11AccumulatorIdE3addEd\"]");
    free(out);
}

int main(int argc, char **argv) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    int rc = check_main(argc, argv, "test_record_cxx");
    remove_tree(dir);
    return rc;
}
