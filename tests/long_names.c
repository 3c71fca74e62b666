/* long_names.c - two functions whose names differ only past byte 200, as two
 * template instantiations' mangled names do (Eigen, Boost, ranges): built
 * with -finstrument-functions, each must be its own row under
 * `opprof record --functions` (names were cut at 199 bytes: one row).
 * Knows nothing of opprof. */
#include <stdio.h>

#define STEM template_heavy_function_name_template_heavy_function_name_template_heavy_function_name_template_heavy_function_name_template_heavy_function_name_template_heavy_function_name_template_heavy_function_name_template_heavy_function_name_

#define NAME(s, tail) s##tail
#define FN(tail) NAME(template_heavy_function_name_template_heavy_function_name_template_heavy_function_name_template_heavy_function_name_template_heavy_function_name_template_heavy_function_name_template_heavy_function_name_template_heavy_function_name_, tail)

__attribute__((noinline)) int FN(one)(int x) { return x + 1; }
__attribute__((noinline)) int FN(two)(int x) { return x * 2; }

int main(void) {
    int acc = 0;
    for (int i = 0; i < 3; i++) acc += FN(one)(i);
    for (int i = 0; i < 5; i++) acc += FN(two)(i);
    printf("long_names: %d\n", acc);
    return 0;
}
