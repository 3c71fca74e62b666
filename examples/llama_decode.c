/* llama_decode.c - a program of llama.cpp's API that knows nothing of opprof,
 * as llama.cpp's examples/simple is: it loads a GGUF model, decodes a prompt
 * of 8 token ids in one batch, then generates TOKENS tokens greedily, one
 * llama_decode each (one step each under `opprof record --step llama_decode`),
 * on THREADS threads, and prints the ids it generated.
 *   llama_decode MODEL.gguf [TOKENS [THREADS]]
 * Built against a llama.cpp tree: cc llama_decode.c -I TREE/include
 * -I TREE/ggml/include -L BUILD/bin -lllama */
#include <llama.h>

#include <stdio.h>
#include <stdlib.h>

enum { PROMPT = 8, CONTEXT = 512 };

static void errors_only(enum ggml_log_level level, const char *text, void *user) {
    (void)user;
    if (level == GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static llama_token greedy(struct llama_context *ctx, int n_vocab) {
    const float *logits = llama_get_logits_ith(ctx, -1);
    llama_token best = 0;
    for (llama_token t = 1; t < n_vocab; t++)
        if (logits[t] > logits[best]) best = t;
    return best;
}

int main(int argc, char **argv) {
    int tokens = argc > 2 ? atoi(argv[2]) : 16, threads = argc > 3 ? atoi(argv[3]) : 2;
    if (argc < 2 || tokens < 1 || tokens > CONTEXT - PROMPT || threads < 1) {
        fprintf(stderr, "usage: llama_decode MODEL.gguf [TOKENS (1..%d) [THREADS]]\n", CONTEXT - PROMPT);
        return 2;
    }
    llama_log_set(errors_only, NULL);
    llama_backend_init();
    struct llama_model *model = llama_model_load_from_file(argv[1], llama_model_default_params());
    if (!model) {
        fprintf(stderr, "llama_decode: %s: not a model llama.cpp loads\n", argv[1]);
        return 1;
    }
    struct llama_context_params params = llama_context_default_params();
    params.n_ctx = CONTEXT;
    params.n_batch = PROMPT;
    params.n_threads = params.n_threads_batch = threads;
    struct llama_context *ctx = llama_init_from_model(model, params);
    int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    llama_token prompt[PROMPT], next = 0;
    for (int i = 0; i < PROMPT; i++) prompt[i] = (llama_token)((i * 97 + 1) % n_vocab);
    struct llama_batch batch = llama_batch_get_one(prompt, PROMPT);
    int status = 0;
    for (int i = 0; i < tokens && ctx; i++) {
        if (llama_decode(ctx, batch) != 0) {
            fprintf(stderr, "llama_decode: the decode of token %d failed\n", i);
            status = 1;
            break;
        }
        next = greedy(ctx, n_vocab);
        printf("%d%c", next, i + 1 < tokens ? ' ' : '\n');
        batch = llama_batch_get_one(&next, 1);
    }
    if (!ctx) {
        fprintf(stderr, "llama_decode: no context for %s\n", argv[1]);
        status = 1;
    }
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return status;
}
