//! Public parameters at security levels 1 and 2 (spec/92.2), and the candidates' primes (7.1, 7.2).

use std::sync::Arc;

use sha2::{Digest, Sha256};
use votum_arith::{Integer, Order};
use votum_group::{Group, ModElement, ModpGroup};

use crate::ChvoteError;

/// A security level of the CHVote specification.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    One,
    Two,
}

impl Level {
    pub fn from_number(n: u8) -> Result<Self, ChvoteError> {
        match n {
            1 => Ok(Level::One),
            2 => Ok(Level::Two),
            _ => Err(ChvoteError::Parameters(format!(
                "no security level {n} (1 or 2)"
            ))),
        }
    }

    pub fn number(self) -> u8 {
        match self {
            Level::One => 1,
            Level::Two => 2,
        }
    }
}

/// The 32-character alphabet of every code (spec/92.2): Crockford's base 32, made to be read and typed
/// (no I, L, O or U; digits and capitals only; 5 bits a character).
pub const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// Bits a code character writes.
pub const CODE_BITS: u32 = 5;

/// The statistical hiding of the ballot proof's short nonce ω_3 (spec/92.6).
pub const STATISTICAL_BITS: u32 = 128;

/// The largest number of candidates (the proof of concept's n_max).
pub const N_MAX: usize = 1678;

struct Inner {
    level: Level,
    authorities: usize,
    /// Each authority's node signing key (Ed25519), which signs its shuffle, decryption share and
    /// trace in the record (spec/92.3); bound into the digest every key share's proof covers.
    signers: Vec<[u8; 32]>,
    /// G_q, the encryption group.
    eg: ModpGroup,
    /// Ĝ_q̂, the identification group.
    ig: ModpGroup,
    /// p′, the prime of the polynomials' field.
    p_prime: Integer,
    tau: u32,
    l_r: usize,
    l_f: usize,
    l_m: usize,
    #[cfg(feature = "prove")]
    g_ephemeral: std::sync::OnceLock<votum_arith::SecretBaseTable>,
}

/// The public parameters of an election (cheap to clone).
#[derive(Clone)]
pub struct Params(Arc<Inner>);

impl std::fmt::Debug for Params {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Params(level {}, s = {})",
            self.0.level.number(),
            self.0.authorities
        )
    }
}

impl Params {
    /// The parameters with no signing keys: enough for the parties' arithmetic, not for a record
    /// (a record's parameters name every authority's signing key, [`Params::signed`]).
    pub fn new(level: Level, authorities: usize) -> Result<Self, ChvoteError> {
        Self::signed(level, authorities, Vec::new())
    }

    /// The parameters naming each authority's node signing key (one per authority, distinct).
    pub fn signed(
        level: Level,
        authorities: usize,
        signers: Vec<[u8; 32]>,
    ) -> Result<Self, ChvoteError> {
        if !signers.is_empty() {
            let distinct: std::collections::HashSet<&[u8; 32]> = signers.iter().collect();
            if signers.len() != authorities || distinct.len() != authorities {
                return Err(ChvoteError::Parameters(format!(
                    "{} signing keys for {authorities} authorities (one each, distinct)",
                    signers.len()
                )));
            }
        }
        if authorities == 0 || authorities > 64 {
            return Err(ChvoteError::Parameters(format!(
                "{authorities} authorities (1 to 64)"
            )));
        }
        let (eg, ig, tau, field_bits) = match level {
            Level::One => (
                ModpGroup::rfc2409_1024(),
                ModpGroup::chvote_identification(1024),
                80,
                160u32,
            ),
            Level::Two => (
                ModpGroup::rfc3526_2048(),
                ModpGroup::chvote_identification(2048),
                112,
                224u32,
            ),
        };
        let ig = ig.ok_or_else(|| ChvoteError::Parameters("identification group".into()))?;
        let p_prime = largest_prime_below_power_of_two(field_bits);
        let l_m = 2 * field_bits.div_ceil(8) as usize;
        Ok(Self(Arc::new(Inner {
            level,
            authorities,
            signers,
            eg,
            ig,
            p_prime,
            tau,
            l_r: 2,
            l_f: 2,
            l_m,
            #[cfg(feature = "prove")]
            g_ephemeral: std::sync::OnceLock::new(),
        })))
    }

    pub fn level(&self) -> Level {
        self.0.level
    }
    /// Each authority's node signing key, in authority order (empty for unsigned parameters).
    pub fn signers(&self) -> &[[u8; 32]] {
        &self.0.signers
    }
    /// s, the number of election authorities.
    pub fn authorities(&self) -> usize {
        self.0.authorities
    }
    pub fn eg(&self) -> &ModpGroup {
        &self.0.eg
    }
    pub fn ig(&self) -> &ModpGroup {
        &self.0.ig
    }
    pub fn p_prime(&self) -> &Integer {
        &self.0.p_prime
    }
    pub fn tau(&self) -> u32 {
        self.0.tau
    }
    pub fn l_r(&self) -> usize {
        self.0.l_r
    }
    pub fn l_f(&self) -> usize {
        self.0.l_f
    }
    pub fn l_m(&self) -> usize {
        self.0.l_m
    }
    /// Bits of the ephemeral exponents (the query's r_u and the OT's r_l): 2τ (spec/92.6).
    pub fn ephemeral_bits(&self) -> u32 {
        2 * self.0.tau
    }

