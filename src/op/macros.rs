//! `op!`: one declaration per op. See the macro's documentation.

/// Declares one op (`use crate::op::op;`). From the declaration come its schema, a struct of typed
/// arguments, its public Rust function, its C ABI function (`myns_<name>`)
/// and its C header line; the C++ layer registers it from the op table with
/// no code of its own.
///
/// ```ignore
/// myns::op! {
///     /// RMS normalisation over the last dimension: ... (first paragraph:
///     /// the op's user documentation, also Python's docstring).
///     ///
///     /// ```
///     /// // a Rust example, run as a doc test
///     /// ```
///     fn rms_norm(x: Tensor, weight: Tensor, eps: float) -> Tensor;
///     args: RmsNorm;          // the typed arguments: `a.x`, `a.weight`, `a.eps`
///     cpu: cpu;               // fn(&RmsNorm) -> Result<Tensor>
///     cuda: cuda;             // fn(&RmsNorm, &Cuda) -> Result<Tensor>
///     meta: meta;             // fn(&RmsNorm) -> Result<Tensor>, symbolic sizes
///     backward: backward;     // optional: fn(&Backward<RmsNorm>) -> Result<Vec<Option<Tensor>>>
///     saves_outputs: false;   // optional: backward reads the forward's outputs
///     backward_reads: [weight, x if weight]; // optional: the only tensor inputs whose
///                             // data backward reads, each perhaps only when one of the
///                             // inputs after `if` (`a | b`) requires grad; the others
///                             // are not kept (backward sees meta tensors of their size)
///     train_with: rms_norm_train; // optional, e.g.: while autograd records and every
///                             // floating-point input requires grad, this op (same
///                             // arguments) runs instead; its results are this
///                             // op's outputs, then tensors kept for backward
///     autocast: fp32_on_cuda; // optional: lower_precision | fp32 | fp32_on_cuda | linear_loss
/// }
/// ```
///
/// Argument types are the schema's: `Tensor`, `OptTensor` (`Tensor?`),
/// `MutTensor` (`Tensor(a!)`, written in place), `float`, `int`, `str`,
/// `Scalar`; a default follows `=` as a literal (`int ignore_index =
/// -100`, `str reduction = "mean"`). Returns: `Tensor`, `(Tensor, Tensor)`,
/// `(Tensor, Tensor, Tensor)` or `()`. In the Rust function tensors are
/// `&Tensor` (`&mut Tensor`, `Option<&Tensor>`), `float` is `f64`, `int`
/// `i64`, `str` `&str`,
/// `Scalar` anything `Into<myns::types::Scalar>`; in C they are
/// `myns_tensor` (NULL for `None`), `double`, `int64_t`, `const char*`,
/// `double`.
macro_rules! op {
    (
        $(#[doc = $doc:literal])*
        fn $name:ident($($arg:ident: $ty:ident $(= $default:literal)?),* $(,)?) -> $ret:tt;
        args: $Args:ident;
        $(cpu: $cpu:path;)?
        $(cuda: $cuda:path;)?
        meta: $meta:path;
        $(backward: $backward:path;)?
        $(saves_outputs: $save:literal;)?
        $(backward_reads: [$($read:ident $(if $($cond:ident)|+)?),*];)?
        $(train_with: $train:ident;)?
        $(autocast: $autocast:ident;)?
    ) => {
        /// The typed arguments of the op (see its function).
        #[allow(dead_code)]
        pub(crate) struct $Args<'a> {
            $(pub $arg: $crate::op::__op_field!($ty, 'a),)*
            _life: ::std::marker::PhantomData<&'a ()>,
        }

        impl<'a> $Args<'a> {
            /// The op's declaration.
            pub(crate) fn spec() -> &'static $crate::op::OpSpec {
                static SPEC: $crate::op::OpSpec = $crate::op::OpSpec {
                    name: stringify!($name),
                    rust_doc: concat!($($doc, "\n",)* ""),
                    args: &[$($crate::op::ArgDecl {
                        name: stringify!($arg),
                        ty: $crate::op::__op_argtype!($ty),
                        default: $crate::op::__op_default!($($default)?),
                    }),*],
                    returns: $crate::op::__op_returns!($ret),
                    cpu: $crate::op::__op_some!($((|spec: &'static $crate::op::OpSpec, raw: &[$crate::op::RawArg], _: ::std::option::Option<$crate::op::Cuda>|
                        -> $crate::types::Result<::std::vec::Vec<::tch::Tensor>> {
                        let a = $Args::decode(spec, raw)?;
                        Ok($crate::op::Outputs::into_vec($cpu(&a)?))
                    }) as $crate::op::KernelFn)?),
                    cuda: $crate::op::__op_some!($((|spec: &'static $crate::op::OpSpec, raw: &[$crate::op::RawArg], cx: ::std::option::Option<$crate::op::Cuda>|
                        -> $crate::types::Result<::std::vec::Vec<::tch::Tensor>> {
                        let a = $Args::decode(spec, raw)?;
                        let cx = cx.ok_or_else(|| spec.error("no CUDA device"))?;
                        Ok($crate::op::Outputs::into_vec($cuda(&a, &cx)?))
                    }) as $crate::op::KernelFn)?),
                    meta: |spec: &'static $crate::op::OpSpec, raw: &[$crate::op::RawArg], _: ::std::option::Option<$crate::op::Cuda>|
                        -> $crate::types::Result<::std::vec::Vec<::tch::Tensor>> {
                        let a = $Args::decode(spec, raw)?;
                        Ok($crate::op::Outputs::into_vec($meta(&a)?))
                    },
                    backward: $crate::op::__op_some!($((|spec: &'static $crate::op::OpSpec, call: &$crate::op::BackwardCall|
                        -> $crate::types::Result<::std::vec::Vec<::std::option::Option<::tch::Tensor>>> {
                        let a = $Args::decode(spec, call.args)?;
                        $backward(&$crate::op::Backward::new(spec, a, call))
                    }) as $crate::op::BackwardFn)?),
                    save_outputs: $crate::op::__op_bool!($($save)?),
                    backward_reads: $crate::op::__op_some!($(&[$((stringify!($read), &[$($(stringify!($cond)),+)?] as &[&str])),*])?),
                    train_with: $crate::op::__op_some!($(stringify!($train))?),
                    autocast: $crate::op::__op_autocast!($($autocast)?),
                    cache: $crate::op::OpCache::new(),
                };
                &SPEC
            }

            #[allow(unused_assignments, unused_mut, unused_variables)]
            fn decode(spec: &'static $crate::op::OpSpec, raw: &'a [$crate::op::RawArg]) -> $crate::types::Result<Self> {
                let mut i = 0usize;
                Ok($Args {
                    $($arg: {
                        let v = $crate::op::decode::$ty(spec, raw, i)?;
                        i += 1;
                        v
                    },)*
                    _life: ::std::marker::PhantomData,
                })
            }
        }

        $(#[doc = $doc])*
        pub fn $name($($arg: $crate::op::__op_rust_ty!($ty)),*) -> $crate::types::Result<$crate::op::__op_ret_ty!($ret)> {
            let out = $crate::op::dispatch($Args::spec(), &[$($crate::op::__op_value!($ty, $arg)),*])?;
            <$crate::op::__op_ret_ty!($ret) as $crate::op::Outputs>::from_vec($Args::spec(), out)
        }

        $crate::op::__op_c_abi!($name($($arg: $ty),*) -> $ret);
    };
}

/// The C ABI function of an op: one arm per return form (a macro cannot
/// expand to a partial parameter list).
macro_rules! __op_c_abi {
    ($name:ident($($arg:ident: $ty:ident),*) -> Tensor) => {
        const _: () = {
            #[export_name = concat!("myns_", stringify!($name))]
            unsafe extern "C" fn c_abi($($arg: $crate::op::__op_c_ty!($ty),)* out: *mut $crate::op::cabi::myns_tensor) -> ::std::ffi::c_int {
                const F: &str = concat!("myns_", stringify!($name));
                $crate::op::cabi::guard(F, || {
                    let out = $crate::op::cabi::out_slot(out, F, "out")?;
                    $(#[allow(unused_mut)] let mut $arg = $crate::op::__op_c_in!($ty, F, $arg);)*
                    *out = $crate::op::cabi::into_handle($name($($crate::op::__op_c_pass!($ty, $arg)),*)?);
                    Ok(())
                })
            }
        };
    };
    ($name:ident($($arg:ident: $ty:ident),*) -> (Tensor, Tensor)) => {
        const _: () = {
            #[export_name = concat!("myns_", stringify!($name))]
            unsafe extern "C" fn c_abi(
                $($arg: $crate::op::__op_c_ty!($ty),)*
                out0: *mut $crate::op::cabi::myns_tensor,
                out1: *mut $crate::op::cabi::myns_tensor,
            ) -> ::std::ffi::c_int {
                const F: &str = concat!("myns_", stringify!($name));
                $crate::op::cabi::guard(F, || {
                    let out0 = $crate::op::cabi::out_slot(out0, F, "out0")?;
                    let out1 = $crate::op::cabi::out_slot(out1, F, "out1")?;
                    $(#[allow(unused_mut)] let mut $arg = $crate::op::__op_c_in!($ty, F, $arg);)*
                    let (r0, r1) = $name($($crate::op::__op_c_pass!($ty, $arg)),*)?;
                    (*out0, *out1) = ($crate::op::cabi::into_handle(r0), $crate::op::cabi::into_handle(r1));
                    Ok(())
                })
            }
        };
    };
    ($name:ident($($arg:ident: $ty:ident),*) -> (Tensor, Tensor, Tensor)) => {
        const _: () = {
            #[export_name = concat!("myns_", stringify!($name))]
            unsafe extern "C" fn c_abi(
                $($arg: $crate::op::__op_c_ty!($ty),)*
                out0: *mut $crate::op::cabi::myns_tensor,
                out1: *mut $crate::op::cabi::myns_tensor,
                out2: *mut $crate::op::cabi::myns_tensor,
            ) -> ::std::ffi::c_int {
                const F: &str = concat!("myns_", stringify!($name));
                $crate::op::cabi::guard(F, || {
                    let out0 = $crate::op::cabi::out_slot(out0, F, "out0")?;
                    let out1 = $crate::op::cabi::out_slot(out1, F, "out1")?;
                    let out2 = $crate::op::cabi::out_slot(out2, F, "out2")?;
                    $(#[allow(unused_mut)] let mut $arg = $crate::op::__op_c_in!($ty, F, $arg);)*
                    let (r0, r1, r2) = $name($($crate::op::__op_c_pass!($ty, $arg)),*)?;
                    use $crate::op::cabi::into_handle as h;
                    (*out0, *out1, *out2) = (h(r0), h(r1), h(r2));
                    Ok(())
                })
            }
        };
    };
    ($name:ident($($arg:ident: $ty:ident),*) -> ()) => {
        const _: () = {
            #[export_name = concat!("myns_", stringify!($name))]
            unsafe extern "C" fn c_abi($($arg: $crate::op::__op_c_ty!($ty)),*) -> ::std::ffi::c_int {
                const F: &str = concat!("myns_", stringify!($name));
                $crate::op::cabi::guard(F, || {
                    $(#[allow(unused_mut)] let mut $arg = $crate::op::__op_c_in!($ty, F, $arg);)*
                    $name($($crate::op::__op_c_pass!($ty, $arg)),*)?;
                    Ok(())
                })
            }
        };
    };
}

macro_rules! __op_field {
    (Tensor, $l:lifetime) => { $crate::op::TensorArg<$l> };
    (MutTensor, $l:lifetime) => { $crate::op::TensorArg<$l> };
    (OptTensor, $l:lifetime) => { ::std::option::Option<$crate::op::TensorArg<$l>> };
    (float, $l:lifetime) => { f64 };
    (int, $l:lifetime) => { i64 };
    (str, $l:lifetime) => { &$l str };
    (Scalar, $l:lifetime) => { $crate::types::Scalar };
}

macro_rules! __op_argtype {
    (Tensor) => { $crate::op::ArgType::Tensor };
    (MutTensor) => { $crate::op::ArgType::MutTensor };
    (OptTensor) => { $crate::op::ArgType::OptTensor };
    (float) => { $crate::op::ArgType::Float };
    (int) => { $crate::op::ArgType::Int };
    (str) => { $crate::op::ArgType::Str };
    (Scalar) => { $crate::op::ArgType::Scalar };
}

macro_rules! __op_rust_ty {
    (Tensor) => { &::tch::Tensor };
    (MutTensor) => { &mut ::tch::Tensor };
    (OptTensor) => { ::std::option::Option<&::tch::Tensor> };
    (float) => { f64 };
    (int) => { i64 };
    (str) => { &str };
    (Scalar) => { impl ::std::convert::Into<$crate::types::Scalar> };
}

macro_rules! __op_value {
    (Tensor, $a:ident) => { $crate::op::Value::Tensor($a) };
    (MutTensor, $a:ident) => { $crate::op::Value::Tensor(&*$a) };
    (OptTensor, $a:ident) => { $crate::op::Value::OptTensor($a) };
    (float, $a:ident) => { $crate::op::Value::Float($a) };
    (int, $a:ident) => { $crate::op::Value::Int($a) };
    (str, $a:ident) => { $crate::op::Value::Str($a) };
    (Scalar, $a:ident) => { $crate::op::Value::Scalar($a.into()) };
}

macro_rules! __op_ret_ty {
    (Tensor) => { ::tch::Tensor };
    ((Tensor, Tensor)) => { (::tch::Tensor, ::tch::Tensor) };
    ((Tensor, Tensor, Tensor)) => { (::tch::Tensor, ::tch::Tensor, ::tch::Tensor) };
    (()) => { () };
}

macro_rules! __op_returns {
    (Tensor) => { $crate::op::Returns::One };
    ((Tensor, Tensor)) => { $crate::op::Returns::Two };
    ((Tensor, Tensor, Tensor)) => { $crate::op::Returns::Three };
    (()) => { $crate::op::Returns::Nothing };
}

macro_rules! __op_c_ty {
    (Tensor) => { $crate::op::cabi::myns_tensor };
    (MutTensor) => { $crate::op::cabi::myns_tensor };
    (OptTensor) => { $crate::op::cabi::myns_tensor };
    (float) => { f64 };
    (int) => { i64 };
    (str) => { *const ::std::ffi::c_char };
    (Scalar) => { f64 };
}

macro_rules! __op_c_in {
    (Tensor, $f:ident, $a:ident) => { $crate::op::cabi::borrow($a, $f, stringify!($a))? };
    (MutTensor, $f:ident, $a:ident) => { $crate::op::cabi::borrow($a, $f, stringify!($a))? };
    (OptTensor, $f:ident, $a:ident) => { $crate::op::cabi::borrow_opt($a, $f, stringify!($a))? };
    (str, $f:ident, $a:ident) => { $crate::op::cabi::c_str($a, $f, stringify!($a))? };
    (Scalar, $f:ident, $a:ident) => { $crate::op::cabi::c_scalar($a) };
    ($t:ident, $f:ident, $a:ident) => { $a };
}

macro_rules! __op_c_pass {
    (Tensor, $a:ident) => { &*$a };
    (MutTensor, $a:ident) => { &mut *$a };
    (OptTensor, $a:ident) => { $a.as_deref() };
    ($t:ident, $a:ident) => { $a };
}

macro_rules! __op_default {
    () => { None };
    ($d:literal) => { Some(stringify!($d)) };
}

macro_rules! __op_some {
    () => { None };
    ($e:expr) => { Some($e) };
}

macro_rules! __op_bool {
    () => { false };
    ($b:literal) => { $b };
}

macro_rules! __op_autocast {
    () => { $crate::op::Autocast::None };
    (lower_precision) => { $crate::op::Autocast::LowerPrecision };
    (fp32) => { $crate::op::Autocast::Fp32 };
    (fp32_on_cuda) => { $crate::op::Autocast::Fp32OnCuda };
    (linear_loss) => { $crate::op::Autocast::LinearLoss };
}

pub(crate) use {
    __op_argtype, __op_autocast, __op_bool, __op_c_abi, __op_c_in, __op_c_pass, __op_c_ty, __op_default, __op_field,
    __op_rust_ty, __op_ret_ty, __op_returns, __op_some, __op_value, op,
};
