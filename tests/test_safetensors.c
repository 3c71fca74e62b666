/* test_safetensors.c - weights, inputs and outputs as safetensors files:
 * PyTorch's result reproduced through profile_cpu, and every malformed file
 * refused with a message that names the file and the tensor. */
#include "check.h"
#include "testutil.h"

#include <math.h>
#include <nn/nn.h>

static char dir[256];

/* Write a safetensors file by hand: header text, then `data_len` bytes. */
static void write_raw(const char *path, const char *header, uint64_t claimed_len, size_t data_len) {
    FILE *f = fopen(path, "wb");
    unsigned char len[8];
    for (int i = 0; i < 8; i++) len[i] = (unsigned char)(claimed_len >> (8 * i));
    fwrite(len, 1, 8, f);
    fwrite(header, 1, strlen(header), f);
    for (size_t i = 0; i < data_len; i++) fputc(0, f);
    fclose(f);
}

static const char *fixture(const char *name) {
    static char path[4][1024];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, 1024, "%s/tests/fixtures/%s", source_dir(), name);
    return p;
}

static nn_module *seedlike(void) {
    nn_module *l[3], *m;
    nn_linear_new(&l[0], 16, 32);
    nn_relu_new(&l[1]);
    nn_linear_new(&l[2], 32, 8);
    nn_sequential_new(&m, l, 3);
    return m;
}

/* Expect a load of `path` into a seed-like model to fail with `code` and a
 * message holding `text`; the model's weights must be untouched. */
static void expect_load_error(const char *path, int code, const char *text) {
    nn_module *m = seedlike();
    nn_tensor *w = nn_module_parameter(m, "0.weight");
    float before = w->data[5];
    char msg[512] = "";
    CHECK_INT(nn_module_load_safetensors(m, path, msg, sizeof msg), code);
    CHECK_CONTAINS(msg, path);
    CHECK_CONTAINS(msg, text);
    CHECK(w->data[5] == before);
    nn_module_free(m);
}

/* PyTorch's weights and input through profile_cpu give PyTorch's output. */
TEST_CASE(pytorch_weights_give_pytorch_output) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[4096], out_path[512];
    char *out = NULL;
    snprintf(out_path, sizeof out_path, "%s/out.safetensors", dir);
    snprintf(cmd, sizeof cmd,
             "'%s/profile_cpu' --quiet --in 16 --hidden 32 --out 8 --weights '%s' --input '%s' --save-output '%s' "
             "'%s/run'",
             bin_dir(), fixture("seedlike.weights.safetensors"), fixture("seedlike.input.safetensors"), out_path, dir);
    CHECK_INT(run_command(cmd, &out), 0);
    free(out);
    nn_tensor *mine = NULL, *expected = NULL;
    char msg[512] = "";
    CHECK_INT(nn_tensor_load_safetensors(out_path, "output", &mine, msg, sizeof msg), 0);
    CHECK_INT(
        nn_tensor_load_safetensors(fixture("seedlike.expected.safetensors"), "output", &expected, msg, sizeof msg), 0);
    CHECK(mine && expected && mine->ndim == 2 && mine->shape[0] == 4 && mine->shape[1] == 8);
    if (mine && expected) {
        double worst = 0;
        for (int64_t i = 0; i < nn_tensor_numel(expected); i++) {
            double e = fabs(mine->data[i] - expected->data[i]) / fmax(fabs(expected->data[i]), 1e-3);
            if (e > worst) worst = e;
        }
        if (worst >= 1e-5) fprintf(stderr, "max relative error %g\n", worst);
        CHECK(worst < 1e-5);
    }
    /* An input of the wrong width for the model. */
    snprintf(cmd, sizeof cmd,
             "'%s/profile_cpu' --quiet --in 16 --hidden 32 --out 8 --input '%s' --weights '%s' '%s/never'", bin_dir(),
             out_path, fixture("seedlike.weights.safetensors"), dir);
    CHECK_INT(run_command(cmd, &out), 1);
    CHECK_CONTAINS(out, "tensor 'input' not found");
    free(out);
    nn_tensor_free(mine);
    nn_tensor_free(expected);
    remove_tree(dir);
}

/* Save and load round trip, views included; a tensor that is not there; a
 * missing directory. */
