//! What each party computes and posts, one row at a time (spec/97.5–97.7): the voter's packets,
//! a first-column server's inputs and input halves, one server's pass, a last-column server's
//! outputs, roots, openings, t-values and output halves, and the tally. `election::run` plays
//! every party with these in one process; the server processes of `votum.sv` call the same
//! functions through the bindings.

use zeroize::Zeroize;

use crate::cast::{CastChunk, CastRow};
use crate::commit::{com, output_root, output_splits};
use crate::field::Zm;
use crate::params::{Params, Race};
use crate::sharing::Sharing;
use crate::wire::{Reader, Tally, Writer};
use crate::SvError;

/// The packets of a chunk, one payload per row: per ballot, per race, u ‖ v ‖ r ‖ s (97.5).
pub fn encode_packets(params: &Params, chunk: &CastChunk) -> Vec<Vec<u8>> {
    let n = chunk
        .rows
        .first()
        .and_then(|r| r.first())
        .map_or(0, |r| r.u.len());
    (0..params.grid.rows)
        .map(|i| {
            let mut w = Writer::default();
            for p in 0..n {
                for (ri, race) in params.races.iter().enumerate() {
                    let row = &chunk.rows[ri][i];
                    w.value(&race.zm, row.u[p]);
                    w.value(&race.zm, row.v[p]);
                    w.bytes(&row.r[p]);
                    w.bytes(&row.s[p]);
                }
            }
            w.into_inner()
        })
        .collect()
}

/// A first-column server's check of its packet against the posted ballots (97.5): returns the
/// row's split values per race, or the first ballot whose packet does not open its commitments.
pub fn open_packet(
    params: &Params,
    row: usize,
    ballots: &[u8],
    packet: &[u8],
) -> Result<Vec<CastRow>, SvError> {
    let rows = params.grid.rows;
    let races = params.races.len();
    let mut b = Reader::new(ballots, "ballots");
    let first = b.u64()?;
    let count = b.u32()? as usize;
    let coms = b.take(count * races * rows * 64)?;
    b.end()?;
    let mut r = Reader::new(packet, "packet");
    let mut out: Vec<CastRow> = (0..races).map(|_| CastRow::default()).collect();
    for p in 0..count {
        for (ri, race) in params.races.iter().enumerate() {
            let (u, v) = (r.value(&race.zm)?, r.value(&race.zm)?);
            let (rk, sk) = (r.key()?, r.key()?);
            let at = ((p * races + ri) * rows + row) * 64;
            if com(u, &rk) != coms[at..at + 32] || com(v, &sk) != coms[at + 32..at + 64] {
                return Err(SvError::Vote(format!(
                    "ballot {}: the packet for row {} does not open its commitments in race {}",
                    first + p as u64,
                    row + 1,
                    race.id
                )));
            }
            let c = &mut out[ri];
            c.u.push(u);
            c.v.push(v);
            c.r.push(rk);
            c.s.push(sk);
        }
    }
    r.end()?;
    Ok(out)
}

/// A list of N values (a server's input or output list on the wire).
pub fn encode_list(zm: &Zm, values: &[u128]) -> Vec<u8> {
    let mut w = Writer::with_capacity(values.len() * zm.width());
    for &v in values {
        w.value(zm, v);
    }
    w.into_inner()
}

pub fn decode_list(zm: &Zm, bytes: &[u8], what: &str) -> Result<Vec<u128>, SvError> {
    if !bytes.len().is_multiple_of(zm.width()) {
        return Err(SvError::Decode(format!(
            "{what}: {} bytes is not a list of values",
            bytes.len()
        )));
    }
    let mut r = Reader::new(bytes, what);
    let v = r.values(zm, bytes.len() / zm.width())?;
    r.end()?;
    Ok(v)
}

