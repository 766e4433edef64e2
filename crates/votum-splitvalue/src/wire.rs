//! The canonical binary encoding of everything posted (spec/97.8): a writer and a checked
//! reader, entry names, and the payloads that are more than a list of fixed-size items.

use std::collections::BTreeMap;

use crate::field::Zm;
use crate::SvError;

/// Big-endian writer.
#[derive(Default)]
pub struct Writer(Vec<u8>);

impl Writer {
    pub fn with_capacity(n: usize) -> Self {
        Self(Vec::with_capacity(n))
    }
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    pub fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }
    /// u16 length ‖ UTF-8.
    pub fn str(&mut self, s: &str) {
        self.u16(s.len() as u16);
        self.0.extend_from_slice(s.as_bytes());
    }
    pub fn value(&mut self, zm: &Zm, v: u128) {
        zm.put(v, &mut self.0);
    }
    pub fn into_inner(self) -> Vec<u8> {
        self.0
    }
}

/// A reader that names the entry in its errors and refuses short or trailing bytes.
pub struct Reader<'a> {
    b: &'a [u8],
    at: usize,
    what: &'a str,
}

impl<'a> Reader<'a> {
    pub fn new(b: &'a [u8], what: &'a str) -> Self {
        Self { b, at: 0, what }
    }
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], SvError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or_else(|| {
            SvError::Decode(format!(
                "{}: ends at byte {} inside an item",
                self.what,
                self.b.len()
            ))
        })?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    pub fn u8(&mut self) -> Result<u8, SvError> {
        Ok(self.take(1)?[0])
    }
    pub fn u16(&mut self) -> Result<u16, SvError> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    pub fn u32(&mut self) -> Result<u32, SvError> {
        let mut a = [0u8; 4];
        a.copy_from_slice(self.take(4)?);
        Ok(u32::from_be_bytes(a))
    }
    pub fn u64(&mut self) -> Result<u64, SvError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_be_bytes(a))
    }
    pub fn hash(&mut self) -> Result<[u8; 32], SvError> {
        let mut a = [0u8; 32];
        a.copy_from_slice(self.take(32)?);
        Ok(a)
    }
    pub fn key(&mut self) -> Result<[u8; 16], SvError> {
        let mut a = [0u8; 16];
        a.copy_from_slice(self.take(16)?);
        Ok(a)
    }
    pub fn str(&mut self) -> Result<String, SvError> {
        let n = self.u16()?;
        let b = self.take(usize::from(n))?;
        String::from_utf8(b.to_vec())
            .map_err(|_| SvError::Decode(format!("{}: a string that is not UTF-8", self.what)))
    }
    pub fn value(&mut self, zm: &Zm) -> Result<u128, SvError> {
        let at = self.at;
        zm.get(self.take(zm.width())?).ok_or_else(|| {
            SvError::Decode(format!("{}: value at byte {at} not below M", self.what))
        })
    }
    /// Exactly `n` values.
    pub fn values(&mut self, zm: &Zm, n: usize) -> Result<Vec<u128>, SvError> {
        (0..n).map(|_| self.value(zm)).collect()
    }
    pub fn end(&self) -> Result<(), SvError> {
        if self.at == self.b.len() {
            Ok(())
        } else {
            Err(SvError::Decode(format!(
                "{}: {} bytes trail",
                self.what,
                self.b.len() - self.at
            )))
        }
    }
}

/// Entry names (97.8).
pub mod names {
    pub fn ballots(b: usize) -> String {
        format!("ballots-{b}")
    }
    pub fn outputs(race: usize, row: usize) -> String {
        format!("outputs-{race}-{row}")
    }
    pub fn opened(race: usize, copy: usize, row: usize) -> String {
        format!("opened-{race}-{copy}-{row}")
    }
    pub fn path(race: usize, copy: usize) -> String {
        format!("path-{race}-{copy}")
    }
    pub fn tvalues(race: usize, copy: usize, row: usize) -> String {
        format!("tvalues-{race}-{copy}-{row}")
    }
    pub fn inputs(race: usize, row: usize) -> String {
        format!("inputs-{race}-{row}")
    }
    pub fn halves(race: usize, copy: usize, row: usize) -> String {
        format!("halves-{race}-{copy}-{row}")
    }
    pub fn tally(race: usize) -> String {
        format!("tally-{race}")
    }
}

/// The most ballots in one `ballots` entry.
pub const BALLOTS_PER_ENTRY: usize = 65_536;

/// A race's count (97.7 step 7).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Per candidate, in order.
    pub counts: Vec<u64>,
    pub blank: u64,
    pub invalid: u64,
    pub write_ins: BTreeMap<String, u64>,
}

impl Tally {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        for c in &self.counts {
            w.u64(*c);
        }
        w.u64(self.blank);
        w.u64(self.invalid);
        w.u32(self.write_ins.len() as u32);
        for (s, c) in &self.write_ins {
            w.str(s);
            w.u64(*c);
        }
        w.into_inner()
    }

    pub fn decode(payload: &[u8], candidates: usize, what: &str) -> Result<Self, SvError> {
        let mut r = Reader::new(payload, what);
        let counts = (0..candidates).map(|_| r.u64()).collect::<Result<_, _>>()?;
        let blank = r.u64()?;
        let invalid = r.u64()?;
        let n = r.u32()?;
        let mut write_ins = BTreeMap::new();
        let mut last: Option<String> = None;
        for _ in 0..n {
            let s = r.str()?;
            let c = r.u64()?;
            if last
                .as_deref()
                .is_some_and(|l| l.as_bytes() >= s.as_bytes())
            {
                return Err(SvError::Decode(format!(
                    "{what}: write-ins not in byte order"
                )));
            }
            last = Some(s.clone());
            write_ins.insert(s, c);
        }
        r.end()?;
        Ok(Self {
            counts,
            blank,
            invalid,
            write_ins,
        })
    }
}
