use std::fmt;
use std::sync::{Arc, OnceLock};

use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
#[cfg(feature = "secret")]
use votum_arith::SecretBaseTable;
use votum_arith::{
    multi_pow, multi_pow_parallel, wipe_integer, FixedBaseTable, Integer, Modulus, Order,
};
use zeroize::Zeroize;

use crate::params;
#[cfg(feature = "secret")]
use crate::Secret;
use crate::{Group, GroupError, GroupId};

/// An element of the order-q subgroup of Z_p^*, as an integer in `[1, p)`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ModElement(pub(crate) Integer);

impl ModElement {
    pub fn value(&self) -> &Integer {
        &self.0
    }
}

/// An integer in `[1, p)` read from outside, not yet known to be in the order-q subgroup. It has no
/// group operations. It becomes a [`ModElement`] through the subgroup test
/// ([`ModpGroup::check`], [`ModpGroup::check_all`]), or through one of the conversions below, each
/// named for the reason membership holds without the test; a caller cannot forget the question:
///
/// ```compile_fail
/// use votum_group::{Group, Integer, ModpGroup};
/// let g = ModpGroup::eg_4096();
/// let x = g.element_in_range(&Integer::from(2)).unwrap();
/// let _ = g.op(&x, &x); // an InRange is not an element
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct InRange(Integer);

impl InRange {
    pub fn value(&self) -> &Integer {
        &self.0
    }

    /// Whether this is `element` (a value the caller computed itself and only compares with).
    pub fn matches(&self, element: &ModElement) -> bool {
        self.0 == element.0
    }

    /// For a value a zero-knowledge proof binds: a proof's commitment `a` (the verified equation
    /// `g^v = a·α^c`, with `g` and `α` members, makes `a = g^v·α^-c` a member), or a decryption
    /// share whose Chaum–Pedersen proof (with its Jacobi symbol checked) implies membership
    /// (spec/62, spec/64.4). The proof must be verified before the element is used otherwise.
    pub fn bound_by_proof(self) -> ModElement {
        ModElement(self.0)
    }

    /// For a value inside a structure whose own type says it is unchecked (votum-eg's
    /// `UncheckedBallot`): the obligation to test membership moves to that type.
    pub fn into_unchecked_part(self) -> ModElement {
        ModElement(self.0)
    }
}

impl fmt::Debug for InRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hex = self.0.to_string_radix(16);
        write!(f, "InRange({}…)", &hex[..hex.len().min(16)])
    }
}

impl fmt::Debug for ModElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hex = self.0.to_string_radix(16);
        write!(f, "ModElement({}…)", &hex[..hex.len().min(16)])
    }
}

/// An integer modulo q, in `[0, q)`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ModScalar(pub(crate) Integer);

impl ModScalar {
    pub fn value(&self) -> &Integer {
        &self.0
    }
}

impl fmt::Debug for ModScalar {
    // Scalars are often secrets (nonces, keys); never print their value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ModScalar(<redacted>)")
    }
}

impl Zeroize for ModScalar {
    fn zeroize(&mut self) {
        wipe_integer(&mut self.0);
    }
}

/// Every scalar wipes its limbs when dropped: nonces, keys and shares are scalars, and wiping
/// by hand at each use missed some (issue 45, finding 12). Public scalars pay a memset of at most
/// 512 bytes.
impl Drop for ModScalar {
    fn drop(&mut self) {
        wipe_integer(&mut self.0);
    }
}

struct Inner {
    id: GroupId,
    modulus: Modulus,
    q: Integer,
    cofactor: Integer,
    g: ModElement,
    /// Subgroup of quadratic residues of a safe prime: membership is a Jacobi symbol.
    quadratic_residues: bool,
    scalar_len: usize,
    g_table: OnceLock<FixedBaseTable>,
    /// Constant-time comb of g, for secret exponents (built serially on first use).
    #[cfg(feature = "secret")]
    g_secret_table: OnceLock<SecretBaseTable>,
}

/// The order-q subgroup of Z_p^* for a prime p = r·q + 1.
#[derive(Clone)]
pub struct ModpGroup(Arc<Inner>);

impl fmt::Debug for ModpGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ModpGroup({})", self.0.id)
    }
}

impl PartialEq for ModpGroup {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id
    }
}

/// Whether `parts` joined are a non-empty string of hex digits. Evaluated at compile time for every
/// group constant (below), so a typo in one fails the build instead of becoming a wrong number.
const fn is_hex(parts: &[&str]) -> bool {
    let mut digits = 0;
    let mut i = 0;
    while i < parts.len() {
        let bytes = parts[i].as_bytes();
        let mut j = 0;
        while j < bytes.len() {
            if !bytes[j].is_ascii_hexdigit() {
                return false;
            }
            j += 1;
        }
        digits += bytes.len();
        i += 1;
    }
    digits > 0
}

