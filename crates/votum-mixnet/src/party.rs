//! One party of a mixnet election in a process of its own (spec/91.9): an authority (trustee k
//! and mixer k where those exist) or the voters' client. A party keeps its own copy of the board:
//! every entry the controller shows it goes through the same checks as the board's (turn, sizes,
//! membership, key and ballot proofs, decryption proofs, the authorities' signatures), and a
//! trustee also checks every other mixer's shuffle proof as it arrives. The party acts only on
//! what its copy holds, once per election, in the phase its copy is in: a trustee deals once,
//! takes each dealer's share once, and decrypts once, the last list of a cascade that every
//! mixer signed and it checked; a mixer shuffles once, the list its copy holds, with its copy's
//! head as the proof's context; the voters' client casts once, under the key its copy derives. A
//! request out of phase, repeated or not the party's role is [`MixError::Refused`]; a party whose
//! copy failed a check refuses everything after.
//!
//! What an authority signs comes back with its payload as the statement
//! ([`crate::signing::statement`]); the process signs it with its node key.

use std::collections::BTreeMap;
use std::io::Sink;

use rand_core::{CryptoRng, RngCore};
use votum_group::{Group, Secret};
use votum_shuffle::{Generators, ShuffleProof};

use crate::board::{MixBoard, Phase, Posted};
use crate::election::{cast_ballots, decrypt_share, Dealing};
use crate::params::{weights_rng, Parameters};
use crate::signing::{signer_of, statement};
use crate::wire;
use crate::MixError;

/// Who a party is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Authority k (1-based): trustee k if k ≤ trustees, mixer k if k ≤ mixers.
    Authority(usize),
    /// The voters' client: encrypts the voters' rows.
    Voters,
}

/// An entry an authority made, with the statement it signs (spec/91.9).
pub struct Signed {
    pub kind: &'static str,
    pub name: String,
    pub payload: Vec<u8>,
    pub statement: Vec<u8>,
}

/// One party's state across the election.
pub struct MixParty<G: Group> {
    group: G,
    params: Parameters,
    role: Role,
    board: MixBoard<G, Sink>,
    generators: Option<Generators<G>>,
    /// The trustee's own dealing, until its shares are made.
    dealing: Option<Dealing<G>>,
    dealt: bool,
    /// Each dealer's share for this trustee (its own included), until the key is complete.
    received: BTreeMap<u64, Secret<G::Scalar>>,
    share: Option<votum_elgamal::SecretKey<G>>,
    shuffled: bool,
    decrypted: bool,
    /// The digest of the ballots this client cast (it checks its copy's ballots against it).
    cast: Option<[u8; 32]>,
    /// Why this party's copy of the board failed a check: it refuses everything after.
    broken: Option<String>,
}

fn refused(why: impl Into<String>) -> MixError {
    MixError::Refused(why.into())
}

impl<G: Group> MixParty<G> {
    /// A party of the election whose `parameters` payload is given. An authority refuses
    /// parameters that do not name `signing_key` (its node's) in its slot.
    pub fn new(
        group: &G,
        parameters: &[u8],
        role: Role,
        signing_key: Option<&[u8; 32]>,
    ) -> Result<Self, MixError> {
        let (gid, params) = Parameters::decode(parameters)?;
        if gid != group.id() {
            return Err(MixError::Input(format!(
                "parameters of group {}, not {}",
                gid.name(),
                group.id().name()
            )));
        }
        if !params.signed() {
            return Err(refused(
                "parameters that name no signing keys (spec/91.9: every authority signs)",
            ));
        }
        if let Role::Authority(k) = role {
            if k == 0 || k > params.authorities() {
                return Err(refused(format!(
                    "authority {k} of an election of {}",
                    params.authorities()
                )));
            }
            if signing_key != Some(&params.signers[k - 1]) {
                return Err(refused(format!(
                    "the parameters name another signing key for authority {k}"
                )));
            }
        }
        let board = MixBoard::create(group, &params, std::io::sink())?;
        Ok(Self {
            group: group.clone(),
            params,
            role,
            board,
            generators: None,
            dealing: None,
            dealt: false,
            received: BTreeMap::new(),
            share: None,
            shuffled: false,
            decrypted: false,
            cast: None,
            broken: None,
        })
    }

