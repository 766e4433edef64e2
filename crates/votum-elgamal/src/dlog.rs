use std::collections::HashMap;

use votum_group::Group;

use crate::ElGamalError;

/// Baby-step giant-step table for `log_g` of results in `[0, max]`.
///
/// `m = ceil(sqrt(max + 1))` baby steps `g^j` are stored once; a lookup takes at most `m`
/// group operations. For `max = 10^7` that is 3,163 entries and at most 3,163 multiplications.
pub struct DlogTable<G: Group> {
    group: G,
    max: u64,
    step: u64,
    baby: HashMap<Vec<u8>, u64>,
    giant: G::Element,
}

impl<G: Group> DlogTable<G> {
    pub fn new(group: &G, max: u64) -> Self {
        let step = (max.saturating_add(1) as f64).sqrt().ceil().max(1.0) as u64;
        let mut baby = HashMap::with_capacity(step as usize);
        let g = group.generator().clone();
        let mut acc = group.identity();
        for j in 0..step {
            baby.entry(group.encode_element(&acc)).or_insert(j);
            acc = group.op(&acc, &g);
        }
        // acc = g^step; giant step multiplies by g^-step
        let giant = group.inverse(&acc);
        Self {
            group: group.clone(),
            max,
            step,
            baby,
            giant,
        }
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    /// The `t` in `[0, max]` with `g^t = target`.
    pub fn log(&self, target: &G::Element) -> Result<u64, ElGamalError> {
        let mut gamma = target.clone();
        let mut i = 0u64;
        while i * self.step <= self.max {
            if let Some(j) = self.baby.get(&self.group.encode_element(&gamma)) {
                let t = i * self.step + j;
                if t <= self.max {
                    return Ok(t);
                }
                break;
            }
            gamma = self.group.op(&gamma, &self.giant);
            i += 1;
        }
        Err(ElGamalError::DlogNotFound { max: self.max })
    }
}