TEST_CASE(save_and_load_round_trip) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char path[512], msg[512] = "";
    nn_tensor *t, *tv, *back;
    nn_tensor_randn(&t, 2, (int64_t[]){3, 5});
    nn_t(t, &tv);
    snprintf(path, sizeof path, "%s/rt.safetensors", dir);
    CHECK_INT(nn_tensor_save_safetensors(path, "x", tv, msg, sizeof msg), 0);
    CHECK_INT(nn_tensor_load_safetensors(path, "x", &back, msg, sizeof msg), 0);
    CHECK(nn_tensor_equal(back, tv));
    nn_tensor_free(back);
    /* A tensor that is not there. */
    back = NULL;
    CHECK_INT(nn_tensor_load_safetensors(path, "y", &back, msg, sizeof msg), NN_EMISSING);
    CHECK_CONTAINS(msg, "tensor 'y' not found");
    CHECK(back == NULL);
    /* Saving into a missing directory fails and names the file. */
    snprintf(path, sizeof path, "%s/none/rt.safetensors", dir);
    CHECK_INT(nn_tensor_save_safetensors(path, "x", tv, msg, sizeof msg), -ENOENT);
    CHECK_CONTAINS(msg, path);
    nn_tensor_free(t);
    nn_tensor_free(tv);
    remove_tree(dir);
}

/* Malformed files: each refused, naming the file and the tensor; profile_cpu
 * refuses bad weights before running anything. */
TEST_CASE(malformed_files_refused) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[4096], path[512], *out = NULL;
    expect_load_error("/nonexistent/weights.safetensors", -ENOENT, "No such file");
    snprintf(path, sizeof path, "%s/short.safetensors", dir);
    FILE *f = fopen(path, "wb");
    fwrite("abc", 1, 3, f);
    fclose(f);
    expect_load_error(path, NN_EFORMAT, "shorter than the 8-byte header length");
    snprintf(path, sizeof path, "%s/longheader.safetensors", dir);
    write_raw(path, "{}", 1000, 0);
    expect_load_error(path, NN_EFORMAT, "header length 1000 is larger than the file");
    snprintf(path, sizeof path, "%s/notjson.safetensors", dir);
    write_raw(path, "{\"0.weight\": [", 14, 0);
    expect_load_error(path, NN_EFORMAT, "not a JSON object");
    snprintf(path, sizeof path, "%s/missing.safetensors", dir);
    write_raw(path, "{\"other\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 58, 4);
    expect_load_error(path, NN_EMISSING, "tensor '0.weight' not found");
    snprintf(path, sizeof path, "%s/dtype.safetensors", dir);
    write_raw(path, "{\"0.weight\":{\"dtype\":\"F16\",\"shape\":[32,16],\"data_offsets\":[0,1024]}}", 68, 1024);
    expect_load_error(path, NN_EDTYPE, "tensor '0.weight': dtype F16 is not supported");
    snprintf(path, sizeof path, "%s/shape.safetensors", dir);
    write_raw(path, "{\"0.weight\":{\"dtype\":\"F32\",\"shape\":[16,32],\"data_offsets\":[0,2048]}}", 68, 2048);
    expect_load_error(path, NN_ESHAPE, "tensor '0.weight': shape [16, 32], the model needs [32, 16]");
    snprintf(path, sizeof path, "%s/liar.safetensors", dir);
    write_raw(path, "{\"0.weight\":{\"dtype\":\"F32\",\"shape\":[32,16],\"data_offsets\":[0,2048]}}", 68, 100);
    expect_load_error(path, NN_EFORMAT, "tensor '0.weight': data_offsets [0, 2048] lie outside the 100 bytes");
    snprintf(path, sizeof path, "%s/span.safetensors", dir);
    write_raw(path, "{\"0.weight\":{\"dtype\":\"F32\",\"shape\":[32,16],\"data_offsets\":[0,2000]}}", 68, 2048);
    expect_load_error(path, NN_EFORMAT, "data_offsets span 2000 bytes, but shape and dtype need 2048");
    /* A truncated copy of the real weights: the header promises more data. */
    char *full = read_text(fixture("seedlike.weights.safetensors"));
    CHECK(full != NULL);
    snprintf(path, sizeof path, "%s/truncated.safetensors", dir);
    f = fopen(path, "wb");
    fwrite(full, 1, 1200, f); /* header intact, data cut */
    fclose(f);
    free(full);
    expect_load_error(path, NN_EFORMAT, "lie outside");

    /* profile_cpu refuses bad weights before running anything: no OUTDIR. */
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu' --quiet --weights '%s' '%s/never'", bin_dir(), path, dir);
    CHECK_INT(run_command(cmd, &out), 1);
    CHECK_CONTAINS(out, path);
    CHECK_CONTAINS(out, "tensor '0.weight'");
    free(out);
    snprintf(cmd, sizeof cmd, "ls -A '%s' | grep -c never", dir);
    run_command(cmd, &out);
    CHECK_STR(out, "0\n");
    free(out);
    remove_tree(dir);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_safetensors"); }