    pub fn parameters(&self) -> &Parameters {
        &self.params
    }

    pub fn role(&self) -> Role {
        self.role
    }

    /// The head of this party's copy of the board.
    pub fn head(&self) -> [u8; 32] {
        self.board.head()
    }

    /// Entries in this party's copy.
    pub fn entries(&self) -> u64 {
        self.board.entries()
    }

    fn trustee(&self) -> Option<u64> {
        match self.role {
            Role::Authority(k) if k <= self.params.trustees => Some(k as u64),
            _ => None,
        }
    }

    fn mixer(&self) -> Option<usize> {
        match self.role {
            Role::Authority(k) if k <= self.params.mixers => Some(k),
            _ => None,
        }
    }

    fn sound(&self) -> Result<(), MixError> {
        match &self.broken {
            Some(why) => Err(refused(format!(
                "this party's copy of the board failed: {why}"
            ))),
            None => Ok(()),
        }
    }

    /// Appends the controller's entries, in order, to this party's copy, each through the
    /// board's checks; the entries the board posts itself (`public-key` after the last trustee,
    /// `input` after the ballots) are recomputed, not taken. Afterwards the copy's head must be
    /// `head`, the controller's. A failed check leaves the party refusing everything after.
    pub fn sync(
        &mut self,
        entries: &[(String, String, Vec<u8>)],
        head: &[u8; 32],
    ) -> Result<(), MixError> {
        self.sound()?;
        for (kind, name, payload) in entries {
            if let Err(e) = self.append(kind, name, payload) {
                self.broken = Some(format!("{kind} {name}: {e}"));
                return Err(e);
            }
        }
        if &self.board.head() != head {
            let why =
                "the controller's head is not this party's copy's (it was shown another board)";
            self.broken = Some(why.into());
            return Err(refused(why));
        }
        Ok(())
    }

    fn append(&mut self, kind: &str, name: &str, payload: &[u8]) -> Result<(), MixError> {
        if kind == "public-key" || kind == "input" {
            // posted by the board itself: this copy has it already, and the head compares it
            return if name == kind {
                Ok(())
            } else {
                Err(MixError::Input(format!("an entry named {name}")))
            };
        }
        match self.board.post_bytes(kind, name, payload)? {
            Posted::Entry => {
                let keys_done = kind == "signature" && self.board.phase() == Phase::Ballots;
                if keys_done && self.trustee().is_some() && self.share.is_none() {
                    self.complete_key()?;
                }
            }
            Posted::Ballots(n) => {
                if let Some(cast) = self.cast {
                    if votum_hash::board::payload_digest(payload) != cast {
                        return Err(refused(
                            "the board's ballots are not the ones this client cast",
                        ));
                    }
                }
                let seed = self.params.generators_seed();
                self.generators = Some(Generators::derive(&self.group, &seed, n));
            }
            Posted::Mix { input, context } => {
                let m = signer_of(kind, name).unwrap_or(0);
                if self.trustee().is_some() && self.mixer() != Some(m) {
                    let (_, proof) = wire::split_mix(payload, self.group.element_len())?;
                    self.check_shuffle(m, &context, &input, proof)?;
                }
            }
        }
        Ok(())
    }

    /// A trustee's check of mixer m's shuffle, as its entry arrives.
    fn check_shuffle(
        &self,
        m: usize,
        context: &[u8; 32],
        input: &votum_shuffle::Rows<G>,
        proof: &[u8],
    ) -> Result<(), MixError> {
        let (Some(output), Some(generators), Some(pk)) = (
            self.board.current(),
            self.generators.as_ref(),
            self.board.public_key(),
        ) else {
            return Err(MixError::Input("a shuffle before the ballots".into()));
        };
        let mut r = weights_rng(&mut rand_core::OsRng);
        ShuffleProof::decode(&self.group, proof, input.len(), self.params.width, &mut r)
            .and_then(|p| p.verify(&self.group, pk, generators, context, input, output, &mut r))
            .map_err(|source| MixError::Shuffle { mixer: m, source })
    }

