use rayon::prelude::*;
use rug::integer::Order;
use rug::Integer;

use crate::ArithError;

/// An odd modulus `p` with the operations every modp group needs.
#[derive(Clone, Debug)]
pub struct Modulus {
    p: Integer,
    byte_len: usize,
    /// Montgomery constants, computed on first use (an inversion modulo 2^(64n): tens of
    /// microseconds, not worth paying per call) and shared by clones.
    mont: std::sync::Arc<std::sync::OnceLock<crate::MontContext>>,
    /// AVX-512 IFMA constants (`ifma`), made on first use when the CPU has the instructions.
    #[cfg(target_arch = "x86_64")]
    ifma: std::sync::Arc<std::sync::OnceLock<Option<crate::ifma::IfmaContext>>>,
}

impl PartialEq for Modulus {
    fn eq(&self, other: &Self) -> bool {
        self.p == other.p
    }
}

impl Eq for Modulus {}

impl Modulus {
    /// Wraps an odd modulus `p >= 3`.
    pub fn new(p: Integer) -> Result<Self, ArithError> {
        if p < 3 || p.is_even() {
            return Err(ArithError::BadModulus);
        }
        crate::gmp_kernels::tune();
        let byte_len = p.significant_bits().div_ceil(8) as usize;
        Ok(Self {
            p,
            byte_len,
            mont: Default::default(),
            #[cfg(target_arch = "x86_64")]
            ifma: Default::default(),
        })
    }

    /// The Montgomery constants of this modulus, made on first use.
    pub(crate) fn mont(&self) -> Result<&crate::MontContext, ArithError> {
        if let Some(m) = self.mont.get() {
            return Ok(m);
        }
        let made = crate::MontContext::new(self)?;
        Ok(self.mont.get_or_init(|| made))
    }

    pub fn value(&self) -> &Integer {
        &self.p
    }

    pub fn bits(&self) -> u32 {
        self.p.significant_bits()
    }

    /// Length of the fixed-width big-endian encoding of a residue.
    pub fn byte_len(&self) -> usize {
        self.byte_len
    }

    /// `x mod p` in `[0, p)`.
    pub fn reduce(&self, x: &Integer) -> Integer {
        let mut r = Integer::from(x % &self.p);
        if r < 0 {
            r += &self.p;
        }
        r
    }

    pub fn mul(&self, a: &Integer, b: &Integer) -> Integer {
        let mut r = Integer::from(a * b);
        r %= &self.p;
        r
    }

    /// `a <- a * b mod p`, reusing `a`'s storage.
    pub fn mul_assign(&self, a: &mut Integer, b: &Integer) {
        *a *= b;
        *a %= &self.p;
    }

    pub fn square_assign(&self, a: &mut Integer) {
        a.square_mut();
        *a %= &self.p;
    }

    pub fn inverse(&self, a: &Integer) -> Result<Integer, ArithError> {
        a.invert_ref(&self.p)
            .map(Integer::from)
            .ok_or(ArithError::NotInvertible("value"))
    }

    /// `base^exp mod p` with a public exponent (variable time): on AVX-512 IFMA (`ifma`, about a
    /// quarter of GMP's time at 2048 bits) for a modulus of 416 to 4,096 bits and an exponent of 96
    /// bits or more when the CPU has it, else GMP's `mpz_powm`. `VOTUM_NO_IFMA=1` keeps GMP.
    pub fn pow(&self, base: &Integer, exp: &Integer) -> Result<Integer, ArithError> {
        if *exp < 0 {
            return Err(ArithError::NegativeExponent);
        }
        #[cfg(target_arch = "x86_64")]
        if exp.significant_bits() >= 96 {
            if let Some(ctx) = self
                .ifma
                .get_or_init(|| crate::ifma::IfmaContext::new(&self.p))
            {
                return Ok(ctx.pow(base, exp));
            }
        }
        // pow_mod_ref only fails for a negative exponent without inverse, excluded above.
        base.pow_mod_ref(exp, &self.p)
            .map(Integer::from)
            .ok_or(ArithError::NegativeExponent)
    }

