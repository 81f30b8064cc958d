// tch_compat.h: lets torch-sys 0.26.0 (generated for libtorch 2.13) compile
// against libtorch 2.11 .. 2.15.
//
// Force-included into every C++ compile of the build through
//   CXXFLAGS_x86_64_unknown_linux_gnu="-std=c++20 -include tch_compat.h -DTCH_COMPAT_REV=1"
//   CPLUS_INCLUDE_PATH=<dir of this file>
// (set in .cargo/config.toml [env]). Cargo does not notice edits to this file:
// bump TCH_COMPAT_REV there so torch-sys recompiles. It must be harmless in
// every C++ compile of the build:
//  * no libtorch headers on the include path (cxx's own cxx.cc, any other cc
//    crate)          -> the whole file is empty;
//  * TCH_COMPAT_SKIP defined on the command line (our own csrc, which has no
//    use for it)     -> empty, and the compile stays as fast as without it;
//  * libtorch 2.13 (what torch-sys 0.26 was generated from) -> empty.
// Otherwise it declares, in namespace torch, the functions that
// torch-sys-0.26.0/libtch/torch_api_generated.cpp calls and that this
// libtorch lacks: a forward to the replacement where there is one, else a
// stub that throws c10::Error ("... is not available in libtorch X"), which
// tch reports as a TchError at the call.  Nothing is changed for functions the
// installed libtorch has, so nothing can shadow a real op.
//
// Adding a libtorch: build, read the "no member named"/"not a member of
// 'torch'" errors, add a block below keyed on TORCH_VERSION_MINOR.
#pragma once

#if defined(__cplusplus) && !defined(TCH_COMPAT_SKIP) && defined(__has_include)
#if __has_include(<torch/headeronly/version.h>)
#include <torch/headeronly/version.h>

#if TORCH_VERSION_MAJOR != 2 || TORCH_VERSION_MINOR < 11
#error "tch_compat.h: libtorch older than 2.11 is not supported with torch-sys 0.26.0"
#endif

#if TORCH_VERSION_MINOR != 13
#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <tuple>