const _: () = assert!(is_hex(params::EG_P));
const _: () = assert!(is_hex(&[params::EG_Q]));
const _: () = assert!(is_hex(params::EG_R));
const _: () = assert!(is_hex(params::EG_G));
const _: () = assert!(is_hex(params::EG2_P));
const _: () = assert!(is_hex(params::EG2_R));
const _: () = assert!(is_hex(params::EG2_G));
const _: () = assert!(is_hex(params::RFC3526_2048_P));
const _: () = assert!(is_hex(params::RFC3526_3072_P));
const _: () = assert!(is_hex(params::RFC2409_1024_P));
const _: () = assert!(is_hex(params::CHV_ID_1024_P));
const _: () = assert!(is_hex(&[params::CHV_ID_1024_Q]));
const _: () = assert!(is_hex(params::CHV_ID_1024_K));
const _: () = assert!(is_hex(params::CHV_ID_1024_G));
const _: () = assert!(is_hex(params::CHV_ID_2048_P));
const _: () = assert!(is_hex(&[params::CHV_ID_2048_Q]));
const _: () = assert!(is_hex(params::CHV_ID_2048_K));
const _: () = assert!(is_hex(&[params::EG2_TOY_P, params::EG2_TOY_Q]));
const _: () = assert!(is_hex(&[params::EG2_TOY_R, params::EG2_TOY_G]));
const _: () = assert!(is_hex(params::CHV_ID_2048_G));

/// A group constant. `is_hex` holds for each at compile time, and a string of hex digits always
/// parses, so the fallback to 0 cannot be taken.
fn hex(parts: &[&str]) -> Integer {
    let joined: String = parts.concat();
    Integer::from_str_radix(&joined, 16).unwrap_or_default()
}

static EG_4096: OnceLock<ModpGroup> = OnceLock::new();
static EG2_4096: OnceLock<ModpGroup> = OnceLock::new();
static EG2_3072: OnceLock<ModpGroup> = OnceLock::new();
static EG2_TOY: OnceLock<ModpGroup> = OnceLock::new();
static RFC3526_2048: OnceLock<ModpGroup> = OnceLock::new();
static RFC3526_3072: OnceLock<ModpGroup> = OnceLock::new();
static RFC2409_1024: OnceLock<ModpGroup> = OnceLock::new();
static CHV_ID_1024: OnceLock<ModpGroup> = OnceLock::new();
static CHV_ID_2048: OnceLock<ModpGroup> = OnceLock::new();

impl ModpGroup {
    /// ElectionGuard 1.0 standard parameters (p 4096 bits, q = 2^256 − 189).
    pub fn eg_4096() -> Self {
        EG_4096
            .get_or_init(|| {
                let p = hex(params::EG_P);
                let q = hex(&[params::EG_Q]);
                Self::build(
                    GroupId::Eg4096,
                    p,
                    q,
                    hex(params::EG_R),
                    hex(params::EG_G),
                    false,
                )
            })
            .clone()
    }

    /// ElectionGuard 2.x standard parameters (spec/65.1): p of 4096 bits with the bits of ln 2 in its
    /// middle, the same q = 2^256 − 189 as 1.0, g = 2^r mod p.
    pub fn eg2_4096() -> Self {
        EG2_4096
            .get_or_init(|| {
                Self::build(
                    GroupId::Eg2_4096,
                    hex(params::EG2_P),
                    hex(&[params::EG_Q]),
                    hex(params::EG2_R),
                    hex(params::EG2_G),
                    false,
                )
            })
            .clone()
    }

    /// ElectionGuard 2.1's reduced parameters (spec/66.1, the 2.1.0 specification's appendix): p of 3072
    /// bits built as the 4096-bit one is, the same q, g = 2^r mod p.
    pub fn eg2_3072() -> Self {
        EG2_3072
            .get_or_init(|| {
                Self::build(
                    GroupId::Eg2_3072,
                    hex(params::EG2_3072_P),
                    hex(&[params::EG_Q]),
                    hex(params::EG2_3072_R),
                    hex(params::EG2_3072_G),
                    false,
                )
            })
            .clone()
    }

    /// ElectionGuard 2.1's toy parameters (spec/66.1; the 2.1.0 specification's appendix, "for testing
    /// purposes only"): q = 2^64 − 59, p of 256 bits whose top and bottom 64 bits are ones, g = 2^r mod p.
    /// Discrete logarithms in it are easy: it only makes tests of the integer-group code fast.
    pub fn eg2_toy() -> Self {
        EG2_TOY
            .get_or_init(|| {
                Self::build(
                    GroupId::Eg2Toy,
                    hex(&[params::EG2_TOY_P]),
                    hex(&[params::EG2_TOY_Q]),
                    hex(&[params::EG2_TOY_R]),
                    hex(&[params::EG2_TOY_G]),
                    false,
                )
            })
            .clone()
    }