    /// Bits of the ballot proof's ω_3 (spec/92.6): it hides c·r < 2^τ · 2^(2τ+16) with a
    /// statistical distance below 2^−128, so s_3 = ω_3 + c·r never wraps modulo q.
    pub fn ballot_nonce_bits(&self) -> u32 {
        3 * self.0.tau + 16 + STATISTICAL_BITS
    }

    /// A uniform ω_3 below 2^[`Params::ballot_nonce_bits`].
    pub fn ballot_nonce<R: rand_core::RngCore + rand_core::CryptoRng>(
        &self,
        rng: &mut R,
    ) -> votum_group::ModScalar {
        let bound = Integer::from(1) << self.ballot_nonce_bits();
        let mut x = crate::poly::random_below(&bound, rng);
        let s = self.0.eg.scalar_from_integer(&x);
        votum_arith::wipe_integer(&mut x);
        s
    }

    /// A uniform non-zero ephemeral exponent below 2^(2τ) (spec/92.6).
    pub fn ephemeral<R: rand_core::RngCore + rand_core::CryptoRng>(
        &self,
        rng: &mut R,
    ) -> votum_group::ModScalar {
        let bound = Integer::from(1) << self.ephemeral_bits();
        loop {
            let mut x = crate::poly::random_below(&bound, rng);
            if x != 0 {
                let s = self.0.eg.scalar_from_integer(&x);
                votum_arith::wipe_integer(&mut x);
                return s;
            }
        }
    }

    /// A constant-time comb of `base` for ephemeral exponents.
    #[cfg(feature = "prove")]
    pub fn ephemeral_comb(&self, base: &ModElement) -> votum_arith::SecretBaseTable {
        let rows = votum_arith::SecretBaseTable::DEFAULT_ROWS;
        self.comb(base, self.ephemeral_bits(), rows)
    }

    /// A constant-time comb of `base` for exponents below 2^bits, with 2^rows entries.
    #[cfg(feature = "prove")]
    pub fn comb(&self, base: &ModElement, bits: u32, rows: u32) -> votum_arith::SecretBaseTable {
        votum_arith::SecretBaseTable::new(self.0.eg.modulus(), base.value(), bits, rows)
            .unwrap_or_else(|_| unreachable_comb())
    }

    /// The election's constant-time comb of g for key shares and for b = g^(Σ r_u): 16 bits
    /// above the ephemeral exponents, room for the sum of up to 2^16 of them. Built once.
    #[cfg(feature = "prove")]
    pub fn g_ephemeral(&self) -> &votum_arith::SecretBaseTable {
        self.0.g_ephemeral.get_or_init(|| {
            let rows = votum_arith::SecretBaseTable::DEFAULT_ROWS;
            self.comb(self.0.eg.generator(), self.ephemeral_bits() + 16, rows)
        })
    }

    /// A uniform element of G_q (the square of a uniform unit of Z_p): one squaring.
    pub fn random_element<R: rand_core::RngCore + rand_core::CryptoRng>(
        &self,
        rng: &mut R,
    ) -> ModElement {
        let eg = &self.0.eg;
        loop {
            let mut u = crate::poly::random_below(eg.p(), rng);
            if u != 0 {
                let x = eg.modulus().mul(&u, &u);
                votum_arith::wipe_integer(&mut u);
                // a square of a unit is a quadratic residue: the test cannot fail
                if let Ok(e) = eg.element(&x) {
                    return e;
                }
            }
        }
    }

    /// `base^s` from [`Params::ephemeral_comb`] of `base`, in constant time. The result is a member
    /// because the comb's base is one (no membership test on it: a Jacobi symbol of a secret power
    /// branches on it, which `make ct-check` found in this function).
    #[cfg(feature = "prove")]
    pub fn comb_pow(
        &self,
        comb: &votum_arith::SecretBaseTable,
        s: &votum_group::Secret<votum_group::ModScalar>,
    ) -> ModElement {
        self.0.eg.pow_secret_with(comb, s)
    }

    /// q̂.
    pub fn q_hat(&self) -> &Integer {
        self.0.ig.order()
    }
    /// Characters of the voting and confirmation codes X and Y.
    pub fn credential_chars(&self) -> usize {
        self.q_hat().significant_bits().div_ceil(CODE_BITS) as usize
    }

    /// Γ(1) … Γ(n): the n smallest primes that are members of G_q (7.1 GetPrimes, 7.2 IsMember).
    pub fn primes(&self, n: usize) -> Result<Vec<ModElement>, ChvoteError> {
        if n > N_MAX {
            return Err(ChvoteError::Parameters(format!(
                "{n} candidates (at most {N_MAX})"
            )));
        }
        Ok(member_primes(&self.0.eg, n))
    }

