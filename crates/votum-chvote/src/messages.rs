//! What the parties send each other and publish (spec/92.4–92.7), with the checks anyone can run.

use votum_arith::Integer;
use votum_elgamal::PublicKey;
use votum_group::{Group, ModElement, ModpGroup};
use votum_hash::Transcript;

use crate::election::ElectionSet;
use crate::hash;
use crate::params::Params;
use crate::ChvoteError;

/// An authority's public part of a voter's data (7.11): x̂_ij, ŷ_ij, and votum's commitments to
/// its points, one per candidate (spec/92.4).
#[derive(Clone, Debug)]
pub struct PublicVoterData {
    pub x_hat: ModElement,
    pub y_hat: ModElement,
    pub commitments: Vec<[u8; 32]>,
}

/// The ballot with its oblivious-transfer query (7.18): (x̂, a, b, π).
#[derive(Clone, Debug)]
pub struct Ballot {
    pub x_hat: ModElement,
    pub queries: Vec<ModElement>,
    pub b: ModElement,
    pub proof: BallotProof,
}

/// π of 7.21: (t_1, t_2, t_3), (s_1, s_2, s_3).
#[derive(Clone, Debug)]
pub struct BallotProof {
    pub t1: ModElement,
    pub t2: ModElement,
    pub t3: ModElement,
    pub s1: Integer,
    pub s2: ModElement,
    pub s3: Integer,
}

/// An authority's OT response (7.25): b per query, c per candidate, d per election.
#[derive(Clone, Debug)]
pub struct Response {
    pub b: Vec<ModElement>,
    pub c: Vec<Vec<u8>>,
    pub d: Vec<ModElement>,
}

/// γ of 7.30: ŷ and a Schnorr proof (t, s).
#[derive(Clone, Debug)]
pub struct Confirmation {
    pub y_hat: ModElement,
    pub t: ModElement,
    pub s: Integer,
}

/// δ_j of 7.37: F_ij and the OT exponents, revealed once the voter has confirmed.
#[derive(Clone, Debug)]
pub struct Finalization {
    pub f: Vec<u8>,
    pub r: Vec<Integer>,
}

/// What every party knows once the electoral data is published: parameters, election set, the
/// joint key and the voters' public credentials (7.12) and point commitments.
pub struct PublicBoard {
    pub params: Params,
    pub set: ElectionSet,
    pub digest: [u8; 32],
    pub pk: PublicKey<ModpGroup>,
    pub key_shares: Vec<ModElement>,
    pub x_hat: Vec<ModElement>,
    pub y_hat: Vec<ModElement>,
    /// commitments[j][i][v]: authority j, voter i, candidate v.
    pub commitments: Vec<Vec<Vec<[u8; 32]>>>,
    pub primes: Vec<ModElement>,
    mix_key: std::sync::OnceLock<PublicKey<ModpGroup>>,
    /// A fixed-base table of pk for the ballot checks.
    pk_table: std::sync::OnceLock<votum_arith::FixedBaseTable>,
    /// A fixed-base table of ĝ for the ballot and confirmation checks.
    g_hat_table: std::sync::OnceLock<votum_arith::FixedBaseTable>,
    /// Fixed-base tables of the candidate primes, for opening finalized voters' OT messages.
    prime_tables: std::sync::OnceLock<Vec<votum_arith::FixedBaseTable>>,
}

impl PublicBoard {
    /// 7.16 GetPublicKey and 7.12 GetPublicCredentials from the authorities' posts.
    pub fn new(
        params: Params,
        set: ElectionSet,
        election_id: &str,
        key_shares: Vec<ModElement>,
        voter_data: Vec<Vec<PublicVoterData>>,
    ) -> Result<Self, ChvoteError> {
        set.check()?;
        let s = params.authorities();
        if key_shares.len() != s || voter_data.len() != s {
            return Err(ChvoteError::Parameters(format!("{s} authorities expected")));
        }
        let n = set.total_candidates();
        if voter_data
            .iter()
            .any(|d| d.len() != set.voters() || d.iter().any(|v| v.commitments.len() != n))
        {
            return Err(ChvoteError::Parameters(
                "public voter data of another electorate".into(),
            ));
        }
        let eg = params.eg();
        let ig = params.ig();
        let mut pk = eg.identity();
        for share in &key_shares {
            pk = eg.op(&pk, share);
        }
        let pk = PublicKey::new(eg, pk)
            .map_err(|e| ChvoteError::Parameters(format!("joint key: {e}")))?;
        let mut x_hat = Vec::with_capacity(set.voters());
        let mut y_hat = Vec::with_capacity(set.voters());
        for i in 0..set.voters() {
            let mut x = ig.identity();
            let mut y = ig.identity();
            for d in &voter_data {
                x = ig.op(&x, &d[i].x_hat);
                y = ig.op(&y, &d[i].y_hat);
            }
            x_hat.push(x);
            y_hat.push(y);
        }
        let commitments = voter_data
            .into_iter()
            .map(|d| d.into_iter().map(|v| v.commitments).collect())
            .collect();
        let digest = params.election_digest(
            &params.digest_with(&set.shape_bytes(), election_id),
            pk.element(),
        );
        let primes = params.primes(n)?;
        Ok(Self {
            params,
            set,
            digest,
            pk,
            key_shares,
            x_hat,
            y_hat,
            commitments,
            primes,
            mix_key: std::sync::OnceLock::new(),
            pk_table: std::sync::OnceLock::new(),
            g_hat_table: std::sync::OnceLock::new(),
            prime_tables: std::sync::OnceLock::new(),
        })
    }