    /// RFC 3526 group 14: 2048-bit safe prime, quadratic-residue subgroup, g = 2.
    pub fn rfc3526_2048() -> Self {
        RFC3526_2048
            .get_or_init(|| Self::safe_prime(GroupId::Modp2048, params::RFC3526_2048_P))
            .clone()
    }

    /// RFC 3526 group 15: 3072-bit safe prime, quadratic-residue subgroup, g = 2.
    pub fn rfc3526_3072() -> Self {
        RFC3526_3072
            .get_or_init(|| Self::safe_prime(GroupId::Modp3072, params::RFC3526_3072_P))
            .clone()
    }

    /// The modp group called `id`; `None` for ristretto255.
    pub fn of_id(id: GroupId) -> Option<Self> {
        match id {
            GroupId::Eg4096 => Some(Self::eg_4096()),
            GroupId::Modp2048 => Some(Self::rfc3526_2048()),
            GroupId::Modp3072 => Some(Self::rfc3526_3072()),
            GroupId::Modp1024 => Some(Self::rfc2409_1024()),
            GroupId::ChvoteId1024 => Self::chvote_identification(1024),
            GroupId::ChvoteId2048 => Self::chvote_identification(2048),
            GroupId::Eg2_4096 => Some(Self::eg2_4096()),
            GroupId::Eg2_3072 => Some(Self::eg2_3072()),
            GroupId::Eg2Toy => Some(Self::eg2_toy()),
            GroupId::P256 => None,
            GroupId::Ristretto255 => None,
        }
    }

    /// RFC 2409 group 2: 1024-bit safe prime, quadratic-residue subgroup, g = 2. CHVote's level-1
    /// encryption group only (spec/92.2): too short for anything meant to last.
    pub fn rfc2409_1024() -> Self {
        RFC2409_1024
            .get_or_init(|| Self::safe_prime(GroupId::Modp1024, params::RFC2409_1024_P))
            .clone()
    }

    /// CHVote's identification group of `bits` = 1024 (level 1) or 2048 (level 2) (spec/92.2): a
    /// Schnorr group with q̂ of 160 or 224 bits. `None` for another size.
    pub fn chvote_identification(bits: u32) -> Option<Self> {
        let (cell, id, p, q, k, g) = match bits {
            1024 => (
                &CHV_ID_1024,
                GroupId::ChvoteId1024,
                params::CHV_ID_1024_P,
                params::CHV_ID_1024_Q,
                params::CHV_ID_1024_K,
                params::CHV_ID_1024_G,
            ),
            2048 => (
                &CHV_ID_2048,
                GroupId::ChvoteId2048,
                params::CHV_ID_2048_P,
                params::CHV_ID_2048_Q,
                params::CHV_ID_2048_K,
                params::CHV_ID_2048_G,
            ),
            _ => return None,
        };
        Some(
            cell.get_or_init(|| Self::build(id, hex(p), hex(&[q]), hex(k), hex(g), false))
                .clone(),
        )
    }

    fn safe_prime(id: GroupId, p_hex: &[&str]) -> Self {
        let p = hex(p_hex);
        let q = Integer::from(&p - 1u32) >> 1u32;
        Self::build(id, p, q, Integer::from(2), Integer::from(2), true)
    }

    fn build(
        id: GroupId,
        p: Integer,
        q: Integer,
        cofactor: Integer,
        g: Integer,
        quadratic_residues: bool,
    ) -> Self {
        let scalar_len = q.significant_bits().div_ceil(8) as usize;
        // p is a hard-coded odd prime, so Modulus::new cannot fail.
        let modulus = Modulus::new(p).unwrap_or_else(|_| unreachable_modulus());
        Self(Arc::new(Inner {
            id,
            modulus,
            q,
            cofactor,
            g: ModElement(g),
            quadratic_residues,
            scalar_len,
            g_table: OnceLock::new(),
            #[cfg(feature = "secret")]
            g_secret_table: OnceLock::new(),
        }))
    }

    pub fn p(&self) -> &Integer {
        self.0.modulus.value()
    }

    pub fn cofactor(&self) -> &Integer {
        &self.0.cofactor
    }

    pub fn modulus(&self) -> &Modulus {
        &self.0.modulus
    }

    /// Is `x` (any integer) an element of the order-q subgroup?
    pub fn is_member(&self, x: &Integer) -> bool {
        if *x < 1 || x >= self.p() {
            return false;
        }
        if self.0.quadratic_residues {
            return x.jacobi(self.p()) == 1;
        }
        // mpz_powm: x^q == 1 (the cofactor has no small factors to batch safely; see spec).
        matches!(self.0.modulus.pow(x, &self.0.q), Ok(r) if r == 1)
    }

