//! A contest's data (overvotes, write-ins, its status) as hashed ElGamal (2.0 §3.3.6, eqs. 49–55), with
//! egk-ec's byte encoding, padding and KDF label, so egk-ec can read what votum writes (spec/65.6).

use hmac::{Hmac, Mac};
use sha2::Sha256;
use votum_hash::eg2::Hash;

use crate::group::Eg2Group;
use crate::ContestData;

/// The contest's status, as egk-ec names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Normal,
    NullVote,
    OverVote,
    UnderVote,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Normal => "normal",
            Status::NullVote => "null_vote",
            Status::OverVote => "over_vote",
            Status::UnderVote => "under_vote",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        [
            Self::Normal,
            Self::NullVote,
            Self::OverVote,
            Self::UnderVote,
        ]
        .into_iter()
        .find(|s| s.name() == name)
    }
}

/// What a contest's data holds in plaintext.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plain {
    /// the sequence orders of the options voted for, when the contest is overvoted
    pub overvotes: Vec<u32>,
    pub write_ins: Vec<String>,
    pub status: Status,
}

fn write_vlen(mut v: u32, out: &mut Vec<u8>) {
    loop {
        if v & !0x7f == 0 {
            out.push(v as u8);
            return;
        }
        out.push((v & 0x7f) as u8 | 0x80);
        v >>= 7;
    }
}

fn write_string(s: &str, out: &mut Vec<u8>) {
    write_vlen(s.len() as u32, out);
    out.extend_from_slice(s.as_bytes());
}

impl Plain {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        write_vlen(self.overvotes.len() as u32, &mut out);
        for v in &self.overvotes {
            write_vlen(*v, &mut out);
        }
        write_vlen(self.write_ins.len() as u32, &mut out);
        for w in &self.write_ins {
            write_string(w, &mut out);
        }
        write_string(self.status.name(), &mut out);
        out
    }

    /// The message for a contest of limit L: (1 + L)·32 bytes less 2, as egk-ec pads it.
    pub fn to_message(&self, limit: u32) -> Vec<u8> {
        let size = (1 + limit as usize) * 32;
        let mut bytes = self.fit(size);
        if bytes.len() < size {
            bytes.resize(size - 2, 0);
        }
        bytes
    }

    /// The encoding in at most `size` bytes where it can be made to fit (unpadded): write-ins beyond the
    /// first L are dropped for one `*`, then each is shortened a character at a time, ending in `*`, then
    /// overvotes are dropped.
    pub fn fit(&self, size: usize) -> Vec<u8> {
        let limit = (size / 32).saturating_sub(1);
        let mut trial = self.clone();
        if trial.encode().len() > size && trial.write_ins.len() > limit {
            trial.write_ins.truncate(limit);
            trial.write_ins.push("*".into());
        }
        // shorten the write-ins one character at a time, each ending in `*`
        while trial.encode().len() > size && trial.write_ins.iter().any(|w| w.chars().count() > 2) {
            for w in trial.write_ins.iter_mut().filter(|w| w.chars().count() > 2) {
                let keep = w.chars().count() - 2;
                *w = w.chars().take(keep).collect::<String>() + "*";
            }
        }
        while trial.encode().len() > size && trial.overvotes.len() > 1 {
            trial.overvotes.pop();
        }
        trial.encode()
    }

    /// Reads a message back (its zero padding ignored).
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        let mut r = Reader { bytes, at: 0 };
        let n = r.vlen()?;
        let overvotes = (0..n).map(|_| r.vlen()).collect::<Option<Vec<u32>>>()?;
        let n = r.vlen()?;
        let write_ins = (0..n)
            .map(|_| r.string())
            .collect::<Option<Vec<String>>>()?;
        let status = Status::from_name(&r.string()?)?;
        Some(Self {
            overvotes,
            write_ins,
            status,
        })
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn vlen(&mut self) -> Option<u32> {
        let mut out = 0u32;
        let mut shift = 0;
        loop {
            let b = *self.bytes.get(self.at)?;
            self.at += 1;
            out |= u32::from(b & 0x7f).checked_shl(shift)?;
            if b & 0x80 == 0 {
                return Some(out);
            }
            shift += 7;
            if shift > 28 {
                return None;
            }
        }
    }

    fn string(&mut self) -> Option<String> {
        let len = self.vlen()? as usize;
        let s = self.bytes.get(self.at..self.at.checked_add(len)?)?;
        self.at += len;
        String::from_utf8(s.to_vec()).ok()
    }
}