/// The `inputs` entry of one row: per ballot, the half the side picks and its key (97.7 step 6).
pub fn input_halves(zm: &Zm, row: &CastRow, side: &[u8]) -> Vec<u8> {
    let mut w = Writer::with_capacity(row.u.len() * (zm.width() + 16));
    for (p, &s) in side.iter().enumerate() {
        if s == 0 {
            w.value(zm, row.u[p]);
            w.bytes(&row.r[p]);
        } else {
            w.value(zm, row.v[p]);
            w.bytes(&row.s[p]);
        }
    }
    w.into_inner()
}

/// The `opened` entry of one output list: τ ‖ values.
pub fn opened_payload(zm: &Zm, tau: &[u8; 32], y: &[u128]) -> Vec<u8> {
    let mut w = Writer::with_capacity(32 + y.len() * zm.width());
    w.bytes(tau);
    for &v in y {
        w.value(zm, v);
    }
    w.into_inner()
}

/// One row's t-values along `path` (97.7 step 4): (u_out(q) − u_in(path(q)), v_out(q) − v_in(path(q))).
pub fn t_values(
    zm: &Zm,
    tau: &[u8; 32],
    race: usize,
    y: &[u128],
    path: &[u32],
    u_in: &[u128],
    v_in: &[u128],
) -> Vec<(u128, u128)> {
    let mut t = Vec::with_capacity(y.len());
    output_splits(zm, tau, race, y, |q, u, _, v, _| {
        let p = path[q] as usize;
        t.push((zm.sub(u, u_in[p]), zm.sub(v, v_in[p])));
    });
    t
}

pub fn encode_t_values(zm: &Zm, t: &[(u128, u128)]) -> Vec<u8> {
    let mut w = Writer::with_capacity(2 * t.len() * zm.width());
    for &(tu, tv) in t {
        w.value(zm, tu);
        w.value(zm, tv);
    }
    w.into_inner()
}

/// The `halves` entry of one checked output list (97.7 step 6).
pub fn output_halves(
    zm: &Zm,
    tau: &[u8; 32],
    race: usize,
    y: &[u128],
    path: &[u32],
    side: &[u8],
) -> Vec<u8> {
    let mut w = Writer::with_capacity(y.len() * (zm.width() + 48));
    output_splits(zm, tau, race, y, |q, u, r, v, s| {
        if side[path[q] as usize] == 0 {
            w.value(zm, u);
            w.bytes(r);
            w.bytes(&com(v, s));
        } else {
            w.value(zm, v);
            w.bytes(s);
            w.bytes(&com(u, r));
        }
    });
    w.into_inner()
}

/// The count of one opened copy (all its rows' output lists).
pub fn tally_of(race: &Race, sharing: &Sharing, rows: &[&[u128]]) -> Tally {
    let n = rows.first().map_or(0, |r| r.len());
    let mut shares = vec![0u128; rows.len()];
    let votes: Vec<u128> = (0..n)
        .map(|q| {
            for (s, row) in shares.iter_mut().zip(rows) {
                *s = row[q];
            }
            sharing.reconstruct(&race.zm, &shares)
        })
        .collect();
    shares.zeroize();
    race.tally(votes)
}

/// A last-column server's output lists, one per copy (spec/97.13). Held in memory, or spilled to a
/// file sealed with a key that exists only in this process's memory: a server then holds one list
/// at a time instead of all 2m (at 10^6 voters, 16 MB instead of 384 MB per race). The file is
/// unlinked as soon as it is made, so nothing is left behind by a crash; each list is encrypted with
/// a keyed BLAKE3 keystream (its own per copy) and checked against its BLAKE3 hash when read back.
pub struct ListStore {
    zm: Zm,
    slots: Vec<Slot>,
    spill: Option<Spill>,
}

enum Slot {
    Empty,
    Held(Vec<u128>),
    Spilled {
        at: u64,
        len: usize,
        digest: [u8; 32],
    },
}

/// A list ready for [`ListStore::put_sealed`].
pub struct Sealed {
    copy: usize,
    body: SealedBody,
}

enum SealedBody {
    Held(zeroize::Zeroizing<Vec<u128>>),
    Spilled { bytes: Vec<u8>, digest: [u8; 32] },
}

struct Spill {
    file: std::fs::File,
    key: [u8; 32],
    end: u64,
}

