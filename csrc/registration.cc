// Generic registration of every op in Rust's table (src/ops/) with the
// PyTorch dispatcher: schemas, boxed CPU/CUDA/Meta kernels, an Autograd
// kernel and, where an op asks, Autocast kernels. Nothing here is specific
// to one op; adding an op needs no C++.

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <ATen/EmptyTensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/cuda/EmptyTensor.h>
#include <c10/core/DeviceGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/saved_variable.h>
#include <torch/library.h>

#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "myns/csrc/bridge.h"
#include "myns/src/bridge.rs.h"
#include "myns/src/ffi.rs.h"

#include <torch/headeronly/version.h>

namespace myns {
namespace {

// libtorch 2.13 moved autograd nodes from std::shared_ptr to c10::intrusive_ptr.
#if TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 13
template <class T>
using NodePtr = c10::intrusive_ptr<T>;
template <class T, class... A>
NodePtr<T> make_node(A&&... a) {
  return c10::make_intrusive<T>(std::forward<A>(a)...);
}
#else
template <class T>
using NodePtr = std::shared_ptr<T>;
template <class T, class... A>
NodePtr<T> make_node(A&&... a) {
  return std::shared_ptr<T>(new T(std::forward<A>(a)...), torch::autograd::deleteNode);
}
#endif

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

// Raises a failed Rust call as the c10 exception of its kind, which Python
// sees as the matching class (src/bridge.rs `kind_code`).
[[noreturn]] void raise(const Outcome& o) {
  const std::string msg(o.message);
  switch (o.kind) {
    case 2: TORCH_CHECK_WITH(OutOfMemoryError, false, msg);
    case 3: TORCH_CHECK_WITH(IndexError, false, msg);
    case 4: TORCH_CHECK_WITH(NotImplementedError, false, msg);
    case 5: TORCH_CHECK_WITH(ValueError, false, msg);
    case 6: TORCH_CHECK_WITH(TypeError, false, msg);
    default: TORCH_CHECK(false, msg);
  }
  std::abort();  // unreachable: every case throws
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
  } else if (v.isString()) {
    // Points into the IValue, which outlives the call.
    const std::string& str = v.toStringRef();
    a.kind = ArgKind::Str;
    a.str_ptr = reinterpret_cast<size_t>(str.data());
    a.str_len = str.size();
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
    case ArgKind::Str: return std::string(reinterpret_cast<const char*>(a.str_ptr), a.str_len);
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
      const Outcome o = run_kernel(op_, K, rust::Slice<const Arg>(args.data(), n), stream,
                                   rust::Slice<size_t>(outs.data(), outs.size()));
      if (o.kind != 0) raise(o);
      nout = o.count;
    }
    torch::jit::drop(*stack, n);
    push_outputs(stack, outs.data(), nout);
  }

  size_t op_;
};

// Whether `t` (held by the caller) is the only reference to its memory: no
// other handle, no view sharing its storage, a plain strided tensor (a
// tensor subclass or one traced by torch.compile has the Python or
// Functionalize key, and its memory is not ours to reuse). A tensor Python
// has seen keeps its Python object, which holds a reference to it; that
// one does not count when nothing in Python refers to the object.
bool sole_reference(const at::Tensor& t) {
  const c10::DispatchKeySet foreign{c10::DispatchKey::Python, c10::DispatchKey::PythonTLSSnapshot,
                                    c10::DispatchKey::Functionalize};
  if (!t.defined() || t.layout() != at::kStrided || !t.has_storage() || t.is_view() || t.is_conj() || t.is_neg() ||
      t.key_set().has_any(foreign) || t.storage().use_count() != 1) {
    return false;
  }
  const size_t refs = t.use_count();
  return refs == 1 || (refs == 2 && t.unsafeGetTensorImpl()->pyobj_slot()->has_unique_reference());
}

// Autograd, as aten's generated kernels do it: when a graph must be
// recorded, one RustNode per call holds the tensor inputs (and the outputs if
// the op asks) as SavedVariables and the other arguments as IValues; the
// forward runs below autograd on the dispatcher's own stack. Backward asks
// Rust for the gradient formula, which calls only dispatcher ops.
struct RustNode final : torch::autograd::Node {
  explicit RustNode(size_t op) : op_(op) {}

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    const size_t n_in = inputs_.size();
    // Without retain_graph or create_graph, the saved inputs are dropped
    // here rather than after this call, so that an input nothing else
    // refers to is handed to Rust as this call's own (BackwardCall::owns_input).
    const bool consume = release_ && !c10::GradMode::is_enabled();
    std::vector<uint8_t> flags(n_in, 0);  // InputFlag bits per tensor input
    std::vector<c10::IValue> argv;
    argv.reserve(args_.size());
    for (size_t j = 0, k = 0; j < args_.size(); ++j) {
      if (k < n_in && pos_[k] == j) {
        const auto& m = unread_[k];
        if (m) {
          argv.emplace_back(at::empty_strided_symint(m->sizes, m->strides, m->options.device(at::kMeta)));
        } else {
          argv.emplace_back(inputs_[k].unpack());
          if (consume) {
            inputs_[k].reset_data();
            if (sole_reference(argv.back().toTensor())) flags[k] |= static_cast<uint8_t>(InputFlag::Owned);
          }
        }
        ++k;
      } else {
        argv.push_back(args_[j]);
      }
    }
    std::vector<at::Tensor> outputs;
    outputs.reserve(outputs_.size());
    for (auto& s : outputs_) outputs.push_back(s.unpack(getptr()));

