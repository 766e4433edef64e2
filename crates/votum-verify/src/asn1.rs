//! Strict DER for the few shapes other systems' records use (spec/93.2): read a TLV with its tag, a
//! definite and minimal length and no bytes left over; write one back. RustCrypto's `der` (in the tree
//! already) refuses universal tag 27, GeneralString, which IVXV puts in its key parameters and in
//! every proof challenge's seed (docs/adr/0010).

/// The universal tags these records use.
pub const INTEGER: u8 = 0x02;
pub const BIT_STRING: u8 = 0x03;
pub const OCTET_STRING: u8 = 0x04;
pub const OID: u8 = 0x06;
pub const GENERAL_STRING: u8 = 0x1B;
pub const SEQUENCE: u8 = 0x30;

/// Why bytes are not the DER expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not DER: {0}")]
pub struct DerError(pub String);

fn bad<T>(what: impl Into<String>) -> Result<T, DerError> {
    Err(DerError(what.into()))
}

/// One TLV: its tag, its contents, and its whole encoding (tag, length and contents).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tlv<'a> {
    pub tag: u8,
    pub contents: &'a [u8],
    pub whole: &'a [u8],
}

/// Reads TLVs one after another from a slice.
pub struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { rest: bytes }
    }

    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The next TLV, whatever its tag (a one-byte tag: these records use no high tag numbers).
    pub fn any(&mut self) -> Result<Tlv<'a>, DerError> {
        let b = self.rest;
        if b.len() < 2 {
            return bad("truncated before a tag and length");
        }
        let tag = b[0];
        if tag & 0x1F == 0x1F {
            return bad(format!("tag {tag:#04x} has a high tag number"));
        }
        let (len, head) = match b[1] {
            n if n < 0x80 => (n as usize, 2),
            0x80 => return bad("an indefinite length"),
            n => {
                let k = (n & 0x7F) as usize;
                if k > 4 || b.len() < 2 + k {
                    return bad("a length of more than four bytes, or truncated");
                }
                let len = b[2..2 + k]
                    .iter()
                    .fold(0usize, |a, &x| (a << 8) | x as usize);
                if b[2] == 0 || len < 0x80 {
                    return bad("a length not in its shortest form");
                }
                (len, 2 + k)
            }
        };
        if b.len() - head < len {
            return bad(format!("{len} bytes announced, {} left", b.len() - head));
        }
        let whole = &b[..head + len];
        self.rest = &b[head + len..];
        Ok(Tlv {
            tag,
            contents: &whole[head..],
            whole,
        })
    }

    /// The next TLV, which must have tag `tag`.
    pub fn expect(&mut self, tag: u8, what: &str) -> Result<Tlv<'a>, DerError> {
        let t = self.any()?;
        if t.tag != tag {
            return bad(format!(
                "{what}: tag {:#04x} where {tag:#04x} was due",
                t.tag
            ));
        }
        Ok(t)
    }

    /// The contents of the next SEQUENCE, as a reader.
    pub fn sequence(&mut self, what: &str) -> Result<Reader<'a>, DerError> {
        Ok(Reader::new(self.expect(SEQUENCE, what)?.contents))
    }

    /// The next INTEGER, which must be non-negative and minimally encoded: its big-endian magnitude.
    pub fn unsigned(&mut self, what: &str) -> Result<&'a [u8], DerError> {
        let c = self.expect(INTEGER, what)?.contents;
        match c {
            [] => bad(format!("{what}: an empty INTEGER")),
            [b, ..] if b & 0x80 != 0 => bad(format!("{what}: a negative INTEGER")),
            [0, b, ..] if b & 0x80 == 0 => {
                bad(format!("{what}: an INTEGER not in its shortest form"))
            }
            [0, rest @ ..] => Ok(rest),
            _ => Ok(c),
        }
    }

    /// Nothing may follow.
    pub fn end(&self, what: &str) -> Result<(), DerError> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            bad(format!("{} bytes after {what}", self.rest.len()))
        }
    }
}

/// A TLV's encoding.
pub fn tlv(tag: u8, contents: &[u8]) -> Vec<u8> {
    let n = contents.len();
    let mut out = vec![tag];
    if n < 0x80 {
        out.push(n as u8);
    } else {
        let bytes: Vec<u8> = n
            .to_be_bytes()
            .into_iter()
            .skip_while(|&b| b == 0)
            .collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend_from_slice(&bytes);
    }
    out.extend_from_slice(contents);
    out
}

/// A non-negative INTEGER's encoding from its big-endian magnitude (leading zeros dropped).
pub fn unsigned(magnitude: &[u8]) -> Vec<u8> {
    let m: Vec<u8> = magnitude.iter().copied().skip_while(|&b| b == 0).collect();
    let mut c = Vec::with_capacity(m.len() + 1);
    if m.first().is_none_or(|b| b & 0x80 != 0) {
        c.push(0);
    }
    c.extend_from_slice(&m);
    tlv(INTEGER, &c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_it_writes_and_refuses_what_der_forbids() {
        let seq = tlv(
            SEQUENCE,
            &[unsigned(&[0x80]), tlv(GENERAL_STRING, b"DECRYPTION")].concat(),
        );
        let mut r = Reader::new(&seq);
        let mut inner = r.sequence("s").unwrap();
        r.end("s").unwrap();
        assert_eq!(inner.unsigned("n").unwrap(), &[0x80]);
        assert_eq!(
            inner.expect(GENERAL_STRING, "g").unwrap().contents,
            b"DECRYPTION"
        );
        inner.end("s").unwrap();
        // a long form for a short length, an indefinite length, a non-minimal INTEGER, a negative one
        for bytes in [
            &[0x02, 0x81, 0x01, 0x05][..],
            &[0x30, 0x80, 0, 0],
            &[0x02, 0x02, 0x00, 0x05],
            &[0x02, 0x01, 0x85],
            &[0x02, 0x05, 0x01],
        ] {
            assert!(Reader::new(bytes).unsigned("x").is_err(), "{bytes:02x?}");
        }
        let long = tlv(OCTET_STRING, &[7u8; 300]);
        assert_eq!(&long[..4], &[0x04, 0x82, 0x01, 0x2C]);
        assert_eq!(Reader::new(&long).any().unwrap().contents.len(), 300);
    }
}
