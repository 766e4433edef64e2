use votum_arith::Integer;
use votum_group::{Group, ModpGroup};
use votum_hash::eg::{hash_elems, EgHashItem};
use votum_hash::{tags, Transcript};

/// Which proof a challenge is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProofKind {
    Schnorr,
    ChaumPedersen,
    Disjunctive,
    Constant,
}

impl ProofKind {
    fn label(self) -> &'static str {
        match self {
            ProofKind::Schnorr => "schnorr",
            ProofKind::ChaumPedersen => "chaum-pedersen",
            ProofKind::Disjunctive => "disjunctive-0-1",
            ProofKind::Constant => "constant",
        }
    }
}

/// The Fiat–Shamir challenge of a proof, from the ordered elements it hashes.
pub trait ChallengeOracle<G: Group>: Sync {
    fn challenge(&self, group: &G, kind: ProofKind, elements: &[&G::Element]) -> G::Scalar;
}

/// votum's challenges: a domain-tagged transcript of the group, a caller context (an election
/// or board hash, the statement's role) and every element of the statement and commitments.
#[derive(Clone, Debug, Default)]
pub struct NativeOracle {
    context: Vec<u8>,
}

impl NativeOracle {
    pub fn new(context: &[u8]) -> Self {
        Self {
            context: context.to_vec(),
        }
    }
}

impl<G: Group> ChallengeOracle<G> for NativeOracle {
    fn challenge(&self, group: &G, kind: ProofKind, elements: &[&G::Element]) -> G::Scalar {
        let tag = match kind {
            ProofKind::Schnorr => tags::SCHNORR,
            _ => tags::CHAUM_PEDERSEN,
        };
        let mut t = Transcript::new(tag);
        t.append_bytes("group", group.id().name().as_bytes());
        t.append_bytes("kind", kind.label().as_bytes());
        t.append_bytes("context", &self.context);
        t.append_u64("elements", elements.len() as u64);
        for e in elements {
            t.append_element(group, "element", e);
        }
        t.challenge_scalar(group, "challenge")
    }
}

/// ElectionGuard 1.0 challenges (electionguard 1.4.0): Schnorr `H(K, h)`; every other proof
/// `H(Q', …elements)` with the extended base hash `Q'` first.
#[derive(Clone, Debug)]
pub struct Eg1Oracle {
    extended_base_hash: Integer,
}

impl Eg1Oracle {
    pub fn new(extended_base_hash: Integer) -> Self {
        Self { extended_base_hash }
    }

    pub fn extended_base_hash(&self) -> &Integer {
        &self.extended_base_hash
    }
}

impl ChallengeOracle<ModpGroup> for Eg1Oracle {
    fn challenge(
        &self,
        group: &ModpGroup,
        kind: ProofKind,
        elements: &[&<ModpGroup as Group>::Element],
    ) -> <ModpGroup as Group>::Scalar {
        let mut items = Vec::with_capacity(elements.len() + 1);
        if kind != ProofKind::Schnorr {
            items.push(EgHashItem::Num(self.extended_base_hash.clone()));
        }
        items.extend(elements.iter().map(|e| EgHashItem::Num(e.value().clone())));
        group.scalar_from_integer(&hash_elems(&items, group.order()))
    }
}