    // Arg points into argv, outputs and grads: none of them changes below.
    std::vector<Arg> args, out_args, grad_args;
    args.reserve(argv.size());
    for (const auto& v : argv) args.push_back(to_arg(v, false, false));
    for (const auto& t : outputs) out_args.push_back(tensor_arg(t, false, false));
    for (const auto& g : grads) grad_args.push_back(tensor_arg(g, false, false));
    for (size_t i = 0; i < n_in; ++i) {
      if (task_should_compute_output(i)) flags[i] |= static_cast<uint8_t>(InputFlag::NeedsGrad);
    }

    std::vector<size_t> outs(n_in, 0);
    const Outcome o = run_backward(op_, rust::Slice<const Arg>(args.data(), args.size()),
                                   rust::Slice<const Arg>(out_args.data(), out_args.size()),
                                   rust::Slice<const Arg>(grad_args.data(), grad_args.size()),
                                   rust::Slice<const uint8_t>(flags.data(), flags.size()), release_,
                                   rust::Slice<size_t>(outs.data(), outs.size()));
    if (o.kind != 0) raise(o);
    const size_t n = o.count;
    torch::autograd::variable_list result(n_in);
    for (size_t i = 0; i < n && i < n_in; ++i) {
      if (outs[i] != 0) {
        std::unique_ptr<at::Tensor> t(reinterpret_cast<at::Tensor*>(outs[i]));
        result[i] = std::move(*t);
      }
    }
    return result;
  }

  std::string name() const override { return "myns::" + std::string(op_name(op_)) + "Backward"; }

  // Called by the engine before apply when the graph is not retained.
  void will_release_variables() override { release_ = true; }

  void release_variables() override {
    for (auto& s : inputs_) s.reset_data();
    for (auto& s : outputs_) s.reset_data();
  }

  size_t op_;
  std::vector<c10::IValue> args_;  // every argument; tensors as None
  std::vector<size_t> pos_;        // argument position of each tensor input, ascending
  std::vector<torch::autograd::SavedVariable> inputs_, outputs_;
  // Per tensor input: its metadata when backward does not read its data for
  // the gradients wanted (the declaration's backward_reads), so that the
  // tensor itself is not kept.
  struct Unread {
    std::vector<c10::SymInt> sizes, strides;
    at::TensorOptions options;
  };
  std::vector<std::optional<Unread>> unread_;
  bool release_ = false;
};

struct RustAutogradKernel final : c10::OperatorKernel {
  explicit RustAutogradKernel(size_t op) : op_(op) {}

  // The op to run instead while recording (the declaration's `train_with`),
  // looked up on first use: registration order is not ours to rely on.
  const c10::OperatorHandle* train_op() {
    std::call_once(train_once_, [this] {
      const std::string name(op_train_with(op_));
      if (!name.empty()) train_ = c10::Dispatcher::singleton().findSchemaOrThrow(("myns::" + name).c_str(), "");
    });
    return train_ ? &*train_ : nullptr;
  }