namespace torch {
namespace tch_compat {
[[noreturn]] inline void unavailable(const char* name, const char* since) {
  TORCH_CHECK(false, "torch::", name, " is not available in libtorch ", TORCH_VERSION,
              " (it first appeared in libtorch ", since, ")");
  std::abort();  // not reached
}
}  // namespace tch_compat
#define TCH_COMPAT_UNAVAILABLE(name, since) ::torch::tch_compat::unavailable(name, since)

// ---------------------------------------------------------------- 2.11 --
// Ops new in 2.12: stubs. _scaled_dot_product_attention_math_for_mps gained
// `enable_gqa` in 2.12: forward when it is false.
#if TORCH_VERSION_MINOR < 12
inline at::Tensor _flash_attention_forward_no_dropout_inplace(
    at::Tensor& out, const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
    const std::optional<at::Tensor>& cum_seq_q, const std::optional<at::Tensor>& cum_seq_k,
    int64_t max_q, int64_t max_k, double dropout_p, bool is_causal, bool return_debug_mask,
    std::optional<double> scale, std::optional<int64_t> window_size_left,
    std::optional<int64_t> window_size_right, const std::optional<at::Tensor>& seqused_k,
    const std::optional<at::Tensor>& alibi_slopes, const std::optional<at::Tensor>& block_table,
    std::optional<int64_t> num_splits) {
  TCH_COMPAT_UNAVAILABLE("_flash_attention_forward_no_dropout_inplace", "2.12");
}
inline at::Tensor _philox_key_fold_in(const at::Tensor& key, int64_t data) {
  TCH_COMPAT_UNAVAILABLE("_philox_key_fold_in", "2.12");
}
inline at::Tensor _philox_key_split(const at::Tensor& key, int64_t num_splits) {
  TCH_COMPAT_UNAVAILABLE("_philox_key_split", "2.12");
}
inline at::Tensor _philox_normal(const at::Tensor& self, const at::Tensor& key, double mean, double std) {
  TCH_COMPAT_UNAVAILABLE("_philox_normal", "2.12");
}
inline at::Tensor& _philox_normal_(at::Tensor& self, const at::Tensor& key, double mean, double std) {
  TCH_COMPAT_UNAVAILABLE("_philox_normal_", "2.12");
}
inline at::Tensor& _philox_normal_out(at::Tensor& out, const at::Tensor& self, const at::Tensor& key,
                                      double mean, double std) {
  TCH_COMPAT_UNAVAILABLE("_philox_normal_out", "2.12");
}
inline at::Tensor _philox_uniform(const at::Tensor& self, const at::Tensor& key, double low, double high) {
  TCH_COMPAT_UNAVAILABLE("_philox_uniform", "2.12");
}
inline at::Tensor& _philox_uniform_(at::Tensor& self, const at::Tensor& key, double low, double high) {
  TCH_COMPAT_UNAVAILABLE("_philox_uniform_", "2.12");
}
inline at::Tensor& _philox_uniform_out(at::Tensor& out, const at::Tensor& self, const at::Tensor& key,
                                       double low, double high) {
  TCH_COMPAT_UNAVAILABLE("_philox_uniform_out", "2.12");
}
inline at::Tensor _upsample_lanczos2d_aa(const at::Tensor& self, at::IntArrayRef output_size,
                                         bool align_corners, std::optional<double> scales_h,
                                         std::optional<double> scales_w) {
  TCH_COMPAT_UNAVAILABLE("_upsample_lanczos2d_aa", "2.12");
}
inline at::Tensor _upsample_lanczos2d_aa(const at::Tensor& input, at::OptionalIntArrayRef output_size,
                                         bool align_corners, std::optional<at::ArrayRef<double>> scale_factors) {
  TCH_COMPAT_UNAVAILABLE("_upsample_lanczos2d_aa (vec)", "2.12");
}
inline at::Tensor& _upsample_lanczos2d_aa_out(at::Tensor& out, const at::Tensor& self,
                                              at::IntArrayRef output_size, bool align_corners,
                                              std::optional<double> scales_h, std::optional<double> scales_w) {
  TCH_COMPAT_UNAVAILABLE("_upsample_lanczos2d_aa_out", "2.12");
}
inline at::Tensor _upsample_lanczos2d_aa_backward(const at::Tensor& grad_output, at::IntArrayRef output_size,
                                                  at::IntArrayRef input_size, bool align_corners,
                                                  std::optional<double> scales_h, std::optional<double> scales_w) {
  TCH_COMPAT_UNAVAILABLE("_upsample_lanczos2d_aa_backward", "2.12");
}
inline at::Tensor& _upsample_lanczos2d_aa_backward_out(at::Tensor& grad_input, const at::Tensor& grad_output,
                                                       at::IntArrayRef output_size, at::IntArrayRef input_size,
                                                       bool align_corners, std::optional<double> scales_h,
                                                       std::optional<double> scales_w) {
  TCH_COMPAT_UNAVAILABLE("_upsample_lanczos2d_aa_backward_out", "2.12");
}
inline std::tuple<at::Tensor, at::Tensor> _scaled_dot_product_attention_math_for_mps(
    const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
    const std::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
    const std::optional<at::Tensor>& dropout_mask, std::optional<double> scale, bool enable_gqa) {
  TORCH_CHECK(!enable_gqa, "torch::_scaled_dot_product_attention_math_for_mps: enable_gqa=true needs libtorch 2.12+, this is " TORCH_VERSION);
  return at::_scaled_dot_product_attention_math_for_mps(query, key, value, attn_mask, dropout_p, is_causal,
                                                        dropout_mask, scale);
}
#endif  // < 2.12

// ---------------------------------------------------------------- 2.14+ --
// torch.cholesky and torch.qr (deprecated since 1.9) are gone; forward to
// torch.linalg, which has the same semantics.
#if TORCH_VERSION_MINOR >= 14
inline at::Tensor cholesky(const at::Tensor& self, bool upper) {
  return at::linalg_cholesky(self, upper);
}
inline at::Tensor& cholesky_out(at::Tensor& out, const at::Tensor& self, bool upper) {
  return at::linalg_cholesky_out(out, self, upper);
}
inline std::tuple<at::Tensor, at::Tensor> qr(const at::Tensor& self, bool some) {
  return at::linalg_qr(self, some ? "reduced" : "complete");
}
inline std::tuple<at::Tensor&, at::Tensor&> qr_out(at::Tensor& Q, at::Tensor& R, const at::Tensor& self, bool some) {
  return at::linalg_qr_out(Q, R, self, some ? "reduced" : "complete");
}
#endif  // >= 2.14

}  // namespace torch

#undef TCH_COMPAT_UNAVAILABLE
#endif  // TORCH_VERSION_MINOR != 13
#endif  // __has_include(<torch/headeronly/version.h>)
#endif  // __cplusplus && !TCH_COMPAT_SKIP
