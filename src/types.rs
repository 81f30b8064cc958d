//! The leaf of the crate: element types, devices and the one error type.
//! Every other module may use these; this module uses none of them.

use std::fmt;

/// The floating-point element types myns kernels support, with c10's
/// ScalarType numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    F16,
    F32,
    F64,
    BF16,
}

impl DType {
    /// The dtype of a c10 ScalarType number, if myns supports it.
    pub fn from_raw(raw: i8) -> Option<DType> {
        ScalarType::from_raw(raw).and_then(ScalarType::float)
    }
    /// The c10 ScalarType number.
    pub fn raw(self) -> i8 {
        self.scalar_type().raw()
    }
    pub fn scalar_type(self) -> ScalarType {
        match self {
            DType::F16 => ScalarType::Half,
            DType::F32 => ScalarType::Float,
            DType::F64 => ScalarType::Double,
            DType::BF16 => ScalarType::BFloat16,
        }
    }
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::F16 | DType::BF16 => 2,
            DType::F32 => 4,
            DType::F64 => 8,
        }
    }
    /// The type half types accumulate in (float32), else the type itself.
    pub fn acc(self) -> DType {
        match self {
            DType::F16 | DType::BF16 => DType::F32,
            d => d,
        }
    }
    pub fn kind(self) -> tch::Kind {
        self.scalar_type().kind()
    }
}

/// Every c10 ScalarType myns names: the one table of numbers, Python names
/// and tch kinds (error messages, the C ABI's dtype codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    UInt8,
    Int8,
    Int16,
    Int,
    Long,
    Half,
    Float,
    Double,
    ComplexHalf,
    ComplexFloat,
    ComplexDouble,
    Bool,
    QInt8,
    QUInt8,
    QInt32,
    BFloat16,
    Float8E5M2,
    Float8E4M3Fn,
    Float8E5M2Fnuz,
    Float8E4M3Fnuz,
}

/// (variant, c10 number, Python name, tch kind).
const SCALAR_TYPES: [(ScalarType, i8, &str, tch::Kind); 20] = [
    (ScalarType::UInt8, 0, "torch.uint8", tch::Kind::Uint8),
    (ScalarType::Int8, 1, "torch.int8", tch::Kind::Int8),
    (ScalarType::Int16, 2, "torch.int16", tch::Kind::Int16),
    (ScalarType::Int, 3, "torch.int32", tch::Kind::Int),
    (ScalarType::Long, 4, "torch.int64", tch::Kind::Int64),
    (ScalarType::Half, 5, "torch.float16", tch::Kind::Half),
    (ScalarType::Float, 6, "torch.float32", tch::Kind::Float),
    (ScalarType::Double, 7, "torch.float64", tch::Kind::Double),
    (ScalarType::ComplexHalf, 8, "torch.complex32", tch::Kind::ComplexHalf),
    (ScalarType::ComplexFloat, 9, "torch.complex64", tch::Kind::ComplexFloat),
    (ScalarType::ComplexDouble, 10, "torch.complex128", tch::Kind::ComplexDouble),
    (ScalarType::Bool, 11, "torch.bool", tch::Kind::Bool),
    (ScalarType::QInt8, 12, "torch.qint8", tch::Kind::QInt8),
    (ScalarType::QUInt8, 13, "torch.quint8", tch::Kind::QUInt8),
    (ScalarType::QInt32, 14, "torch.qint32", tch::Kind::QInt32),
    (ScalarType::BFloat16, 15, "torch.bfloat16", tch::Kind::BFloat16),
    (ScalarType::Float8E5M2, 23, "torch.float8_e5m2", tch::Kind::Float8e5m2),
    (ScalarType::Float8E4M3Fn, 24, "torch.float8_e4m3fn", tch::Kind::Float8e4m3fn),
    (ScalarType::Float8E5M2Fnuz, 25, "torch.float8_e5m2fnuz", tch::Kind::Float8e5m2fnuz),
    (ScalarType::Float8E4M3Fnuz, 26, "torch.float8_e4m3fnuz", tch::Kind::Float8e4m3fnuz),
];

