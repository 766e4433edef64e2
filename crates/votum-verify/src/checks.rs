//! The registry of checks (spec/50.3): every check has a stable id, a title and its place in a report.

/// One check of the registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Check {
    Record01,
    Param01,
    Param02,
    Param03,
    Guard01,
    Guard02,
    Guard03,
    Ballot01,
    Ballot02,
    Ballot03,
    Ballot04,
    Ballot05,
    Ballot06,
    Tally01,
    Decrypt01,
    Decrypt02,
    Decrypt03,
    Decrypt04,
    Spoiled01,
    Spoiled02,
    Mix01,
    Mix02,
    Mix03,
    Mix04,
    Mix05,
    Mix06,
    Mix07,
}

impl Check {
    /// The checks of an ElectionGuard 1.4 record, in report order.
    pub const EG: [Check; 20] = [
        Check::Record01,
        Check::Param01,
        Check::Param02,
        Check::Param03,
        Check::Guard01,
        Check::Guard02,
        Check::Guard03,
        Check::Ballot01,
        Check::Ballot02,
        Check::Ballot03,
        Check::Ballot04,
        Check::Ballot05,
        Check::Ballot06,
        Check::Tally01,
        Check::Decrypt01,
        Check::Decrypt02,
        Check::Decrypt03,
        Check::Decrypt04,
        Check::Spoiled01,
        Check::Spoiled02,
    ];

    /// The checks of a mix record (spec/91.7), in report order.
    pub const MIX: [Check; 7] = [
        Check::Mix01,
        Check::Mix02,
        Check::Mix03,
        Check::Mix04,
        Check::Mix05,
        Check::Mix06,
        Check::Mix07,
    ];

    /// Every check of the registry: the ElectionGuard record's, then the mix record's.
    pub fn all() -> impl Iterator<Item = Check> {
        Check::EG.into_iter().chain(Check::MIX)
    }

    /// The checks every submitted ballot goes through (one batch examines each of them).
    pub const BALLOT: [Check; 6] = [
        Check::Ballot01,
        Check::Ballot02,
        Check::Ballot03,
        Check::Ballot04,
        Check::Ballot05,
        Check::Ballot06,
    ];

    /// The checks of a decryption (the tally's; a spoiled ballot's are V-SPOILED-02).
    pub const DECRYPTION: [Check; 4] = [
        Check::Decrypt01,
        Check::Decrypt02,
        Check::Decrypt03,
        Check::Decrypt04,
    ];

    /// Its id in reports and in spec/50.
    pub fn id(self) -> &'static str {
        self.info().0
    }

    /// What it checks, in a few words.
    pub fn title(self) -> &'static str {
        self.info().1
    }

    pub fn from_id(id: &str) -> Option<Check> {
        Check::all().find(|c| c.id() == id)
    }

    #[cfg(test)]
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    fn info(self) -> (&'static str, &'static str) {
        match self {
            Check::Record01 => (
                "V-RECORD-01",
                "the record is readable (layout, archive integrity)",
            ),
            Check::Param01 => ("V-PARAM-01", "standard parameters (p, q, g, cofactor)"),
            Check::Param02 => (
                "V-PARAM-02",
                "the manifest is valid and its hash is the context's",
            ),
            Check::Param03 => (
                "V-PARAM-03",
                "guardian count, quorum and base hash of the context",
            ),
            Check::Guard01 => (
                "V-GUARD-01",
                "guardian records: ids, sequence orders, commitments",
            ),
            Check::Guard02 => (
                "V-GUARD-02",
                "coefficient commitments: subgroup and Schnorr proofs",
            ),
            Check::Guard03 => (
                "V-GUARD-03",
                "joint key, commitment hash and extended base hash",
            ),
            Check::Ballot01 => ("V-BALLOT-01", "ballots are for this election and style"),
            Check::Ballot02 => ("V-BALLOT-02", "ballot, contest and selection crypto hashes"),
            Check::Ballot03 => ("V-BALLOT-03", "selection ciphertexts and their 0/1 proofs"),
            Check::Ballot04 => ("V-BALLOT-04", "contest selection-limit proofs"),
            Check::Ballot05 => ("V-BALLOT-05", "no duplicate ballot ids"),
            Check::Ballot06 => ("V-BALLOT-06", "ballot codes and each device's chain"),
            Check::Tally01 => (
                "V-TALLY-01",
                "encrypted tally = product of the cast ballots",
            ),
            Check::Decrypt01 => (
                "V-DECRYPT-01",
                "guardians' decryption shares and their proofs",
            ),
            Check::Decrypt02 => (
                "V-DECRYPT-02",
                "compensated shares against recomputed recovery keys",
            ),
            Check::Decrypt03 => (
                "V-DECRYPT-03",
                "reconstruction of missing guardians' shares",
            ),
            Check::Decrypt04 => ("V-DECRYPT-04", "decrypted values and published counts"),
            Check::Spoiled01 => ("V-SPOILED-01", "every spoiled ballot has its decryption"),
            Check::Spoiled02 => (
                "V-SPOILED-02",
                "spoiled ballots decrypt to their plaintexts",
            ),
            Check::Mix01 => (
                "V-MIX-01",
                "the mix record reads; its entries are the election's, in order",
            ),
            Check::Mix02 => (
                "V-MIX-02",
                "parameters, trustees' key proofs and the joint key",
            ),
            Check::Mix03 => (
                "V-MIX-03",
                "ballots' proofs of knowledge, one per voter; the input list",
            ),
            Check::Mix04 => ("V-MIX-04", "every mixer's shuffle proof"),
            Check::Mix05 => ("V-MIX-05", "trustees' decryption shares and their proofs"),
            Check::Mix06 => (
                "V-MIX-06",
                "the posted plaintexts decrypt and decode from the last list",
            ),
            Check::Mix07 => (
                "V-MIX-07",
                "the posted outcome is the count of the plaintexts",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_round_trip() {
        let mut ids: Vec<&str> = Check::all().map(|c| c.id()).collect();
        for (i, c) in Check::all().enumerate() {
            assert_eq!(c.index(), i);
            assert_eq!(Check::from_id(c.id()), Some(c));
        }
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), Check::EG.len() + Check::MIX.len());
    }

    #[test]
    fn every_id_is_in_the_spec() {
        let spec = include_str!("../../../spec/50-checks.md");
        for c in Check::all() {
            assert!(
                spec.contains(&format!("| {} |", c.id())),
                "{} is not in spec/50",
                c.id()
            );
        }
    }
}