    /// Trustee k's dealing, once, before the ballots: its signed `trustee-k` entry and its share
    /// for every other trustee (j, the share's bytes: the caller seals each to trustee j and
    /// sends it over their channel). Its own share it keeps.
    #[allow(clippy::type_complexity)]
    pub fn deal<R: RngCore + CryptoRng>(
        &mut self,
        rng: &mut R,
    ) -> Result<(Signed, Vec<(u64, zeroize::Zeroizing<Vec<u8>>)>), MixError> {
        self.sound()?;
        let k = self.trustee().ok_or_else(|| refused("not a trustee"))?;
        if self.dealt {
            return Err(refused("this trustee has dealt already"));
        }
        if !matches!(self.board.phase(), Phase::Trustee(_)) {
            return Err(refused("the keys are made"));
        }
        let digest = self.board.parameters_digest();
        let dealing = Dealing::new(&self.group, &self.params, &digest, k, rng)?;
        self.dealt = true;
        let payload = wire::trustee_bytes(&self.group, &dealing.commitments, &dealing.proof);
        let mut shares = Vec::with_capacity(self.params.trustees - 1);
        for j in 1..=self.params.trustees as u64 {
            let s = dealing.share_for(&self.group, j);
            if j == k {
                self.received.insert(k, s);
            } else {
                shares.push((
                    j,
                    zeroize::Zeroizing::new(self.group.encode_scalar(s.expose())),
                ));
            }
        }
        self.dealing = Some(dealing);
        let name = format!("trustee-{k}");
        let context = self.board.signing_context("trustee");
        let statement = statement(&digest, &context, "trustee", &name, &payload);
        Ok((
            Signed {
                kind: "trustee",
                name,
                payload,
                statement,
            },
            shares,
        ))
    }

    /// Dealer `dealer`'s share for this trustee (the bytes the dealer sealed to it), once per
    /// dealer; checked against the dealer's commitments once every key is on the board.
    pub fn receive_share(&mut self, dealer: u64, bytes: &[u8]) -> Result<(), MixError> {
        self.sound()?;
        let k = self.trustee().ok_or_else(|| refused("not a trustee"))?;
        if dealer == k || dealer == 0 || dealer > self.params.trustees as u64 {
            return Err(refused(format!("a share from {dealer}")));
        }
        if self.received.contains_key(&dealer) || self.share.is_some() {
            return Err(refused(format!("trustee {dealer}'s share is here already")));
        }
        let s = self.group.decode_scalar(bytes).map_err(|e| MixError::Key {
            trustee: dealer,
            reason: e.to_string(),
        })?;
        self.received.insert(dealer, Secret::new(s));
        Ok(())
    }

    /// Once every trustee's key is on this copy: x_k = Σ_i s_i(k), each share checked against
    /// dealer i's posted commitments; a missing or wrong share fails naming its dealer.
    fn complete_key(&mut self) -> Result<(), MixError> {
        let k = self.trustee().ok_or_else(|| refused("not a trustee"))?;
        let commitments = self.board.trustee_commitments();
        let mut x = self.group.scalar_from_u64(0);
        for i in 1..=self.params.trustees as u64 {
            let key_err = |reason: String| MixError::Key { trustee: i, reason };
            let s = self
                .received
                .get(&i)
                .ok_or_else(|| key_err(format!("no share from it reached trustee {k}")))?;
            let c = &commitments[i as usize - 1];
            votum_elgamal::secret::verify_share(&self.group, c, k, s)
                .map_err(|e| key_err(format!("its share for trustee {k}: {e}")))?;
            x = self.group.scalar_add(&x, s.expose());
        }
        self.received.clear();
        self.dealing = None;
        self.share = Some(votum_elgamal::SecretKey::new(x));
        Ok(())
    }

