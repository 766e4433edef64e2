//! A 2.1 guardian's key generation (spec/66.4, §3.2.2): two secret polynomials (vote encryption and
//! ballot data), a communication key pair (κ, ζ), one compact Schnorr proof per polynomial, its shares
//! dealt to each other guardian in signed ElGamal under the receiver's κ (eqs. 15–22), the shares it
//! receives checked against their dealer's commitments (eqs. 28, 29), and its key shares z and ẑ
//! (eq. 24). Powers of secrets are constant time (ADR 0002); secrets are wiped when dropped.

use std::collections::BTreeMap;

use rand_core::{CryptoRng, RngCore};
use votum_group::Secret;
use zeroize::Zeroize;

use crate::ceremony::evaluate;
use crate::group::Eg2Group;
use crate::v21::check::{check_key, public_share};
use crate::v21::hashes::{
    key_proof_hash, share_key, share_opening_hash, share_pads, share_proof_hash, KeyKind,
};
use crate::v21::record::{GuardianKey, KeyProof};
use crate::{Eg2Error, Pair};

/// A share ciphertext E_ℓ(P_i(ℓ), P̂_i(ℓ)) = (C_0, C_1, (c̄, v̄)) from guardian `from` to guardian `to`.
pub struct EncryptedShare<G: Eg2Group> {
    pub from: u32,
    pub to: u32,
    pub c0: G::Element,
    pub c1: [u8; 64],
    pub proof: Pair<G>,
}

/// Guardian i's shares of the two joint secrets: z_i = P(i) and ẑ_i = P̂(i).
pub struct KeyShares<G: Eg2Group> {
    pub i: u32,
    pub z: Secret<G::Scalar>,
    pub z_hat: Secret<G::Scalar>,
}

/// A dealer's two values (P_j(i), P̂_j(i)) for this guardian.
type ShareValues<G> = (
    Secret<<G as votum_group::Group>::Scalar>,
    Secret<<G as votum_group::Group>::Scalar>,
);

/// What anyone can check of a share ciphertext (the service before it posts one, spec/80.11): C_0 in the
/// group and the proof of its nonce (eq. 22). Only the receiver can check the values (eqs. 28, 29).
pub fn check_share_proof<G: Eg2Group>(
    group: &G,
    hp: &[u8; 32],
    share: &EncryptedShare<G>,
) -> Result<(), String> {
    if !group.all_members(&[&share.c0]) {
        return Err("the share's C0 is not in the group".into());
    }
    let gamma = group.op(
        &group.pow_generator(&share.proof.v),
        &group.pow(&share.c0, &share.proof.c),
    );
    let c = group.to_challenge(&share_proof_hash(
        group,
        hp,
        (share.from, share.to),
        &gamma,
        &share.c0,
        &share.c1,
    ));
    if c != share.proof.c {
        return Err("the share's proof of its nonce does not verify (eq. 22)".into());
    }
    Ok(())
}

/// A compact Chaum–Pedersen proof (c, v) that log_g(g^x) = log_base(base^x), for votum's additions that
/// the specification gives no proof (a guardian's nonce part, spec/66.6; a share's opening, 66.4): a = g^u,
/// b = base^u, c from `challenge(a, b)`, v = u − c·x.
pub(crate) fn prove_equal_logs<G: Eg2Group, R: RngCore + CryptoRng>(
    group: &G,
    base: &G::Element,
    x: &Secret<G::Scalar>,
    rng: &mut R,
    challenge: impl Fn(&G::Element, &G::Element) -> [u8; 32],
) -> Pair<G> {
    let u = group.random_secret(rng);
    let a = group.pow_secret(group.generator(), &u);
    let b = group.pow_secret(base, &u);
    let c = group.to_challenge(&challenge(&a, &b));
    let v = group.scalar_sub(u.expose(), &group.scalar_mul(&c, x.expose()));
    Pair { c, v }
}

/// Whether (c, v) proves log_g(h) = log_base(y) ([`prove_equal_logs`]): c = challenge(g^v h^c, base^v y^c).
pub(crate) fn equal_logs_hold<G: Eg2Group>(
    group: &G,
    (h, base, y): (&G::Element, &G::Element, &G::Element),
    proof: &Pair<G>,
    challenge: impl Fn(&G::Element, &G::Element) -> [u8; 32],
) -> bool {
    let (c, v) = (&proof.c, &proof.v);
    let a = group.op(&group.pow_generator(v), &group.pow(h, c));
    let b = group.op(&group.pow(base, v), &group.pow(y, c));
    group.to_challenge(&challenge(&a, &b)) == *c
}

