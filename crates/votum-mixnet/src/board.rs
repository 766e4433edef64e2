//! The mixnet election's bulletin board (spec/91.5): the only way anything reaches the record.
//!
//! Each `post_*` first checks what it is given — its turn in the election's order, the sizes, that
//! every element is in the group, the proofs the board can check cheaply — and appends only when
//! every check passes: a refused posting leaves the record and the head hash exactly as they were.
//! Shuffle proofs are checked for form here (length, canonical encoding, membership) and verified
//! by the trustees and the verifier, as in CHVote, since that costs as much as the shuffle.

use std::io::Write;

use rand_chacha::ChaCha20Rng;
use votum_elgamal::Ciphertext;
use votum_group::Group;
use votum_hash::board::payload_digest;
use votum_proofs::{NativeOracle, SchnorrProof};
use votum_shuffle::{Rows, ShuffleProof};

use crate::ballot::{verify_ballots, EncryptedBallot};
use crate::count::Outcome;
use crate::decrypt::{verify_share, DecryptionShare};
use crate::params::Parameters;
use crate::record::RecordWriter;
use crate::wire;
use crate::MixError;

/// Where the election stands: what the board accepts next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Trustee `i` (1-based) posts its commitments next.
    Trustee(u64),
    /// The ballot box's contents are due.
    Ballots,
    /// Mixer `m` (1-based) posts its shuffle next.
    Mix(usize),
    /// Trustees post decryption shares (any order, each once), then the result.
    Decryption,
    /// The result is posted; nothing more is accepted.
    Closed,
}

impl Phase {
    fn describe(self) -> String {
        match self {
            Phase::Trustee(i) => format!("trustee {i}'s key is due"),
            Phase::Ballots => "the ballots are due".into(),
            Phase::Mix(m) => format!("mixer {m}'s shuffle is due"),
            Phase::Decryption => "decryption shares are due".into(),
            Phase::Closed => "the board is closed".into(),
        }
    }
}

/// The oracle of trustee `i`'s proof of knowledge of its constant term (bound to the parameters).
pub fn trustee_oracle(params_digest: &[u8; 32], trustee: u64) -> NativeOracle {
    let mut c = b"mix-trustee".to_vec();
    c.extend_from_slice(params_digest);
    c.extend_from_slice(&trustee.to_be_bytes());
    NativeOracle::new(&c)
}

/// X_i = Π_k public_share(C_k, i): trustee i's public share of the joint key.
pub fn public_share<G: Group>(
    group: &G,
    commitments: &[Vec<G::Element>],
    i: u64,
) -> Result<G::Element, MixError> {
    commitments.iter().try_fold(group.identity(), |acc, c| {
        votum_elgamal::threshold::public_share(group, c, i)
            .map(|x| group.op(&acc, &x))
            .map_err(|e| MixError::Key {
                trustee: i,
                reason: e.to_string(),
            })
    })
}

/// What [`MixBoard::post_bytes`] gives back.
pub enum Posted<G: Group> {
    Entry,
    /// The ballots: how many.
    Ballots(usize),
    /// A shuffle: the list it replaced (its input) and its proof's context.
    Mix {
        input: Rows<G>,
        context: [u8; 32],
    },
}

/// An entry whose authority's signature is due next (spec/91.9).
struct Unsigned {
    kind: &'static str,
    name: String,
    context: [u8; 32],
    payload_digest: [u8; 32],
    /// What the board does once the signature is posted.
    then: AfterSignature,
}

#[derive(Clone, Copy)]
enum AfterSignature {
    Nothing,
    /// The last trustee's key is signed: post the joint key.
    PublicKey,
}

