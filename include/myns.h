/*
 * myns.h: the C ABI of libmyns (PyTorch custom operators written in Rust).
 *
 * This header is the single source of truth for the ABI: src/capi.rs
 * implements it, and tests/c_abi.rs generates Rust bindings from it with
 * bindgen, checks every declaration against the library's exported symbols
 * and the Rust definitions, and calls the functions on the built libmyns.so.
 *
 * Conventions
 * - Tensors cross as handles: a `myns_tensor` is an `at::Tensor*`, the same
 *   representation as tch's `C_tensor` and PyTorch's `AtenTensorHandle`, so
 *   handles from either can be passed in (and ours passed to them).
 *   From C++: `reinterpret_cast<myns_tensor>(&t)` for an `at::Tensor t`, and
 *   `*reinterpret_cast<at::Tensor*>(h)` for a handle `h`.
 * - Functions that can fail return a status (`MYNS_OK`, i.e. 0, on success).
 *   On failure, `myns_last_error()` gives the message, which names the op
 *   and the argument (e.g. "myns::matmul: argument `b` has 2 rows but `a` has
 *   3 columns ..."), and every output handle is set to NULL.
 * - Outputs are new handles owned by the caller: free each with
 *   `myns_tensor_free`. Inputs are borrowed for the call only.
 * - Op functions call the op through the PyTorch dispatcher, exactly as
 *   `torch.ops.myns.<op>` does from Python: device dispatch (CPU or CUDA,
 *   on PyTorch's current stream), autograd (when an input requires grad) and
 *   the op's checks all apply.
 * - Nothing unwinds out of these functions: a Rust panic becomes
 *   `MYNS_ERROR_INTERNAL` with a message.
 * - Thread safety: as for the PyTorch ops themselves; the last error is
 *   per thread.
 *
 * Linking: `cc prog.c -I include -L target/release -lmyns -Wl,-rpath,<dir of libmyns.so>`.
 * libmyns.so carries a run path to the libtorch it was built against, and
 * itself depends on libtorch_cuda, so a program sees CUDA without linking
 * libtorch itself (see examples/c/matmul.c).
 */
#ifndef MYNS_H
#define MYNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this header's ABI; `myns_abi_version()` is the library's. */
#define MYNS_ABI_VERSION 2

/* A tensor handle: an `at::Tensor*` (opaque in C). */
typedef struct myns_tensor_s* myns_tensor;

/* Status codes: one per kind of error, as PyTorch's exception classes
 * (Python raises the class in parentheses for the same failure). */
enum myns_status {
  MYNS_OK = 0,
  /* The op or torch rejected the call: shapes, dtypes or devices that
   * disagree, a CUDA failure (RuntimeError). */
  MYNS_ERROR = 1,
  /* A NULL pointer or an invalid value where the ABI needs a valid one. */
  MYNS_ERROR_INVALID_ARGUMENT = 2,
  /* A bug in myns (a caught panic); the message says where. */
  MYNS_ERROR_INTERNAL = 3,
  /* Out of device memory (torch.OutOfMemoryError). */
  MYNS_ERROR_OUT_OF_MEMORY = 4,
  /* A dimension or index out of range (IndexError). */
  MYNS_ERROR_INDEX = 5,
  /* A device or dtype the op has no kernel for (NotImplementedError). */
  MYNS_ERROR_NOT_IMPLEMENTED = 6,
  /* A bad value, such as a negative eps (ValueError). */
  MYNS_ERROR_VALUE = 7,
  /* An argument of the wrong type (TypeError). */
  MYNS_ERROR_TYPE = 8
};

/* Element types, numbered as c10::ScalarType (and torch's C shim). */
enum myns_dtype {
  MYNS_UINT8 = 0,
  MYNS_INT8 = 1,
  MYNS_INT16 = 2,
  MYNS_INT32 = 3,
  MYNS_INT64 = 4,
  MYNS_FLOAT16 = 5,
  MYNS_FLOAT32 = 6,
  MYNS_FLOAT64 = 7,
  MYNS_BOOL = 11,
  MYNS_BFLOAT16 = 15
};

/* Device types, numbered as c10::DeviceType. */
enum myns_device_type { MYNS_CPU = 0, MYNS_CUDA = 1 };

/* ---- Library and capability queries (never fail) ------------------------ */

/* Library version, e.g. "0.1.0". */
const char* myns_version(void);
/* Version of the torch the library was built against, e.g. "2.11.0+cu130". */
const char* myns_torch_version(void);
/* ABI version of the library; compare with MYNS_ABI_VERSION. */
int myns_abi_version(void);
/* Number of ops the library registers (torch.ops.myns.*). */
size_t myns_op_count(void);
/* Name of op i (without "myns::"), its schema, its documentation; NULL if i
 * is out of range. Op `name` has the C function `myns_<name>`. */