    /// The voters' client: the voters' rows encrypted under the key its copy derived, bound to
    /// its copy's head, once: the `ballots` payload.
    pub fn cast<R: RngCore + CryptoRng>(
        &mut self,
        votes: &[Vec<u64>],
        rng: &mut R,
    ) -> Result<Vec<u8>, MixError> {
        self.sound()?;
        if self.role != Role::Voters {
            return Err(refused("not the voters' client"));
        }
        if self.cast.is_some() {
            return Err(refused("the voters have cast"));
        }
        if self.board.phase() != Phase::Ballots || self.board.awaiting_signature().is_some() {
            return Err(refused("the ballots are not due on this client's copy"));
        }
        let joint = self
            .board
            .public_key()
            .cloned()
            .ok_or_else(|| refused("no key"))?;
        let pk = votum_elgamal::PublicKey::with_table(&self.group, joint)
            .map_err(|e| MixError::Input(e.to_string()))?;
        let ballots = cast_ballots(
            &self.group,
            &self.params,
            &pk,
            &self.board.ballot_context(),
            votes,
            rng,
        )?;
        let payload = wire::ballots_bytes(&self.group, &ballots);
        self.cast = Some(votum_hash::board::payload_digest(&payload));
        Ok(payload)
    }

    /// Mixer m's shuffle of the list its copy holds, once, when its copy says it is due: the
    /// signed `mix-m` entry (the output list, then the proof).
    pub fn shuffle<R: RngCore + CryptoRng>(&mut self, rng: &mut R) -> Result<Signed, MixError> {
        self.sound()?;
        let m = self.mixer().ok_or_else(|| refused("not a mixer"))?;
        if self.shuffled {
            return Err(refused("this mixer has shuffled"));
        }
        if self.board.phase() != Phase::Mix(m) || self.board.awaiting_signature().is_some() {
            return Err(refused(format!(
                "mixer {m}'s shuffle is not due on this mixer's copy"
            )));
        }
        let (Some(input), Some(generators), Some(joint)) = (
            self.board.current(),
            self.generators.as_ref(),
            self.board.public_key(),
        ) else {
            return Err(refused("no list to mix"));
        };
        let pk = votum_elgamal::PublicKey::with_table(&self.group, joint.clone())
            .map_err(|e| MixError::Input(e.to_string()))?;
        let context = self.board.head();
        self.shuffled = true;
        let (out, proof) =
            votum_shuffle::shuffle_and_prove(&self.group, &pk, generators, &context, input, rng)
                .map_err(|source| MixError::Shuffle { mixer: m, source })?;
        let mut payload = out.encode(&self.group);
        payload.extend_from_slice(&proof.encode(&self.group));
        let name = format!("mix-{m}");
        let digest = self.board.parameters_digest();
        let statement = statement(&digest, &context, "mix", &name, &payload);
        Ok(Signed {
            kind: "mix",
            name,
            payload,
            statement,
        })
    }

    /// Trustee k's decryption share of the last list, once: only when its copy holds every
    /// mixer's shuffle, each signed by its mixer and checked by this trustee.
    pub fn decrypt<R: RngCore + CryptoRng>(&mut self, rng: &mut R) -> Result<Signed, MixError> {
        self.sound()?;
        let k = self.trustee().ok_or_else(|| refused("not a trustee"))?;
        if self.decrypted {
            return Err(refused("this trustee has decrypted"));
        }
        if self.board.phase() != Phase::Decryption || self.board.awaiting_signature().is_some() {
            return Err(refused(
                "decryption is not due on this trustee's copy (not every mixer's shuffle is posted and signed)",
            ));
        }
        let share = self.share.as_ref().ok_or_else(|| refused("no key share"))?;
        let pads: Vec<G::Element> = self
            .board
            .current()
            .map(|c| c.ciphertexts().iter().map(|c| c.pad.clone()).collect())
            .unwrap_or_default();
        let context = self.board.decryption_context();
        self.decrypted = true;
        let s = decrypt_share(&self.group, k, share, &context, &pads, rng)?;
        self.share = None;
        let payload = wire::share_bytes(&self.group, &s);
        let name = format!("decryption-{k}");
        let digest = self.board.parameters_digest();
        let statement = statement(&digest, &context, "decryption", &name, &payload);
        Ok(Signed {
            kind: "decryption",
            name,
            payload,
            statement,
        })
    }
}
