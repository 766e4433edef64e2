//! The election manifest (ElectionGuard 1.4 JSON) and its crypto hashes.
//!
//! Hashes follow electionguard 1.4.0 field for field (spec/60-eg-manifest.md), including its
//! known gap: candidates are not part of the manifest hash. Readers refuse unknown fields,
//! unknown enum values, dangling references and duplicate identifiers.

use std::collections::HashSet;

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::{Deserialize, Serialize};
use votum_arith::Integer;
use votum_group::{Group, ModpGroup};
use votum_hash::eg::{hash_elems, EgHashItem};

/// Why a manifest was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    #[error("manifest JSON is malformed at line {line}, column {column}: {message}")]
    Json {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{field} has unknown value {value:?}")]
    UnknownEnum { field: &'static str, value: String },
    #[error("{field} is not an ISO 8601 date-time: {value:?}")]
    BadDate { field: &'static str, value: String },
    #[error("duplicate {kind} id {id:?}")]
    DuplicateId { kind: &'static str, id: String },
    #[error("{referrer} refers to unknown {kind} {id:?}")]
    UnknownReference {
        kind: &'static str,
        id: String,
        referrer: String,
    },
    #[error("contest {contest:?}: {problem}")]
    BadContest {
        contest: String,
        problem: &'static str,
    },
    #[error("the manifest has no {0}")]
    Empty(&'static str),
}

const ELECTION_TYPES: &[&str] = &[
    "unknown",
    "general",
    "partisan_primary_closed",
    "partisan_primary_open",
    "primary",
    "runoff",
    "special",
    "other",
];
const REPORTING_UNIT_TYPES: &[&str] = &[
    "unknown",
    "ballot_batch",
    "ballot_style_area",
    "borough",
    "city",
    "city_council",
    "combined_precinct",
    "congressional",
    "country",
    "county",
    "county_council",
    "drop_box",
    "judicial",
    "municipality",
    "polling_place",
    "precinct",
    "school",
    "special",
    "split_precinct",
    "state",
    "state_house",
    "state_senate",
    "township",
    "utility",
    "village",
    "vote_center",
    "ward",
    "water",
    "other",
];
const VOTE_VARIATIONS: &[&str] = &[
    "one_of_m",
    "approval",
    "borda",
    "cumulative",
    "majority",
    "n_of_m",
    "plurality",
    "proportional",
    "range",
    "rcv",
    "super_majority",
    "other",
];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Language {
    pub value: String,
    #[serde(default = "english")]
    pub language: String,
}

fn english() -> String {
    "en".to_owned()
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InternationalizedText {
    #[serde(default)]
    pub text: Vec<Language>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnnotatedString {
    pub annotation: String,
    pub value: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactInformation {
    #[serde(default)]
    pub address_line: Option<Vec<String>>,
    #[serde(default)]
    pub email: Option<Vec<AnnotatedString>>,
    #[serde(default)]
    pub phone: Option<Vec<AnnotatedString>>,
    #[serde(default)]
    pub name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeopoliticalUnit {
    pub object_id: String,
    pub name: String,
    #[serde(rename = "type")]
    pub unit_type: String,
    #[serde(default)]
    pub contact_information: Option<ContactInformation>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Party {
    pub object_id: String,
    #[serde(default)]
    pub name: InternationalizedText,
    #[serde(default)]
    pub abbreviation: Option<String>,
    #[serde(default)]
    pub color: Option<String>,
    #[serde(default)]
    pub logo_uri: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Candidate {
    pub object_id: String,
    #[serde(default)]
    pub name: InternationalizedText,
    #[serde(default)]
    pub party_id: Option<String>,
    #[serde(default)]
    pub image_uri: Option<String>,
    #[serde(default)]
    pub is_write_in: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectionDescription {
    pub object_id: String,
    pub sequence_order: i64,
    pub candidate_id: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContestDescription {
    pub object_id: String,
    pub sequence_order: i64,
    pub electoral_district_id: String,
    pub vote_variation: String,
    pub number_elected: i64,
    pub votes_allowed: i64,
    pub name: String,
    pub ballot_selections: Vec<SelectionDescription>,
    #[serde(default)]
    pub ballot_title: Option<InternationalizedText>,
    #[serde(default)]
    pub ballot_subtitle: Option<InternationalizedText>,
    /// Candidate contests only; not part of any hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_party_ids: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BallotStyle {
    pub object_id: String,
    #[serde(default)]
    pub geopolitical_unit_ids: Option<Vec<String>>,
    #[serde(default)]
    pub party_ids: Option<Vec<String>>,
    #[serde(default)]
    pub image_uri: Option<String>,
}

/// An election manifest in the ElectionGuard 1.4 JSON layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub election_scope_id: String,
    pub spec_version: String,
    #[serde(rename = "type")]
    pub election_type: String,
    pub start_date: String,
    pub end_date: String,
    pub geopolitical_units: Vec<GeopoliticalUnit>,
    pub parties: Vec<Party>,
    pub candidates: Vec<Candidate>,
    pub contests: Vec<ContestDescription>,
    pub ballot_styles: Vec<BallotStyle>,
    #[serde(default)]
    pub name: Option<InternationalizedText>,
    #[serde(default)]
    pub contact_information: Option<ContactInformation>,
}

// ---- hashing: one function per object, mirroring electionguard 1.4.0 ------------------------

fn q() -> Integer {
    ModpGroup::eg_4096().order().clone()
}

fn hash(items: Vec<EgHashItem>) -> Integer {
    hash_elems(&items, &q())
}

fn opt_str(s: &Option<String>) -> EgHashItem {
    s.as_ref()
        .map_or(EgHashItem::Null, |v| EgHashItem::Str(v.clone()))
}

fn str_list(v: &Option<Vec<String>>) -> EgHashItem {
    match v {
        Some(xs) if !xs.is_empty() => {
            EgHashItem::List(xs.iter().map(|x| EgHashItem::Str(x.clone())).collect())
        }
        _ => EgHashItem::Null,
    }
}

/// A list of hashable objects: `null` when empty, else the list of their hashes.
fn obj_list<T>(xs: &[T], f: impl Fn(&T) -> Integer) -> EgHashItem {
    if xs.is_empty() {
        EgHashItem::Null
    } else {
        EgHashItem::List(xs.iter().map(|x| EgHashItem::Num(f(x))).collect())
    }
}

fn opt_obj<T>(x: &Option<T>, f: impl Fn(&T) -> Integer) -> EgHashItem {
    x.as_ref()
        .map_or(EgHashItem::Null, |v| EgHashItem::Num(f(v)))
}

fn opt_obj_list<T>(x: &Option<Vec<T>>, f: impl Fn(&T) -> Integer) -> EgHashItem {
    x.as_ref().map_or(EgHashItem::Null, |v| obj_list(v, f))
}

impl Language {
    pub fn crypto_hash(&self) -> Integer {
        hash(vec![
            EgHashItem::Str(self.value.clone()),
            EgHashItem::Str(self.language.clone()),
        ])
    }
}

impl InternationalizedText {
    pub fn crypto_hash(&self) -> Integer {
        hash(vec![obj_list(&self.text, Language::crypto_hash)])
    }
}

impl AnnotatedString {
    pub fn crypto_hash(&self) -> Integer {
        hash(vec![
            EgHashItem::Str(self.annotation.clone()),
            EgHashItem::Str(self.value.clone()),
        ])
    }
}

impl ContactInformation {
    pub fn crypto_hash(&self) -> Integer {
        hash(vec![
            opt_str(&self.name),
            str_list(&self.address_line),
            opt_obj_list(&self.email, AnnotatedString::crypto_hash),
            opt_obj_list(&self.phone, AnnotatedString::crypto_hash),
        ])
    }
}

impl GeopoliticalUnit {
    pub fn crypto_hash(&self) -> Integer {
        hash(vec![
            EgHashItem::Str(self.object_id.clone()),
            EgHashItem::Str(self.name.clone()),
            EgHashItem::Str(self.unit_type.clone()),
            opt_obj(&self.contact_information, ContactInformation::crypto_hash),
        ])
    }
}

impl Party {
    pub fn crypto_hash(&self) -> Integer {
        hash(vec![
            EgHashItem::Str(self.object_id.clone()),
            EgHashItem::Num(self.name.crypto_hash()),
            opt_str(&self.abbreviation),
            opt_str(&self.color),
            opt_str(&self.logo_uri),
        ])
    }
}

impl Candidate {
    pub fn crypto_hash(&self) -> Integer {
        hash(vec![
            EgHashItem::Str(self.object_id.clone()),
            EgHashItem::Num(self.name.crypto_hash()),
            opt_str(&self.party_id),
            opt_str(&self.image_uri),
        ])
    }
}

impl SelectionDescription {
    /// The selection's description hash (used as the seed of its ciphertext hashes on ballots).
    pub fn crypto_hash(&self) -> Integer {
        hash(vec![
            EgHashItem::Str(self.object_id.clone()),
            EgHashItem::Int(self.sequence_order),
            EgHashItem::Str(self.candidate_id.clone()),
        ])
    }
}

impl ContestDescription {
    /// The contest's description hash.
    pub fn crypto_hash(&self) -> Integer {
        hash(vec![
            EgHashItem::Str(self.object_id.clone()),
            EgHashItem::Int(self.sequence_order),
            EgHashItem::Str(self.electoral_district_id.clone()),
            EgHashItem::Str(self.vote_variation.clone()),
            opt_obj(&self.ballot_title, InternationalizedText::crypto_hash),
            opt_obj(&self.ballot_subtitle, InternationalizedText::crypto_hash),
            EgHashItem::Str(self.name.clone()),
            EgHashItem::Int(self.number_elected),
            EgHashItem::Int(self.votes_allowed),
            obj_list(&self.ballot_selections, SelectionDescription::crypto_hash),
        ])
    }
}

impl BallotStyle {
    pub fn crypto_hash(&self) -> Integer {
        hash(vec![
            EgHashItem::Str(self.object_id.clone()),
            str_list(&self.geopolitical_unit_ids),
            str_list(&self.party_ids),
            opt_str(&self.image_uri),
        ])
    }
}

/// `%Y-%m-%dT%H:%M:%SZ` in UTC, whole seconds, as electionguard hashes dates.
fn hash_date(field: &'static str, value: &str) -> Result<String, ManifestError> {
    let bad = || ManifestError::BadDate {
        field,
        value: value.to_owned(),
    };
    if let Ok(dt) = DateTime::parse_from_rfc3339(value) {
        return Ok(dt
            .with_timezone(&Utc)
            .format("%Y-%m-%dT%H:%M:%SZ")
            .to_string());
    }
    // A date-time without offset is hashed as written (electionguard does not convert it).
    NaiveDateTime::parse_from_str(value, "%Y-%m-%dT%H:%M:%S%.f")
        .map(|n| n.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .map_err(|_| bad())
}

impl Manifest {
    /// Parses and validates a manifest in the ElectionGuard 1.4 JSON layout.
    pub fn from_json(text: &str) -> Result<Self, ManifestError> {
        let manifest: Manifest = serde_json::from_str(text).map_err(|e| ManifestError::Json {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        manifest.validate()?;
        Ok(manifest)
    }

    pub fn to_json(&self) -> String {
        // Serializing plain structs of strings and numbers cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The manifest hash, as the reference computes it (candidates are not included).
    pub fn crypto_hash(&self) -> Result<Integer, ManifestError> {
        Ok(hash(vec![
            EgHashItem::Str(self.election_scope_id.clone()),
            EgHashItem::Str(self.election_type.clone()),
            EgHashItem::Str(hash_date("start_date", &self.start_date)?),
            EgHashItem::Str(hash_date("end_date", &self.end_date)?),
            opt_obj(&self.name, InternationalizedText::crypto_hash),
            opt_obj(&self.contact_information, ContactInformation::crypto_hash),
            obj_list(&self.geopolitical_units, GeopoliticalUnit::crypto_hash),
            obj_list(&self.parties, Party::crypto_hash),
            obj_list(&self.contests, ContestDescription::crypto_hash),
            obj_list(&self.ballot_styles, BallotStyle::crypto_hash),
        ]))
    }

    pub fn contest(&self, object_id: &str) -> Option<&ContestDescription> {
        self.contests.iter().find(|c| c.object_id == object_id)
    }

    /// What is odd in this manifest but accepted, as electionguard 1.4.0 accepts it: (object id,
    /// why). Encryption, tallying and decryption do not depend on any of these; a verifier reports
    /// them as warnings.
    pub fn warnings(&self) -> Vec<(String, String)> {
        let parties: HashSet<&str> = self.parties.iter().map(|p| p.object_id.as_str()).collect();
        let candidates: HashSet<&str> = self
            .candidates
            .iter()
            .map(|c| c.object_id.as_str())
            .collect();
        let mut out = Vec::new();
        for s in &self.ballot_styles {
            for p in s.party_ids.iter().flatten() {
                if !parties.contains(p.as_str()) {
                    out.push((
                        s.object_id.clone(),
                        format!("refers to unknown party {p:?}"),
                    ));
                }
            }
        }
        for c in &self.contests {
            if c.vote_variation == "one_of_m" && c.votes_allowed != 1 {
                out.push((
                    c.object_id.clone(),
                    format!("a one_of_m contest allows {} votes", c.votes_allowed),
                ));
            }
            for s in &c.ballot_selections {
                if !candidates.contains(s.candidate_id.as_str()) {
                    out.push((
                        s.object_id.clone(),
                        format!(
                            "refers to candidate {:?}, who is not among the candidates (a write-in?)",
                            s.candidate_id
                        ),
                    ));
                }
            }
        }
        out
    }

    fn validate(&self) -> Result<(), ManifestError> {
        if !ELECTION_TYPES.contains(&self.election_type.as_str()) {
            return Err(ManifestError::UnknownEnum {
                field: "type",
                value: self.election_type.clone(),
            });
        }
        hash_date("start_date", &self.start_date)?;
        hash_date("end_date", &self.end_date)?;
        if self.contests.is_empty() {
            return Err(ManifestError::Empty("contests"));
        }
        if self.ballot_styles.is_empty() {
            return Err(ManifestError::Empty("ballot styles"));
        }
        let units = unique(
            "geopolitical unit",
            self.geopolitical_units.iter().map(|u| u.object_id.as_str()),
        )?;
        for u in &self.geopolitical_units {
            if !REPORTING_UNIT_TYPES.contains(&u.unit_type.as_str()) {
                return Err(ManifestError::UnknownEnum {
                    field: "geopolitical unit type",
                    value: u.unit_type.clone(),
                });
            }
        }
        let parties = unique("party", self.parties.iter().map(|p| p.object_id.as_str()))?;
        unique(
            "candidate",
            self.candidates.iter().map(|c| c.object_id.as_str()),
        )?;
        for c in &self.candidates {
            if let Some(p) = &c.party_id {
                refers("party", &parties, p, &c.object_id)?;
            }
        }
        unique(
            "ballot style",
            self.ballot_styles.iter().map(|s| s.object_id.as_str()),
        )?;
        for s in &self.ballot_styles {
            for u in s.geopolitical_unit_ids.iter().flatten() {
                refers("geopolitical unit", &units, u, &s.object_id)?;
            }
        }
        unique(
            "contest",
            self.contests.iter().map(|c| c.object_id.as_str()),
        )?;
        let mut selection_ids = HashSet::new();
        for c in &self.contests {
            let bad = |problem| ManifestError::BadContest {
                contest: c.object_id.clone(),
                problem,
            };
            if !VOTE_VARIATIONS.contains(&c.vote_variation.as_str()) {
                return Err(ManifestError::UnknownEnum {
                    field: "vote_variation",
                    value: c.vote_variation.clone(),
                });
            }
            refers(
                "geopolitical unit",
                &units,
                &c.electoral_district_id,
                &c.object_id,
            )?;
            if c.ballot_selections.is_empty() {
                return Err(bad("no selections"));
            }
            if c.votes_allowed < 1 || c.number_elected < 1 {
                return Err(bad("votes_allowed and number_elected must be at least 1"));
            }
            if c.number_elected > c.votes_allowed {
                return Err(bad("number_elected exceeds votes_allowed"));
            }
            if c.votes_allowed as usize > c.ballot_selections.len() {
                return Err(bad("votes_allowed exceeds the number of selections"));
            }
            let mut orders = HashSet::new();
            for s in &c.ballot_selections {
                if !selection_ids.insert(s.object_id.as_str()) {
                    return Err(ManifestError::DuplicateId {
                        kind: "selection",
                        id: s.object_id.clone(),
                    });
                }
                if !orders.insert(s.sequence_order) {
                    return Err(bad("two selections share a sequence_order"));
                }
            }
        }
        let mut orders = HashSet::new();
        for c in &self.contests {
            if !orders.insert(c.sequence_order) {
                return Err(ManifestError::BadContest {
                    contest: c.object_id.clone(),
                    problem: "another contest has the same sequence_order",
                });
            }
        }
        Ok(())
    }
}

fn unique<'a>(
    kind: &'static str,
    ids: impl Iterator<Item = &'a str>,
) -> Result<HashSet<&'a str>, ManifestError> {
    let mut seen = HashSet::new();
    for id in ids {
        if !seen.insert(id) {
            return Err(ManifestError::DuplicateId {
                kind,
                id: id.to_owned(),
            });
        }
    }
    Ok(seen)
}

fn refers(
    kind: &'static str,
    known: &HashSet<&str>,
    id: &str,
    referrer: &str,
) -> Result<(), ManifestError> {
    if known.contains(id) {
        Ok(())
    } else {
        Err(ManifestError::UnknownReference {
            kind,
            id: id.to_owned(),
            referrer: referrer.to_owned(),
        })
    }
}

/// Placeholder selections of a contest: `number_elected` of them, after the highest sequence order.
pub fn placeholders(contest: &ContestDescription) -> Vec<SelectionDescription> {
    let max = contest
        .ballot_selections
        .iter()
        .map(|s| s.sequence_order)
        .max()
        .unwrap_or(-1);
    (0..contest.number_elected)
        .map(|i| {
            let order = max + 1 + i;
            let id = format!("{}-{order}", contest.object_id);
            SelectionDescription {
                object_id: format!("{id}-placeholder"),
                sequence_order: order,
                candidate_id: format!("{id}-candidate"),
            }
        })
        .collect()
}

/// Contests of a ballot style: those whose district is one of the style's units, in manifest
/// order (`None` for a style the manifest does not have).
pub fn contests_for_style<'a>(
    manifest: &'a Manifest,
    style_id: &str,
) -> Option<Vec<&'a ContestDescription>> {
    let style = manifest
        .ballot_styles
        .iter()
        .find(|s| s.object_id == style_id)?;
    let units: HashSet<&str> = style
        .geopolitical_unit_ids
        .iter()
        .flatten()
        .map(String::as_str)
        .collect();
    Some(
        manifest
            .contests
            .iter()
            .filter(|c| units.contains(c.electoral_district_id.as_str()))
            .collect(),
    )
}