    /// Wraps an integer after checking subgroup membership.
    pub fn element(&self, x: &Integer) -> Result<ModElement, GroupError> {
        if *x < 1 || x >= self.p() {
            return Err(GroupError::OutOfRange);
        }
        if !self.is_member(x) {
            return Err(GroupError::NotInSubgroup);
        }
        Ok(ModElement(x.clone()))
    }

    /// An integer in `[1, p)`, not yet known to be in the subgroup: an [`InRange`], which becomes a
    /// [`ModElement`] only through [`ModpGroup::check`], [`ModpGroup::check_all`] or one of the
    /// conversions [`InRange`] names for the cases where membership follows otherwise.
    pub fn element_in_range(&self, x: &Integer) -> Result<InRange, GroupError> {
        if *x < 1 || x >= self.p() {
            return Err(GroupError::OutOfRange);
        }
        Ok(InRange(x.clone()))
    }

    /// `x` as an element, after the full subgroup test (one exponentiation).
    pub fn check(&self, x: InRange) -> Result<ModElement, GroupError> {
        if self.is_member(&x.0) {
            Ok(ModElement(x.0))
        } else {
            Err(GroupError::NotInSubgroup)
        }
    }

    /// All of `xs` as elements, after one batched subgroup test ([`ModpGroup::members_hold`]);
    /// when it fails, the index of the first non-member (found one by one).
    pub fn check_all<R: RngCore + CryptoRng>(
        &self,
        xs: Vec<InRange>,
        rng: &mut R,
    ) -> Result<Vec<ModElement>, usize> {
        let values: Vec<&Integer> = xs.iter().map(|x| &x.0).collect();
        if self.all_members(&values, rng) {
            return Ok(xs.into_iter().map(|x| ModElement(x.0)).collect());
        }
        Err(values
            .par_iter()
            .position_first(|x| !self.is_member(x))
            .unwrap_or(0))
    }

    /// Whether every element is in the order-q subgroup: each Jacobi symbol, then (for a group other
    /// than the quadratic residues) one combination `(Π x_i^{t_i})^q = 1` with secret 128-bit
    /// weights from `rng` (spec/62.4: a non-member survives with probability at most 2^−128). The
    /// elements must be in `[1, p)`. Costs about one exponentiation instead of one each.
    pub fn members_hold<R: RngCore + CryptoRng>(
        &self,
        elements: &[&ModElement],
        rng: &mut R,
    ) -> bool {
        let values: Vec<&Integer> = elements.iter().map(|x| &x.0).collect();
        self.all_members(&values, rng)
    }

    fn all_members<R: RngCore + CryptoRng>(&self, elements: &[&Integer], rng: &mut R) -> bool {
        if !elements.par_iter().all(|x| x.jacobi(self.p()) == 1) {
            return false;
        }
        if self.0.quadratic_residues || elements.is_empty() {
            return true;
        }
        let m = &self.0.modulus;
        let bases: Vec<Integer> = elements.iter().map(|x| (*x).clone()).collect();
        let exps: Vec<Integer> = elements
            .iter()
            .map(|_| {
                let mut bytes = [0u8; 16];
                rng.fill_bytes(&mut bytes);
                Integer::from_digits(&bytes, Order::Msf)
            })
            .collect();
        multi_pow_parallel(m, &bases, &exps)
            .and_then(|x| m.pow(&x, &self.0.q))
            .map(|x| x == 1)
            .unwrap_or(false)
    }

    /// `Π b_i^{w_i}` for members `b_i`, with each weight taken as the signed integer of least
    /// magnitude (w or w − q): the same for members, since `b^q = 1`. Lagrange coefficients at
    /// small sequence orders are small fractions, often small integers (3, −3, 1 for guardians 1,
    /// 2, 3), so this is a few products and one inversion instead of 256-bit powers. `None` when
    /// the lengths differ.
    pub fn signed_multi_pow(
        &self,
        bases: &[ModElement],
        weights: &[ModScalar],
    ) -> Option<ModElement> {
        if bases.len() != weights.len() {
            return None;
        }
        let q = &self.0.q;
        let half = Integer::from(q >> 1u32);
        let (mut pos_b, mut pos_e, mut neg_b, mut neg_e) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (b, w) in bases.iter().zip(weights) {
            if w.0 > half {
                neg_b.push(b.0.clone());
                neg_e.push(Integer::from(q - &w.0));
            } else {
                pos_b.push(b.0.clone());
                pos_e.push(w.0.clone());
            }
        }
        let m = &self.0.modulus;
        let pos = votum_arith::multi_pow(m, &pos_b, &pos_e).ok()?;
        let neg = votum_arith::multi_pow(m, &neg_b, &neg_e).ok()?;
        let inverse = Integer::from(neg.invert_ref(self.p())?);
        // a product of powers of members and an inverse of one: a member
        Some(ModElement(m.mul(&pos, &inverse)))
    }

