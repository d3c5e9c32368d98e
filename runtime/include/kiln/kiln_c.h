/*===- kiln_c.h - C entry points of the Kiln runtime ----------------------===*
 *
 * For foreign callers (Python ctypes in bench/, the PyTorch examples): load a
 * program spec written by `kiln compile` (a variant's forward or backward)
 * and run it on device pointers. Every function returns 0 on success, else
 * writes a message to `error` (at most `error_size` bytes with the NUL, cut
 * before any UTF-8 character that does not fit; a null `error` or an
 * `error_size` below 1 drops it). A null program, spec, path or output
 * pointer is an error, never a crash; kiln_program_free(null) does nothing.
 *
 *===----------------------------------------------------------------------===*/

#ifndef KILN_C_H
#define KILN_C_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_program kiln_program;

/* Element type codes. */
enum {
  KILN_BF16 = 0,
  KILN_FP16 = 1,
  KILN_F32 = 2,
  KILN_F64 = 3,
  KILN_I32 = 4,
  KILN_I64 = 5
};

/* A device array: `rank` sizes and strides, in elements. For a tensor of a
 * program `name` says which one (the spec's "tensors": q, k, v, out, lse,
 * and for a backward dout, dq, dk, dv); for a capture it may be null, or
 * must match the spec's capture name. */
typedef struct kiln_tensor {
  const char *name;
  void *data;
  int dtype;
  int rank;
  const long long *sizes;
  const long long *strides;
} kiln_tensor;

/* Reads a spec (JSON text, format "kiln-program"), compiles its source (or
 * finds it in the cache) and loads it on `device`. */
int kiln_program_load(const char *spec_json, int device, kiln_program **program,
                      char *error, int error_size);

/* kiln_program_load of the spec file at `path`. */
int kiln_program_load_file(const char *path, int device, kiln_program **program,
                           char *error, int error_size);

/* Compiles the spec's kernels into the cubin cache (KILN_CACHE_DIR; one NVRTC
 * compile per kernel, concurrently) without loading them: needs NVRTC but no
 * GPU or driver. `*cached` (if not null) is set to the number of kernels
 * that were already cached. Safe from many processes at once. */
int kiln_program_precompile(const char *spec_json, int *cached, char *error,
                            int error_size);

/* Validates and enqueues the program's kernels on `stream` (a CUstream; null
 * for the default stream): `tensors` by name in any order, `captures` in the
 * spec's order (ranks up to 4, dtypes f32, f64, i32 or i64 as declared,
 * aligned to their element size). */
int kiln_program_run(kiln_program *program, const kiln_tensor *tensors,
                     int num_tensors, const kiln_tensor *captures,
                     int num_captures, void *stream, char *error,
                     int error_size);

/* Device memory for a run's workspaces: `bytes` (> 0), 256-byte aligned,
 * usable by work on the run's stream until its kernels have finished (a
 * stream-ordered allocator); null on failure. */
typedef void *(*kiln_workspace_allocator)(void *context, long long bytes);

/* kiln_program_run with the workspaces from `allocate` (called at most once
 * per run, only when the run needs some) instead of the program's own
 * per-stream buffers: nothing is allocated or synchronized by the runtime,
 * so the run can be captured in a CUDA graph on any stream when `allocate`
 * is capture-safe (PyTorch's caching allocator is). */
int kiln_program_run_with_allocator(kiln_program *program,
                                    const kiln_tensor *tensors, int num_tensors,
                                    const kiln_tensor *captures,
                                    int num_captures, void *stream,
                                    kiln_workspace_allocator allocate,
                                    void *allocator_context, char *error,
                                    int error_size);

/* Device scratch memory the last kiln_program_run used (from the program's
 * own buffers), in bytes. */
long long kiln_program_workspace_bytes(const kiln_program *program);

/* Sets a symbol the program derives (a run-time choice such as "kv_splits",
 * the number of KV splits of a decode step) for every later run, instead of
 * the plan's own expression; a value below 1 restores the expression. Not
 * while another thread runs the program. */
int kiln_program_set_symbol(kiln_program *program, const char *name,
                            long long value, char *error, int error_size);

/* The architecture Kiln compiles for on device `device` ("sm_80" for compute
 * capability 8.x, "sm_90a" for 9.0) into `arch` (at most `arch_size` bytes
 * with the NUL), for kiln_compile_spec; an error names any other device. */
int kiln_device_arch(int device, char *arch, int arch_size, char *error,
                     int error_size);

void kiln_program_free(kiln_program *program);

#ifdef __cplusplus
}
#endif

#endif /* KILN_C_H */
