//! What a contest's data holds in plaintext (spec/65.6): an overvote's options, the write-ins and the
//! status, in egk-ec's byte encoding, fitted to a size. Shared by the devices (behind `prove`) and the
//! verifier, which reads the write-ins of decrypted contest data back (spec/66.11).

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
