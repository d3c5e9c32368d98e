/*===- kiln_c.h - C entry points of the Kiln runtime ----------------------===*
 *
 * For foreign callers (Python ctypes in bench/, a future PyTorch op): load a
 * kernel spec written by `kiln compile` and launch it on device pointers.
 * Every function returns 0 on success, else writes a message to `error`.
 *
 *===----------------------------------------------------------------------===*/

#ifndef KILN_C_H
#define KILN_C_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_forward_kernel kiln_forward_kernel;

/* dtype: 0 bf16, 1 fp16. num_captures: the spec's "captures"; the C API
 * does not pass captured tensors yet and refuses variants that have any. */
int kiln_forward_load(const char *source, const char *kernel_name,
                      const char *arch, int num_threads, int shared_bytes,
                      int block_m, int head_dim_qk, int head_dim_v,
                      int gqa_group, int dtype, int num_captures, int device,
                      kiln_forward_kernel **kernel, char *error,
                      int error_size);

/* Each tensor: data pointer, then 4 sizes and 4 strides (lse: 3 and 3). */
int kiln_forward_run(kiln_forward_kernel *kernel, void *q,
                     const long long *q_sizes, const long long *q_strides,
                     void *k, const long long *k_sizes,
                     const long long *k_strides, void *v,
                     const long long *v_sizes, const long long *v_strides,
                     void *out, const long long *out_sizes,
                     const long long *out_strides, void *lse,
                     const long long *lse_sizes, const long long *lse_strides,
                     void *stream, char *error, int error_size);

void kiln_forward_free(kiln_forward_kernel *kernel);

#ifdef __cplusplus
}
#endif

#endif /* KILN_C_H */
