//! The parts of a 2.x manifest (egk-ec's JSON) that encryption and verification use: contests with their
//! limits and options, and ballot styles.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// One contest of the manifest.
pub struct ManifestContest {
    pub sequence: u32,
    pub district: String,
    /// L: votes allowed in the contest
    pub limit: u32,
    /// R: votes allowed per option
    pub option_limit: u32,
    /// the options' ids in sequence order
    pub options: Vec<String>,
    /// the options' sequence orders, in the same order
    pub sequences: Vec<u32>,
    /// b_Λ: the contest's data is 32·b bytes on every ordinary 2.1 ballot (`contest_data_blocks`; spec/66.11)
    pub data_blocks: Option<u32>,
    /// the guardians decrypt this contest's data on every cast ballot (`decrypt_contest_data`; spec/66.11)
    pub decrypt_data: bool,
}

/// A manifest as votum reads it.
pub struct Manifest {
    pub contests: BTreeMap<String, ManifestContest>,
    /// style id → its geopolitical units
    pub styles: BTreeMap<String, BTreeSet<String>>,
}

impl Manifest {
    /// The contests on ballot style `style`, in sequence order; `None` if the style is not the manifest's.
    pub fn contests_for(&self, style: &str) -> Option<Vec<(&str, &ManifestContest)>> {
        let units = self.styles.get(style)?;
        let mut out: Vec<(&str, &ManifestContest)> = self
            .contests
            .iter()
            .filter(|(_, c)| units.contains(&c.district))
            .map(|(id, c)| (id.as_str(), c))
            .collect();
        out.sort_by_key(|(_, c)| c.sequence);
        Some(out)
    }
}

pub fn text<'v>(v: &'v Value, field: &str) -> Result<&'v str, String> {
    v[field]
        .as_str()
        .ok_or_else(|| format!("`{field}` is not a string"))
}

pub fn count(v: &Value, field: &str) -> Result<u32, String> {
    v[field]
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| format!("`{field}` is not a count"))
}

pub fn list<'v>(v: &'v Value, field: &str) -> Result<&'v Vec<Value>, String> {
    v[field]
        .as_array()
        .ok_or_else(|| format!("`{field}` is not a list"))
}

/// Reads a manifest: `Err` says which field is wrong.
pub fn read_manifest(v: &Value) -> Result<Manifest, String> {
    let mut contests = BTreeMap::new();
    for c in list(v, "contests")? {
        let id = text(c, "object_id")?.to_owned();
        let mut options: Vec<(u32, String)> = list(c, "ballot_selections")?
            .iter()
            .map(|s| {
                Ok((
                    count(s, "sequence_order")?,
                    text(s, "object_id")?.to_owned(),
                ))
            })
            .collect::<Result<_, String>>()
            .map_err(|e| format!("contest {id}: {e}"))?;
        options.sort();
        let limit = |field: &str| match &c[field] {
            Value::Null => Ok(1),
            _ => count(c, field),
        };
        let mc = ManifestContest {
            sequence: count(c, "sequence_order")?,
            district: text(c, "electoral_district_id")?.to_owned(),
            limit: limit("votes_allowed")?,
            option_limit: limit("option_selection_limit")?,
            sequences: options.iter().map(|(s, _)| *s).collect(),
            options: options.into_iter().map(|(_, s)| s).collect(),
            data_blocks: match &c["contest_data_blocks"] {
                Value::Null => None,
                _ => match count(c, "contest_data_blocks")? {
                    b @ 1..=0x00FF_FFFF => Some(b),
                    b => {
                        return Err(format!(
                            "contest {id}: {b} contest data blocks, not 1…2^24 − 1"
                        ))
                    }
                },
            },
            decrypt_data: match &c["decrypt_contest_data"] {
                Value::Null => false,
                Value::Bool(b) => *b,
                _ => {
                    return Err(format!(
                        "contest {id}: `decrypt_contest_data` is not true or false"
                    ))
                }
            },
        };
        if contests.insert(id.clone(), mc).is_some() {
            return Err(format!("contest {id} is listed twice"));
        }
    }
    let mut styles = BTreeMap::new();
    for s in list(v, "ballot_styles")? {
        let units = list(s, "geopolitical_unit_ids")?
            .iter()
            .map(|u| {
                u.as_str()
                    .map(str::to_owned)
                    .ok_or("a unit id is not a string")
            })
            .collect::<Result<_, _>>()?;
        styles.insert(text(s, "object_id")?.to_owned(), units);
    }
    Ok(Manifest { contests, styles })
}