  void operator()(const c10::OperatorHandle& h, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
    const size_t n = h.schema().arguments().size();
    const auto base = stack->end() - n;
    const bool grad_mode = c10::GradMode::is_enabled();
    bool record = false, every_float_grad = true;
    uint64_t requires_grad = 0;  // bit i: argument i
    for (auto it = base; it != stack->end(); ++it) {
      if (!it->isTensor()) continue;
      const at::Tensor& t = it->toTensor();
      if (!t.defined()) continue;
      record |= grad_mode && t.requires_grad();
      if (t.requires_grad() && it - base < 64) requires_grad |= uint64_t{1} << (it - base);
      if (t.is_floating_point()) every_float_grad &= t.requires_grad();
      TORCH_CHECK(!t._fw_grad(/*level=*/0).defined(), "myns::", std::string(op_name(op_)),
                  ": forward-mode AD (jvp) is not implemented");
    }
    NodePtr<RustNode> node;
    if (record) {
      node = make_node<RustNode>(op_);
      std::vector<at::Tensor> tensors;
      node->args_.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        const c10::IValue& v = base[i];
        if (v.isTensor()) {
          const at::Tensor& t = v.toTensor();
          tensors.push_back(t);
          if (t.defined() && !op_saves_input(op_, i, requires_grad)) {
            node->unread_.push_back(RustNode::Unread{t.sym_sizes().vec(), t.sym_strides().vec(), t.options()});
            node->inputs_.emplace_back();
          } else {
            node->unread_.emplace_back();
            node->inputs_.emplace_back(t, /*is_output=*/false);
          }
          node->pos_.push_back(i);
          node->args_.emplace_back();
        } else {
          node->args_.push_back(v);
        }
      }
      node->set_next_edges(torch::autograd::collect_next_edges(at::TensorList(tensors)));
    }
    // The training op forms every input's gradient: only worth it when all
    // are wanted (a frozen weight's gradient would be computed for nothing).
    const c10::OperatorHandle* train = node && every_float_grad ? train_op() : nullptr;
    {
      // The kernel runs below autograd on the same stack (no copies).
      at::AutoDispatchBelowADInplaceOrView guard;
      (train ? *train : h).redispatchBoxed(ks & c10::after_autograd_keyset, stack);
    }
    if (!node) return;
    const size_t n_out = h.schema().returns().size();
    // The training op's results after this op's outputs are kept for backward.
    std::vector<at::Tensor> kept;
    if (train) {
      const size_t n_kept = train->schema().returns().size() - n_out;
      for (auto it = stack->end() - n_kept; it != stack->end(); ++it) kept.push_back(it->toTensor());
      torch::jit::drop(*stack, n_kept);
    }
    const bool save = op_saves_outputs(op_);
    for (auto it = stack->end() - n_out; it != stack->end(); ++it) {
      const at::Tensor out = it->isTensor() ? it->toTensor() : at::Tensor();
      const bool differentiable = out.defined() && torch::autograd::isDifferentiableType(out.scalar_type());
      if (differentiable) {
        torch::autograd::set_history(out, node);
      } else {
        node->add_input_metadata(torch::autograd::Node::undefined_input());
      }
      // Saved after set_history, as outputs of this node (no reference cycle).
      if (save) node->outputs_.emplace_back(out, /*is_output=*/differentiable);
    }
    for (const auto& t : kept) node->outputs_.emplace_back(t, /*is_output=*/false);
  }

  size_t op_;
  std::once_flag train_once_;
  std::optional<c10::OperatorHandle> train_;
};

// torch.autocast, as aten's own wrappers do it: with the autocast key
// excluded, floating tensors on the autocast device (not float64, not
// written in place) are cast, to the autocast dtype (policies 1 and 3) or
// to float32 (policy 2), and the op is called again; policy 3 (a linear
// layer and a loss) returns its floating results in float32.
template <c10::DeviceType D>
struct AutocastKernel final : c10::OperatorKernel {
  explicit AutocastKernel(uint8_t policy) : policy_(policy) {}

  void operator()(const c10::OperatorHandle& h, c10::DispatchKeySet, torch::jit::Stack* stack) {
    c10::impl::ExcludeDispatchKeyGuard no_autocast(at::autocast::get_autocast_dispatch_key_from_device_type(D));
    const auto& schema_args = h.schema().arguments();
    const auto base = stack->end() - schema_args.size();
    auto eligible = [&](const c10::IValue& v, size_t i) {
      return v.isTensor() && v.toTensor().defined() && !is_written(schema_args[i]) &&
             at::autocast::is_autocast_eligible(v.toTensor(), D) && v.toTensor().scalar_type() != at::kDouble;
    };
    const at::ScalarType target = policy_ == 2 ? at::kFloat : at::autocast::get_autocast_dtype(D);
    for (size_t i = 0; i < schema_args.size(); ++i) {
      if (eligible(base[i], i) && base[i].toTensor().scalar_type() != target) {
        base[i] = base[i].toTensor().to(target);
      }
    }
    h.callBoxed(stack);
    if (policy_ == 3) {
      const size_t n_out = h.schema().returns().size();
      for (auto it = stack->end() - n_out; it != stack->end(); ++it) {
        if (it->isTensor() && it->toTensor().is_floating_point()) *it = it->toTensor().to(at::kFloat);
      }
    }
  }

  uint8_t policy_;
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

template <c10::DeviceType D>
void register_autocast(torch::Library& m) {
  for (size_t i = 0; i < myns::op_count(); ++i) {
    const uint8_t policy = myns::op_autocast(i, D == c10::DeviceType::CUDA);
    const std::string name(myns::op_name(i));
    // Ops without a policy fall through (aten's fallback for the autocast keys).
    if (policy != 0) {
      m.impl(name.c_str(), torch::CppFunction::makeFromBoxedFunctor(std::make_unique<myns::AutocastKernel<D>>(policy)));
    }
  }
}

TORCH_LIBRARY_IMPL(myns, AutocastCUDA, m) { register_autocast<c10::DeviceType::CUDA>(m); }
TORCH_LIBRARY_IMPL(myns, AutocastCPU, m) { register_autocast<c10::DeviceType::CPU>(m); }

TORCH_LIBRARY_IMPL(myns, ADInplaceOrView, m) {
  for (size_t i = 0; i < myns::op_count(); ++i) {
    if (myns::op_has_backward(i)) continue;
    const std::string name(myns::op_name(i));
    m.impl(name.c_str(), torch::autograd::autogradNotImplementedInplaceOrViewFallback());
  }
}
