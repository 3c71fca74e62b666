/* fake_ggml_target.c - a program linked with a fake libggml (fake_ggml.c):
 * it prints a line and ends, as it would with no profiler. */
#include <stdio.h>

void ggml_cpu_set_hook(void (*fn)(void), void *user);

int main(void) {
    ggml_cpu_set_hook(NULL, NULL); /* linked against it, as a ggml program is */
    printf("fake ggml program: ran\n");
    return 0;
}