/// The share's two values (P_i(ℓ), P̂_i(ℓ)) under β = C₀^ζ_ℓ = κ_ℓ^ξ (eq. 23), each below q.
fn open_values<G: Eg2Group>(
    group: &G,
    hp: &[u8; 32],
    share: &EncryptedShare<G>,
    kappa_l: &G::Element,
    beta: &G::Element,
) -> Result<ShareValues<G>, String> {
    let mut key = share_key(group, hp, (share.from, share.to), kappa_l, &share.c0, beta);
    let mut pads = share_pads(&key, share.from, share.to);
    key.zeroize();
    let mut plain = [0u8; 64];
    for (n, out) in plain.iter_mut().enumerate() {
        *out = share.c1[n] ^ pads[n];
    }
    pads.zeroize();
    let read = |bytes: &[u8]| group.read_scalar(bytes).map(Secret::new);
    let values = read(&plain[..32]).and_then(|p| Ok((p, read(&plain[32..])?)));
    plain.zeroize();
    values.map_err(|_| "a share is not below q".into())
}

/// Both values against the dealer's commitments for receiver `l` (eqs. 28, 29).
fn check_values<G: Eg2Group>(
    group: &G,
    dealer: &GuardianKey<G>,
    l: u32,
    (p, p_hat): (&Secret<G::Scalar>, &Secret<G::Scalar>),
) -> Result<(), String> {
    if group.pow_secret(group.generator(), p) != public_share(group, &dealer.vote, l) {
        return Err("the vote share does not match the dealer's commitments (eq. 28)".into());
    }
    if group.pow_secret(group.generator(), p_hat) != public_share(group, &dealer.data, l) {
        return Err("the data share does not match the dealer's commitments (eq. 29)".into());
    }
    Ok(())
}

/// Receiver ℓ's opening of a share it complains of (spec/66.4): β = C₀^ζ_ℓ with a Chaum–Pedersen proof
/// (c, v) that log_g(κ_ℓ) = log_C₀(β). With it anyone decrypts the share and checks it against the dealer's
/// commitments, so a complaint stands or falls on its own: the specification's answer to a complaint
/// (§3.2.2, the dealer publishing the share and its nonce) needs the dealer, and lets a false complaint
/// stop the ceremony until it comes. Opening a share reveals only its two values: its nonce proof (eq. 22)
/// shows the dealer knows ξ, and so β = κ_ℓ^ξ already.
pub struct ShareOpening<G: Eg2Group> {
    pub beta: G::Element,
    pub proof: Pair<G>,
}

/// What anyone concludes from receiver ℓ's complaint of dealer i's share with its opening (spec/66.4): the
/// dealer's fault (`Ok`, the reason), or why the complaint does not stand (`Err`): the share is not i's to
/// ℓ, the opening's proof fails, or the share opens to values that match i's commitments.
pub fn judge_complaint<G: Eg2Group>(
    group: &G,
    hp: &[u8; 32],
    k: u32,
    (dealer, receiver): (&GuardianKey<G>, &GuardianKey<G>),
    share: &EncryptedShare<G>,
    opening: &ShareOpening<G>,
) -> Result<String, String> {
    if share.from != dealer.i || share.to != receiver.i || dealer.i == receiver.i {
        return Err(format!(
            "the share from {} to {} is not guardian {}'s to guardian {}",
            share.from, share.to, dealer.i, receiver.i
        ));
    }
    if let Err(e) = check_key(group, hp, dealer, k) {
        return Ok(e);
    }
    if let Err(e) = check_share_proof(group, hp, share) {
        return Ok(e);
    }
    if !group.all_members(&[&opening.beta]) {
        return Err("the opening's β is not in the group".into());
    }
    let statement = (&receiver.kappa, &share.c0, &opening.beta);
    let challenge = |a: &G::Element, b: &G::Element| {
        share_opening_hash(group, hp, (share.from, share.to), statement, (a, b))
    };
    if !equal_logs_hold(group, statement, &opening.proof, challenge) {
        return Err(format!(
            "the opening's proof does not verify against guardian {}'s κ",
            receiver.i
        ));
    }
    let values = match open_values(group, hp, share, &receiver.kappa, &opening.beta) {
        Ok(values) => values,
        Err(e) => return Ok(e),
    };
    match check_values(group, dealer, receiver.i, (&values.0, &values.1)) {
        Err(e) => Ok(e),
        Ok(()) => Err(format!(
            "guardian {}'s share to guardian {} opens to values that match its commitments: the complaint \
             is false",
            dealer.i, receiver.i
        )),
    }
}