    /// The digest the key shares' proofs are bound to (spec/92.3): level, s, the authorities'
    /// signing keys, the shape and the election id. Everything after the keys is bound to [`Params::election_digest`], which adds
    /// the joint key.
    pub fn digest_with(&self, shape: &[u8], election_id: &str) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(b"votum/v3/chvote/election");
        h.update([self.0.level.number()]);
        h.update((self.0.authorities as u64).to_be_bytes());
        h.update((self.0.signers.len() as u64).to_be_bytes());
        for k in &self.0.signers {
            h.update(k);
        }
        h.update((shape.len() as u64).to_be_bytes());
        h.update(shape);
        h.update((election_id.len() as u64).to_be_bytes());
        h.update(election_id.as_bytes());
        h.finalize().into()
    }

    /// The election digest (spec/92.3): the key digest ([`Params::digest_with`]) and the joint key
    /// pk. Ballots, confirmations, shuffles and decryptions are bound to it, so none of them is
    /// another election's or valid under another key.
    pub fn election_digest(&self, key_digest: &[u8; 32], pk: &ModElement) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(b"votum/v2/chvote/election-key");
        h.update(key_digest);
        h.update(self.0.eg.encode_element(pk));
        h.finalize().into()
    }
}

#[cfg(feature = "prove")]
#[allow(clippy::panic)]
fn unreachable_comb() -> votum_arith::SecretBaseTable {
    panic!("a comb of an element of a group with an odd prime modulus and a positive exponent size")
}

fn member_primes(eg: &ModpGroup, n: usize) -> Vec<ModElement> {
    let mut out = Vec::with_capacity(n);
    let mut x = Integer::from(1);
    while out.len() < n {
        x.next_prime_mut();
        if let Ok(e) = eg.element(&x) {
            out.push(e);
        }
    }
    out
}

fn largest_prime_below_power_of_two(bits: u32) -> Integer {
    let mut x = (Integer::from(1) << bits) - 1u32;
    while x.is_probably_prime(40) == votum_arith::IsPrime::No {
        x -= 2u32;
    }
    x
}

/// The derivation of the identification groups (spec/92.2): (p̂, q̂, k, ĝ).
pub fn derive_identification_group(
    bits_p: u32,
    bits_q: u32,
    label: &str,
) -> (Integer, Integer, Integer, Integer) {
    let d = Sha256::digest(label.as_bytes());
    let top = Integer::from(1) << (bits_q - 1);
    let mut q = top.clone() + Integer::from_digits(&d, Order::Msf) % &top;
    while q.is_probably_prime(40) == votum_arith::IsPrime::No {
        q += 1u32;
    }
    let low = Integer::from(1) << (bits_p - 1);
    let mut k: Integer = (low + &q - 1u32) / &q;
    if k.is_odd() {
        k += 1u32;
    }
    loop {
        let p: Integer = Integer::from(&k * &q) + 1u32;
        if p.is_probably_prime(40) != votum_arith::IsPrime::No {
            let mut h = Integer::from(2);
            loop {
                if let Ok(g) = h.clone().pow_mod(&k, &p) {
                    if g != 1 {
                        return (p, q, k, g);
                    }
                }
                h += 1u32;
            }
        }
        k += 2u32;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn identification_groups_are_derived_from_their_labels() {
        for (bits_p, bits_q, level) in [(1024, 160, 1), (2048, 224, 2)] {
            let (p, q, k, g) = derive_identification_group(
                bits_p,
                bits_q,
                &format!("votum/chvote/identification/{level}"),
            );
            let group = ModpGroup::chvote_identification(bits_p).unwrap();
            assert_eq!(group.p(), &p);
            assert_eq!(group.order(), &q);
            assert_eq!(group.cofactor(), &k);
            assert_eq!(group.generator().value(), &g);
            assert_eq!(p.significant_bits(), bits_p);
            assert_eq!(q.significant_bits(), bits_q);
            assert_eq!(g.clone().pow_mod(&q, &p).unwrap(), 1);
        }
    }

    #[test]
    fn level_one_encryption_group_is_a_safe_prime() {
        let g = ModpGroup::rfc2409_1024();
        assert_eq!(g.p().significant_bits(), 1024);
        assert_ne!(g.p().is_probably_prime(40), votum_arith::IsPrime::No);
        assert_ne!(g.order().is_probably_prime(40), votum_arith::IsPrime::No);
    }

    #[test]
    fn primes_are_members_in_order() {
        let params = Params::new(Level::Two, 4).unwrap();
        let ps = params.primes(16).unwrap();
        let mut last = Integer::from(0);
        for p in &ps {
            assert!(params.eg().is_member(p.value()));
            assert!(p.value() > &last);
            last = p.value().clone();
        }
        assert_eq!(ps[0].value(), &2);
        assert!(params.primes(N_MAX + 1).is_err());
    }
}
