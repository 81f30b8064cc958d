// C++ side of the cxx bridge (src/bridge.rs). Declares what Rust calls in C++
// and how C++ exceptions become Rust errors.
#pragma once
#include <c10/util/Exception.h>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "rust/cxx.h"

namespace myns {
struct Arg;

// Resolves `myns::<name>` once; the returned handle lives for the process.
size_t find_op(rust::Str name);
// Calls an op through the dispatcher; results are new `at::Tensor*`s.
size_t call_op(size_t handle, rust::Slice<const Arg> args, rust::Slice<size_t> outs);
// A new contiguous CPU (cuda_device < 0) or CUDA tensor; an owned `at::Tensor*`.
size_t new_empty(rust::Slice<const int64_t> sizes, int8_t dtype, int16_t cuda_device);
// PyTorch's current `torch.backends.cuda.matmul.allow_tf32` setting.
bool allow_tf32_matmul();
}  // namespace myns

// Exceptions from C++ reach Rust as errors; c10 errors without their C++
// backtrace, which means nothing to a Python or Rust user.
namespace rust {
namespace behavior {
template <typename Try, typename Fail>
static void trycatch(Try&& func, Fail&& fail) noexcept try {
  func();
} catch (const c10::Error& e) {
  fail(e.what_without_backtrace());
} catch (const std::exception& e) {
  fail(e.what());
}
}  // namespace behavior
}  // namespace rust