impl ScalarType {
    fn row(self) -> &'static (ScalarType, i8, &'static str, tch::Kind) {
        &SCALAR_TYPES[SCALAR_TYPES.iter().position(|r| r.0 == self).unwrap_or(0)]
    }
    pub fn from_raw(raw: i8) -> Option<ScalarType> {
        SCALAR_TYPES.iter().find(|r| r.1 == raw).map(|r| r.0)
    }
    pub fn from_kind(kind: tch::Kind) -> ScalarType {
        SCALAR_TYPES.iter().find(|r| r.3 == kind).map_or(ScalarType::Float, |r| r.0)
    }
    pub fn raw(self) -> i8 {
        self.row().1
    }
    /// Python's name, e.g. `torch.float32`.
    pub fn name(self) -> &'static str {
        self.row().2
    }
    pub fn kind(self) -> tch::Kind {
        self.row().3
    }
    /// The myns float dtype, if this is one.
    pub fn float(self) -> Option<DType> {
        Some(match self {
            ScalarType::Half => DType::F16,
            ScalarType::Float => DType::F32,
            ScalarType::Double => DType::F64,
            ScalarType::BFloat16 => DType::BF16,
            _ => return None,
        })
    }
    pub fn is_int(self) -> bool {
        matches!(self, ScalarType::UInt8 | ScalarType::Int8 | ScalarType::Int16 | ScalarType::Int | ScalarType::Long)
    }
}

/// Python's name of a raw c10 ScalarType number (`torch.float32`), or
/// `dtype #<n>` for one this table does not know.
pub fn dtype_name(raw: i8) -> String {
    ScalarType::from_raw(raw).map_or_else(|| format!("dtype #{raw}"), |s| s.name().to_string())
}

/// Where a tensor lives, as far as myns cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Device {
    Cpu,
    Cuda(usize),
    Meta,
    /// A device myns has no kernels for (named by torch in messages).
    Other,
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(i) => write!(f, "cuda:{i}"),
            Device::Meta => f.write_str("meta"),
            Device::Other => f.write_str("an unsupported device"),
        }
    }
}

impl Device {
    pub fn tch(self) -> Option<tch::Device> {
        match self {
            Device::Cpu => Some(tch::Device::Cpu),
            Device::Cuda(i) => Some(tch::Device::Cuda(i)),
            _ => None,
        }
    }
}

/// A number argument that keeps whether it is an integer, as PyTorch's
/// `Scalar` does: `x * 2` stays an integer tensor, `x * 2.5` does not.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Int(i64),
    Float(f64),
}

impl Scalar {
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
        }
    }
    /// The value as an integer, if it is one (an integral float counts).
    pub fn to_i64(self) -> Option<i64> {
        match self {
            Scalar::Int(i) => Some(i),
            Scalar::Float(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => Some(f as i64),
            Scalar::Float(_) => None,
        }
    }
    pub fn is_int(self) -> bool {
        matches!(self, Scalar::Int(_))
    }
    pub fn tch(self) -> tch::Scalar {
        match self {
            Scalar::Int(i) => tch::Scalar::int(i),
            Scalar::Float(f) => tch::Scalar::float(f),
        }
    }
}

impl From<f64> for Scalar {
    fn from(f: f64) -> Scalar {
        Scalar::Float(f)
    }
}
impl From<i64> for Scalar {
    fn from(i: i64) -> Scalar {
        Scalar::Int(i)
    }
}
impl From<i32> for Scalar {
    fn from(i: i32) -> Scalar {
        Scalar::Int(i as i64)
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Float(x) => write!(f, "{x}"),
        }
    }
}

/// What went wrong, as PyTorch classifies it: each kind reaches Python as
/// the exception PyTorch raises in the same situation, and C as its own
/// status code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Anything else (shapes, dtypes that disagree, devices that disagree,
    /// CUDA failures): `RuntimeError`.
    Runtime,
    /// The caching allocator or a launch ran out of device memory:
    /// `torch.OutOfMemoryError`.
    OutOfMemory,
    /// A dimension or index out of range: `IndexError`.
    Index,
    /// A device or dtype myns has no kernel for: `NotImplementedError`.
    NotImplemented,
    /// A bad value (a negative `eps`, an unknown `reduction`): `ValueError`.
    Value,
    /// An argument of the wrong type: `TypeError`.
    Type,
    /// A bug in myns (a caught panic): `RuntimeError`.
    Internal,
}

