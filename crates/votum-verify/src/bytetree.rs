//! Verificatum's ByteTree (spec/99.2): a leaf is `0x01`, a 4-byte big-endian length and the bytes;
//! a node is `0x00`, a 4-byte big-endian count and its children. Every file of a VMN proof directory
//! is one ByteTree.
//!
//! The reader borrows the file's bytes, bounds the depth, refuses a count or length that the rest of
//! the bytes cannot hold (so a forged count allocates nothing), and requires the tree to end exactly
//! where the bytes do. The writer appends the same form to a buffer, which the random oracle hashes.

/// Deepest nesting a VMN file uses is 4 (a commitment holding an array of ciphertexts); 16 leaves room
/// for wider keys and still bounds recursion.
pub const MAX_DEPTH: usize = 16;

/// One ByteTree, borrowing its leaves from the file's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bt<'a> {
    Leaf(&'a [u8]),
    Node(Vec<Bt<'a>>),
}

impl<'a> Bt<'a> {
    /// Parses `bytes` as exactly one ByteTree.
    pub fn parse(bytes: &'a [u8]) -> Result<Bt<'a>, String> {
        let mut at = 0usize;
        let tree = parse_at(bytes, &mut at, 0)?;
        if at != bytes.len() {
            return Err(format!(
                "{} bytes after the end of the ByteTree",
                bytes.len() - at
            ));
        }
        Ok(tree)
    }

    /// The leaf's bytes, or an error naming what was expected.
    pub fn leaf(&self, what: &str) -> Result<&'a [u8], String> {
        match self {
            Bt::Leaf(b) => Ok(b),
            Bt::Node(_) => Err(format!("{what}: a node where a leaf was expected")),
        }
    }

    /// The node's children, or an error naming what was expected.
    pub fn node(&self, what: &str) -> Result<&[Bt<'a>], String> {
        match self {
            Bt::Node(c) => Ok(c),
            Bt::Leaf(_) => Err(format!("{what}: a leaf where a node was expected")),
        }
    }

    /// The node's children, which must number exactly `n`.
    pub fn children(&self, n: usize, what: &str) -> Result<&[Bt<'a>], String> {
        let c = self.node(what)?;
        if c.len() != n {
            return Err(format!("{what}: {} children, {n} expected", c.len()));
        }
        Ok(c)
    }

    /// Writes the tree back in ByteTree form.
    pub fn write(&self, out: &mut Vec<u8>) {
        match self {
            Bt::Leaf(b) => write_leaf(out, b),
            Bt::Node(c) => {
                write_node(out, c.len());
                for child in c {
                    child.write(out);
                }
            }
        }
    }
}

fn take<'a>(bytes: &'a [u8], at: &mut usize, n: usize) -> Result<&'a [u8], String> {
    let end = at
        .checked_add(n)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| format!("the ByteTree ends early at byte {}", *at))?;
    let s = &bytes[*at..end];
    *at = end;
    Ok(s)
}

fn parse_at<'a>(bytes: &'a [u8], at: &mut usize, depth: usize) -> Result<Bt<'a>, String> {
    if depth > MAX_DEPTH {
        return Err(format!("a ByteTree nested deeper than {MAX_DEPTH}"));
    }
    let start = *at;
    let head = take(bytes, at, 5)?;
    let n = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    match head[0] {
        1 => Ok(Bt::Leaf(take(bytes, at, n)?)),
        0 => {
            // every child takes at least 5 bytes: a count the rest cannot hold is refused unallocated
            if n > (bytes.len() - *at) / 5 {
                return Err(format!(
                    "a node at byte {start} counts {n} children, more than its bytes hold"
                ));
            }
            let mut children = Vec::with_capacity(n);
            for _ in 0..n {
                children.push(parse_at(bytes, at, depth + 1)?);
            }
            Ok(Bt::Node(children))
        }
        t => Err(format!(
            "byte {start}: type {t}, neither a node (0) nor a leaf (1)"
        )),
    }
}

/// Appends a leaf holding `data`.
pub fn write_leaf(out: &mut Vec<u8>, data: &[u8]) {
    out.push(1);
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(data);
}

/// Appends the header of a node of `n` children (the caller writes them next).
pub fn write_node(out: &mut Vec<u8>, n: usize) {
    out.push(0);
    out.extend_from_slice(&(n as u32).to_be_bytes());
}

/// A leaf holding a 4-byte big-endian integer (Verificatum's `ByteTree.intToByteTree`).
pub fn write_int(out: &mut Vec<u8>, v: u32) {
    write_leaf(out, &v.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let mut out = Vec::new();
        write_node(&mut out, 2);
        write_leaf(&mut out, b"ab");
        write_int(&mut out, 7);
        let t = Bt::parse(&out).unwrap();
        assert_eq!(t, Bt::Node(vec![Bt::Leaf(b"ab"), Bt::Leaf(&[0, 0, 0, 7])]));
        let mut again = Vec::new();
        t.write(&mut again);
        assert_eq!(again, out);
        // trailing byte, cut short, bad type, a count larger than the bytes
        let mut long = out.clone();
        long.push(0);
        assert!(Bt::parse(&long).is_err());
        assert!(Bt::parse(&out[..out.len() - 1]).is_err());
        assert!(Bt::parse(&[2, 0, 0, 0, 0]).is_err());
        assert!(Bt::parse(&[0, 0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(Bt::parse(&[1, 0xff, 0xff, 0xff, 0xff]).is_err());
        // nesting is bounded
        let mut deep = Vec::new();
        for _ in 0..=MAX_DEPTH + 1 {
            write_node(&mut deep, 1);
        }
        write_leaf(&mut deep, b"");
        assert!(Bt::parse(&deep).unwrap_err().contains("deeper"));
    }
}