const LABEL: &[u8] = b"share_enc_keys";

fn hmac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut mac = match Hmac::<Sha256>::new_from_slice(key) {
        Ok(m) => m,
        Err(_) => return [0u8; 32],
    };
    for p in parts {
        mac.update(p);
    }
    mac.finalize().into_bytes().into()
}

/// k = H(H_E; 0x22, K, α, β) and the KDF keys k₀ … k_bD (egk-ec: label "share_enc_keys", context
/// "contest_data" ‖ the contest's id, length the message's bits).
fn keys<G: Eg2Group>(
    group: &G,
    he: &[u8; 32],
    k: &G::Element,
    (alpha, beta): (&G::Element, &G::Element),
    contest_id: &str,
    num_bytes: usize,
    blocks: usize,
) -> Vec<[u8; 32]> {
    let key = Hash::new(he)
        .byte(0x22)
        .bytes(&group.hash_bytes(k))
        .bytes(&group.hash_bytes(alpha))
        .bytes(&group.hash_bytes(beta))
        .finish();
    let context = format!("contest_data{contest_id}");
    let bits = ((num_bytes * 8) as u32).to_be_bytes();
    (0..=blocks as u32)
        .map(|i| {
            hmac(
                &key,
                &[&i.to_be_bytes(), LABEL, &[0], context.as_bytes(), &bits],
            )
        })
        .collect()
}

/// Encrypts `message` for contest `contest_id` with nonce ξ: (C₀, C₁, C₂) and the message's length.
pub fn encrypt<G: Eg2Group>(
    group: &G,
    he: &[u8; 32],
    k: &G::Element,
    k_table: &G::Table,
    contest_id: &str,
    message: &[u8],
    xi: &G::Scalar,
) -> (ContestData<G>, usize) {
    let alpha = group.pow_generator(xi);
    let beta = group.pow_table(k_table, xi);
    let blocks = message.len().div_ceil(32);
    let ks = keys(
        group,
        he,
        k,
        (&alpha, &beta),
        contest_id,
        message.len(),
        blocks,
    );
    let mut c1 = Vec::with_capacity(blocks * 32);
    for (i, chunk) in message.chunks(32).enumerate() {
        let mut block = [0u8; 32];
        block[..chunk.len()].copy_from_slice(chunk);
        c1.extend(block.iter().zip(ks[i + 1].iter()).map(|(a, b)| a ^ b));
    }
    let c0 = group.hash_bytes(&alpha);
    let c2 = hmac(&ks[0], &[&c0, &c1]);
    (ContestData { c0: alpha, c1, c2 }, message.len())
}

/// Decrypts contest data with β = C₀^s: the message, or `None` if its MAC does not hold.
pub fn decrypt<G: Eg2Group>(
    group: &G,
    he: &[u8; 32],
    k: &G::Element,
    data: &ContestData<G>,
    beta: &G::Element,
    contest_id: &str,
    num_bytes: usize,
) -> Option<Vec<u8>> {
    let blocks = data.c1.len().div_ceil(32);
    let ks = keys(
        group,
        he,
        k,
        (&data.c0, beta),
        contest_id,
        num_bytes,
        blocks,
    );
    let c0 = group.hash_bytes(&data.c0);
    if hmac(&ks[0], &[&c0, &data.c1]) != data.c2 {
        return None;
    }
    let mut out: Vec<u8> = data
        .c1
        .chunks(32)
        .enumerate()
        .flat_map(|(i, c)| {
            c.iter()
                .zip(ks[i + 1].iter())
                .map(|(a, b)| a ^ b)
                .collect::<Vec<u8>>()
        })
        .collect();
    out.truncate(num_bytes);
    Some(out)
}
