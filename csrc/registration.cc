// Generic registration of every op in Rust's table (src/ops/mod.rs) with the
// PyTorch dispatcher: schemas, boxed CPU/CUDA/Meta kernels and an Autograd
// kernel. Nothing here is specific to one op; adding an op needs no C++.

#include <ATen/Context.h>
#include <ATen/EmptyTensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/cuda/EmptyTensor.h>
#include <c10/core/DeviceGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "myns/csrc/bridge.h"
#include "myns/src/bridge.rs.h"

namespace myns {
namespace {

constexpr size_t kMaxArgs = 16;
constexpr size_t kMaxOuts = 8;

Arg none_arg() {
  Arg a{};
  a.kind = ArgKind::None;
  a.dtype = -1;
  a.device = DeviceKind::Other;
  a.device_index = -1;
  return a;
}

DeviceKind device_kind(c10::DeviceType t) {
  switch (t) {
    case c10::DeviceType::CPU: return DeviceKind::Cpu;
    case c10::DeviceType::CUDA: return DeviceKind::Cuda;
    case c10::DeviceType::Meta: return DeviceKind::Meta;
    default: return DeviceKind::Other;
  }
}

// Metadata is read once here so Rust needs no further FFI calls for it.
// `data` is filled only for real kernels; `write` asks for a mutable pointer.
Arg tensor_arg(const at::Tensor& t, bool data, bool write) {
  Arg a = none_arg();
  if (!t.defined()) return a;
  a.kind = ArgKind::Tensor;
  a.tensor = reinterpret_cast<size_t>(&t);
  a.dtype = static_cast<int8_t>(t.scalar_type());
  a.device = device_kind(t.device().type());
  a.device_index = t.device().index();
  a.dim = t.dim();
  if (!t.unsafeGetTensorImpl()->has_symbolic_sizes_strides()) {
    a.sizes = reinterpret_cast<size_t>(t.sizes().data());
    a.strides = reinterpret_cast<size_t>(t.strides().data());
    a.numel = t.numel();
    a.contiguous = t.is_contiguous();
    if (data && t.has_storage()) {
      a.data = reinterpret_cast<size_t>(write ? t.mutable_data_ptr() : t.const_data_ptr());
    }
  }
  return a;
}

Arg to_arg(const c10::IValue& v, bool data, bool write) {
  if (v.isTensor()) return tensor_arg(v.toTensor(), data, write);
  Arg a = none_arg();
  if (v.isDouble()) {
    a.kind = ArgKind::Float;
    a.float_value = v.toDouble();
  } else if (v.isInt()) {
    a.kind = ArgKind::Int;
    a.int_value = v.toInt();
  } else if (v.isBool()) {
    a.kind = ArgKind::Bool;
    a.int_value = v.toBool();
  } else {
    TORCH_CHECK(v.isNone(), "myns: unsupported argument type ", v.tagKind());
  }
  return a;
}

c10::IValue to_ivalue(const Arg& a) {
  switch (a.kind) {
    case ArgKind::Tensor: return *reinterpret_cast<const at::Tensor*>(a.tensor);
    case ArgKind::Float: return a.float_value;
    case ArgKind::Int: return a.int_value;
    case ArgKind::Bool: return a.int_value != 0;
    default: return c10::IValue();
  }
}

bool is_written(const c10::Argument& arg) {
  return arg.alias_info() && arg.alias_info()->isWrite();
}

// Takes ownership of the `at::Tensor*`s Rust returned and pushes them.
void push_outputs(torch::jit::Stack* stack, const size_t* outs, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    std::unique_ptr<at::Tensor> t(reinterpret_cast<at::Tensor*>(outs[i]));
    stack->emplace_back(std::move(*t));
  }
}

// The CPU, CUDA or Meta kernel of op `op_`.
template <Key K>
struct RustKernel final : c10::OperatorKernel {
  explicit RustKernel(size_t op) : op_(op) {}

  void operator()(const c10::OperatorHandle& h, c10::DispatchKeySet, torch::jit::Stack* stack) {
    const auto& schema_args = h.schema().arguments();
    const size_t n = schema_args.size();
    TORCH_CHECK(n <= kMaxArgs, "myns: too many arguments");
    std::array<Arg, kMaxArgs> args;
    auto base = stack->end() - n;
    int device = -1;
    for (size_t i = 0; i < n; ++i) {
      args[i] = to_arg(base[i], K != Key::Meta, is_written(schema_args[i]));
      if (device < 0 && args[i].kind == ArgKind::Tensor && args[i].device == DeviceKind::Cuda) {
        device = args[i].device_index;
      }
    }
    std::array<size_t, kMaxOuts> outs{};
    size_t nout = 0;
    {
      // Run on the input's device and PyTorch's current stream there; the
      // guard restores the caller's current device afterwards.
      // (c10's generic guard, not CUDAGuard: that one inlines cudart calls,
      // which Rust executables linking this would have to resolve.)
      c10::OptionalDeviceGuard guard;
      size_t stream = 0;
      if constexpr (K == Key::Cuda) {
        if (device >= 0) {
          guard.reset_device(c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(device)));
          stream = reinterpret_cast<size_t>(c10::cuda::getCurrentCUDAStream(device).stream());
        }
      }
      try {
        nout = run_kernel(op_, K, rust::Slice<const Arg>(args.data(), n), stream,
                          rust::Slice<size_t>(outs.data(), outs.size()));
      } catch (const rust::Error& e) {
        TORCH_CHECK(false, e.what());
      }
    }
    torch::jit::drop(*stack, n);
    push_outputs(stack, outs.data(), nout);
  }