const char* myns_op_name(size_t i);
const char* myns_op_schema(size_t i);
const char* myns_op_doc(size_t i);
/* Number of CUDA devices torch sees (0 without a GPU). */
int myns_cuda_device_count(void);
/* Sets a kernel-choice override (testing and tuning) for the process, as the
 * environment variable `name` ("MYNS_MATMUL_KERNEL", "MYNS_ROW_KERNEL",
 * "MYNS_MATMUL_TMA_STORE") would at start-up; NULL, "" or "auto" restores
 * the automatic choice. */
int myns_set_override(const char* name, const char* value);

/* ---- Errors -------------------------------------------------------------- */

/* Message of the last failed call on this thread ("" if none). Valid until
 * the next failed call on this thread; successful calls leave it as it is. */
const char* myns_last_error(void);

/* ---- Tensors ------------------------------------------------------------- */

/* A new contiguous CPU tensor of `dtype` (enum myns_dtype) with `ndim` sizes,
 * holding a copy of the row-major elements at `data`. `sizes` may be NULL
 * when ndim is 0, `data` when the tensor has no elements. */
int myns_tensor_from_data(const void* data, const int64_t* sizes, int64_t ndim, int32_t dtype,
                          myns_tensor* out);
/* A new handle to `t` on the given device (enum myns_device_type; the index
 * is ignored for the CPU, and -1 means CUDA device 0): a copy, or `t` itself
 * if it is already there. */
int myns_tensor_to_device(const myns_tensor t, int32_t device_type, int32_t device_index,
                          myns_tensor* out);
/* Copies the elements of `t` (any device, any strides) to host memory, row
 * major, in t's dtype; `nbytes` must equal numel times the element size. */
int myns_tensor_copy_to(const myns_tensor t, void* data, size_t nbytes);
/* Number of dimensions. */
int myns_tensor_ndim(const myns_tensor t, int64_t* ndim);
/* Writes the ndim sizes of `t` to `sizes`, which has room for `capacity`. */
int myns_tensor_sizes(const myns_tensor t, int64_t* sizes, int64_t capacity);
/* Element type (enum myns_dtype; other c10::ScalarType numbers may appear). */
int myns_tensor_dtype(const myns_tensor t, int32_t* dtype);
/* Device type (enum myns_device_type) and index (-1 for the CPU). */
int myns_tensor_device(const myns_tensor t, int32_t* device_type, int32_t* device_index);
/* Frees a handle this library returned (or any `new at::Tensor`); NULL is a no-op. */
void myns_tensor_free(myns_tensor t);

/* ---- Ops: one function per op, `myns_<name>`, arguments as in the schema
 * (`myns_op_schema`), then one output handle per returned tensor. In-place
 * ops (Tensor(a!)) modify their input tensors and return nothing. A
 * `Tensor?` argument may be NULL (None); a `Scalar` is a double whose
 * integral values count as integers (an integer tensor stays one).
 * Generated from the ops' declarations (src/ops/): tests/c_abi_header.rs
 * rewrites the lines between the markers when an op changes. ---------- */