impl ErrorKind {
    /// The Python exception class PyTorch raises for this kind.
    pub fn python_class(self) -> &'static str {
        match self {
            ErrorKind::Runtime | ErrorKind::Internal => "RuntimeError",
            ErrorKind::OutOfMemory => "torch.OutOfMemoryError",
            ErrorKind::Index => "IndexError",
            ErrorKind::NotImplemented => "NotImplementedError",
            ErrorKind::Value => "ValueError",
            ErrorKind::Type => "TypeError",
        }
    }
}

/// The one error type of myns: a kind and a message that names the op and
/// the argument (`myns::matmul: argument `b` has 2 rows but ...`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error { kind, message: message.into() }
    }
    pub fn runtime(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Runtime, message)
    }
    pub fn value(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Value, message)
    }
    pub fn index(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Index, message)
    }
    pub fn not_implemented(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::NotImplemented, message)
    }
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
    pub fn message(&self) -> &str {
        &self.message
    }
    /// The same error with `prefix: ` in front of its message.
    pub fn context(self, prefix: impl fmt::Display) -> Error {
        Error { kind: self.kind, message: format!("{prefix}: {}", self.message) }
    }

    /// Classifies a message from torch (through tch or the dispatcher):
    /// the tag `csrc/` puts in front of a c10 error's message names its
    /// class; untagged messages (tch's) are read for an out-of-memory error.
    pub fn from_torch(message: &str) -> Error {
        let message = trim_backtrace(message);
        for kind in TAGGED {
            if let Some(rest) = message.strip_prefix(tag(kind)) {
                return Error::new(kind, rest);
            }
        }
        let oom = message.contains("out of memory") || message.contains("OutOfMemoryError");
        Error::new(if oom { ErrorKind::OutOfMemory } else { ErrorKind::Runtime }, message)
    }
}

/// Kinds `csrc/` tags c10 errors with (see `from_torch`).
const TAGGED: [ErrorKind; 5] =
    [ErrorKind::OutOfMemory, ErrorKind::Index, ErrorKind::NotImplemented, ErrorKind::Value, ErrorKind::Type];

/// The tag `csrc/bridge.h` puts in front of a c10 error of this kind.
fn tag(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::OutOfMemory => "[myns:oom] ",
        ErrorKind::Index => "[myns:index] ",
        ErrorKind::NotImplemented => "[myns:notimpl] ",
        ErrorKind::Value => "[myns:value] ",
        ErrorKind::Type => "[myns:type] ",
        _ => "",
    }
}

/// A c10 message without the C++ backtrace after it, which means nothing to
/// a Python, Rust or C user.
fn trim_backtrace(message: &str) -> &str {
    let cut = message.find("\nException raised from").or_else(|| message.find("Exception raised from"));
    cut.map_or(message, |i| &message[..i]).trim_end()
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<tch::TchError> for Error {
    fn from(e: tch::TchError) -> Error {
        match e {
            tch::TchError::Torch(m) => Error::from_torch(&m),
            other => Error::runtime(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtype_table_round_trips() {
        for d in [DType::F16, DType::F32, DType::F64, DType::BF16] {
            assert_eq!(DType::from_raw(d.raw()), Some(d));
            assert_eq!(ScalarType::from_kind(d.kind()).float(), Some(d));
        }
        assert_eq!(DType::from_raw(3), None);
        assert_eq!(dtype_name(15), "torch.bfloat16");
        assert_eq!(dtype_name(99), "dtype #99");
        for row in SCALAR_TYPES {
            assert_eq!(ScalarType::from_raw(row.1), Some(row.0));
            assert_eq!(ScalarType::from_kind(row.3), row.0);
        }
    }

    #[test]
    fn torch_messages_keep_their_class() {
        let e = Error::from_torch("[myns:index] Dimension out of range\nException raised from foo at bar.cpp:1");
        assert_eq!((e.kind(), e.message()), (ErrorKind::Index, "Dimension out of range"));
        assert_eq!(Error::from_torch("CUDA out of memory. Tried to allocate 2.00 GiB").kind(), ErrorKind::OutOfMemory);
        assert_eq!(Error::from_torch("shape mismatch").kind(), ErrorKind::Runtime);
        for kind in TAGGED {
            assert_eq!(Error::from_torch(&format!("{}x", tag(kind))).kind(), kind);
        }
    }
}