  size_t op_;
};

// Autograd: forward runs the op below autograd; backward asks Rust for the
// gradient formula, which calls only dispatcher ops.
struct RustFunction : public torch::autograd::Function<RustFunction> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                at::TensorList tensors,
                                                const c10::OperatorHandle* h, size_t op,
                                                const torch::jit::Stack* args,
                                                const std::vector<int64_t>* tensor_pos) {
    torch::jit::Stack stack = *args;
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      h->callBoxed(stack);
    }
    torch::autograd::variable_list outs;
    outs.reserve(stack.size());
    for (auto& v : stack) outs.push_back(std::move(v).toTensor());

    // Non-tensor arguments go to saved_data; tensors through save_for_backward.
    std::vector<c10::IValue> rest;
    rest.reserve(args->size());
    for (const auto& v : *args) rest.push_back(v.isTensor() ? c10::IValue() : v);
    ctx->saved_data["args"] = c10::ivalue::Tuple::create(std::move(rest));
    ctx->saved_data["pos"] = c10::List<int64_t>(*tensor_pos);
    ctx->saved_data["op"] = static_cast<int64_t>(op);
    std::vector<at::Tensor> saved(tensors.begin(), tensors.end());
    if (op_saves_outputs(op)) saved.insert(saved.end(), outs.begin(), outs.end());
    ctx->save_for_backward(saved);
    return outs;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const size_t op = static_cast<size_t>(ctx->saved_data["op"].toInt());
    const auto pos = ctx->saved_data["pos"].toIntList().vec();
    const auto& elems = ctx->saved_data["args"].toTupleRef().elements();
    std::vector<c10::IValue> argv(elems.begin(), elems.end());
    const size_t n_in = pos.size();
    for (size_t i = 0; i < n_in; ++i) argv[pos[i]] = saved[i];

    std::vector<Arg> args, outputs, grad_args;
    for (const auto& v : argv) args.push_back(to_arg(v, false, false));
    for (size_t i = n_in; i < saved.size(); ++i) outputs.push_back(tensor_arg(saved[i], false, false));
    for (const auto& g : grads) grad_args.push_back(tensor_arg(g, false, false));
    std::vector<uint8_t> needs(n_in);
    for (size_t i = 0; i < n_in; ++i) needs[i] = ctx->needs_input_grad(i);

    std::vector<size_t> outs(n_in, 0);
    size_t n = 0;
    try {
      n = run_backward(op, rust::Slice<const Arg>(args.data(), args.size()),
                       rust::Slice<const Arg>(outputs.data(), outputs.size()),
                       rust::Slice<const Arg>(grad_args.data(), grad_args.size()),
                       rust::Slice<const uint8_t>(needs.data(), needs.size()),
                       rust::Slice<size_t>(outs.data(), outs.size()));
    } catch (const rust::Error& e) {
      TORCH_CHECK(false, e.what());
    }
    // One gradient per forward input of apply(): the tensors, then the
    // (non-differentiable) handle, op index, arguments and positions.
    torch::autograd::variable_list result(n_in + 4);
    for (size_t i = 0; i < n && i < n_in; ++i) {
      if (outs[i] != 0) {
        std::unique_ptr<at::Tensor> t(reinterpret_cast<at::Tensor*>(outs[i]));
        result[i] = std::move(*t);
      }
    }
    return result;
  }
};

// Whether a call must go through RustFunction: grad mode is on and some
// tensor input requires grad, or some input carries a forward-mode tangent
// (which RustFunction rejects, as before).
bool needs_autograd(const torch::jit::Stack& stack, size_t n) {
  const bool grad_mode = c10::GradMode::is_enabled();
  for (auto it = stack.end() - n; it != stack.end(); ++it) {
    if (!it->isTensor()) continue;
    const at::Tensor& t = it->toTensor();
    if (!t.defined()) continue;
    if (grad_mode && t.requires_grad()) return true;
    if (t._fw_grad(/*level=*/0).defined()) return true;
  }
  return false;
}

struct RustAutogradKernel final : c10::OperatorKernel {
  explicit RustAutogradKernel(size_t op) : op_(op) {}