/// A board being written, with the public state its checks need.
pub struct MixBoard<G: Group, W: Write> {
    group: G,
    params: Parameters,
    params_digest: [u8; 32],
    writer: RecordWriter<W>,
    phase: Phase,
    commitments: Vec<Vec<G::Element>>,
    public_key: Option<G::Element>,
    ballot_context: [u8; 32],
    /// The last list posted (the input, then each mixer's output).
    current: Option<Rows<G>>,
    mix_contexts: Vec<[u8; 32]>,
    decryption_context: [u8; 32],
    /// Trustees whose decryption share is posted.
    decrypted: Vec<u64>,
    /// The head after `parameters` (the context of the trustees' signatures).
    key_context: [u8; 32],
    /// In a signed election, the entry whose signature must come next.
    unsigned: Option<Unsigned>,
    rng: ChaCha20Rng,
}

impl<G: Group, W: Write> MixBoard<G, W> {
    /// Opens the board of an election: writes the record's header and posts the parameters.
    pub fn create(group: &G, params: &Parameters, out: W) -> Result<Self, MixError> {
        params.check()?;
        let mut writer = RecordWriter::new(out, &params.election_id)?;
        let bytes = params.encode_for(group.id());
        let key_context = writer.append("parameters", "parameters", &bytes)?;
        Ok(Self {
            group: group.clone(),
            params: params.clone(),
            params_digest: payload_digest(&bytes),
            writer,
            phase: Phase::Trustee(1),
            commitments: Vec::new(),
            public_key: None,
            ballot_context: [0; 32],
            current: None,
            mix_contexts: Vec::new(),
            decryption_context: [0; 32],
            decrypted: Vec::new(),
            key_context,
            unsigned: None,
            rng: crate::params::weights_rng(&mut rand_core::OsRng),
        })
    }

    pub fn parameters(&self) -> &Parameters {
        &self.params
    }

    pub fn group(&self) -> &G {
        &self.group
    }

