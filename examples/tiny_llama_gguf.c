/* tiny_llama_gguf.c - writes a llama model of random weights as GGUF, with
 * ggml's gguf API: LAYERS blocks (default 4) of width 256, 8 heads of 32 with
 * 4 key/value heads, a feed-forward of 768, a vocabulary of 1,024 token ids
 * and no tokenizer (llama.cpp's "none": a program feeds token ids), matrices
 * in q8_0 and norms in f32, as a quantized model has them. For a llama.cpp
 * run that needs no download (the README's llama.cpp recipe).
 *   tiny_llama_gguf OUT.gguf [LAYERS]
 * Built against ggml: cc tiny_llama_gguf.c -I TREE/ggml/include -L BUILD/bin
 * -lggml-base -lggml */
#include <ggml.h>
#include <gguf.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { EMBED = 256, HEADS = 8, KV_HEADS = 4, HEAD = EMBED / HEADS, FEED = 768, VOCAB = 1024 };

static uint64_t g_state = 0x9e3779b97f4a7c15u;
static float uniform(void) { /* xorshift64*: in [-1, 1) */
    g_state ^= g_state >> 12, g_state ^= g_state << 25, g_state ^= g_state >> 27;
    return (float)((g_state * 0x2545f4914f6cdd1du) >> 40) / (float)(1u << 23) - 1.0f;
}

/* A tensor named NAME (its layer's index in LAYER, or -1) of COLUMNS x ROWS:
 * a matrix of random weights scaled as 1/sqrt(COLUMNS), or (ROWS 1) ones. */
static void add(struct gguf_context *gguf, struct ggml_context *ctx, const char *name, int layer, int64_t columns,
                int64_t rows) {
    char full[GGML_MAX_NAME];
    if (layer < 0)
        snprintf(full, sizeof full, "%s.weight", name);
    else
        snprintf(full, sizeof full, "blk.%d.%s.weight", layer, name);
    enum ggml_type type = rows == 1 ? GGML_TYPE_F32 : GGML_TYPE_Q8_0;
    struct ggml_tensor *t =
        rows == 1 ? ggml_new_tensor_1d(ctx, type, columns) : ggml_new_tensor_2d(ctx, type, columns, rows);
    ggml_set_name(t, full);
    float *values = malloc((size_t)(columns * rows) * sizeof *values);
    for (int64_t i = 0; i < columns * rows; i++) values[i] = rows == 1 ? 1.0f : uniform() / sqrtf((float)columns);
    if (rows == 1)
        for (int64_t i = 0; i < columns; i++) ((float *)t->data)[i] = values[i];
    else
        ggml_quantize_chunk(type, values, t->data, 0, rows, columns, NULL);
    free(values);
    gguf_add_tensor(gguf, t);
}

int main(int argc, char **argv) {
    int layers = argc > 2 ? atoi(argv[2]) : 4;
    if (argc < 2 || layers < 1 || layers > 64) {
        fprintf(stderr, "usage: tiny_llama_gguf OUT.gguf [LAYERS (1..64)]\n");
        return 2;
    }
    size_t per_layer = (size_t)(2 * EMBED * EMBED + 2 * EMBED * KV_HEADS * HEAD + 3 * EMBED * FEED) * 2;
    struct ggml_init_params params = {per_layer * (size_t)layers + 4u * EMBED * VOCAB + (8u << 20), NULL, false};
    struct ggml_context *ctx = ggml_init(params);
    struct gguf_context *gguf = gguf_init_empty();
    gguf_set_val_str(gguf, "general.architecture", "llama");
    gguf_set_val_str(gguf, "general.name", "tiny random llama");
    gguf_set_val_u32(gguf, "llama.context_length", 512);
    gguf_set_val_u32(gguf, "llama.embedding_length", EMBED);
    gguf_set_val_u32(gguf, "llama.block_count", (uint32_t)layers);
    gguf_set_val_u32(gguf, "llama.feed_forward_length", FEED);
    gguf_set_val_u32(gguf, "llama.attention.head_count", HEADS);
    gguf_set_val_u32(gguf, "llama.attention.head_count_kv", KV_HEADS);
    gguf_set_val_f32(gguf, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
    gguf_set_val_f32(gguf, "llama.rope.freq_base", 10000.0f);
    gguf_set_val_u32(gguf, "llama.vocab_size", VOCAB);
    gguf_set_val_str(gguf, "tokenizer.ggml.model", "none");
    add(gguf, ctx, "token_embd", -1, EMBED, VOCAB);
    for (int l = 0; l < layers; l++) {
        add(gguf, ctx, "attn_norm", l, EMBED, 1);
        add(gguf, ctx, "attn_q", l, EMBED, EMBED);
        add(gguf, ctx, "attn_k", l, EMBED, KV_HEADS * HEAD);
        add(gguf, ctx, "attn_v", l, EMBED, KV_HEADS * HEAD);
        add(gguf, ctx, "attn_output", l, EMBED, EMBED);
        add(gguf, ctx, "ffn_norm", l, EMBED, 1);
        add(gguf, ctx, "ffn_gate", l, EMBED, FEED);
        add(gguf, ctx, "ffn_up", l, EMBED, FEED);
        add(gguf, ctx, "ffn_down", l, FEED, EMBED);
    }
    add(gguf, ctx, "output_norm", -1, EMBED, 1);
    add(gguf, ctx, "output", -1, EMBED, VOCAB);
    bool written = gguf_write_to_file(gguf, argv[1], false);
    if (!written) fprintf(stderr, "tiny_llama_gguf: cannot write %s\n", argv[1]);
    gguf_free(gguf);
    ggml_free(ctx);
    return written ? 0 : 1;
}