    pub fn voters(&self) -> usize {
        self.set.voters()
    }

    /// pk with a fixed-base table for the shuffles' re-encryptions, whose nonces are
    /// ephemeral exponents (spec/92.8): 2τ bits, a window for the election's size. Built at
    /// first use.
    pub fn mix_key(&self) -> &PublicKey<ModpGroup> {
        self.mix_key.get_or_init(|| {
            let uses = self.voters() * self.params.authorities();
            let table = self.pk_table_for(uses, self.params.ephemeral_bits());
            PublicKey::with_given_table(self.params.eg(), self.pk.element().clone(), table)
                .unwrap_or_else(|_| self.pk.clone())
        })
    }

    fn pk_table_for(&self, uses: usize, bits: u32) -> votum_arith::FixedBaseTable {
        let (eg, pk) = (self.params.eg(), self.pk.element().value());
        let window = table_window(uses.max(1), bits);
        votum_arith::FixedBaseTable::with_window(eg.modulus(), pk, bits, window)
            .or_else(|_| votum_arith::FixedBaseTable::with_window(eg.modulus(), pk, bits, 1))
            .unwrap_or_else(|_| unreachable_table())
    }

    /// ĝ^e for a public exponent e < q̂ (the ballot and confirmation checks, two per authority
    /// and voter), from a table with a window for the election's size.
    pub fn g_hat_pow(&self, e: &Integer) -> ModElement {
        let ig = self.params.ig();
        let table = self.g_hat_table.get_or_init(|| {
            let (g, bits) = (ig.generator().value(), ig.order().significant_bits());
            let uses = 2 * self.voters() * self.params.authorities();
            votum_arith::FixedBaseTable::with_window(
                ig.modulus(),
                g,
                bits,
                table_window(uses.max(1), bits),
            )
            .or_else(|_| votum_arith::FixedBaseTable::with_window(ig.modulus(), g, bits, 1))
            .unwrap_or_else(|_| unreachable_table())
        });
        let x = table.pow(e).unwrap_or_else(|_| Integer::from(1));
        // a power of a member is a member: only the range is checked, not membership again
        ig.element_in_range(&x)
            .map(votum_group::InRange::into_unchecked_part)
            .unwrap_or_else(|_| ig.identity())
    }

    /// pk^e for a public exponent e < q (ballot checks, one per authority and voter; revealed
    /// OT exponents): from a table for the exponents an honest client sends (s_3 < 2^(L+1), L
    /// the bits of ω_3), with a window for the election's size (spec/92.6). Longer exponents
    /// take a plain exponentiation.
    /// Γ(v)^r for a public (revealed) ephemeral exponent r: one table per candidate prime, its
    /// window for one use per voter and authority; a longer r takes a plain exponentiation.
    pub fn prime_pow(&self, v: usize, r: &Integer) -> ModElement {
        let eg = self.params.eg();
        let tables = self.prime_tables.get_or_init(|| {
            let bits = self.params.ephemeral_bits();
            let window = table_window((self.voters() * self.params.authorities()).max(1), bits);
            self.primes
                .iter()
                .map(|p| {
                    votum_arith::FixedBaseTable::with_window(eg.modulus(), p.value(), bits, window)
                        .or_else(|_| {
                            votum_arith::FixedBaseTable::with_window(
                                eg.modulus(),
                                p.value(),
                                bits,
                                1,
                            )
                        })
                        .unwrap_or_else(|_| unreachable_table())
                })
                .collect()
        });
        match tables.get(v).map(|t| t.pow(r)) {
            // a power of a member is a member
            Some(Ok(x)) => eg.element(&x).unwrap_or_else(|_| eg.identity()),
            _ => eg.pow(&self.primes[v], &eg.scalar_from_integer(r)),
        }
    }

