//! Small plaintexts as group elements: m ↦ g^m, decoded by a full lookup table (spec/91.1).

use std::collections::HashMap;

use rayon::prelude::*;
use votum_group::Group;

use crate::MixError;

/// Encodes values `0..=max` as `g^m` and decodes them with one table lookup.
pub struct ValueCodec<G: Group> {
    group: G,
    max: u64,
    powers: Vec<G::Element>,
    table: HashMap<Vec<u8>, u64>,
}

impl<G: Group> std::fmt::Debug for ValueCodec<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ValueCodec")
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}

impl<G: Group> ValueCodec<G> {
    /// Largest `max` accepted (the table holds `max + 1` elements).
    pub const LIMIT: u64 = 1 << 20;

    pub fn new(group: &G, max: u64) -> Result<Self, crate::MixError> {
        if max > Self::LIMIT {
            return Err(crate::MixError::Input(format!(
                "values up to {max}: at most {} can be encoded",
                Self::LIMIT
            )));
        }
        let mut powers = Vec::with_capacity(max as usize + 1);
        let mut acc = group.identity();
        for _ in 0..=max {
            powers.push(acc.clone());
            acc = group.op(&acc, group.generator());
        }
        let table = powers
            .par_iter()
            .enumerate()
            .map(|(m, e)| (group.encode_element(e), m as u64))
            .collect();
        Ok(Self {
            group: group.clone(),
            max,
            powers,
            table,
        })
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    pub fn encode(&self, m: u64) -> Result<G::Element, crate::MixError> {
        self.powers
            .get(usize::try_from(m).unwrap_or(usize::MAX))
            .cloned()
            .ok_or_else(|| crate::MixError::Input(format!("value {m} above {}", self.max)))
    }

    /// The value of `g^m`, or `None` for an element that encodes no value up to `max`.
    pub fn decode(&self, e: &G::Element) -> Option<u64> {
        self.table.get(&self.group.encode_element(e)).copied()
    }
}

/// Decodes `elements`, `w` to a row, each into its value (rows in parallel).
pub fn decode_rows<G: Group>(
    codec: &ValueCodec<G>,
    elements: &[G::Element],
    w: usize,
) -> Result<Vec<Vec<u64>>, MixError> {
    elements
        .par_chunks(w)
        .enumerate()
        .map(|(row, es)| {
            es.iter()
                .map(|e| {
                    codec.decode(e).ok_or(MixError::Decoding {
                        row,
                        max: codec.max(),
                    })
                })
                .collect()
        })
        .collect()
}
