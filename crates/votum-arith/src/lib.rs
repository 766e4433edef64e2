//! Modular big-integer arithmetic on GMP (through `rug`).
//!
//! Everything here works on plain `rug::Integer` values reduced modulo an odd modulus `p`.
//! Groups (`votum-group`) build on it; nothing in this crate knows about protocols.
//!
//! * [`Modulus`]: exponentiation (`mpz_powm`, or AVX-512 IFMA where the CPU has it), constant-time exponentiation for secret
//!   exponents (`pow_secret`: a fixed window on constant-time Montgomery products, checked by
//!   `make ct-check`; it replaced `mpz_powm_sec`), fixed-width big-endian encoding.
//! * [`FixedBaseTable`]: windowed precomputation for a base that is raised to many exponents
//!   (the generator, an election public key).
//! * [`multi_pow`]: products of powers (Straus for few bases, Pippenger buckets for many).
//! * `MontContext` (crate-private): Montgomery products on GMP's `mpn` layer for long product
//!   chains. Its products write through raw pointers with lengths it trusts its callers for, so no
//!   code outside this crate can call them (the example at the end must not compile).
//! * [`SecretBaseTable`]: constant-time powers of one base to several secret exponents.
//! * [`wipe_integer`]: zeroizing integers that held secrets.
//!
//! Feature `secret` (on by default) compiles the constant-time code for secret exponents
//! ([`Modulus::pow_secret`], `SecretBaseTable`); the independent verifier builds without it.
//!
//! * [`gmp_kernels`]: GMP's fast kernels on x86-64 CPUs its fat build does not recognise.
//! * [`ifma`]: public-exponent powers on AVX-512 IFMA (docs/adr/0011), behind [`Modulus::pow`] and
//!   [`Modulus::pow2`] when the CPU has the instructions.
//!
//! This is the only crate with `unsafe` code (`mont`, `secret`, `secret_base`, `gmp_kernels` and
//! `ifma`).
//! * Batch entry points spread over cores with rayon.
//!
//! ```compile_fail
//! use votum_arith::MontContext;
//! ```

mod fixed_base;
pub mod gmp_kernels;
#[cfg(target_arch = "x86_64")]
pub mod ifma;
mod modulus;
mod mont;
mod multiexp;
mod secret;
#[cfg(feature = "secret")]
mod secret_base;

pub use fixed_base::FixedBaseTable;
pub use modulus::{to_fixed_be, Modulus};
pub(crate) use mont::MontContext;
pub use multiexp::{multi_pow, multi_pow_parallel};
pub use rug::integer::{IsPrime, Order};
pub use rug::Integer;
pub use secret::wipe_integer;
#[cfg(feature = "secret")]
pub use secret_base::SecretBaseTable;

/// Errors of the arithmetic layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArithError {
    #[error("modulus must be odd and at least 3")]
    BadModulus,
    #[error("exponent must be non-negative")]
    NegativeExponent,
    #[error("{what} is out of range")]
    OutOfRange { what: &'static str },
    #[error("expected {expected} bytes, got {got}")]
    WrongLength { expected: usize, got: usize },
    #[error("{bases} bases but {exponents} exponents")]
    LengthMismatch { bases: usize, exponents: usize },
    #[error("{0} has no inverse modulo the modulus")]
    NotInvertible(&'static str),
}