    pub fn pk_pow(&self, e: &Integer) -> ModElement {
        let eg = self.params.eg();
        let table = self.pk_table.get_or_init(|| {
            let uses = self.voters() * self.params.authorities();
            self.pk_table_for(uses, self.params.ballot_nonce_bits() + 1)
        });
        let x = table.pow(e).unwrap_or_else(|_| Integer::from(1));
        // a power of a member is a member: the Jacobi symbol test cannot fail
        eg.element(&x).unwrap_or_else(|_| eg.identity())
    }
}

fn ballot_transcript(board: &PublicBoard, ballot: &Ballot, a: &ModElement) -> Transcript {
    let (eg, ig) = (board.params.eg(), board.params.ig());
    let mut t = Transcript::new(hash::TAG_BALLOT);
    t.append_bytes("election", &board.digest);
    t.append_element(ig, "x-hat", &ballot.x_hat);
    t.append_element(eg, "a", a);
    t.append_element(eg, "b", &ballot.b);
    t.append_element(ig, "t1", &ballot.proof.t1);
    t.append_element(eg, "t2", &ballot.proof.t2);
    t.append_element(eg, "t3", &ballot.proof.t3);
    t
}

/// The challenge of a ballot proof (7.21, 7.24): τ bits.
pub fn ballot_challenge(board: &PublicBoard, ballot: &Ballot, a: &ModElement) -> Integer {
    hash::challenge(&ballot_transcript(board, ballot, a), board.params.tau())
}

/// a = Π a_u.
pub fn query_product(eg: &ModpGroup, queries: &[ModElement]) -> ModElement {
    queries.iter().fold(eg.identity(), |acc, q| eg.op(&acc, q))
}

/// 7.24 CheckBallotProof with the powers of c on the left (spec/92.6); `a` is the ballot's
/// [`query_product`]. The elements were decoded with their membership checked; s_1 and s_3 are
/// checked to be in range here.
pub fn check_ballot_proof(board: &PublicBoard, ballot: &Ballot, a: &ModElement) -> bool {
    let (eg, ig) = (board.params.eg(), board.params.ig());
    let p = &ballot.proof;
    if p.s1 < 0 || &p.s1 >= ig.order() || p.s3 < 0 || &p.s3 >= eg.order() {
        return false;
    }
    let c = ballot_challenge(board, ballot, a);
    let (ce, ci) = (eg.scalar_from_integer(&c), ig.scalar_from_integer(&c));
    let s3 = eg.scalar_from_integer(&p.s3);
    let lhs1 = ig.op(&p.t1, &ig.pow(&ballot.x_hat, &ci));
    if lhs1 != board.g_hat_pow(&p.s1) {
        return false;
    }
    let lhs2 = eg.op(&p.t2, &eg.pow(a, &ce));
    if lhs2 != eg.op(&p.s2, &board.pk_pow(&p.s3)) {
        return false;
    }
    let lhs3 = eg.op(&p.t3, &eg.pow(&ballot.b, &ce));
    lhs3 == eg.pow_generator(&s3)
}

pub fn confirmation_challenge(board: &PublicBoard, y_hat: &ModElement, t: &ModElement) -> Integer {
    let ig = board.params.ig();
    let mut tr = Transcript::new(hash::TAG_CONFIRMATION);
    tr.append_bytes("election", &board.digest);
    tr.append_element(ig, "y-hat", y_hat);
    tr.append_element(ig, "t", t);
    hash::challenge(&tr, board.params.tau())
}

/// 7.36 CheckConfirmationProof: t·ŷ^c = ĝ^s.
pub fn check_confirmation_proof(board: &PublicBoard, gamma: &Confirmation) -> bool {
    let ig = board.params.ig();
    if gamma.s < 0 || &gamma.s >= ig.order() {
        return false;
    }
    let c = confirmation_challenge(board, &gamma.y_hat, &gamma.t);
    let lhs = ig.op(&gamma.t, &ig.pow(&gamma.y_hat, &ig.scalar_from_integer(&c)));
    lhs == board.g_hat_pow(&gamma.s)
}