impl Drop for Spill {
    fn drop(&mut self) {
        self.key.zeroize();
    }
}

impl Drop for ListStore {
    fn drop(&mut self) {
        for s in &mut self.slots {
            if let Slot::Held(v) = s {
                v.zeroize();
            }
        }
    }
}

fn io(what: &str, e: std::io::Error) -> SvError {
    SvError::Record(format!("{what}: {e}"))
}

impl ListStore {
    /// `copies` lists kept in memory.
    pub fn in_memory(zm: Zm, copies: usize) -> Self {
        Self {
            zm,
            slots: (0..copies).map(|_| Slot::Empty).collect(),
            spill: None,
        }
    }

    /// `copies` lists spilled to an unlinked file made in `dir` (mode 0600).
    pub fn spilling(zm: Zm, copies: usize, dir: &std::path::Path) -> Result<Self, SvError> {
        use rand_core::RngCore;
        use std::os::unix::fs::OpenOptionsExt;
        let mut key = [0u8; 32];
        rand_core::OsRng.fill_bytes(&mut key);
        let mut tag = [0u8; 8];
        rand_core::OsRng.fill_bytes(&mut tag);
        let name = dir.join(format!(
            ".sv-lists-{}-{}",
            std::process::id(),
            tag.iter().map(|b| format!("{b:02x}")).collect::<String>()
        ));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&name)
            .map_err(|e| io(&name.display().to_string(), e))?;
        std::fs::remove_file(&name).map_err(|e| io(&name.display().to_string(), e))?;
        Ok(Self {
            zm,
            slots: (0..copies).map(|_| Slot::Empty).collect(),
            spill: Some(Spill { file, key, end: 0 }),
        })
    }

    pub fn copies(&self) -> usize {
        self.slots.len()
    }

    /// Whether every copy's list is here.
    pub fn complete(&self) -> bool {
        self.slots.iter().all(|s| !matches!(s, Slot::Empty))
    }

    /// XORs `data` with copy `copy`'s keystream: keyed BLAKE3's extendable output (the key, then
    /// the copy's number, as input), a stream cipher as fast as the hash.
    fn keystream(key: &[u8; 32], copy: usize, data: &mut [u8]) {
        let mut xof = blake3::Hasher::new_keyed(key)
            .update(b"votum-sv/spill/v1")
            .update(&(copy as u64).to_be_bytes())
            .finalize_xof();
        let mut block = [0u8; 1 << 16];
        for chunk in data.chunks_mut(block.len()) {
            xof.fill(&mut block[..chunk.len()]);
            for (d, k) in chunk.iter_mut().zip(&block) {
                *d ^= k;
            }
        }
        block.zeroize();
    }

    /// Keeps copy `copy`'s list (taking it: a spilled list is wiped from memory once written).
    pub fn put(&mut self, copy: usize, list: Vec<u128>) -> Result<(), SvError> {
        let sealed = self.seal(copy, list)?;
        self.put_sealed(sealed)
    }

    /// Copy `copy`'s list made ready to keep: encrypted and hashed when spilling. Takes `&self`,
    /// so several lists can be sealed at once while one is written.
    pub fn seal(&self, copy: usize, mut list: Vec<u128>) -> Result<Sealed, SvError> {
        if copy >= self.slots.len() {
            return Err(SvError::Params(format!("no copy {copy}")));
        }
        let Some(spill) = self.spill.as_ref() else {
            return Ok(Sealed {
                copy,
                body: SealedBody::Held(zeroize::Zeroizing::new(list)),
            });
        };
        let mut bytes = encode_list(&self.zm, &list);
        list.zeroize();
        let digest: [u8; 32] = blake3::hash(&bytes).into();
        Self::keystream(&spill.key, copy, &mut bytes);
        Ok(Sealed {
            copy,
            body: SealedBody::Spilled { bytes, digest },
        })
    }

    /// Keeps a sealed list (writes it when spilling).
    pub fn put_sealed(&mut self, sealed: Sealed) -> Result<(), SvError> {
        let copy = sealed.copy;
        match sealed.body {
            SealedBody::Held(mut list) => {
                self.slots[copy] = Slot::Held(std::mem::take(&mut *list));
            }
            SealedBody::Spilled { bytes, digest } => {
                use std::io::{Seek, SeekFrom, Write};
                let spill = self
                    .spill
                    .as_mut()
                    .ok_or_else(|| SvError::Record("no spill file".into()))?;
                let at = spill.end;
                spill
                    .file
                    .seek(SeekFrom::Start(at))
                    .and_then(|_| spill.file.write_all(&bytes))
                    .map_err(|e| io("the spilled lists", e))?;
                spill.end += bytes.len() as u64;
                self.slots[copy] = Slot::Spilled {
                    at,
                    len: bytes.len(),
                    digest,
                };
            }
        }
        Ok(())
    }

    /// Copy `copy`'s list (read back and checked when spilled; wiped when dropped).
    pub fn get(&self, copy: usize) -> Result<zeroize::Zeroizing<Vec<u128>>, SvError> {
        match self.slots.get(copy) {
            Some(Slot::Held(v)) => Ok(zeroize::Zeroizing::new(v.clone())),
            Some(Slot::Spilled { at, len, digest }) => {
                use std::os::unix::fs::FileExt;
                let spill = self
                    .spill
                    .as_ref()
                    .ok_or_else(|| SvError::Record("no spill file".into()))?;
                let mut bytes = zeroize::Zeroizing::new(vec![0u8; *len]);
                spill
                    .file
                    .read_exact_at(&mut bytes, *at)
                    .map_err(|e| io("the spilled lists", e))?;
                Self::keystream(&spill.key, copy, &mut bytes);
                if blake3::hash(bytes.as_slice()).as_bytes() != digest {
                    return Err(SvError::Record(format!(
                        "copy {copy}'s spilled list changed on disk"
                    )));
                }
                Ok(zeroize::Zeroizing::new(decode_list(
                    &self.zm,
                    &bytes,
                    "a spilled list",
                )?))
            }
            _ => Err(SvError::Params(format!("no output list of copy {copy}"))),
        }
    }
}

