use rayon::prelude::*;
use sha2::{Digest, Sha256};
use votum_group::Group;

use crate::tags;

/// A Fiat–Shamir transcript: SHA-256 over a domain tag and labelled, length-prefixed fields.
///
/// Encoding of each field: `u64 BE len(label) ‖ label ‖ u64 BE len(value) ‖ value`. The tag is
/// absorbed as the first field with label `"domain"`. No two different sequences of fields
/// give the same byte string, so challenges of different messages are independent.
#[derive(Clone)]
pub struct Transcript {
    hasher: Sha256,
}

impl Transcript {
    pub fn new(domain_tag: &str) -> Self {
        let mut t = Self {
            hasher: Sha256::new(),
        };
        t.append_bytes("domain", domain_tag.as_bytes());
        t
    }

    pub fn append_bytes(&mut self, label: &str, value: &[u8]) {
        self.hasher.update((label.len() as u64).to_be_bytes());
        self.hasher.update(label.as_bytes());
        self.hasher.update((value.len() as u64).to_be_bytes());
        self.hasher.update(value);
    }

    pub fn append_u64(&mut self, label: &str, value: u64) {
        self.append_bytes(label, &value.to_be_bytes());
    }

    pub fn append_element<G: Group>(&mut self, group: &G, label: &str, e: &G::Element) {
        self.append_bytes(label, &group.encode_element(e));
    }

    pub fn append_elements<G: Group>(&mut self, group: &G, label: &str, es: &[G::Element]) {
        self.append_u64(label, es.len() as u64);
        for e in es {
            self.append_bytes(label, &group.encode_element(e));
        }
    }

    pub fn append_scalar<G: Group>(&mut self, group: &G, label: &str, s: &G::Scalar) {
        self.append_bytes(label, &group.encode_scalar(s));
    }

    /// The 32-byte digest of everything absorbed so far (the transcript stays usable).
    pub fn digest(&self) -> [u8; 32] {
        self.hasher.clone().finalize().into()
    }

    /// A challenge scalar, statistically uniform modulo q, bound to everything absorbed so far.
    pub fn challenge_scalar<G: Group>(&self, group: &G, label: &str) -> G::Scalar {
        let mut t = self.clone();
        t.append_bytes("challenge", label.as_bytes());
        let seed = t.digest();
        group.scalar_from_wide(&expand(&seed, label.as_bytes(), group.wide_len()))
    }
}

/// SHA-256 in counter mode: `len` bytes from a seed and an info string.
pub fn expand(seed: &[u8], info: &[u8], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 32);
    let mut counter: u32 = 0;
    while out.len() < len {
        let mut t = Transcript::new(tags::EXPAND);
        t.append_bytes("seed", seed);
        t.append_bytes("info", info);
        t.append_u64("counter", u64::from(counter));
        out.extend_from_slice(&t.digest());
        counter = counter.wrapping_add(1);
    }
    out.truncate(len);
    out
}

/// `count` generators with unknown discrete logs, derived from a public seed:
/// `h_i = map(expand(H(tag, seed, i, attempt)))`, retrying the next attempt on the (negligible)
/// identity. Anyone can recompute them from the seed.
pub fn independent_generators<G: Group>(group: &G, seed: &[u8], count: usize) -> Vec<G::Element> {
    (0..count)
        .into_par_iter()
        .map(|i| {
            let mut attempt: u64 = 0;
            loop {
                let mut t = Transcript::new(tags::GENERATORS);
                t.append_bytes("group", group.id().name().as_bytes());
                t.append_bytes("seed", seed);
                t.append_u64("index", i as u64);
                t.append_u64("attempt", attempt);
                let bytes = expand(&t.digest(), b"generator", group.uniform_len());
                if let Some(h) = group.element_from_uniform(&bytes) {
                    return h;
                }
                attempt += 1;
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use votum_group::{ModpGroup, Ristretto255};

    #[test]
    fn fields_are_unambiguous() {
        let mut a = Transcript::new("t");
        a.append_bytes("x", b"ab");
        a.append_bytes("y", b"c");
        let mut b = Transcript::new("t");
        b.append_bytes("x", b"a");
        b.append_bytes("y", b"bc");
        assert_ne!(a.digest(), b.digest());
        assert_ne!(Transcript::new("t").digest(), Transcript::new("u").digest());
    }

    #[test]
    fn expand_lengths_and_determinism() {
        assert_eq!(expand(b"s", b"i", 100).len(), 100);
        assert_eq!(expand(b"s", b"i", 100)[..32], expand(b"s", b"i", 32)[..]);
        assert_ne!(expand(b"s", b"i", 32), expand(b"s", b"j", 32));
    }

    #[test]
    fn generators_are_distinct_members() {
        let g = ModpGroup::rfc3526_2048();
        let hs = independent_generators(&g, b"seed", 5);
        for (i, h) in hs.iter().enumerate() {
            assert!(g.is_member(h.value()));
            assert!(hs[i + 1..].iter().all(|o| o != h));
        }
        assert_eq!(independent_generators(&g, b"seed", 5), hs);
        let r = independent_generators(&Ristretto255, b"seed", 3);
        assert_ne!(r[0], r[1]);
    }

    #[test]
    fn tags_are_unique() {
        let mut t = crate::tags::ALL.to_vec();
        t.sort_unstable();
        t.dedup();
        assert_eq!(t.len(), crate::tags::ALL.len());
    }
}
