//! ElectionGuard 1.0 nonce sequences: `Nonces(seed, *headers)[i] = H(H(seed, *headers), i)`
//! (`H(seed, i)` when there are no headers).

use votum_arith::Integer;
use votum_group::{Group, ModpGroup};
use votum_hash::eg::{hash_elems, EgHashItem};

#[derive(Clone, Debug)]
pub struct Nonces {
    seed: Integer,
}

impl Nonces {
    pub fn new(seed: &Integer, headers: &[EgHashItem]) -> Self {
        if headers.is_empty() {
            return Self { seed: seed.clone() };
        }
        let mut items = vec![EgHashItem::Num(seed.clone())];
        items.extend_from_slice(headers);
        Self {
            seed: hash_elems(&items, ModpGroup::eg_4096().order()),
        }
    }

    pub fn get(&self, index: u64) -> Integer {
        let items = [
            EgHashItem::Num(self.seed.clone()),
            EgHashItem::Int(index as i64),
        ];
        hash_elems(&items, ModpGroup::eg_4096().order())
    }
}
