// C++ side of the cxx bridge (src/ffi.rs): the C++ functions Rust calls, and
// how C++ exceptions become Rust errors.
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
// backtrace (which means nothing to a Python or Rust user), tagged with
// their class so Rust keeps it (src/types.rs `Error::from_torch` reads the
// tags).
namespace rust {
namespace behavior {
template <typename Try, typename Fail>
static void trycatch(Try&& func, Fail&& fail) noexcept try {
  func();
} catch (const c10::OutOfMemoryError& e) {
  fail(std::string("[myns:oom] ") + e.what_without_backtrace());
} catch (const c10::IndexError& e) {
  fail(std::string("[myns:index] ") + e.what_without_backtrace());
} catch (const c10::NotImplementedError& e) {
  fail(std::string("[myns:notimpl] ") + e.what_without_backtrace());
} catch (const c10::ValueError& e) {
  fail(std::string("[myns:value] ") + e.what_without_backtrace());
} catch (const c10::TypeError& e) {
  fail(std::string("[myns:type] ") + e.what_without_backtrace());
} catch (const c10::Error& e) {
  fail(e.what_without_backtrace());
} catch (const std::exception& e) {
  fail(e.what());
}
}  // namespace behavior
}  // namespace rust