/// A guardian with its secrets.
pub struct Guardian<G: Eg2Group> {
    pub i: u32,
    vote: Vec<Secret<G::Scalar>>,
    data: Vec<Secret<G::Scalar>>,
    zeta: Secret<G::Scalar>,
    public: GuardianKey<G>,
    /// (P_j(i), P̂_j(i)) from each dealer j, this guardian's own included, each checked
    received: BTreeMap<u32, ShareValues<G>>,
}

impl<G: Eg2Group> std::fmt::Debug for Guardian<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guardian")
            .field("i", &self.i)
            .field("secrets", &"<redacted>")
            .finish()
    }
}

/// The compact proof (c, v_0 … v_k) of `coefficients` and ζ (eqs. 10–13).
fn prove_key<G: Eg2Group, R: RngCore + CryptoRng>(
    group: &G,
    hp: &[u8; 32],
    (kind, i): (KeyKind, u32),
    coefficients: &[Secret<G::Scalar>],
    (commitments, kappa, zeta): (&[G::Element], &G::Element, &Secret<G::Scalar>),
    rng: &mut R,
) -> KeyProof<G> {
    let secrets: Vec<&Secret<G::Scalar>> =
        coefficients.iter().chain(std::iter::once(zeta)).collect();
    let us: Vec<Secret<G::Scalar>> = secrets.iter().map(|_| group.random_secret(rng)).collect();
    let h: Vec<G::Element> = us
        .iter()
        .map(|u| group.pow_secret(group.generator(), u))
        .collect();
    let c = group.to_challenge(&key_proof_hash(group, hp, kind, i, commitments, kappa, &h));
    let v = us
        .iter()
        .zip(&secrets)
        .map(|(u, a)| group.scalar_sub(u.expose(), &group.scalar_mul(&c, a.expose())))
        .collect();
    KeyProof { c, v }
}

impl<G: Eg2Group> Guardian<G> {
    /// Guardian `i` (1…n) of an election with quorum `k`: fresh polynomials and ζ, committed and proven.
    pub fn new<R: RngCore + CryptoRng>(
        group: &G,
        hp: &[u8; 32],
        i: u32,
        k: u32,
        rng: &mut R,
    ) -> Self {
        let draw = |rng: &mut R| -> Vec<Secret<G::Scalar>> {
            (0..k).map(|_| group.random_secret(rng)).collect()
        };
        let vote = draw(rng);
        let data = draw(rng);
        let zeta = group.random_secret(rng);
        let commit = |cs: &[Secret<G::Scalar>]| -> Vec<G::Element> {
            cs.iter()
                .map(|a| group.pow_secret(group.generator(), a))
                .collect()
        };
        let (kv, kd) = (commit(&vote), commit(&data));
        let kappa = group.pow_secret(group.generator(), &zeta);
        let vote_proof = prove_key(
            group,
            hp,
            (KeyKind::Vote, i),
            &vote,
            (&kv, &kappa, &zeta),
            rng,
        );
        let data_proof = prove_key(
            group,
            hp,
            (KeyKind::Data, i),
            &data,
            (&kd, &kappa, &zeta),
            rng,
        );
        let public = GuardianKey {
            i,
            vote: kv,
            data: kd,
            kappa,
            vote_proof,
            data_proof,
        };
        let own = (evaluate(group, &vote, i), evaluate(group, &data, i));
        let mut received = BTreeMap::new();
        received.insert(i, own);
        Self {
            i,
            vote,
            data,
            zeta,
            public,
            received,
        }
    }

    pub fn public(&self) -> GuardianKey<G> {
        self.public.clone()
    }

    /// The share ciphertext for guardian `to` (eqs. 15–22), under its κ. `to`'s key must have been checked.
    pub fn share_for<R: RngCore + CryptoRng>(
        &self,
        group: &G,
        hp: &[u8; 32],
        to: &GuardianKey<G>,
        rng: &mut R,
    ) -> EncryptedShare<G> {
        let l = to.i;
        let xi = group.random_secret(rng);
        let alpha = group.pow_secret(group.generator(), &xi);
        let beta = group.pow_secret(&to.kappa, &xi);
        let mut key = share_key(group, hp, (self.i, l), &to.kappa, &alpha, &beta);
        let mut pads = share_pads(&key, self.i, l);
        key.zeroize();
        let mut plain = group.scalar_bytes(evaluate(group, &self.vote, l).expose());
        plain.extend_from_slice(&group.scalar_bytes(evaluate(group, &self.data, l).expose()));
        let mut c1 = [0u8; 64];
        for (n, out) in c1.iter_mut().enumerate() {
            *out = plain[n] ^ pads[n];
        }
        plain.zeroize();
        pads.zeroize();
        let u = group.random_secret(rng);
        let gamma = group.pow_secret(group.generator(), &u);
        let c = group.to_challenge(&share_proof_hash(
            group,
            hp,
            (self.i, l),
            &gamma,
            &alpha,
            &c1,
        ));
        let v = group.scalar_sub(u.expose(), &group.scalar_mul(&c, xi.expose()));
        EncryptedShare {
            from: self.i,
            to: l,
            c0: alpha,
            c1,
            proof: Pair { c, v },
        }
    }