    /// The digest of the parameters' payload (the trustees' proofs are bound to it).
    pub fn parameters_digest(&self) -> [u8; 32] {
        self.params_digest
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The running hash: the Fiat–Shamir context of whatever is posted next.
    pub fn head(&self) -> [u8; 32] {
        self.writer.head()
    }

    /// Entries posted so far.
    pub fn entries(&self) -> u64 {
        self.writer.len()
    }

    /// The joint public key, once every trustee has posted.
    pub fn public_key(&self) -> Option<&G::Element> {
        self.public_key.as_ref()
    }

    pub fn trustee_commitments(&self) -> &[Vec<G::Element>] {
        &self.commitments
    }

    /// The context of the ballots' proofs (the head after `public-key`).
    pub fn ballot_context(&self) -> [u8; 32] {
        self.ballot_context
    }

    /// The last list posted: the cascade's input, then each mixer's output.
    pub fn current(&self) -> Option<&Rows<G>> {
        self.current.as_ref()
    }

    /// The context of mixer m's proof (1-based), once it has posted.
    pub fn mix_context(&self, mixer: usize) -> Option<[u8; 32]> {
        self.mix_contexts.get(mixer.checked_sub(1)?).copied()
    }

    /// The context of every decryption proof (the head after the last mix).
    pub fn decryption_context(&self) -> [u8; 32] {
        self.decryption_context
    }

    /// The trustees whose decryption share is posted, in order.
    pub fn decrypted(&self) -> &[u64] {
        &self.decrypted
    }

    /// The head an authority's signature on entry `name` of `kind` binds (spec/91.9): the head
    /// after `parameters` for a trustee's key, the head before the shuffle for a mix, the
    /// decryption context for a share. Call it when the entry is due (a mix's context is the
    /// head then).
    pub fn signing_context(&self, kind: &str) -> [u8; 32] {
        match kind {
            "trustee" => self.key_context,
            "decryption" => self.decryption_context,
            _ => self.writer.head(),
        }
    }

    /// The entry whose authority's signature is due, if one is (kind, name).
    pub fn awaiting_signature(&self) -> Option<(&str, &str)> {
        self.unsigned.as_ref().map(|u| (u.kind, u.name.as_str()))
    }

    fn due(&self, what: &str, ok: bool) -> Result<(), MixError> {
        if let Some(u) = &self.unsigned {
            return Err(MixError::OutOfTurn(format!(
                "{what} posted, but the signature of {} is due",
                u.name
            )));
        }
        if ok {
            Ok(())
        } else {
            Err(MixError::OutOfTurn(format!(
                "{what} posted, but {}",
                self.phase.describe()
            )))
        }
    }

    /// Trustee `trustee`'s polynomial commitments and its proof of knowledge of the constant term.
    /// After the last trustee the board posts the joint key itself.
    pub fn post_trustee(
        &mut self,
        trustee: u64,
        commitments: &[G::Element],
        proof: &SchnorrProof<G>,
    ) -> Result<(), MixError> {
        self.due(
            &format!("trustee {trustee}'s key"),
            self.phase == Phase::Trustee(trustee),
        )?;
        let key_err = |reason: String| MixError::Key { trustee, reason };
        if commitments.len() != self.params.quorum {
            return Err(key_err(format!(
                "{} commitments (quorum {})",
                commitments.len(),
                self.params.quorum
            )));
        }
        proof
            .verify(
                &self.group,
                &trustee_oracle(&self.params_digest, trustee),
                &commitments[0],
            )
            .map_err(|e| key_err(e.to_string()))?;
        let name = format!("trustee-{trustee}");
        let payload = wire::trustee_bytes(&self.group, commitments, proof);
        self.writer.append("trustee", &name, &payload)?;
        self.commitments.push(commitments.to_vec());
        let last = trustee == self.params.trustees as u64;
        if !last {
            self.phase = Phase::Trustee(trustee + 1);
        }
        let then = if last {
            AfterSignature::PublicKey
        } else {
            AfterSignature::Nothing
        };
        if self.await_signature("trustee", name, self.key_context, &payload, then) {
            return Ok(());
        }
        if last {
            self.post_public_key()?;
        }
        Ok(())
    }

    /// In a signed election, notes that entry `name` waits for its signature (and returns true).
    fn await_signature(
        &mut self,
        kind: &'static str,
        name: String,
        context: [u8; 32],
        payload: &[u8],
        then: AfterSignature,
    ) -> bool {
        if !self.params.signed() {
            return false;
        }
        self.unsigned = Some(Unsigned {
            kind,
            name,
            context,
            payload_digest: payload_digest(payload),
            then,
        });
        true
    }

    /// The signature of the entry just posted, by the authority the parameters name for it
    /// (spec/91.9); refused, appending nothing, unless it verifies.
    pub fn post_signature(&mut self, signature: &[u8]) -> Result<(), MixError> {
        let Some(u) = self.unsigned.as_ref() else {
            return Err(MixError::OutOfTurn(
                "a signature posted, but no entry waits for one".into(),
            ));
        };
        let ok = crate::signing::check_signature_of_digest(
            &self.params,
            &self.params_digest,
            &u.context,
            u.kind,
            &u.name,
            &u.payload_digest,
            signature,
        );
        if !ok {
            return Err(MixError::Signature(format!(
                "{}: not its authority's signature",
                u.name
            )));
        }
        let name = u.name.clone();
        let then = u.then;
        self.writer.append("signature", &name, signature)?;
        self.unsigned = None;
        match then {
            AfterSignature::Nothing => Ok(()),
            AfterSignature::PublicKey => self.post_public_key(),
        }
    }

    /// After the last trustee: the joint key, Π C_{i,0}.
    fn post_public_key(&mut self) -> Result<(), MixError> {
        let g = &self.group;
        let joint = self
            .commitments
            .iter()
            .fold(g.identity(), |acc, c| g.op(&acc, &c[0]));
        self.ballot_context =
            self.writer
                .append("public-key", "public-key", &g.encode_element(&joint))?;
        self.public_key = Some(joint);
        self.phase = Phase::Ballots;
        Ok(())
    }

    /// The ballot box: every ballot's proofs are checked (one ballot per voter), then the ballots
    /// and the cascade's input list are posted.
    pub fn post_ballots(&mut self, ballots: &[EncryptedBallot<G>]) -> Result<(), MixError> {
        self.due("the ballots", self.phase == Phase::Ballots)?;
        if ballots.is_empty() {
            return Err(MixError::Input("no ballots".into()));
        }
        verify_ballots(
            &self.group,
            &self.ballot_context,
            self.params.width,
            ballots,
        )?;
        let cts: Vec<Ciphertext<G>> = ballots.iter().flat_map(|b| b.cts.iter().cloned()).collect();
        let input =
            Rows::new(self.params.width, cts).map_err(|e| MixError::Input(e.to_string()))?;
        let input_bytes = input.encode(&self.group);
        self.writer.append(
            "ballots",
            "ballots",
            &wire::ballots_bytes(&self.group, ballots),
        )?;
        self.writer.append("input", "input", &input_bytes)?;
        self.current = Some(input);
        self.phase = Phase::Mix(1);
        Ok(())
    }

    /// Mixer `mixer`'s output list and shuffle proof, as bytes (spec/90.6). Refused unless it is
    /// that mixer's turn, the list has the input's size and width with every element in the
    /// group, and the proof decodes at its exact length for that size. Returns the list it
    /// replaces as the current one (the shuffle's input), which the board no longer needs.
    pub fn post_mix(
        &mut self,
        mixer: usize,
        output: &[u8],
        proof: &[u8],
    ) -> Result<Rows<G>, MixError> {
        self.due(
            &format!("mixer {mixer}'s shuffle"),
            self.phase == Phase::Mix(mixer),
        )?;
        let err = |source| MixError::Shuffle { mixer, source };
        let (n, w) = {
            let cur = self
                .current
                .as_ref()
                .ok_or(MixError::Input("no input list".into()))?;
            (cur.len(), cur.width())
        };
        let out = Rows::decode(&self.group, output, &mut self.rng).map_err(err)?;
        if out.len() != n || out.width() != w {
            return Err(err(votum_shuffle::ShuffleError::Length {
                what: "output rows",
                expected: n,
                got: out.len(),
            }));
        }
        ShuffleProof::decode(&self.group, proof, n, w, &mut self.rng).map_err(err)?;
        let context = self.writer.head();
        let mut payload = Vec::with_capacity(output.len() + proof.len());
        payload.extend_from_slice(output);
        payload.extend_from_slice(proof);
        let name = format!("mix-{mixer}");
        let head = self.writer.append("mix", &name, &payload)?;
        self.await_signature("mix", name, context, &payload, AfterSignature::Nothing);
        self.mix_contexts.push(context);
        let input = self.current.replace(out);
        if mixer == self.params.mixers {
            self.decryption_context = head;
            self.phase = Phase::Decryption;
        } else {
            self.phase = Phase::Mix(mixer + 1);
        }
        input.ok_or(MixError::Input("no input list".into()))
    }

    /// A trustee's decryption share of the last list: refused when it is not a trustee's, the
    /// trustee already posted, the size is wrong or its proof does not verify.
    pub fn post_decryption(&mut self, share: &DecryptionShare<G>) -> Result<(), MixError> {
        let t = share.trustee;
        self.due(
            &format!("trustee {t}'s decryption share"),
            self.phase == Phase::Decryption,
        )?;
        let fail = |reason: &str| MixError::Decryption {
            trustee: t,
            reason: reason.into(),
        };
        if t == 0 || t > self.params.trustees as u64 {
            return Err(fail("not a trustee"));
        }
        if self.decrypted.contains(&t) {
            return Err(MixError::OutOfTurn(format!(
                "trustee {t} already posted its decryption share"
            )));
        }
        let pads: Vec<G::Element> = self
            .current
            .as_ref()
            .map(|c| c.ciphertexts().iter().map(|c| c.pad.clone()).collect())
            .unwrap_or_default();
        let x = public_share(&self.group, &self.commitments, t)?;
        verify_share(&self.group, &x, &self.decryption_context, &pads, share)?;
        let name = format!("decryption-{t}");
        let payload = wire::share_bytes(&self.group, share);
        self.writer.append("decryption", &name, &payload)?;
        let context = self.decryption_context;
        self.await_signature(
            "decryption",
            name,
            context,
            &payload,
            AfterSignature::Nothing,
        );
        self.decrypted.push(t);
        Ok(())
    }

    /// The decrypted rows and the count; needs a quorum of shares. Closes the board.
    pub fn post_result(
        &mut self,
        plaintexts: &[Vec<u64>],
        outcome: &Outcome,
    ) -> Result<(), MixError> {
        self.due("the result", self.phase == Phase::Decryption)?;
        if self.decrypted.len() < self.params.quorum {
            return Err(MixError::OutOfTurn(format!(
                "the result posted after {} of the {} decryption shares a quorum needs",
                self.decrypted.len(),
                self.params.quorum
            )));
        }
        let n = self.current.as_ref().map_or(0, Rows::len);
        let w = self.params.width;
        if plaintexts.len() != n || plaintexts.iter().any(|r| r.len() != w) {
            return Err(MixError::Input(format!(
                "the result must have {n} rows of width {w}"
            )));
        }
        self.writer.append(
            "result",
            "result",
            &wire::result_bytes(plaintexts, w, outcome),
        )?;
        self.phase = Phase::Closed;
        Ok(())
    }

    /// Posts an entry given as the record holds it (kind, name, payload): decoded, then through
    /// the `post_*` of its kind. `public-key` and `input` are the board's own and not taken.
    pub fn post_bytes(
        &mut self,
        kind: &str,
        name: &str,
        payload: &[u8],
    ) -> Result<Posted<G>, MixError> {
        let g = self.group.clone();
        let number = || {
            crate::signing::signer_of(kind, name)
                .ok_or_else(|| MixError::Input(format!("an entry named {name}")))
        };
        match kind {
            "trustee" => {
                let (c, proof) = wire::decode_trustee(&g, payload)?;
                self.post_trustee(number()? as u64, &c, &proof)?;
            }
            "signature" => {
                match self.awaiting_signature() {
                    Some((_, due)) if due == name => {}
                    _ => return Err(MixError::OutOfTurn(format!("a signature named {name}"))),
                }
                self.post_signature(payload)?;
            }
            "ballots" if name == "ballots" => {
                let ballots = wire::decode_ballots(&g, payload, self.params.width)?;
                self.post_ballots(&ballots)?;
                return Ok(Posted::Ballots(ballots.len()));
            }
            "mix" => {
                let m = number()?;
                let (list, proof) = wire::split_mix(payload, g.element_len())?;
                let context = self.head();
                let input = self.post_mix(m, list, proof)?;
                return Ok(Posted::Mix { input, context });
            }
            "decryption" => {
                let share = wire::decode_share(&g, payload)?;
                if format!("decryption-{}", share.trustee) != name {
                    return Err(MixError::Input(format!(
                        "{name} holds trustee {}'s share",
                        share.trustee
                    )));
                }
                self.post_decryption(&share)?;
            }
            "result" if name == "result" => {
                let (rows, outcome) =
                    wire::decode_result(payload, self.params.rule, self.params.candidates)?;
                self.post_result(&rows, &outcome)?;
            }
            other => {
                return Err(MixError::Input(format!(
                    "an entry {other} {name} (not one posted from outside the board)"
                )))
            }
        }
        Ok(Posted::Entry)
    }

    /// The head hash and the writer back (flushed).
    pub fn finish(self) -> Result<([u8; 32], u64, W), MixError> {
        let head = self.writer.head();
        let len = self.writer.len();
        Ok((head, len, self.writer.into_inner()?))
    }
}