    /// Wraps an integer in `[0, q)` as a scalar.
    pub fn scalar(&self, x: &Integer) -> Result<ModScalar, GroupError> {
        if *x < 0 || *x >= self.0.q {
            return Err(GroupError::ScalarOutOfRange);
        }
        Ok(ModScalar(x.clone()))
    }

    /// Builds the generator's tables now (they are otherwise built by the first exponentiation
    /// that needs them: about 0.4 s at 4096 bits), so a server's first request is not the slow one.
    pub fn warm(&self) {
        self.g_table();
        #[cfg(feature = "secret")]
        self.0
            .g_secret_table
            .get_or_init(|| self.secret_table(&self.0.g));
    }

    /// `g^s` from the generator's table when it is built already (a warmed server), else one
    /// plain power: for a batch check's single power of g, which should not pay 0.4 s to build
    /// the table in a process that has none.
    pub fn pow_generator_if_built(&self, s: &ModScalar) -> ModElement {
        match self.0.g_table.get() {
            Some(table) => self.pow_table(table, s),
            None => self.pow(&self.0.g, s),
        }
    }

    fn g_table(&self) -> &FixedBaseTable {
        self.0
            .g_table
            .get_or_init(|| self.make_table_isolated(&self.0.g))
    }

    /// Builds a table while other threads may be waiting on a lock for it. Building on the
    /// global rayon pool could deadlock: a worker waiting for its build steals another task that
    /// waits on the same lock (it happened with `encrypt_many`). So the build runs on a private
    /// pool, started from a plain thread whose join blocks without stealing.
    fn make_table_isolated(&self, base: &ModElement) -> FixedBaseTable {
        let threads = rayon::current_num_threads();
        std::thread::scope(|scope| {
            let build = scope.spawn(|| {
                match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
                    Ok(pool) => pool.install(|| self.make_table(base)),
                    // the OS refuses threads: nothing sensible to fall back on
                    Err(e) => no_threads(&e),
                }
            });
            build
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    /// A constant-time comb table of `base`, for raising it to several secret scalars
    /// ([`ModpGroup::pow_secret_with`]); worth it from two exponents on (votum-arith's
    /// `SecretBaseTable`: about 0.7 ms to build, 0.30 ms per power, against 1.08 ms for
    /// `mpz_powm_sec`, at 4096 bits on the machine of BENCHMARKS.md's 2026-11-26 entry).
    #[cfg(feature = "secret")]
    pub fn secret_table(&self, base: &ModElement) -> SecretBaseTable {
        SecretBaseTable::new(
            &self.0.modulus,
            &base.0,
            self.0.q.significant_bits(),
            SecretBaseTable::DEFAULT_ROWS,
        )
        .unwrap_or_else(|_| unreachable_secret_table())
    }

    /// `base^s` in constant time, with `table` = [`ModpGroup::secret_table`] of `base`.
    #[cfg(feature = "secret")]
    pub fn pow_secret_with(&self, table: &SecretBaseTable, s: &Secret<ModScalar>) -> ModElement {
        ModElement(
            table
                .pow(&s.expose().0)
                .unwrap_or_else(|_| secret_power_failed()),
        )
    }

    fn make_table(&self, base: &ModElement) -> FixedBaseTable {
        // max_bits > 0 and the default window is in range, so this cannot fail;
        // fall back to a 1-bit table rather than panic.
        let bits = self.0.q.significant_bits();
        FixedBaseTable::new(&self.0.modulus, &base.0, bits).unwrap_or_else(|_| {
            FixedBaseTable::with_window(&self.0.modulus, &base.0, bits.max(1), 1)
                .unwrap_or_else(|_| unreachable_table())
        })
    }

    fn reduce_q(&self, x: Integer) -> ModScalar {
        let mut r = x % &self.0.q;
        if r < 0 {
            r += &self.0.q;
        }
        ModScalar(r)
    }
}

#[allow(clippy::panic)]
#[cold]
fn unreachable_modulus() -> Modulus {
    panic!("hard-coded group modulus rejected")
}

/// A power with a secret exponent that failed: it cannot (the group's own scalars and tables), and
/// a stand-in value (1) would, in an encryption, publish the plaintext. The process stops instead
/// of going on with a wrong secret result (issue 45, finding 12).
#[cfg(feature = "secret")]
#[cold]
pub fn secret_power_failed() -> ! {
    std::process::abort()
}

#[cfg(feature = "secret")]
#[allow(clippy::panic)]
#[cold]
fn unreachable_secret_table() -> SecretBaseTable {
    panic!("constant-time comb parameters rejected")
}

#[allow(clippy::panic)]
#[cold]
fn no_threads(e: &rayon::ThreadPoolBuildError) -> FixedBaseTable {
    panic!("cannot start threads to build a fixed-base table: {e}")
}

#[allow(clippy::panic)]
#[cold]
fn unreachable_table() -> FixedBaseTable {
    panic!("fixed-base table parameters rejected")
}

impl Group for ModpGroup {
    type Element = ModElement;
    type Scalar = ModScalar;
    type Table = FixedBaseTable;

    fn id(&self) -> GroupId {
        self.0.id
    }

    fn order(&self) -> &Integer {
        &self.0.q
    }

    fn generator(&self) -> &ModElement {
        &self.0.g
    }

    fn identity(&self) -> ModElement {
        ModElement(Integer::from(1))
    }

    fn op(&self, a: &ModElement, b: &ModElement) -> ModElement {
        ModElement(self.0.modulus.mul(&a.0, &b.0))
    }

    fn inverse(&self, a: &ModElement) -> ModElement {
        // Elements are in [1, p) with p prime, so always invertible.
        ModElement(
            self.0
                .modulus
                .inverse(&a.0)
                .unwrap_or_else(|_| Integer::from(1)),
        )
    }

    fn pow(&self, base: &ModElement, s: &ModScalar) -> ModElement {
        // Scalars are non-negative by construction.
        ModElement(
            self.0
                .modulus
                .pow(&base.0, &s.0)
                .unwrap_or_else(|_| Integer::from(1)),
        )
    }

    #[cfg(feature = "secret")]
    fn pow_secret(&self, base: &ModElement, s: &Secret<ModScalar>) -> ModElement {
        if base.0 == self.0.g.0 {
            let table = self
                .0
                .g_secret_table
                .get_or_init(|| self.secret_table(&self.0.g));
            return self.pow_secret_with(table, s);
        }
        ModElement(
            self.0
                .modulus
                .pow_secret(&base.0, &s.expose().0)
                .unwrap_or_else(|_| secret_power_failed()),
        )
    }

    fn pow_generator(&self, s: &ModScalar) -> ModElement {
        ModElement(
            self.g_table()
                .pow(&s.0)
                .unwrap_or_else(|_| Integer::from(1)),
        )
    }

    fn table(&self, base: &ModElement) -> FixedBaseTable {
        self.make_table(base)
    }

    fn pow_table(&self, table: &FixedBaseTable, s: &ModScalar) -> ModElement {
        ModElement(table.pow(&s.0).unwrap_or_else(|_| Integer::from(1)))
    }

    fn multi_pow(
        &self,
        bases: &[ModElement],
        scalars: &[ModScalar],
    ) -> Result<ModElement, GroupError> {
        if bases.len() != scalars.len() {
            return Err(GroupError::LengthMismatch {
                bases: bases.len(),
                scalars: scalars.len(),
            });
        }
        let b: Vec<Integer> = bases.iter().map(|x| x.0.clone()).collect();
        let e: Vec<Integer> = scalars.iter().map(|x| x.0.clone()).collect();
        multi_pow(&self.0.modulus, &b, &e)
            .map(ModElement)
            .map_err(|_| GroupError::LengthMismatch {
                bases: bases.len(),
                scalars: scalars.len(),
            })
    }

    fn element_len(&self) -> usize {
        self.0.modulus.byte_len()
    }

    fn encode_element(&self, a: &ModElement) -> Vec<u8> {
        self.0.modulus.to_bytes(&a.0)
    }

    fn decode_element(&self, bytes: &[u8]) -> Result<ModElement, GroupError> {
        let expected = self.element_len();
        if bytes.len() != expected {
            return Err(GroupError::WrongLength {
                expected,
                got: bytes.len(),
            });
        }
        let x = Integer::from_digits(bytes, Order::Msf);
        self.element(&x)
    }

    fn decode_many<R: RngCore + CryptoRng>(
        &self,
        bytes: &[u8],
        rng: &mut R,
    ) -> Result<Vec<ModElement>, (usize, GroupError)> {
        let len = self.element_len();
        if self.0.quadratic_residues || !bytes.len().is_multiple_of(len) {
            // Jacobi symbols are the full test here; the default decodes each.
            return crate::decode_each(self, bytes);
        }
        let parsed: Vec<Result<InRange, GroupError>> = bytes
            .par_chunks(len)
            .map(|b| {
                let x = Integer::from_digits(b, Order::Msf);
                if x < 1 || x >= *self.p() {
                    Err(GroupError::OutOfRange)
                } else if x.jacobi(self.p()) != 1 {
                    Err(GroupError::NotInSubgroup)
                } else {
                    Ok(InRange(x))
                }
            })
            .collect();
        let mut in_range = Vec::with_capacity(parsed.len());
        for (i, p) in parsed.into_iter().enumerate() {
            match p {
                Ok(x) => in_range.push(x),
                // the first bad element may come before i: a non-member the cheap test let
                // through (found by fuzzing, fuzz/regressions/group_codec)
                Err(e) => {
                    return Err(match self.check_all(in_range, rng) {
                        Err(j) => (j, GroupError::NotInSubgroup),
                        Ok(_) => (i, e),
                    })
                }
            }
        }
        self.check_all(in_range, rng)
            .map_err(|bad| (bad, GroupError::NotInSubgroup))
    }

    fn uniform_len(&self) -> usize {
        self.element_len() + 16
    }

    fn element_from_uniform(&self, bytes: &[u8]) -> Option<ModElement> {
        let x = self
            .0
            .modulus
            .reduce(&Integer::from_digits(bytes, Order::Msf));
        let h = self.0.modulus.pow(&x, &self.0.cofactor).ok()?;
        if h <= 1 {
            return None;
        }
        Some(ModElement(h))
    }

    fn scalar_len(&self) -> usize {
        self.0.scalar_len
    }

    fn encode_scalar(&self, s: &ModScalar) -> Vec<u8> {
        let digits = s.0.to_digits::<u8>(Order::Msf);
        let mut out = vec![0u8; self.0.scalar_len.saturating_sub(digits.len())];
        out.extend_from_slice(&digits);
        out
    }

    fn decode_scalar(&self, bytes: &[u8]) -> Result<ModScalar, GroupError> {
        if bytes.len() != self.0.scalar_len {
            return Err(GroupError::WrongLength {
                expected: self.0.scalar_len,
                got: bytes.len(),
            });
        }
        self.scalar(&Integer::from_digits(bytes, Order::Msf))
    }

    fn scalar_from_u64(&self, v: u64) -> ModScalar {
        self.reduce_q(Integer::from(v))
    }

    fn scalar_from_integer(&self, v: &Integer) -> ModScalar {
        self.reduce_q(v.clone())
    }

    fn scalar_to_integer(&self, s: &ModScalar) -> Integer {
        s.0.clone()
    }

    fn scalar_add(&self, a: &ModScalar, b: &ModScalar) -> ModScalar {
        self.reduce_q(Integer::from(&a.0 + &b.0))
    }

    fn scalar_sub(&self, a: &ModScalar, b: &ModScalar) -> ModScalar {
        self.reduce_q(Integer::from(&a.0 - &b.0))
    }

    fn scalar_mul(&self, a: &ModScalar, b: &ModScalar) -> ModScalar {
        self.reduce_q(Integer::from(&a.0 * &b.0))
    }

    fn scalar_neg(&self, a: &ModScalar) -> ModScalar {
        self.reduce_q(Integer::from(-&a.0))
    }

    fn scalar_inverse(&self, a: &ModScalar) -> Result<ModScalar, GroupError> {
        a.0.invert_ref(&self.0.q)
            .map(|x| ModScalar(Integer::from(x)))
            .ok_or(GroupError::ZeroInverse)
    }

    fn random_scalar<R: RngCore + CryptoRng>(&self, rng: &mut R) -> ModScalar {
        // Rejection sampling on the bit length of q: exactly uniform.
        let bits = self.0.q.significant_bits();
        let mut buf = vec![0u8; self.0.scalar_len];
        let excess = (self.0.scalar_len as u32) * 8 - bits;
        loop {
            rng.fill_bytes(&mut buf);
            buf[0] &= 0xffu8 >> excess;
            let x = Integer::from_digits(&buf, Order::Msf);
            if x < self.0.q {
                buf.zeroize();
                return ModScalar(x);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_element_in_range_becomes_one_only_through_the_subgroup_test() {
        use rand_chacha::rand_core::SeedableRng;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
        let g = ModpGroup::eg_4096();
        let minus_one = Integer::from(g.p() - 1u32); // order 2: in range, not a member
        let member = g.generator().clone();
        assert!(g.element_in_range(&Integer::new()).is_err());
        assert!(g.element_in_range(g.p()).is_err());
        let x = g.element_in_range(&minus_one).unwrap();
        assert_eq!(g.check(x.clone()), Err(GroupError::NotInSubgroup));
        let y = g.element_in_range(member.value()).unwrap();
        assert!(y.matches(&member) && !x.matches(&member));
        assert_eq!(g.check(y.clone()).unwrap(), member);
        // in a batch, the first non-member is named
        assert_eq!(
            g.check_all(vec![y.clone(), y.clone(), x.clone(), y.clone()], &mut rng),
            Err(2)
        );
        assert_eq!(g.check_all(vec![y.clone(), y], &mut rng).unwrap().len(), 2);
        assert_eq!(g.check_all(Vec::new(), &mut rng), Ok(Vec::new()));
    }

    #[test]
    fn signed_powers_agree_with_plain_ones() {
        let g = ModpGroup::eg_4096();
        let b = [
            g.generator().clone(),
            g.pow(g.generator(), &g.scalar_from_u64(5)),
        ];
        let minus_three = g.scalar_sub(&g.scalar_from_u64(0), &g.scalar_from_u64(3));
        let w = [minus_three.clone(), g.scalar_from_u64(7)];
        let expected = g.op(&g.pow(&b[0], &w[0]), &g.pow(&b[1], &w[1]));
        assert_eq!(g.signed_multi_pow(&b, &w), Some(expected));
        assert_eq!(g.signed_multi_pow(&b, &w[..1]), None);
    }

    /// What every 2.x integer group is (spec/65.1, 66.1): p prime of `bits` bits whose top and bottom `ones`
    /// bits are ones, q prime, p − 1 = q·r, g = 2^r mod p of order q, and r = 2·r′ with r′ prime (after the
    /// Jacobi symbol, a batched membership test is then sound). Returns p's hexadecimal digits.
    fn two_x_shape(g: &ModpGroup, bits: u32, ones: usize) -> String {
        let (p, q) = (g.p().clone(), g.order().clone());
        assert_eq!(p.significant_bits(), bits);
        assert_ne!(p.is_probably_prime(30), rug::integer::IsPrime::No);
        assert_ne!(q.is_probably_prime(30), rug::integer::IsPrime::No);
        assert_eq!(Integer::from(&p - 1u32), Integer::from(&q * g.cofactor()));
        let two = Integer::from(2);
        let expected = Integer::from(two.pow_mod_ref(g.cofactor(), &p).unwrap());
        assert_eq!(g.generator().value(), &expected);
        assert_eq!(
            Integer::from(expected.pow_mod_ref(&q, &p).unwrap()),
            1,
            "g has order q"
        );
        let r_half = Integer::from(g.cofactor() >> 1u32);
        assert_eq!(Integer::from(&r_half << 1u32), *g.cofactor());
        assert_ne!(r_half.is_probably_prime(25), rug::integer::IsPrime::No);
        let hex = p.to_string_radix(16);
        let f = "f".repeat(ones / 4);
        assert!(hex.starts_with(&f) && hex.ends_with(&f));
        hex
    }

    /// The 2.x group (spec/65.1): p of 4096 bits whose bits below the top 256 begin with those of ln 2
    /// (0xB17217F7D1CF79AB…), q = 2^256 − 189; and it is not 1.0's group.
    #[test]
    fn the_eg2_group_is_the_one_the_specification_defines() {
        let g = ModpGroup::eg2_4096();
        let hex = two_x_shape(&g, 4096, 256);
        assert_eq!(*g.order(), (Integer::from(1) << 256u32) - 189u32);
        assert!(
            hex[64..].starts_with("b17217f7d1cf79ab"),
            "the bits of ln 2"
        );
        assert_ne!(g.p(), ModpGroup::eg_4096().p());
        assert_eq!(ModpGroup::of_id(GroupId::Eg2_4096), Some(g));
    }

    /// 2.1's reduced group: p = 2^3072 − 2^2816 + 2^256 (⌊2^2560 ln 2⌋ + δ) + 2^256 − 1, the same q.
    #[test]
    fn the_reduced_2_1_group_is_what_its_specification_says() {
        let g = ModpGroup::eg2_3072();
        let hex = two_x_shape(&g, 3072, 256);
        assert_eq!(g.order(), ModpGroup::eg2_4096().order());
        assert!(
            hex[64..].starts_with("b17217f7d1cf79ab"),
            "the bits of ln 2"
        );
        assert_eq!(g.element_len(), 384);
        assert_eq!(ModpGroup::of_id(GroupId::Eg2_3072), Some(g));
    }

    /// 2.1's toy parameters: q = 2^64 − 59, p of 256 bits.
    #[test]
    fn the_2_1_toy_group_is_what_its_specification_says() {
        let g = ModpGroup::eg2_toy();
        two_x_shape(&g, 256, 64);
        assert_eq!(*g.order(), Integer::from(u64::MAX - 58), "q = 2^64 − 59");
        assert_eq!((g.element_len(), g.scalar_len()), (32, 8));
        assert_eq!(ModpGroup::of_id(GroupId::Eg2Toy), Some(g));
    }

    #[test]
    fn constants_are_checked_as_hex() {
        assert!(is_hex(&["0123456789abcdef", "ABCDEF"]));
        assert!(!is_hex(&["FFFF", "FFgF"]), "a typo is refused");
        assert!(!is_hex(&["FF FF"]));
        assert!(
            !is_hex(&[]) && !is_hex(&["", ""]),
            "nothing is not a number"
        );
        assert_eq!(hex(&["ff", "01"]), 0xff01);
    }
}