    /// Two powers with public exponents, `[b0^e0, b1^e1] mod p`: on AVX-512 IFMA the two are computed
    /// together, their products interleaved (about 0.6 of two single powers' time); else two
    /// [`Modulus::pow`].
    pub fn pow2(
        &self,
        bases: [&Integer; 2],
        exps: [&Integer; 2],
    ) -> Result<[Integer; 2], ArithError> {
        if *exps[0] < 0 || *exps[1] < 0 {
            return Err(ArithError::NegativeExponent);
        }
        #[cfg(target_arch = "x86_64")]
        if exps[0].significant_bits() >= 96 && exps[1].significant_bits() >= 96 {
            if let Some(ctx) = self
                .ifma
                .get_or_init(|| crate::ifma::IfmaContext::new(&self.p))
            {
                return Ok(ctx.pow2(bases, exps));
            }
        }
        Ok([self.pow(bases[0], exps[0])?, self.pow(bases[1], exps[1])?])
    }

    /// `base^exp mod p` in time and memory-access pattern independent of `exp` (apart from its
    /// length in 64-bit limbs, as with GMP's `mpz_powm_sec`); for secret exponents such as
    /// private keys and nonces. The base is public. A constant-time fixed window on Montgomery
    /// products (`secret_base`), about 0.96× the time of `mpz_powm_sec` at 4096 bits (`make bench-arith`);
    /// `make ct-check` runs it under valgrind with the exponent marked secret.
    #[cfg(feature = "secret")]
    pub fn pow_secret(&self, base: &Integer, exp: &Integer) -> Result<Integer, ArithError> {
        crate::secret_base::pow_secret_public_base(self.mont()?, self, base, exp)
    }

    /// Many independent `base_i^exp_i`, spread over the rayon pool.
    pub fn pow_many(
        &self,
        bases: &[Integer],
        exps: &[Integer],
    ) -> Result<Vec<Integer>, ArithError> {
        if bases.len() != exps.len() {
            return Err(ArithError::LengthMismatch {
                bases: bases.len(),
                exponents: exps.len(),
            });
        }
        bases
            .par_iter()
            .zip(exps.par_iter())
            .map(|(b, e)| self.pow(b, e))
            .collect()
    }

    /// Fixed-width big-endian encoding of a residue in `[0, p)`.
    pub fn to_bytes(&self, x: &Integer) -> Vec<u8> {
        to_fixed_be(x, self.byte_len)
    }

    /// Decodes exactly `byte_len()` big-endian bytes into a residue `< p`.
    pub fn from_bytes(&self, bytes: &[u8]) -> Result<Integer, ArithError> {
        if bytes.len() != self.byte_len {
            return Err(ArithError::WrongLength {
                expected: self.byte_len,
                got: bytes.len(),
            });
        }
        let x = Integer::from_digits(bytes, Order::Msf);
        if x >= self.p {
            return Err(ArithError::OutOfRange { what: "residue" });
        }
        Ok(x)
    }
}

/// Big-endian encoding of a non-negative integer in exactly `len` bytes (left-padded with zeros).
/// The caller guarantees `0 <= x < 256^len`.
pub fn to_fixed_be(x: &Integer, len: usize) -> Vec<u8> {
    let digits = x.to_digits::<u8>(Order::Msf);
    let mut out = vec![0u8; len.saturating_sub(digits.len())];
    let skip = digits.len().saturating_sub(len);
    out.extend_from_slice(&digits[skip..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_even_and_tiny_moduli() {
        assert_eq!(Modulus::new(Integer::from(10)), Err(ArithError::BadModulus));
        assert_eq!(Modulus::new(Integer::from(1)), Err(ArithError::BadModulus));
        assert!(Modulus::new(Integer::from(11)).is_ok());
    }

    #[test]
    fn fixed_width_roundtrip_and_range() {
        let m = Modulus::new(Integer::from(65_521)).unwrap();
        assert_eq!(m.byte_len(), 2);
        assert_eq!(m.to_bytes(&Integer::from(5)), vec![0, 5]);
        assert_eq!(m.from_bytes(&[0, 5]).unwrap(), 5);
        assert_eq!(
            m.from_bytes(&[0xff, 0xf1]),
            Err(ArithError::OutOfRange { what: "residue" })
        );
        assert_eq!(
            m.from_bytes(&[5]),
            Err(ArithError::WrongLength {
                expected: 2,
                got: 1
            })
        );
    }

    #[test]
    #[cfg(feature = "secret")]
    fn secret_and_public_pow_agree() {
        let m = Modulus::new(Integer::from(1_000_003)).unwrap();
        for e in [0u32, 1, 2, 77, 1_000_002] {
            let e = Integer::from(e);
            assert_eq!(
                m.pow(&Integer::from(5), &e).unwrap(),
                m.pow_secret(&Integer::from(5), &e).unwrap()
            );
        }
        assert_eq!(
            m.pow(&Integer::from(5), &Integer::from(-1)),
            Err(ArithError::NegativeExponent)
        );
    }
}