/* @generated ops begin */
/* add(Tensor a, Tensor b) -> Tensor */
int myns_add(const myns_tensor a, const myns_tensor b, myns_tensor* out);
/* add_rms_norm(Tensor x, Tensor residual, Tensor weight, float eps) -> (Tensor, Tensor) */
int myns_add_rms_norm(const myns_tensor x, const myns_tensor residual, const myns_tensor weight, double eps, myns_tensor* out0, myns_tensor* out1);
/* add_rms_norm_backward(Tensor grad, Tensor? grad_summed, Tensor summed, Tensor weight, float eps) -> (Tensor, Tensor) */
int myns_add_rms_norm_backward(const myns_tensor grad, const myns_tensor grad_summed, const myns_tensor summed, const myns_tensor weight, double eps, myns_tensor* out0, myns_tensor* out1);
/* bmm(Tensor a, Tensor b) -> Tensor */
int myns_bmm(const myns_tensor a, const myns_tensor b, myns_tensor* out);
/* cross_entropy(Tensor logits, Tensor target, int ignore_index=-100, str reduction="mean") -> Tensor */
int myns_cross_entropy(const myns_tensor logits, const myns_tensor target, int64_t ignore_index, const char* reduction, myns_tensor* out);
/* cross_entropy_backward(Tensor grad, Tensor logits, Tensor target, int ignore_index=-100, str reduction="mean") -> Tensor */
int myns_cross_entropy_backward(const myns_tensor grad, const myns_tensor logits, const myns_tensor target, int64_t ignore_index, const char* reduction, myns_tensor* out);
/* fused_add_rms_norm(Tensor(a!) x, Tensor(b!) residual, Tensor weight, float eps) -> () */
int myns_fused_add_rms_norm(myns_tensor x, myns_tensor residual, const myns_tensor weight, double eps);
/* fused_linear_cross_entropy(Tensor hidden, Tensor weight, Tensor target, int ignore_index=-100, str reduction="mean") -> Tensor */
int myns_fused_linear_cross_entropy(const myns_tensor hidden, const myns_tensor weight, const myns_tensor target, int64_t ignore_index, const char* reduction, myns_tensor* out);
/* fused_linear_cross_entropy_train(Tensor hidden, Tensor weight, Tensor target, int ignore_index=-100, str reduction="mean") -> (Tensor, Tensor, Tensor) */
int myns_fused_linear_cross_entropy_train(const myns_tensor hidden, const myns_tensor weight, const myns_tensor target, int64_t ignore_index, const char* reduction, myns_tensor* out0, myns_tensor* out1, myns_tensor* out2);
/* fused_linear_cross_entropy_backward(Tensor grad, Tensor hidden, Tensor weight, Tensor target, int ignore_index=-100, str reduction="mean") -> (Tensor, Tensor) */
int myns_fused_linear_cross_entropy_backward(const myns_tensor grad, const myns_tensor hidden, const myns_tensor weight, const myns_tensor target, int64_t ignore_index, const char* reduction, myns_tensor* out0, myns_tensor* out1);
/* gelu_and_mul(Tensor x, str approximate="none") -> Tensor */
int myns_gelu_and_mul(const myns_tensor x, const char* approximate, myns_tensor* out);
/* gelu_and_mul_backward(Tensor grad, Tensor x, str approximate="none") -> Tensor */
int myns_gelu_and_mul_backward(const myns_tensor grad, const myns_tensor x, const char* approximate, myns_tensor* out);
/* gelu_and_mul_backward_(Tensor(a!) x, Tensor grad, str approximate="none") -> () */
int myns_gelu_and_mul_backward_(myns_tensor x, const myns_tensor grad, const char* approximate);
/* layer_norm(Tensor x, Tensor? weight, Tensor? bias, float eps) -> Tensor */
int myns_layer_norm(const myns_tensor x, const myns_tensor weight, const myns_tensor bias, double eps, myns_tensor* out);
/* layer_norm_backward(Tensor grad, Tensor x, Tensor? weight, float eps) -> (Tensor, Tensor, Tensor) */
int myns_layer_norm_backward(const myns_tensor grad, const myns_tensor x, const myns_tensor weight, double eps, myns_tensor* out0, myns_tensor* out1, myns_tensor* out2);
/* matmul(Tensor a, Tensor b) -> Tensor */
int myns_matmul(const myns_tensor a, const myns_tensor b, myns_tensor* out);
/* rms_norm(Tensor x, Tensor weight, float eps) -> Tensor */
int myns_rms_norm(const myns_tensor x, const myns_tensor weight, double eps, myns_tensor* out);
/* rms_norm_backward(Tensor grad, Tensor x, Tensor weight, float eps) -> (Tensor, Tensor) */
int myns_rms_norm_backward(const myns_tensor grad, const myns_tensor x, const myns_tensor weight, double eps, myns_tensor* out0, myns_tensor* out1);
/* rope(Tensor q, Tensor k, Tensor cos, Tensor sin) -> (Tensor, Tensor) */
int myns_rope(const myns_tensor q, const myns_tensor k, const myns_tensor cos, const myns_tensor sin, myns_tensor* out0, myns_tensor* out1);
/* scale(Tensor x, Scalar alpha) -> Tensor */
int myns_scale(const myns_tensor x, double alpha, myns_tensor* out);
/* scale_(Tensor(a!) x, Scalar alpha) -> () */
int myns_scale_(myns_tensor x, double alpha);
/* silu_and_mul(Tensor x) -> Tensor */
int myns_silu_and_mul(const myns_tensor x, myns_tensor* out);
/* silu_and_mul_backward(Tensor grad, Tensor x) -> Tensor */
int myns_silu_and_mul_backward(const myns_tensor grad, const myns_tensor x, myns_tensor* out);
/* silu_and_mul_backward_(Tensor(a!) x, Tensor grad) -> () */
int myns_silu_and_mul_backward_(myns_tensor x, const myns_tensor grad);
/* softmax(Tensor x, int dim) -> Tensor */
int myns_softmax(const myns_tensor x, int64_t dim, myns_tensor* out);
/* softmax_backward(Tensor grad, Tensor output, int dim) -> Tensor */
int myns_softmax_backward(const myns_tensor grad, const myns_tensor output, int64_t dim, myns_tensor* out);
/* @generated ops end */

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* MYNS_H */
