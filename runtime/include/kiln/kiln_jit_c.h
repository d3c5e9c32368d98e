/*===- kiln_jit_c.h - C entry points of the Kiln compiler -----------------===*
 *
 * For foreign callers that hold a variant rather than a spec (the PyTorch
 * package to come, ctypes): lower a variant (MLIR text of attn.attention
 * ops) to a program spec for the GPU runtime (kiln_c.h), or JIT-compile it
 * for the host and run it on host memory (the CPU backend; no GPU needed).
 * Lives in libkiln.so, which also holds the runtime's C API. Every function
 * that can fail returns 0 on success, else writes a message to `error` (at
 * most `error_size` bytes with the NUL).
 *
 *===----------------------------------------------------------------------===*/

#ifndef KILN_JIT_C_H
#define KILN_JIT_C_H

#include "kiln/kiln_c.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which variant and how to specialise it; 0 / null keep the variant's. */
typedef struct kiln_variant_options {
  const char *mlir;    /* the variant's text (required) */
  const char *name;    /* which attn.attention; null: the only one */
  long long head_dim;  /* qk_head_dim (and v_head_dim when the two are equal) */
  long long head_dim_v;
  const char *dtype;   /* null, "bf16" or "fp16" */
  long long page_size; /* > 0: K and V in a paged KV cache of this many keys
                          per page (page_size; tensors block_table, kv_lens) */
  double dropout_p;    /* > 0: the variant's dropout_p (tensor dropout_rng:
                          i64 [2], the generator's seed and offset) */
  int capture_gradients; /* 1: the backward also adds the gradients of the
                            float captures the score_mod reads into tensors
                            grad_<capture> (f32; pass zeros) by f32 atomics;
                            2: the same, bit for bit equal in every run
                            (fixed-point sums, one more kernel per capture) */
  int varlen;            /* nonzero: a packed batch of sequences of
                            different lengths (tensors cu_seqlens_q and
                            cu_seqlens_kv, [batch + 1] i32; q, k, v, out
                            [T, H, D]; lse [H, T_q]) */
  long long block_sparse[2]; /* > 0: block-sparse in blocks of [0] queries x
                                [1] keys (tensors kv_num_blocks, kv_indices,
                                full_kv_num_blocks, full_kv_indices: i32,
                                FlexAttention's BlockMask) */
  int build_block_mask;      /* nonzero, with block_sparse: "forward" builds
                                the eight lists from the mask (tensors q, k,
                                and the lists as outputs) */
} kiln_variant_options;

/* Lowers the variant's `program` ("forward"; "backward": the faster
 * backward schedule for the variant on `arch` (on sm_90a at D = 128 the
 * atomic one); "backward-deterministic": bit-exact reruns, the faster way
 * for the variant (the atomic schedule with dQ's adds in a fixed order at
 * D >= 128 on sm_90a where "backward" takes it, but for GQA and
 * block-sparse lists; two kernels elsewhere),
 * what torch.use_deterministic_algorithms asks for; "backward-two-kernel":
 * two kernels, bit-exact reruns; or "backward-atomic": atomic dQ) to a
 * program spec (JSON,
 * format "kiln-program") for `arch` ("sm_80" or "sm_90a"), which
 * kiln_program_load takes. Needs no GPU. On success `*spec_json` is a string
 * for kiln_string_free. The spec is kept in the cubin cache's folder
 * (KILN_CACHE_DIR), keyed by the options, the program, the arch and this
 * library's file, so a later process reads it instead of lowering again. */
int kiln_compile_spec(const kiln_variant_options *options, const char *program,
                      const char *arch, char **spec_json, char *error,
                      int error_size);

void kiln_string_free(char *text);

typedef struct kiln_host_program kiln_host_program;

/* Lowers the variant for the host and JIT-compiles its forward and backward
 * (two-kernel) programs; when the backward cannot be derived (a score_mod
 * with math.erf ...), the forward alone, and running "backward" reports
 * why. */
int kiln_host_program_compile(const kiln_variant_options *options,
                              kiln_host_program **program, char *error,
                              int error_size);

/* The plan of "forward" or "backward" as a program spec (JSON without
 * source): tensors, captures, kernels. Owned by the program; null for an
 * unknown name. */
const char *kiln_host_program_plan(const kiln_host_program *program,
                                   const char *which);

/* Runs "forward" or "backward" on host memory: tensors by name as for
 * kiln_program_run, captures in the plan's order. Validates every argument
 * first. Calls on one program are serialized. */
int kiln_host_program_run(kiln_host_program *program, const char *which,
                          const kiln_tensor *tensors, int num_tensors,
                          const kiln_tensor *captures, int num_captures,
                          char *error, int error_size);

void kiln_host_program_free(kiln_host_program *program);

#ifdef __cplusplus
}
#endif

#endif /* KILN_JIT_C_H */