    /// Takes the share `share` from `dealer` (whose key record is checked here, Verification 2): its
    /// proof (eq. 22) verified, decrypted with ζ (eq. 23), both values checked against the dealer's
    /// commitments (eqs. 28, 29). A share that fails any of these is refused with its dealer's name.
    pub fn receive(
        &mut self,
        group: &G,
        hp: &[u8; 32],
        k: u32,
        dealer: &GuardianKey<G>,
        share: &EncryptedShare<G>,
    ) -> Result<(), Eg2Error> {
        let refuse = |reason: String| Eg2Error::Guardian {
            guardian: format!("guardian {}", dealer.i),
            reason,
        };
        if share.from != dealer.i || share.to != self.i {
            return Err(refuse(format!(
                "a share from {} to {} handed to guardian {} as from {}",
                share.from, share.to, self.i, dealer.i
            )));
        }
        if dealer.i == self.i || self.received.contains_key(&dealer.i) {
            return Err(refuse("a second share from this dealer".into()));
        }
        check_key(group, hp, dealer, k).map_err(&refuse)?;
        check_share_proof(group, hp, share).map_err(&refuse)?;
        let beta = group.pow_secret(&share.c0, &self.zeta);
        let (p, p_hat) =
            open_values(group, hp, share, &self.public.kappa, &beta).map_err(&refuse)?;
        check_values(group, dealer, self.i, (&p, &p_hat)).map_err(refuse)?;
        self.received.insert(dealer.i, (p, p_hat));
        Ok(())
    }

    /// This guardian's opening of `share` (addressed to it) to go with a complaint of its dealer (spec/66.4).
    /// Refused for a share whose nonce proof (eq. 22) fails: only for a dealer who knows ξ is β nothing new.
    pub fn open_share<R: RngCore + CryptoRng>(
        &self,
        group: &G,
        hp: &[u8; 32],
        share: &EncryptedShare<G>,
        rng: &mut R,
    ) -> Result<ShareOpening<G>, Eg2Error> {
        let refuse = |reason: String| Eg2Error::Guardian {
            guardian: format!("guardian {}", self.i),
            reason,
        };
        if share.to != self.i || share.from == self.i {
            return Err(refuse(format!(
                "opens no share from {} to {}",
                share.from, share.to
            )));
        }
        check_share_proof(group, hp, share)
            .map_err(|e| refuse(format!("opens no share whose proof fails: {e}")))?;
        let beta = group.pow_secret(&share.c0, &self.zeta);
        let statement = (&self.public.kappa, &share.c0, &beta);
        let proof = prove_equal_logs(group, &share.c0, &self.zeta, rng, |a, b| {
            share_opening_hash(group, hp, (share.from, share.to), statement, (a, b))
        });
        Ok(ShareOpening { beta, proof })
    }

    /// z_i and ẑ_i (eq. 24), once a share from every one of the `n` guardians is in.
    pub fn key_shares(&self, group: &G, n: u32) -> Result<KeyShares<G>, Eg2Error> {
        let missing: Vec<u32> = (1..=n).filter(|j| !self.received.contains_key(j)).collect();
        if !missing.is_empty() {
            return Err(Eg2Error::Guardian {
                guardian: format!("guardian {}", self.i),
                reason: format!("no share yet from guardians {missing:?}"),
            });
        }
        let mut z = group.scalar_from_u64(0);
        let mut z_hat = group.scalar_from_u64(0);
        for (p, p_hat) in self.received.values() {
            z = group.scalar_add(&z, p.expose());
            z_hat = group.scalar_add(&z_hat, p_hat.expose());
        }
        Ok(KeyShares {
            i: self.i,
            z: Secret::new(z),
            z_hat: Secret::new(z_hat),
        })
    }
}
