//! What the election service checks of a 2.1 key ceremony held on its board (spec/80.11), with no secret:
//! each guardian's key record (Verification 2) as it is posted, the proof of each share ciphertext's nonce
//! (eq. 22; only the receiver can check the values), and the guardians' document (K, K̂, H_G, H_E) computed
//! from the n records, which every guardian's own computation must equal before the election opens.

use serde_json::Value;

use crate::group::{parameter_inputs, Eg2Group};
use crate::manifest::read_manifest;
use crate::v21::check::check_key;
use crate::v21::election::{check_roster, joint_keys};
use crate::v21::hashes::{base_hash, parameter_hash};
use crate::v21::keys::check_share_proof;
use crate::v21::record::GuardianKey;
use crate::v21::trustee::read_share;
use crate::Eg2Error;

/// A 2.1 election's public parameters: the group, n, k, H_P and H_B (from the manifest's bytes).
pub struct Ceremony<G: Eg2Group> {
    group: G,
    n: u32,
    k: u32,
    hp: [u8; 32],
    hb: [u8; 32],
}

fn wrong(reason: impl Into<String>) -> Eg2Error {
    Eg2Error::Parameters(reason.into())
}

impl<G: Eg2Group> Ceremony<G> {
    /// The election on `manifest_bytes` (a 2.x manifest with at least one ballot style) with `n` guardians
    /// and quorum `k`.
    pub fn new(group: G, manifest_bytes: &[u8], (n, k): (u32, u32)) -> Result<Self, Eg2Error> {
        let doc: Value = serde_json::from_slice(manifest_bytes)
            .map_err(|e| Eg2Error::Manifest(format!("not JSON: {e}")))?;
        let manifest = read_manifest(&doc).map_err(Eg2Error::Manifest)?;
        if manifest.styles.is_empty() {
            return Err(Eg2Error::Manifest(
                "the manifest has no ballot style".into(),
            ));
        }
        if k == 0 || k > n {
            return Err(wrong(format!("quorum {k} of {n} guardians")));
        }
        let hp = parameter_hash(&parameter_inputs(&group), n, k);
        let hb = base_hash(&hp, manifest_bytes);
        Ok(Self {
            group,
            n,
            k,
            hp,
            hb,
        })
    }

    /// H_P and H_B.
    pub fn hashes(&self) -> (&[u8; 32], &[u8; 32]) {
        (&self.hp, &self.hb)
    }

    /// The record's parameters document (spec/66.3): the group's name and constants, n and k.
    pub fn parameters(&self) -> Value {
        crate::v21::record::parameters_json(&self.group, self.n, self.k)
    }

    /// Guardian i's key record, read and checked (Verification 2, i in 1…n): returns i.
    pub fn check_key(&self, record: &Value) -> Result<u32, Eg2Error> {
        let key = GuardianKey::read(&self.group, record).map_err(wrong)?;
        if key.i == 0 || key.i > self.n {
            return Err(wrong(format!(
                "a key record of guardian {} of {}",
                key.i, self.n
            )));
        }
        check_key(&self.group, &self.hp, &key, self.k).map_err(|reason| Eg2Error::Guardian {
            guardian: format!("guardian {}", key.i),
            reason,
        })?;
        Ok(key.i)
    }

    /// A share ciphertext, read and its nonce's proof checked (eq. 22): returns (from, to), two guardians of
    /// 1…n, not the same.
    pub fn check_share(&self, share: &Value) -> Result<(u32, u32), Eg2Error> {
        let s = read_share(&self.group, share).map_err(wrong)?;
        if s.from == s.to || !(1..=self.n).contains(&s.from) || !(1..=self.n).contains(&s.to) {
            return Err(wrong(format!(
                "a share from {} to {} of {} guardians",
                s.from, s.to, self.n
            )));
        }
        check_share_proof(&self.group, &self.hp, &s).map_err(|reason| Eg2Error::Guardian {
            guardian: format!("guardian {}", s.from),
            reason,
        })?;
        Ok((s.from, s.to))
    }

    /// The guardians' document (spec/66.3) from the key records of guardians 1…n in order, each checked.
    pub fn joint(&self, records: &[Value]) -> Result<Value, Eg2Error> {
        let keys = records
            .iter()
            .map(|d| GuardianKey::read(&self.group, d).map_err(wrong))
            .collect::<Result<Vec<_>, _>>()?;
        check_roster(&self.group, &self.hp, &keys, (self.n, self.k))?;
        Ok(joint_keys(&self.group, (&self.hp, &self.hb), keys).to_json(&self.group))
    }
}
