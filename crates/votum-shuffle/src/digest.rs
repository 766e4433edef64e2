//! Digests of long lists, hashed in parallel chunks (spec/90.3).
//!
//! digest = transcript(`votum/v1/list`; `group`, `label`, `count` N, `item` bytes per item, then one
//! `chunk` field per run of [`CHUNK_ITEMS`] items: SHA-256 of the items' canonical encodings).
//! The same value comes from the encoded bytes (a verifier reading a board) or from decoded
//! values (a prover about to post them).

use rayon::prelude::*;
use sha2::{Digest, Sha256};
use votum_group::Group;
use votum_hash::{tags, Transcript};

/// Items per hashed chunk.
pub const CHUNK_ITEMS: usize = 1024;

fn finish<G: Group>(
    group: &G,
    label: &str,
    count: usize,
    item_len: usize,
    chunks: Vec<[u8; 32]>,
) -> [u8; 32] {
    let mut t = Transcript::new(tags::LIST);
    t.append_bytes("group", group.id().name().as_bytes());
    t.append_bytes("label", label.as_bytes());
    t.append_u64("count", count as u64);
    t.append_u64("item", item_len as u64);
    for c in &chunks {
        t.append_bytes("chunk", c);
    }
    t.digest()
}

/// The digest of `bytes`, the concatenated encodings of `bytes.len() / item_len` items.
pub fn list_digest_of_bytes<G: Group>(
    group: &G,
    label: &str,
    item_len: usize,
    bytes: &[u8],
) -> [u8; 32] {
    let item_len = item_len.max(1);
    let chunks: Vec<[u8; 32]> = bytes
        .par_chunks(CHUNK_ITEMS * item_len)
        .map(|c| Sha256::digest(c).into())
        .collect();
    finish(group, label, bytes.len() / item_len, item_len, chunks)
}

/// The digest of `count` items, item `i` encoded by `encode(i, &mut buffer)` (appending exactly
/// `item_len` bytes).
pub fn list_digest<G: Group, F>(
    group: &G,
    label: &str,
    count: usize,
    item_len: usize,
    encode: F,
) -> [u8; 32]
where
    F: Fn(usize, &mut Vec<u8>) + Sync,
{
    let chunks: Vec<[u8; 32]> = (0..count.div_ceil(CHUNK_ITEMS))
        .into_par_iter()
        .map(|c| {
            let lo = c * CHUNK_ITEMS;
            let hi = (lo + CHUNK_ITEMS).min(count);
            let mut buf = Vec::with_capacity((hi - lo) * item_len);
            for i in lo..hi {
                encode(i, &mut buf);
            }
            Sha256::digest(&buf).into()
        })
        .collect();
    finish(group, label, count, item_len, chunks)
}

/// Digest of a list of elements.
pub fn elements_digest<G: Group>(group: &G, label: &str, es: &[G::Element]) -> [u8; 32] {
    list_digest(group, label, es.len(), group.element_len(), |i, buf| {
        buf.extend_from_slice(&group.encode_element(&es[i]))
    })
}
