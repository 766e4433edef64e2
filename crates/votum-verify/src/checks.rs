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
    Mix08,
    Sv01,
    Sv02,
    Sv03,
    Sv04,
    Sv05,
    Sv06,
    Sv07,
    Sv08,
    Sv09,
    Sv10,
    Sv11,
    Sv12,
    Chv01,
    Chv02,
    Chv03,
    Chv04,
    Chv05,
    Chv06,
    Chv07,
    Chv08,
    Chv09,
    Chv10,
    Chv11,
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
    pub const MIX: [Check; 8] = [
        Check::Mix01,
        Check::Mix02,
        Check::Mix03,
        Check::Mix04,
        Check::Mix05,
        Check::Mix06,
        Check::Mix07,
        Check::Mix08,
    ];

    /// The checks of a split-value record (spec/97.9), in report order.
    pub const SV: [Check; 12] = [
        Check::Sv01,
        Check::Sv02,
        Check::Sv03,
        Check::Sv04,
        Check::Sv05,
        Check::Sv06,
        Check::Sv07,
        Check::Sv08,
        Check::Sv09,
        Check::Sv10,
        Check::Sv11,
        Check::Sv12,
    ];

    /// The checks of a CHVote record (spec/92.10), in report order.
    pub const CHV: [Check; 11] = [
        Check::Chv01,
        Check::Chv02,
        Check::Chv03,
        Check::Chv04,
        Check::Chv05,
        Check::Chv06,
        Check::Chv07,
        Check::Chv08,
        Check::Chv09,
        Check::Chv10,
        Check::Chv11,
    ];

    /// Every check of the registry: the ElectionGuard record's, the mix record's, the split-value
    /// record's, the CHVote record's.
    pub fn all() -> impl Iterator<Item = Check> {
        Check::EG
            .into_iter()
            .chain(Check::MIX)
            .chain(Check::SV)
            .chain(Check::CHV)
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
            Check::Mix08 => (
                "V-MIX-08",
                "every authority's entry is signed by the key the parameters name",
            ),
            Check::Sv01 => (
                "V-SV-01",
                "the split-value record reads; its entries come in order",
            ),
            Check::Sv02 => ("V-SV-02", "parameters and each race's modulus"),
            Check::Sv03 => ("V-SV-03", "ballots numbered in order; the seal counts them"),
            Check::Sv04 => (
                "V-SV-04",
                "both challenges are the board's heads before them",
            ),
            Check::Sv05 => ("V-SV-05", "opened copies regenerate their posted roots"),
            Check::Sv06 => (
                "V-SV-06",
                "opened copies: rows consistent, every copy the same votes",
            ),
            Check::Sv07 => ("V-SV-07", "every path is a permutation"),
            Check::Sv08 => ("V-SV-08", "t-values form zero sharings across the rows"),
            Check::Sv09 => ("V-SV-09", "input halves open the ballots' commitments"),
            Check::Sv10 => ("V-SV-10", "checked copies' half openings give their roots"),
            Check::Sv11 => (
                "V-SV-11",
                "opened halves differ from their inputs by the t-values",
            ),
            Check::Sv12 => ("V-SV-12", "each tally is the count of the opened votes"),
            Check::Chv01 => (
                "V-CHV-01",
                "the CHVote record reads; its entries come in order",
            ),
            Check::Chv02 => (
                "V-CHV-02",
                "parameters, key shares and the authorities' public voter data",
            ),
            Check::Chv03 => (
                "V-CHV-03",
                "ballots: one per voter, the voter's credential, the ballot proof",
            ),
            Check::Chv04 => (
                "V-CHV-04",
                "the revealed OT exponents give every authority's response",
            ),
            Check::Chv05 => (
                "V-CHV-05",
                "confirmations: after a ballot, the voter's credential, the proof",
            ),
            Check::Chv06 => (
                "V-CHV-06",
                "the input list is the confirmed ballots' encryptions",
            ),
            Check::Chv07 => ("V-CHV-07", "every authority's shuffle proof"),
            Check::Chv08 => (
                "V-CHV-08",
                "every authority's decryption share and its proof",
            ),
            Check::Chv09 => ("V-CHV-09", "the result is the tally of the decrypted votes"),
            Check::Chv10 => (
                "V-CHV-10",
                "every invalid vote traced back to its voter by every authority",
            ),
            Check::Chv11 => (
                "V-CHV-11",
                "every shuffle, decryption share and trace signed by its authority's node key",
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
        assert_eq!(
            ids.len(),
            Check::EG.len() + Check::MIX.len() + Check::SV.len() + Check::CHV.len()
        );
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
