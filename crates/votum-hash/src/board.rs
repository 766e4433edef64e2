//! The bulletin board's hash chain (spec/80.2).
//!
//! Every entry's hash commits to the hash before it, its sequence number, its kind, its name and
//! the SHA-256 of its payload, as one transcript under the `votum/v1/board` tag; the chain starts
//! from a genesis value bound to the election id, so no entry of one election's board can stand in
//! another's. The head hash (the last entry's) is the running hash that later Fiat–Shamir
//! challenges absorb: nothing is ever re-hashed from the start except by a verifier.

use sha2::{Digest, Sha256};

use crate::tags;
use crate::Transcript;

/// The value before entry 0 of `election_id`'s board.
pub fn genesis(election_id: &str) -> [u8; 32] {
    let mut t = Transcript::new(tags::BOARD_GENESIS);
    t.append_bytes("election", election_id.as_bytes());
    t.digest()
}

/// SHA-256 of a payload, as the chain absorbs it.
pub fn payload_digest(payload: &[u8]) -> [u8; 32] {
    Sha256::digest(payload).into()
}

/// The hash of entry `seq` given the hash before it and its payload's digest.
pub fn link(prev: &[u8; 32], seq: u64, kind: &str, name: &str, digest: &[u8; 32]) -> [u8; 32] {
    let mut t = Transcript::new(tags::BOARD);
    t.append_bytes("prev", prev);
    t.append_u64("seq", seq);
    t.append_bytes("kind", kind.as_bytes());
    t.append_bytes("name", name.as_bytes());
    t.append_bytes("payload", digest);
    t.digest()
}

/// Where a chain stops verifying.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    #[error("entry {got} where entry {expected} was due (a gap or a reordering)")]
    Sequence { expected: u64, got: u64 },
    #[error("entry {seq}: its hash differs from the one its content and the previous hash give")]
    Hash { seq: u64 },
}

/// Re-links entries one at a time (a verifier's or a replica's running check).
#[derive(Clone, Debug)]
pub struct ChainChecker {
    head: [u8; 32],
    next: u64,
}

impl ChainChecker {
    pub fn new(election_id: &str) -> Self {
        Self {
            head: genesis(election_id),
            next: 0,
        }
    }

    /// Continues from a known `(seq, hash)` head, e.g. a page after one already checked.
    pub fn resume(next: u64, head: [u8; 32]) -> Self {
        Self { head, next }
    }

    /// Checks the next entry; `payload` is the entry's content, `hash` the hash it claims.
    pub fn push(
        &mut self,
        seq: u64,
        kind: &str,
        name: &str,
        payload: &[u8],
        hash: &[u8; 32],
    ) -> Result<(), ChainError> {
        if seq != self.next {
            return Err(ChainError::Sequence {
                expected: self.next,
                got: seq,
            });
        }
        let expected = link(&self.head, seq, kind, name, &payload_digest(payload));
        if &expected != hash {
            return Err(ChainError::Hash { seq });
        }
        self.head = expected;
        self.next += 1;
        Ok(())
    }

    /// Extends the chain by the next entry, computing its hash rather than checking a claimed one
    /// (a writer's running head, or a reader's of a store that keeps no hashes), and returns it.
    pub fn append(&mut self, kind: &str, name: &str, payload: &[u8]) -> [u8; 32] {
        self.head = link(&self.head, self.next, kind, name, &payload_digest(payload));
        self.next += 1;
        self.head
    }

    /// The hash of the last entry checked (the genesis value before any).
    pub fn head(&self) -> [u8; 32] {
        self.head
    }

    /// How many entries have been checked.
    pub fn len(&self) -> u64 {
        self.next
    }

    pub fn is_empty(&self) -> bool {
        self.next == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(id: &str, entries: &[(&str, &str, &[u8])]) -> Vec<[u8; 32]> {
        let mut prev = genesis(id);
        let mut out = Vec::new();
        for (seq, (kind, name, payload)) in entries.iter().enumerate() {
            prev = link(&prev, seq as u64, kind, name, &payload_digest(payload));
            out.push(prev);
        }
        out
    }

    const ENTRIES: &[(&str, &str, &[u8])] = &[
        ("election", "election.json", b"{}"),
        ("manifest", "manifest.json", b"{\"a\":1}"),
        ("guardian", "guardians/guardian_1.json", b"{\"b\":2}"),
    ];

    #[test]
    fn honest_chain_checks() {
        let hashes = chain("e1", ENTRIES);
        let mut c = ChainChecker::new("e1");
        for (seq, ((kind, name, payload), h)) in ENTRIES.iter().zip(&hashes).enumerate() {
            c.push(seq as u64, kind, name, payload, h).unwrap();
        }
        assert_eq!(c.head(), hashes[2]);
        assert_eq!(c.len(), 3);
        // a writer extending the chain computes the same hashes
        let mut w = ChainChecker::new("e1");
        let appended: Vec<[u8; 32]> = ENTRIES
            .iter()
            .map(|(kind, name, payload)| w.append(kind, name, payload))
            .collect();
        assert_eq!(appended, hashes);
    }

    #[test]
    fn every_field_is_bound() {
        let hashes = chain("e1", ENTRIES);
        // another election's genesis
        assert_ne!(chain("e2", ENTRIES), hashes);
        let (kind, name, payload) = ENTRIES[1];
        let mut c = ChainChecker::resume(1, hashes[0]);
        assert_eq!(
            c.clone().push(1, "manifesT", name, payload, &hashes[1]),
            Err(ChainError::Hash { seq: 1 })
        );
        assert_eq!(
            c.clone()
                .push(1, kind, "manifest.jsoN", payload, &hashes[1]),
            Err(ChainError::Hash { seq: 1 })
        );
        assert_eq!(
            c.clone().push(1, kind, name, b"{\"a\":2}", &hashes[1]),
            Err(ChainError::Hash { seq: 1 })
        );
        assert_eq!(
            c.clone().push(2, kind, name, payload, &hashes[1]),
            Err(ChainError::Sequence {
                expected: 1,
                got: 2
            })
        );
        // kind/name boundary is length-prefixed: moving a byte across it changes the hash
        assert_ne!(
            link(&hashes[0], 1, "ab", "c", &[0; 32]),
            link(&hashes[0], 1, "a", "bc", &[0; 32])
        );
        c.push(1, kind, name, payload, &hashes[1]).unwrap();
    }
}