/// The public check of a response once its exponents are revealed (7.37): b_u = a_u^(r_l) and
/// d_l = pk^(r_l) for the voter's k_i.
pub fn check_revealed_response(
    board: &PublicBoard,
    voter: usize,
    ballot: &Ballot,
    response: &Response,
    revealed: &[Integer],
) -> bool {
    let eg = board.params.eg();
    let k = board.set.k_of(voter);
    if revealed.len() != k.len()
        || response.d.len() != k.len()
        || response.b.len() != ballot.queries.len()
    {
        return false;
    }
    let mut u = 0;
    for (l, &kl) in k.iter().enumerate() {
        let r = eg.scalar_from_integer(&revealed[l]);
        if board.pk_pow(&revealed[l]) != response.d[l] {
            return false;
        }
        for _ in 0..kl {
            if eg.pow(&ballot.queries[u], &r) != response.b[u] {
                return false;
            }
            u += 1;
        }
    }
    true
}

/// Once a voter is finalized, anyone can open authority `j`'s OT response with the revealed
/// exponents (spec/92.8, issue 45 finding 9): every c_v decrypts to a point whose commitment is the
/// one the authority published in its voter data (7.11), and the finalization share F_ij is the
/// hash of those points. An authority that answered a voter with points other than its committed
/// ones, or finalized with another F, is named. Returns what differs, or `None`.
pub fn check_opened_points(
    board: &PublicBoard,
    voter: usize,
    authority: usize,
    response: &Response,
    finalization: &Finalization,
) -> Option<String> {
    let n = board.set.total_candidates();
    let Some(commitments) = board.commitments.get(authority).and_then(|c| c.get(voter)) else {
        return Some("no voter data of this authority for this voter".into());
    };
    if response.c.len() != n || commitments.len() != n {
        return Some(format!(
            "{} OT messages for {n} candidates",
            response.c.len()
        ));
    }
    let l_m = board.params.l_m();
    let mut points = Vec::with_capacity(n);
    let mut v = 0;
    for (l, &n_l) in board.set.candidates.iter().enumerate() {
        let Some(r) = finalization.r.get(l) else {
            return Some(format!("no revealed exponent for election {}", l + 1));
        };
        for _ in 0..n_l {
            let c = &response.c[v];
            if c.len() != l_m {
                return Some(format!(
                    "candidate {}: an OT message of {} bytes",
                    v + 1,
                    c.len()
                ));
            }
            let point = hash::open_point(c, board.prime_pow(v, r).value());
            if hash::commitment(&point) != commitments[v] {
                return Some(format!(
                    "candidate {}: the response opens to a point other than the committed one",
                    v + 1
                ));
            }
            points.push(point);
            v += 1;
        }
    }
    if hash::finalization_share(&points, board.params.l_f()) != finalization.f {
        return Some("the finalization share is not the hash of the committed points".into());
    }
    None
}

/// The context a shuffle proof of authority j is bound to.
pub fn shuffle_context(board: &PublicBoard, authority: usize) -> Vec<u8> {
    let mut c = board.digest.to_vec();
    c.extend((authority as u64).to_be_bytes());
    c
}

/// The generators for shuffles of up to `n` rows.
pub fn generators(board: &PublicBoard, n: usize) -> votum_shuffle::Generators<ModpGroup> {
    let mut seed = hash::GENERATORS_SEED.to_vec();
    seed.extend(board.digest);
    votum_shuffle::Generators::derive(board.params.eg(), &seed, n.max(1))
}

/// [`generators`] with the mixers' fixed-base table of h, its window chosen for the s shuffles'
/// uses (one per row each, spec/90.4's t̂).
#[cfg(feature = "prove")]
pub fn mixing_generators(board: &PublicBoard, n: usize) -> votum_shuffle::Generators<ModpGroup> {
    let gens = generators(board, n);
    let eg = board.params.eg();
    let bits = eg.order().significant_bits();
    let uses = n.max(1) * board.params.authorities();
    let h = gens.h().value();
    match votum_arith::FixedBaseTable::with_window(eg.modulus(), h, bits, table_window(uses, bits))
    {
        Ok(table) => gens.with_h_table(table),
        Err(_) => gens,
    }
}

/// The window of a fixed-base table for `uses` powers of `bits`-bit exponents: it minimises
/// (bits/w)·(2^w + uses), the products to build the table and to use it, up to 2^12 entries
/// per row (42 MiB for 481-bit exponents at 2048 bits).
pub fn table_window(uses: usize, bits: u32) -> u32 {
    (1u32..=12)
        .min_by_key(|&w| ((1u64 << w) + uses as u64) * u64::from(bits).div_ceil(u64::from(w)))
        .unwrap_or(8)
}

#[allow(clippy::panic)]
fn unreachable_table() -> votum_arith::FixedBaseTable {
    panic!("a 1-bit table of an element modulo an odd prime")
}