/// A last-column server's outputs for one race: per copy, its seed τ, its list (kept in a
/// [`ListStore`]) and its root, computed as the list arrives.
pub struct LastColumn {
    pub race: usize,
    pub row: usize,
    pub taus: Vec<[u8; 32]>,
    pub lists: ListStore,
    roots: Vec<Option<[u8; 32]>>,
}

impl Drop for LastColumn {
    fn drop(&mut self) {
        self.taus.zeroize();
    }
}

impl LastColumn {
    pub fn new(race: usize, row: usize, taus: Vec<[u8; 32]>, lists: ListStore) -> Self {
        let roots = vec![None; lists.copies()];
        Self {
            race,
            row,
            taus,
            lists,
            roots,
        }
    }

    /// Keeps copy `copy`'s output list, and its root.
    pub fn store(&mut self, zm: &Zm, copy: usize, list: Vec<u128>) -> Result<(), SvError> {
        let tau = self
            .taus
            .get(copy)
            .ok_or_else(|| SvError::Params(format!("no copy {copy}")))?;
        let root = output_root(zm, tau, self.race, copy, self.row, &list);
        self.lists.put(copy, list)?;
        self.roots[copy] = Some(root);
        Ok(())
    }

    /// Keeps a list its caller sealed ([`ListStore::seal`]) with its root.
    pub(crate) fn store_sealed(&mut self, sealed: Sealed, root: [u8; 32]) -> Result<(), SvError> {
        let copy = sealed.copy;
        self.lists.put_sealed(sealed)?;
        self.roots[copy] = Some(root);
        Ok(())
    }

    /// The `outputs` entry: one root per copy, once every copy's list is here.
    pub fn roots(&self) -> Option<Vec<u8>> {
        self.roots
            .iter()
            .map(|r| r.map(|r| r.to_vec()))
            .collect::<Option<Vec<_>>>()
            .map(|r| r.concat())
    }
}