  void operator()(const c10::OperatorHandle& h, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
    const size_t n = h.schema().arguments().size();
    if (!needs_autograd(*stack, n)) {
      // Nothing to record: run the kernel below autograd on the same stack
      // (as aten's VariableType kernels do), with no Node, saved state or
      // copies of the arguments.
      at::AutoDispatchBelowADInplaceOrView guard;
      h.redispatchBoxed(ks & c10::after_autograd_keyset, stack);
      return;
    }
    torch::jit::Stack args(stack->end() - n, stack->end());
    torch::jit::drop(*stack, n);
    std::vector<at::Tensor> tensors;
    std::vector<int64_t> pos;
    for (size_t i = 0; i < n; ++i) {
      if (args[i].isTensor()) {
        tensors.push_back(args[i].toTensor());
        pos.push_back(static_cast<int64_t>(i));
      }
    }
    auto outs = RustFunction::apply(at::TensorList(tensors), &h, op_, &args, &pos);
    for (auto& t : outs) stack->emplace_back(std::move(t));
  }

  size_t op_;
};

template <Key K>
void register_kernels(torch::Library& m) {
  for (size_t i = 0; i < op_count(); ++i) {
    const std::string name(op_name(i));
    m.impl(name.c_str(), torch::CppFunction::makeFromBoxedFunctor(std::make_unique<RustKernel<K>>(i)));
  }
}

}  // namespace

size_t find_op(rust::Str name) {
  const std::string full = "myns::" + std::string(name);
  const auto h = c10::Dispatcher::singleton().findSchemaOrThrow(full.c_str(), "");
  return reinterpret_cast<size_t>(new c10::OperatorHandle(h));
}

size_t call_op(size_t handle, rust::Slice<const Arg> args, rust::Slice<size_t> outs) {
  const auto* h = reinterpret_cast<const c10::OperatorHandle*>(handle);
  torch::jit::Stack stack;
  stack.reserve(args.size());
  for (const auto& a : args) stack.push_back(to_ivalue(a));
  h->callBoxed(stack);
  size_t n = 0;
  for (auto& v : stack) {
    if (!v.isTensor()) continue;
    TORCH_CHECK(n < outs.size(), "myns: too many results");
    outs[n++] = reinterpret_cast<size_t>(new at::Tensor(std::move(v).toTensor()));
  }
  return n;
}

rust::String dtype_name(int8_t dtype) {
  return rust::String(c10::toString(static_cast<c10::ScalarType>(dtype)));
}

size_t new_empty(rust::Slice<const int64_t> sizes, int8_t dtype, int16_t cuda_device) {
  const c10::IntArrayRef size(sizes.data(), sizes.size());
  const auto st = static_cast<c10::ScalarType>(dtype);
  at::Tensor t = cuda_device < 0
      ? at::Tensor(at::detail::empty_cpu(size, st, /*pin_memory=*/false, std::nullopt))
      : at::Tensor(at::detail::empty_cuda(size, st, c10::Device(c10::kCUDA, cuda_device), std::nullopt));
  return reinterpret_cast<size_t>(new at::Tensor(std::move(t)));
}

bool allow_tf32_matmul() { return at::globalContext().allowTF32CuBLAS(); }

}  // namespace myns

TORCH_LIBRARY(myns, m) {
  for (size_t i = 0; i < myns::op_count(); ++i) {
    const std::string schema(myns::op_schema(i));
    m.def(schema.c_str(), {at::Tag::pt2_compliant_tag});
  }
}

TORCH_LIBRARY_IMPL(myns, CPU, m) { myns::register_kernels<myns::Key::Cpu>(m); }
TORCH_LIBRARY_IMPL(myns, CUDA, m) { myns::register_kernels<myns::Key::Cuda>(m); }
TORCH_LIBRARY_IMPL(myns, Meta, m) { myns::register_kernels<myns::Key::Meta>(m); }

// Ops without a gradient formula (in-place ops, backward ops) still get an
// Autograd kernel: PyTorch's "not implemented" fallback, which raises a clear
// error if a gradient is ever asked of them, and handles in-place version
// counters, instead of silently returning no gradient.
TORCH_LIBRARY_IMPL(myns, Autograd, m) {
  for (size_t i = 0; i < myns::op_count(); ++i) {
    const std::string name(myns::op_name(i));
    if (myns::op_has_backward(i)) {
      m.impl(name.c_str(),
             torch::CppFunction::makeFromBoxedFunctor(std::make_unique<myns::RustAutogradKernel>(i)));
    } else {
      m.impl(name.c_str(), torch::autograd::autogradNotImplementedFallback());
    }
  }
}

TORCH_LIBRARY_IMPL(myns, ADInplaceOrView, m) {
  for (size_t i = 0; i < myns::op_count(); ++i) {
    if (myns::op_has_backward(i)) continue;
    const std::string name(myns::op_name(i));
    m.impl(name.c_str(), torch::autograd::autogradNotImplementedInplaceOrViewFallback());
  }
}
