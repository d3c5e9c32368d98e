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

typedef struct kiln_backward_kernel kiln_backward_kernel;

/* One __global__ function of the backward. A null name is accepted for the
 * entry the schedule does not launch (dq when atomic_dq, convert when not). */
typedef struct kiln_kernel_entry {
  const char *name;
  int num_threads;
  int shared_bytes;
} kiln_kernel_entry;

/* The backward kernels of a variant, all in `source`. atomic_dq: 0 for the
 * two-kernel schedule (preprocess, dq, dkdv), else preprocess, dkdv with
 * fp32 atomics for dQ, convert. dtype: 0 bf16, 1 fp16. num_captures as for
 * kiln_forward_load: variants with captures are refused. */
typedef struct kiln_backward_spec {
  const char *source;
  const char *variant;
  const char *arch;
  int atomic_dq;
  int block_m;
  int block_n;
  int head_dim_qk;
  int head_dim_v;
  int gqa_group;
  int dtype;
  int num_captures;
  kiln_kernel_entry preprocess, dq, dkdv, convert;
} kiln_backward_spec;

int kiln_backward_load(const kiln_backward_spec *spec, int device,
                       kiln_backward_kernel **kernel, char *error,
                       int error_size);

/* Tensors as in kiln_forward_run: data pointer, then 4 sizes and 4 strides
 * (lse: 3 and 3). dq, dk, dv are written; the others are read. */
int kiln_backward_run(
    kiln_backward_kernel *kernel, void *q, const long long *q_sizes,
    const long long *q_strides, void *k, const long long *k_sizes,
    const long long *k_strides, void *v, const long long *v_sizes,
    const long long *v_strides, void *out, const long long *out_sizes,
    const long long *out_strides, void *dout, const long long *dout_sizes,
    const long long *dout_strides, void *lse, const long long *lse_sizes,
    const long long *lse_strides, void *dq, const long long *dq_sizes,
    const long long *dq_strides, void *dk, const long long *dk_sizes,
    const long long *dk_strides, void *dv, const long long *dv_sizes,
    const long long *dv_strides, void *stream, char *error, int error_size);

void kiln_backward_free(kiln_backward_kernel *kernel);

#ifdef __cplusplus
}
#endif

#endif /* KILN_C_H */
