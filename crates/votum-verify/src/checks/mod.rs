//! The registry of checks (spec/50.3): every check has a stable id, a title and its place in a report.

pub(crate) mod belenios;
pub(crate) mod chv;
pub(crate) mod eg;
pub(crate) mod eg2;
pub(crate) mod ivxv;
pub(crate) mod mix;
pub(crate) mod sv;
pub(crate) mod vmn;
pub(crate) mod vmn_ec;

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
    Ivxv01,
    Ivxv02,
    Ivxv03,
    Ivxv04,
    Ivxv05,
    Bel01,
    Bel02,
    Bel03,
    Bel04,
    Bel05,
    Bel06,
    Bel07,
    Bel08,
    Bel09,
    Bel10,
    Vmn01,
    Vmn02,
    Vmn03,
    Vmn04,
    Vmn05,
    Vmn06,
    Vmn07,
    Eg2v01,
    Eg2v02,
    Eg2v03,
    Eg2v04,
    Eg2v05,
    Eg2v06,
    Eg2v07,
    Eg2v08,
    Eg2v09,
    Eg2v10,
    Eg2v11,
    Eg2v12,
    Eg2v13,
    Eg2v14,
    Eg2v15,
    Eg2v16,
    Eg2v17,
    Eg2v18,
    Eg2v19,
    Eg21v01,
    Eg21v02,
    Eg21v03,
    Eg21v04,
    Eg21v05,
    Eg21v06,
    Eg21v07,
    Eg21v08,
    Eg21v09,
    Eg21v10,
    Eg21v11,
    Eg21v12,
    Eg21v13,
    Eg21v14,
    Eg21v15,
    Eg21v16,
    Eg21v17,
    Eg21v18,
    Eg21v19,
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

    /// The checks of an IVXV record (spec/50.8), in report order.
    pub const IVXV: [Check; 5] = [
        Check::Ivxv01,
        Check::Ivxv02,
        Check::Ivxv03,
        Check::Ivxv04,
        Check::Ivxv05,
    ];

    /// The checks of a Belenios archive (spec/50.9), in report order.
    pub const BEL: [Check; 10] = [
        Check::Bel01,
        Check::Bel02,
        Check::Bel03,
        Check::Bel04,
        Check::Bel05,
        Check::Bel06,
        Check::Bel07,
        Check::Bel08,
        Check::Bel09,
        Check::Bel10,
    ];

    /// The checks of a Verificatum mix-net session (spec/50.10), in report order.
    pub const VMN: [Check; 7] = [
        Check::Vmn01,
        Check::Vmn02,
        Check::Vmn03,
        Check::Vmn04,
        Check::Vmn05,
        Check::Vmn06,
        Check::Vmn07,
    ];

    /// The checks of an ElectionGuard 2.x record (spec/50.11), in report order: the specification's
    /// verification boxes 1–19.
    pub const EG2: [Check; 19] = [
        Check::Eg2v01,
        Check::Eg2v02,
        Check::Eg2v03,
        Check::Eg2v04,
        Check::Eg2v05,
        Check::Eg2v06,
        Check::Eg2v07,
        Check::Eg2v08,
        Check::Eg2v09,
        Check::Eg2v10,
        Check::Eg2v11,
        Check::Eg2v12,
        Check::Eg2v13,
        Check::Eg2v14,
        Check::Eg2v15,
        Check::Eg2v16,
        Check::Eg2v17,
        Check::Eg2v18,
        Check::Eg2v19,
    ];

    /// The checks of an ElectionGuard 2.1 record as votum writes it (spec/50.12), in report order: the
    /// 2.1.0 specification's verifications 1–19.
    pub const EG21: [Check; 19] = [
        Check::Eg21v01,
        Check::Eg21v02,
        Check::Eg21v03,
        Check::Eg21v04,
        Check::Eg21v05,
        Check::Eg21v06,
        Check::Eg21v07,
        Check::Eg21v08,
        Check::Eg21v09,
        Check::Eg21v10,
        Check::Eg21v11,
        Check::Eg21v12,
        Check::Eg21v13,
        Check::Eg21v14,
        Check::Eg21v15,
        Check::Eg21v16,
        Check::Eg21v17,
        Check::Eg21v18,
        Check::Eg21v19,
    ];

    /// Every check of the registry: the ElectionGuard record's, the mix record's, the split-value
    /// record's, the CHVote record's, the IVXV record's, the Belenios archive's, the VMN session's.
    pub fn all() -> impl Iterator<Item = Check> {
        Check::EG
            .into_iter()
            .chain(Check::MIX)
            .chain(Check::SV)
            .chain(Check::CHV)
            .chain(Check::IVXV)
            .chain(Check::BEL)
            .chain(Check::VMN)
            .chain(Check::EG2)
            .chain(Check::EG21)
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
        self.registry().id
    }

    /// What it checks, in a few words.
    pub fn title(self) -> &'static str {
        self.registry().title
    }

    /// Its registry entry: spec section, functions and negative test.
    pub fn registry(self) -> &'static Info {
        &REGISTRY[self as usize]
    }

    pub fn from_id(id: &str) -> Option<Check> {
        Check::all().find(|c| c.id() == id)
    }

    #[cfg(test)]
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// What the registry says of one check (spec/50.5): its id and title, the spec section that defines
/// it, the functions that make it, and a test that fails it.
#[derive(Clone, Copy, Debug)]
pub struct Info {
    pub check: Check,
    /// Its id in reports and in spec/50.
    pub id: &'static str,
    /// What it checks, in a few words.
    pub title: &'static str,
    /// The section of spec/50 that lists it (and cites the protocol's own section).
    pub spec: &'static str,
    /// The functions that make it, as paths in this crate (`checks::sv::check_cut`,
    /// `eg::Verifier::context`). Walkers read framing, order and chain; the functions under
    /// `checks::` take decoded values and a ledger, and the cluster's jobs call the same ones.
    pub code: &'static [&'static str],
    /// A test that fails it with the others passing: a test vector (`vectors/verify/cases/….json`)
    /// or a test function (`crates/…/tests/….rs::name`), from the repository's root.
    pub negative: &'static str,
}

/// Every check, in the order of [`Check`] (and so of reports).
pub const REGISTRY: [Info; 111] = [
    Info {
        check: Check::Record01,
        id: "V-RECORD-01",
        title: "the record is readable (layout, archive integrity)",
        spec: "50.3",
        code: &["eg::verify_eg_record"],
        negative: "vectors/verify/cases/V-RECORD-01-stray-file.json",
    },
    Info {
        check: Check::Param01,
        id: "V-PARAM-01",
        title: "standard parameters (p, q, g, cofactor)",
        spec: "50.3",
        code: &["eg::Verifier::constants"],
        negative: "vectors/verify/cases/V-PARAM-01-generator.json",
    },
    Info {
        check: Check::Param02,
        id: "V-PARAM-02",
        title: "the manifest is valid and its hash is the context's",
        spec: "50.3",
        code: &["eg::Verifier::manifest", "eg::Verifier::context"],
        negative: "vectors/verify/cases/V-PARAM-02-manifest-edited.json",
    },
    Info {
        check: Check::Param03,
        id: "V-PARAM-03",
        title: "guardian count, quorum and base hash of the context",
        spec: "50.3",
        code: &["eg::Verifier::context", "checks::eg::check_guardian_count"],
        negative: "vectors/verify/cases/V-PARAM-03-guardian-count.json",
    },
    Info {
        check: Check::Guard01,
        id: "V-GUARD-01",
        title: "guardian records: ids, sequence orders, commitments",
        spec: "50.3",
        code: &["eg::Verifier::guardian", "checks::eg::check_guardians"],
        negative: "vectors/verify/cases/V-GUARD-01-sequence-order.json",
    },
    Info {
        check: Check::Guard02,
        id: "V-GUARD-02",
        title: "coefficient commitments: subgroup and Schnorr proofs",
        spec: "50.3",
        code: &["eg::Verifier::guardian", "checks::eg::check_guardians"],
        negative: "vectors/verify/cases/V-GUARD-02-schnorr-response.json",
    },
    Info {
        check: Check::Guard03,
        id: "V-GUARD-03",
        title: "joint key, commitment hash and extended base hash",
        spec: "50.3",
        code: &["checks::eg::check_joint_values"],
        negative: "vectors/verify/cases/V-GUARD-03-commitment-hash.json",
    },
    Info {
        check: Check::Ballot01,
        id: "V-BALLOT-01",
        title: "ballots are for this election and style",
        spec: "50.3",
        code: &["eg::Verifier::ballot", "eg::Verifier::ballot_check"],
        negative: "vectors/verify/cases/V-BALLOT-01-unknown-style.json",
    },
    Info {
        check: Check::Ballot02,
        id: "V-BALLOT-02",
        title: "ballot, contest and selection crypto hashes",
        spec: "50.3",
        code: &["eg::Verifier::ballot_check"],
        negative: "vectors/verify/cases/V-BALLOT-02-crypto-hash.json",
    },
    Info {
        check: Check::Ballot03,
        id: "V-BALLOT-03",
        title: "selection ciphertexts and their 0/1 proofs",
        spec: "50.3",
        code: &["eg::Verifier::ballot_check"],
        negative: "vectors/verify/cases/V-BALLOT-03-selection-proof.json",
    },
    Info {
        check: Check::Ballot04,
        id: "V-BALLOT-04",
        title: "contest selection-limit proofs",
        spec: "50.3",
        code: &["eg::Verifier::ballot_check"],
        negative: "vectors/verify/cases/V-BALLOT-04-limit-proof.json",
    },
    Info {
        check: Check::Ballot05,
        id: "V-BALLOT-05",
        title: "no duplicate ballot ids",
        spec: "50.3",
        code: &["eg::Verifier::ballot_check"],
        negative: "vectors/verify/cases/V-BALLOT-05-duplicate.json",
    },
    Info {
        check: Check::Ballot06,
        id: "V-BALLOT-06",
        title: "ballot codes and each device's chain",
        spec: "50.3",
        code: &["eg::Verifier::device", "eg::Verifier::ballot_check"],
        negative: "vectors/verify/cases/V-BALLOT-06-code-seed.json",
    },
    Info {
        check: Check::Tally01,
        id: "V-TALLY-01",
        title: "encrypted tally = product of the cast ballots",
        spec: "50.3",
        code: &["eg::Verifier::encrypted_tally"],
        negative: "vectors/verify/cases/V-TALLY-01-pad.json",
    },
    Info {
        check: Check::Decrypt01,
        id: "V-DECRYPT-01",
        title: "guardians' decryption shares and their proofs",
        spec: "50.3",
        code: &["eg::Verifier::tally", "eg::Verifier::decryption_check"],
        negative: "vectors/verify/cases/V-DECRYPT-01-share-proof.json",
    },
    Info {
        check: Check::Decrypt02,
        id: "V-DECRYPT-02",
        title: "compensated shares against recomputed recovery keys",
        spec: "50.3",
        code: &["eg::Verifier::decryption_check"],
        negative: "vectors/verify/cases/V-DECRYPT-02-recovery-key.json",
    },
    Info {
        check: Check::Decrypt03,
        id: "V-DECRYPT-03",
        title: "reconstruction of missing guardians' shares",
        spec: "50.3",
        code: &["eg::Verifier::coefficients", "eg::Verifier::decryption_check"],
        negative: "vectors/verify/cases/V-DECRYPT-03-lagrange.json",
    },
    Info {
        check: Check::Decrypt04,
        id: "V-DECRYPT-04",
        title: "decrypted values and published counts",
        spec: "50.3",
        code: &["eg::Verifier::decryption_check"],
        negative: "vectors/verify/cases/V-DECRYPT-04-count.json",
    },
    Info {
        check: Check::Spoiled01,
        id: "V-SPOILED-01",
        title: "every spoiled ballot has its decryption",
        spec: "50.3",
        code: &["eg::Verifier::spoiled_decryption"],
        negative: "vectors/verify/cases/V-SPOILED-01-missing.json",
    },
    Info {
        check: Check::Spoiled02,
        id: "V-SPOILED-02",
        title: "spoiled ballots decrypt to their plaintexts",
        spec: "50.3",
        code: &["eg::Verifier::spoiled_decryption"],
        negative: "vectors/verify/cases/V-SPOILED-02-count.json",
    },
    Info {
        check: Check::Mix01,
        id: "V-MIX-01",
        title: "the mix record reads; its entries are the election's, in order",
        spec: "50.4",
        code: &["mix::verify_mix_stream", "mix::Walk::run"],
        negative: "crates/votum-mixnet/tests/mixnet.rs::each_tampering_fails_exactly_its_check",
    },
    Info {
        check: Check::Mix02,
        id: "V-MIX-02",
        title: "parameters, trustees' key proofs and the joint key",
        spec: "50.4",
        code: &["checks::mix::check_trustee", "checks::mix::check_public_key"],
        negative: "crates/votum-mixnet/tests/mixnet.rs::each_tampering_fails_exactly_its_check",
    },
    Info {
        check: Check::Mix03,
        id: "V-MIX-03",
        title: "ballots' proofs of knowledge, one per voter; the input list",
        spec: "50.4",
        code: &["checks::mix::check_ballots", "checks::mix::check_input"],
        negative: "crates/votum-mixnet/tests/mixnet.rs::each_tampering_fails_exactly_its_check",
    },
    Info {
        check: Check::Mix04,
        id: "V-MIX-04",
        title: "every mixer's shuffle proof",
        spec: "50.4",
        code: &["checks::mix::check_mix", "checks::mix::record_mix"],
        negative: "crates/votum-mixnet/tests/mixnet.rs::each_tampering_fails_exactly_its_check",
    },
    Info {
        check: Check::Mix05,
        id: "V-MIX-05",
        title: "trustees' decryption shares and their proofs",
        spec: "50.4",
        code: &["checks::mix::check_share", "checks::mix::check_quorum"],
        negative: "crates/votum-mixnet/tests/mixnet.rs::each_tampering_fails_exactly_its_check",
    },
    Info {
        check: Check::Mix06,
        id: "V-MIX-06",
        title: "the posted plaintexts decrypt and decode from the last list",
        spec: "50.4",
        code: &["checks::mix::check_decrypted"],
        negative: "crates/votum-mixnet/tests/mixnet.rs::each_tampering_fails_exactly_its_check",
    },
    Info {
        check: Check::Mix07,
        id: "V-MIX-07",
        title: "the posted outcome is the count of the plaintexts",
        spec: "50.4",
        code: &["checks::mix::check_outcome"],
        negative: "crates/votum-mixnet/tests/mixnet.rs::each_tampering_fails_exactly_its_check",
    },
    Info {
        check: Check::Mix08,
        id: "V-MIX-08",
        title: "every authority's entry is signed by the key the parameters name",
        spec: "50.4",
        code: &["checks::mix::check_signature", "checks::mix::check_unsigned"],
        negative: "crates/votum-mixnet/tests/parties.rs::a_signature_that_is_wrong_or_missing_fails_the_record",
    },
    Info {
        check: Check::Sv01,
        id: "V-SV-01",
        title: "the split-value record reads; its entries come in order",
        spec: "50.6",
        code: &["sv::Walk::next", "sv::Walk::ballots"],
        negative: "crates/votum-splitvalue/tests/sv.rs::every_split_value_check_has_a_record_that_fails_it",
    },
    Info {
        check: Check::Sv02,
        id: "V-SV-02",
        title: "parameters and each race's modulus",
        spec: "50.6",
        code: &["checks::sv::check_parameters"],
        negative: "crates/votum-splitvalue/tests/sv.rs::every_split_value_check_has_a_record_that_fails_it",
    },
    Info {
        check: Check::Sv03,
        id: "V-SV-03",
        title: "ballots numbered in order; the seal counts them",
        spec: "50.6",
        code: &["checks::sv::check_ballots_entry", "checks::sv::check_seal", "checks::sv::check_enough_ballots"],
        negative: "crates/votum-splitvalue/tests/sv.rs::every_split_value_check_has_a_record_that_fails_it",
    },
    Info {
        check: Check::Sv04,
        id: "V-SV-04",
        title: "both challenges are the board's heads before them",
        spec: "50.6",
        code: &["checks::sv::check_cut", "checks::sv::check_sides"],
        negative: "crates/votum-splitvalue/tests/sv.rs::every_split_value_check_has_a_record_that_fails_it",
    },
    Info {
        check: Check::Sv05,
        id: "V-SV-05",
        title: "opened copies regenerate their posted roots",
        spec: "50.6",
        code: &["checks::sv::check_opened"],
        negative: "crates/votum-splitvalue/tests/sv.rs::every_split_value_check_has_a_record_that_fails_it",
    },
    Info {
        check: Check::Sv06,
        id: "V-SV-06",
        title: "opened copies: rows consistent, every copy the same votes",
        spec: "50.6",
        code: &["checks::sv::copy_votes", "checks::sv::check_same_votes"],
        negative: "crates/votum-splitvalue/tests/sv.rs::every_split_value_check_has_a_record_that_fails_it",
    },
    Info {
        check: Check::Sv07,
        id: "V-SV-07",
        title: "every path is a permutation",
        spec: "50.6",
        code: &["checks::sv::check_path"],
        negative: "crates/votum-splitvalue/tests/sv.rs::every_split_value_check_has_a_record_that_fails_it",
    },
    Info {
        check: Check::Sv08,
        id: "V-SV-08",
        title: "t-values form zero sharings across the rows",
        spec: "50.6",
        code: &["checks::sv::check_t"],
        negative: "crates/votum-splitvalue/tests/sv.rs::every_split_value_check_has_a_record_that_fails_it",
    },
    Info {
        check: Check::Sv09,
        id: "V-SV-09",
        title: "input halves open the ballots' commitments",
        spec: "50.6",
        code: &["checks::sv::check_inputs"],
        negative: "crates/votum-splitvalue/tests/sv.rs::every_split_value_check_has_a_record_that_fails_it",
    },
    Info {
        check: Check::Sv10,
        id: "V-SV-10",
        title: "checked copies' half openings give their roots",
        spec: "50.6",
        code: &["checks::sv::check_halves"],
        negative: "crates/votum-splitvalue/tests/sv.rs::every_split_value_check_has_a_record_that_fails_it",
    },
    Info {
        check: Check::Sv11,
        id: "V-SV-11",
        title: "opened halves differ from their inputs by the t-values",
        spec: "50.6",
        code: &["checks::sv::check_halves"],
        negative: "crates/votum-splitvalue/tests/sv.rs::every_split_value_check_has_a_record_that_fails_it",
    },
    Info {
        check: Check::Sv12,
        id: "V-SV-12",
        title: "each tally is the count of the opened votes",
        spec: "50.6",
        code: &["checks::sv::check_tally"],
        negative: "crates/votum-splitvalue/tests/sv.rs::every_split_value_check_has_a_record_that_fails_it",
    },
    Info {
        check: Check::Chv01,
        id: "V-CHV-01",
        title: "the CHVote record reads; its entries come in order",
        spec: "50.7",
        code: &["chv::Walk::next", "chv::Walk::expect"],
        negative: "crates/votum-chvote/tests/record.rs::each_tampering_fails_its_own_check",
    },
    Info {
        check: Check::Chv02,
        id: "V-CHV-02",
        title: "parameters, key shares and the authorities' public voter data",
        spec: "50.7",
        code: &["chv::Walk::setup", "checks::chv::check_election_id", "checks::chv::check_level"],
        negative: "crates/votum-chvote/tests/record.rs::each_tampering_fails_its_own_check",
    },
    Info {
        check: Check::Chv03,
        id: "V-CHV-03",
        title: "ballots: one per voter, the voter's credential, the ballot proof",
        spec: "50.7",
        code: &["chv::Walk::ballot", "checks::chv::check_ballot"],
        negative: "crates/votum-chvote/tests/record.rs::each_tampering_fails_its_own_check",
    },
    Info {
        check: Check::Chv04,
        id: "V-CHV-04",
        title: "the revealed OT exponents give every authority's response",
        spec: "50.7",
        code: &["checks::chv::check_responses", "checks::chv::check_finalizations", "checks::chv::check_finalized"],
        negative: "crates/votum-chvote/tests/record.rs::each_tampering_fails_its_own_check",
    },
    Info {
        check: Check::Chv05,
        id: "V-CHV-05",
        title: "confirmations: after a ballot, the voter's credential, the proof",
        spec: "50.7",
        code: &["chv::Walk::voting", "checks::chv::check_confirmation"],
        negative: "crates/votum-chvote/tests/record.rs::each_tampering_fails_its_own_check",
    },
    Info {
        check: Check::Chv06,
        id: "V-CHV-06",
        title: "the input list is the confirmed ballots' encryptions",
        spec: "50.7",
        code: &["checks::chv::check_input"],
        negative: "crates/votum-chvote/tests/record.rs::each_tampering_fails_its_own_check",
    },
    Info {
        check: Check::Chv07,
        id: "V-CHV-07",
        title: "every authority's shuffle proof",
        spec: "50.7",
        code: &["checks::chv::check_shuffle"],
        negative: "crates/votum-chvote/tests/record.rs::each_tampering_fails_its_own_check",
    },
    Info {
        check: Check::Chv08,
        id: "V-CHV-08",
        title: "every authority's decryption share and its proof",
        spec: "50.7",
        code: &["checks::chv::check_share_entry", "checks::chv::check_decryption"],
        negative: "crates/votum-chvote/tests/record.rs::each_tampering_fails_its_own_check",
    },
    Info {
        check: Check::Chv09,
        id: "V-CHV-09",
        title: "the result is the tally of the decrypted votes",
        spec: "50.7",
        code: &["checks::chv::check_result"],
        negative: "crates/votum-chvote/tests/record.rs::each_tampering_fails_its_own_check",
    },
    Info {
        check: Check::Chv10,
        id: "V-CHV-10",
        title: "every invalid vote traced back to its voter by every authority",
        spec: "50.7",
        code: &["chv::Walk::traces", "checks::chv::check_traced"],
        negative: "crates/votum-chvote/tests/record.rs::each_tampering_fails_its_own_check",
    },
    Info {
        check: Check::Chv11,
        id: "V-CHV-11",
        title: "every shuffle, decryption share and trace signed by its authority's node key",
        spec: "50.7",
        code: &["chv::Walk::signed", "checks::chv::check_signature"],
        negative: "crates/votum-chvote/tests/record.rs::each_tampering_fails_its_own_check",
    },
    Info {
        check: Check::Ivxv01,
        id: "V-IVXV-01",
        title: "the proof file and the public key are readable",
        spec: "50.8",
        code: &["ivxv::verify_ivxv_record"],
        negative: "crates/votum-verify/tests/ivxv.rs::an_unreadable_proof_file_is_v_ivxv_01",
    },
    Info {
        check: Check::Ivxv02,
        id: "V-IVXV-02",
        title: "the key: the standard 3072-bit group, in the subgroup, for this election",
        spec: "50.8",
        code: &["checks::ivxv::check_key"],
        negative: "crates/votum-verify/tests/ivxv.rs::another_elections_proofs_are_v_ivxv_02",
    },
    Info {
        check: Check::Ivxv03,
        id: "V-IVXV-03",
        title: "ciphertexts in the group, each decrypted once, exactly the mixer's output",
        spec: "50.8",
        code: &["checks::ivxv::check_ciphertexts", "checks::ivxv::check_mixed"],
        negative: "crates/votum-verify/tests/ivxv.rs::a_vote_decrypted_twice_or_not_mixed_is_v_ivxv_03",
    },
    Info {
        check: Check::Ivxv04,
        id: "V-IVXV-04",
        title: "every decryption proof",
        spec: "50.8",
        code: &["checks::ivxv::check_proofs"],
        negative: "crates/votum-verify/tests/ivxv.rs::a_changed_proof_or_vote_is_v_ivxv_04",
    },
    Info {
        check: Check::Ivxv05,
        id: "V-IVXV-05",
        title: "every plaintext is a vote in IVXV's encoding (the counts)",
        spec: "50.8",
        code: &["checks::ivxv::check_plaintexts"],
        negative: "crates/votum-verify/tests/ivxv.rs::a_badly_padded_vote_is_v_ivxv_05",
    },
    Info {
        check: Check::Bel01,
        id: "V-BEL-01",
        title: "the archive: entries named by their SHA-256, events chained in order, every entry named",
        spec: "50.9",
        code: &["belenios::verify_belenios_record", "belenios::Walk::entry", "belenios::Walk::finish"],
        negative: "crates/votum-verify/tests/belenios.rs::a_broken_archive_is_v_bel_01",
    },
    Info {
        check: Check::Bel02,
        id: "V-BEL-02",
        title: "the election: version, group, uuid, questions, the public key in the group",
        spec: "50.9",
        code: &["belenios::Walk::setup"],
        negative: "crates/votum-verify/tests/belenios.rs::an_election_that_does_not_read_is_v_bel_02",
    },
    Info {
        check: Check::Bel03,
        id: "V-BEL-03",
        title: "the trustees: proofs of knowledge, certificates, commitments, verification keys; the election key their product",
        spec: "50.9",
        code: &["checks::belenios::check_trustees"],
        negative: "crates/votum-verify/tests/belenios.rs::a_bad_trustee_key_or_proof_is_v_bel_03",
    },
    Info {
        check: Check::Bel04,
        id: "V-BEL-04",
        title: "the credentials: group elements with weights, none twice",
        spec: "50.9",
        code: &["checks::belenios::check_credentials"],
        negative: "crates/votum-verify/tests/belenios.rs::a_bad_or_repeated_credential_is_v_bel_04",
    },
    Info {
        check: Check::Bel05,
        id: "V-BEL-05",
        title: "every ballot: canonical form, this election, a listed credential, its signature",
        spec: "50.9",
        code: &["belenios::Walk::merge", "belenios::check_one", "checks::belenios::check_ballot_signature"],
        negative: "crates/votum-verify/tests/belenios.rs::a_forged_ballot_is_v_bel_05",
    },
    Info {
        check: Check::Bel06,
        id: "V-BEL-06",
        title: "every ballot's ciphertexts and proofs (each choice 0 or 1, the overall and blank proofs)",
        spec: "50.9",
        code: &["belenios::Walk::merge", "belenios::check_one", "checks::belenios::check_ballot_proofs"],
        negative: "crates/votum-verify/tests/belenios.rs::a_ballot_with_a_bad_proof_is_v_bel_06",
    },
    Info {
        check: Check::Bel07,
        id: "V-BEL-07",
        title: "the encrypted tally is the counted ballots' (last of each credential, by weight)",
        spec: "50.9",
        code: &["checks::belenios::check_tally"],
        negative: "crates/votum-verify/tests/belenios.rs::a_tally_that_is_not_the_ballots_is_v_bel_07",
    },
    Info {
        check: Check::Bel08,
        id: "V-BEL-08",
        title: "every partial decryption: its owner, its factors and their proofs",
        spec: "50.9",
        code: &["checks::belenios::check_partials"],
        negative: "crates/votum-verify/tests/belenios.rs::a_bad_partial_decryption_is_v_bel_08",
    },
    Info {
        check: Check::Bel09,
        id: "V-BEL-09",
        title: "the result: the factors combined (threshold groups by Lagrange), every count",
        spec: "50.9",
        code: &["checks::belenios::check_result"],
        negative: "crates/votum-verify/tests/belenios.rs::a_wrong_result_is_v_bel_09",
    },
    Info {
        check: Check::Bel10,
        id: "V-BEL-10",
        title: "the shuffles of the mixnet questions: owners, shapes, members, proofs of shuffle",
        spec: "50.9",
        code: &["belenios::shuffled", "belenios::Walk::finish"],
        negative: "crates/votum-verify/tests/belenios.rs::a_bad_shuffle_is_v_bel_10",
    },
    Info {
        check: Check::Vmn01,
        id: "V-VMN-01",
        title: "protInfo.xml and the proof directory: parameters, version, type, auxsid, width",
        spec: "50.10",
        code: &["vmn::verify_vmn_record", "vmn::session_setup"],
        negative: "crates/votum-verify/tests/vmn.rs::a_session_that_does_not_read_is_v_vmn_01",
    },
    Info {
        check: Check::Vmn02,
        id: "V-VMN-02",
        title: "the group and the joint key (the standard generator, the polynomial's constant term)",
        spec: "50.10",
        code: &["vmn::group_of", "vmn::session_setup", "vmn::decrypt"],
        negative: "crates/votum-verify/tests/vmn.rs::a_key_that_is_not_the_sessions_is_v_vmn_02",
    },
    Info {
        check: Check::Vmn03,
        id: "V-VMN-03",
        title: "every proof of shuffle (Terelius-Wikstrom), at least the threshold valid, the shuffled list their output",
        spec: "50.10",
        code: &["vmn::shuffles", "checks::vmn::verify_shuffle", "checks::vmn::verify_ccpos"],
        negative: "crates/votum-verify/tests/vmn.rs::a_bad_shuffle_is_v_vmn_03",
    },
    Info {
        check: Check::Vmn04,
        id: "V-VMN-04",
        title: "precomputed shuffles: the permutation commitments' proofs (PoSC), maxciph and keep lists",
        spec: "50.10",
        code: &["vmn::shuffles", "vmn::precomputed", "checks::vmn::verify_posc"],
        negative: "crates/votum-verify/tests/vmn.rs::a_precomputed_session_is_v_vmn_04",
    },
    Info {
        check: Check::Vmn05,
        id: "V-VMN-05",
        title: "the decryption factors and their batched proof, combined over the threshold",
        spec: "50.10",
        code: &["vmn::decrypt", "checks::vmn::verify_decryption"],
        negative: "crates/votum-verify/tests/vmn.rs::a_bad_decryption_factor_is_v_vmn_05",
    },
    Info {
        check: Check::Vmn06,
        id: "V-VMN-06",
        title: "every plaintext is its ciphertext's decryption",
        spec: "50.10",
        code: &["vmn::decrypt"],
        negative: "crates/votum-verify/tests/vmn.rs::a_changed_plaintext_is_v_vmn_06",
    },
    Info {
        check: Check::Vmn07,
        id: "V-VMN-07",
        title: "the bulletin board: every message signed by its publisher, the proof files the messages signed",
        spec: "50.10",
        code: &["vmn::board"],
        negative: "crates/votum-verify/tests/vmn.rs::an_unsigned_or_unbound_message_is_v_vmn_07",
    },
    Info {
        check: Check::Eg2v01,
        id: "V-EG2-01",
        title: "parameters: the version, the 2.x group, H_P, H_M and H_B recomputed",
        spec: "50.11",
        code: &["checks::eg2::check_parameters", "egrs::walk"],
        negative: "crates/votum-verify/tests/eg2.rs::a_changed_parameter_or_manifest_is_v_eg2_01",
    },
    Info {
        check: Check::Eg2v02,
        id: "V-EG2-02",
        title: "guardian keys: each coefficient's Schnorr proof, k per guardian, x-coordinates 1…n",
        spec: "50.11",
        code: &["checks::eg2::check_guardians", "egrs::walk"],
        negative: "crates/votum-verify/tests/eg2.rs::a_changed_guardian_proof_is_v_eg2_02",
    },
    Info {
        check: Check::Eg2v03,
        id: "V-EG2-03",
        title: "the joint key: K the product of the guardians' keys, none 1",
        spec: "50.11",
        code: &["checks::eg2::check_joint_key", "egrs::walk"],
        negative: "crates/votum-verify/tests/eg2.rs::a_changed_joint_key_is_v_eg2_03",
    },
    Info {
        check: Check::Eg2v04,
        id: "V-EG2-04",
        title: "the extended base hash H_E recomputed from H_B and K",
        spec: "50.11",
        code: &["checks::eg2::check_joint_key", "egrs::walk"],
        negative: "crates/votum-verify/tests/eg2.rs::a_changed_extended_hash_is_v_eg2_04",
    },
    Info {
        check: Check::Eg2v05,
        id: "V-EG2-05",
        title: "selection encryptions: range proofs over 0…R, each ballot's contests and options the manifest's",
        spec: "50.11",
        code: &["eg2::check_ballot"],
        negative: "crates/votum-verify/tests/eg2.rs::a_changed_selection_is_v_eg2_05",
    },
    Info {
        check: Check::Eg2v06,
        id: "V-EG2-06",
        title: "vote limits: each contest's range proof over 0…L",
        spec: "50.11",
        code: &["eg2::check_ballot"],
        negative: "crates/votum-verify/tests/eg2.rs::a_changed_contest_proof_is_v_eg2_06",
    },
    Info {
        check: Check::Eg2v07,
        id: "V-EG2-07",
        title: "confirmation codes: contest hashes and ballot codes recomputed, no code or ciphertext twice",
        spec: "50.11",
        code: &["eg2::check_ballot", "eg2::walk_in"],
        negative: "crates/votum-verify/tests/eg2.rs::a_changed_code_is_v_eg2_07",
    },
    Info {
        check: Check::Eg2v08,
        id: "V-EG2-08",
        title: "ballot aggregation: the encrypted tally the product of the cast ballots",
        spec: "50.11",
        code: &["eg2::check_aggregation"],
        negative: "crates/votum-verify/tests/eg2.rs::a_changed_aggregate_is_v_eg2_08",
    },
    Info {
        check: Check::Eg2v09,
        id: "V-EG2-09",
        title: "tally decryption: each option's decryption proof",
        spec: "50.11",
        code: &["eg2::check_decryption"],
        negative: "crates/votum-verify/tests/eg2.rs::a_changed_tally_proof_is_v_eg2_09",
    },
    Info {
        check: Check::Eg2v10,
        id: "V-EG2-10",
        title: "tally values: T = K^t, every contest and option of the manifest",
        spec: "50.11",
        code: &["eg2::check_decryption"],
        negative: "crates/votum-verify/tests/eg2.rs::a_changed_count_is_v_eg2_10",
    },
    Info {
        check: Check::Eg2v11,
        id: "V-EG2-11",
        title: "tally contest data: each decryption proof",
        spec: "50.11",
        code: &["eg2::check_decryption"],
        negative: "crates/votum-verify/tests/eg2.rs::a_changed_tally_contest_data_is_v_eg2_11",
    },
    Info {
        check: Check::Eg2v12,
        id: "V-EG2-12",
        title: "challenged ballots: each a challenged ballot of the record, each option's decryption proof",
        spec: "50.11",
        code: &["eg2::check_decryption", "eg2::walk_in"],
        negative: "crates/votum-verify/tests/eg2.rs::a_changed_challenged_ballot_is_v_eg2_12",
    },
    Info {
        check: Check::Eg2v13,
        id: "V-EG2-13",
        title: "challenged ballot values: S = K^σ, votes within the limits, every option",
        spec: "50.11",
        code: &["eg2::check_decryption"],
        negative: "crates/votum-verify/tests/eg2.rs::a_changed_challenged_vote_is_v_eg2_13",
    },
    Info {
        check: Check::Eg2v14,
        id: "V-EG2-14",
        title: "challenged contest data: each decryption proof",
        spec: "50.11",
        code: &["eg2::check_decryption"],
        negative: "crates/votum-verify/tests/eg2.rs::a_changed_challenged_contest_data_is_v_eg2_14",
    },
    Info {
        check: Check::Eg2v15,
        id: "V-EG2-15",
        title: "pre-encrypted ballots: not read yet (an Error when the record has any)",
        spec: "50.11",
        code: &["eg2::walk_in"],
        negative: "crates/votum-verify/tests/eg2.rs::a_pre_encrypted_ballot_is_refused_v_eg2_15_to_19",
    },
    Info {
        check: Check::Eg2v16,
        id: "V-EG2-16",
        title: "pre-encrypted ballots' selection hashes and short codes (not read yet)",
        spec: "50.11",
        code: &["eg2::walk_in"],
        negative: "crates/votum-verify/tests/eg2.rs::a_pre_encrypted_ballot_is_refused_v_eg2_15_to_19",
    },
    Info {
        check: Check::Eg2v17,
        id: "V-EG2-17",
        title: "pre-encrypted ballots' confirmation codes (not read yet)",
        spec: "50.11",
        code: &["eg2::walk_in"],
        negative: "crates/votum-verify/tests/eg2.rs::a_pre_encrypted_ballot_is_refused_v_eg2_15_to_19",
    },
    Info {
        check: Check::Eg2v18,
        id: "V-EG2-18",
        title: "pre-encrypted ballots' contest limits (not read yet)",
        spec: "50.11",
        code: &["eg2::walk_in"],
        negative: "crates/votum-verify/tests/eg2.rs::a_pre_encrypted_ballot_is_refused_v_eg2_15_to_19",
    },
    Info {
        check: Check::Eg2v19,
        id: "V-EG2-19",
        title: "pre-encrypted ballots' recorded selections (not read yet)",
        spec: "50.11",
        code: &["eg2::walk_in"],
        negative: "crates/votum-verify/tests/eg2.rs::a_pre_encrypted_ballot_is_refused_v_eg2_15_to_19",
    },
    Info {
        check: Check::Eg21v01,
        id: "V-EG21-01",
        title: "the version, the standard group, H_P with n and k, H_B from the manifest",
        spec: "50.12",
        code: &["eg21::check_parameters"],
        negative: "crates/votum-eg2/tests/v21.rs::an_edited_manifest_fails_v_eg21_01",
    },
    Info {
        check: Check::Eg21v02,
        id: "V-EG21-02",
        title: "guardians 1…n, each with k vote and k data commitments, κ and both compact proofs",
        spec: "50.12",
        code: &["eg21::check_keys"],
        negative: "crates/votum-eg2/tests/v21.rs::a_changed_guardian_proof_fails_v_eg21_02",
    },
    Info {
        check: Check::Eg21v03,
        id: "V-EG21-03",
        title: "K and K̂ are the products of the guardians' keys; H_G recomputes",
        spec: "50.12",
        code: &["eg21::check_keys"],
        negative: "crates/votum-eg2/tests/v21.rs::a_changed_joint_key_fails_v_eg21_03",
    },
    Info {
        check: Check::Eg21v04,
        id: "V-EG21-04",
        title: "H_E recomputes from H_B, K and K̂",
        spec: "50.12",
        code: &["eg21::check_keys"],
        negative: "crates/votum-eg2/tests/v21.rs::a_changed_extended_hash_fails_v_eg21_04",
    },
    Info {
        check: Check::Eg21v05,
        id: "V-EG21-05",
        title: "selection encryption identifiers are unique, H_I recomputes, the ballot nonce's and the contest data's proofs hold",
        spec: "50.12",
        code: &["eg21::check_ballot", "eg21::check_data"],
        negative: "crates/votum-eg2/tests/v21.rs::a_repeated_identifier_fails_v_eg21_05",
    },
    Info {
        check: Check::Eg21v06,
        id: "V-EG21-06",
        title: "each ballot is its style's, every selection in the group with its range proof under H_I",
        spec: "50.12",
        code: &["eg21::check_ballot", "eg21::check_selections"],
        negative: "crates/votum-eg2/tests/v21.rs::a_changed_range_proof_fails_v_eg21_06",
    },
    Info {
        check: Check::Eg21v07,
        id: "V-EG21-07",
        title: "each contest's selection-limit proof",
        spec: "50.12",
        code: &["eg21::check_selections"],
        negative: "crates/votum-eg2/tests/v21.rs::a_changed_limit_proof_fails_v_eg21_07",
    },
    Info {
        check: Check::Eg21v08,
        id: "V-EG21-08",
        title: "contest hashes, confirmation codes, devices and chains; no code or ciphertext twice",
        spec: "50.12",
        code: &["eg21::check_devices", "eg21::chain_items"],
        negative: "crates/votum-eg2/tests/v21.rs::a_broken_chain_fails_v_eg21_08",
    },
    Info {
        check: Check::Eg21v09,
        id: "V-EG21-09",
        title: "the encrypted tally is the weighted product of the cast ballots",
        spec: "50.12",
        code: &["eg21::check_tally"],
        negative: "crates/votum-eg2/tests/v21.rs::a_changed_aggregate_fails_v_eg21_09",
    },
    Info {
        check: Check::Eg21v10,
        id: "V-EG21-10",
        title: "the tally's decryption proofs and counts; the available guardians are a quorum",
        spec: "50.12",
        code: &["eg21::check_tally"],
        negative: "crates/votum-eg2/tests/v21.rs::a_changed_count_fails_v_eg21_10",
    },
    Info {
        check: Check::Eg21v11,
        id: "V-EG21-11",
        title: "the tally holds every contest and option of the manifest, once",
        spec: "50.12",
        code: &["eg21::check_tally"],
        negative: "crates/votum-eg2/tests/v21.rs::a_missing_option_fails_v_eg21_11",
    },
    Info {
        check: Check::Eg21v12,
        id: "V-EG21-12",
        title: "each cast ballot's contest data the manifest says to decrypt is decrypted once, with its proof",
        spec: "50.12",
        code: &["eg21::check_contest_data"],
        negative: "crates/votum-eg2/tests/v21.rs::a_changed_contest_data_decryption_fails_v_eg21_12",
    },
    Info {
        check: Check::Eg21v13,
        id: "V-EG21-13",
        title: "challenged ballots re-encrypt from their released nonces to their codes",
        spec: "50.12",
        code: &["eg21::check_challenged", "eg21::match_opening", "eg21::check_opened_data"],
        negative: "crates/votum-eg2/tests/v21.rs::a_changed_released_nonce_fails_v_eg21_13",
    },
    Info {
        check: Check::Eg21v14,
        id: "V-EG21-14",
        title: "challenged ballots' contests, options and votes are within the manifest's limits",
        spec: "50.12",
        code: &["eg21::check_challenged", "eg21::match_opening"],
        negative: "crates/votum-eg2/tests/v21.rs::an_opened_vote_above_the_limit_fails_v_eg21_14",
    },
    Info {
        check: Check::Eg21v15,
        id: "V-EG21-15",
        title: "pre-encrypted ballots: the selection vector is the product of the chosen vectors",
        spec: "50.12",
        code: &["eg21::check_pre_contest"],
        negative: "crates/votum-eg2/tests/v21.rs::a_chosen_vector_that_is_not_the_selection_vector_fails_v_eg21_15",
    },
    Info {
        check: Check::Eg21v16,
        id: "V-EG21-16",
        title: "pre-encrypted ballots: selection hashes, contest hashes, confirmation codes, the printer's chain",
        spec: "50.12",
        code: &["eg21::check_pre_contest", "eg21::check_devices", "eg21::chain_items"],
        negative: "crates/votum-eg2/tests/v21.rs::a_changed_selection_hash_or_printer_chain_fails_v_eg21_16",
    },
    Info {
        check: Check::Eg21v17,
        id: "V-EG21-17",
        title: "pre-encrypted ballots: short codes",
        spec: "50.12",
        code: &["eg21::check_pre_contest", "eg21::check_uncast", "eg21::walk_on"],
        negative: "crates/votum-eg2/tests/v21.rs::a_changed_short_code_fails_v_eg21_17",
    },
    Info {
        check: Check::Eg21v18,
        id: "V-EG21-18",
        title: "uncast pre-encrypted ballots: the encryptions from their released nonces",
        spec: "50.12",
        code: &["eg21::check_uncast", "eg21::check_challenged", "eg21::match_opening"],
        negative: "crates/votum-eg2/tests/v21.rs::a_printer_whose_vectors_are_not_their_labels_fails_v_eg21_18",
    },
    Info {
        check: Check::Eg21v19,
        id: "V-EG21-19",
        title: "uncast pre-encrypted ballots: contests and options as the manifest's",
        spec: "50.12",
        code: &["eg21::check_uncast", "eg21::match_opening"],
        negative: "crates/votum-eg2/tests/v21.rs::an_uncast_ballot_with_other_labels_fails_v_eg21_19",
    },
];

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
            Check::EG.len()
                + Check::MIX.len()
                + Check::SV.len()
                + Check::CHV.len()
                + Check::IVXV.len()
                + Check::BEL.len()
                + Check::VMN.len()
                + Check::EG2.len()
                + Check::EG21.len()
        );
    }

    /// The repository's root.
    fn root() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    /// The text of function `name` in `text` (from `fn name` to its closing brace), after the
    /// first `impl` of `ty` when given.
    fn body<'t>(text: &'t str, ty: Option<&str>, name: &str) -> Option<&'t str> {
        let from = match ty {
            Some(ty) => text.match_indices("impl").find_map(|(at, _)| {
                let line = &text[at..at + text[at..].find('{')?];
                line.split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(|w| w == ty)
                    .then_some(at)
            })?,
            None => 0,
        };
        let rest = &text[from..];
        let start = rest
            .match_indices(&format!("fn {name}"))
            .find_map(|(at, m)| {
                let next = rest[at + m.len()..].chars().next()?;
                (next == '(' || next == '<').then_some(at)
            })?;
        let open = start + rest[start..].find('{')?;
        let mut depth = 0usize;
        for (i, c) in rest[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(&rest[start..=open + i]);
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// The source of a function named by a registry path (`checks::sv::check_cut`,
    /// `eg::Verifier::context`): the longest module prefix that is a file of this crate.
    fn source_of(path: &str) -> Option<String> {
        let parts: Vec<&str> = path.split("::").collect();
        let (name, modules) = parts.split_last()?;
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        for n in (1..=modules.len()).rev() {
            let dir = modules[..n].join("/");
            for file in [src.join(format!("{dir}.rs")), src.join(&dir).join("mod.rs")] {
                if let Ok(text) = std::fs::read_to_string(&file) {
                    let ty = modules.get(n).copied();
                    return body(&text, ty, name).map(str::to_owned);
                }
            }
        }
        None
    }

    #[test]
    fn the_registry_is_in_check_order() {
        for (i, info) in REGISTRY.iter().enumerate() {
            assert_eq!(info.check.index(), i, "{}", info.id);
        }
    }

    /// Every check names the functions that make it, and they exist and record it.
    #[test]
    fn every_check_names_the_functions_that_make_it() {
        for info in &REGISTRY {
            assert!(!info.code.is_empty(), "{} names no function", info.id);
            let variant = format!("Check::{:?}", info.check);
            let mut named = false;
            for path in info.code {
                let text = source_of(path)
                    .unwrap_or_else(|| panic!("{}: no function {path} in this crate", info.id));
                named |= text.contains(&variant);
            }
            assert!(
                named,
                "{}: none of {:?} records {variant}",
                info.id, info.code
            );
        }
    }

    /// Every check of every record kind has a negative test that exists and fails it: a vector
    /// whose only failing check it is, or a test function that names it.
    #[test]
    fn every_check_has_a_negative_test() {
        for info in &REGISTRY {
            let path = root().join(info.negative.split("::").next().unwrap_or_default());
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {}: {e}", info.id, info.negative));
            if let Some((_, name)) = info.negative.split_once("::") {
                let test = body(&text, None, name)
                    .unwrap_or_else(|| panic!("{}: no test {}", info.id, info.negative));
                // the attributes right above it: a test, not ignored
                let before = &text[..text.find(test).unwrap_or(0)];
                let attributes: Vec<&str> = before
                    .lines()
                    .rev()
                    .map(str::trim)
                    .take_while(|l| l.starts_with("#["))
                    .collect();
                assert!(
                    attributes.contains(&"#[test]")
                        && !attributes.iter().any(|a| a.contains("ignore")),
                    "{}: {} is not a test that runs",
                    info.id,
                    info.negative
                );
                assert!(
                    test.contains(&format!("\"{}\"", info.id)),
                    "{}: {} does not name it",
                    info.id,
                    info.negative
                );
            } else {
                let case: serde_json::Value = serde_json::from_str(&text).unwrap();
                let failing: Vec<&String> = case["expect"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .filter(|(_, s)| *s == "fail" || *s == "error")
                    .map(|(k, _)| k)
                    .collect();
                assert_eq!(failing, vec![info.id], "{}", info.negative);
            }
        }
    }

    /// spec/50.5 names, for every check, its functions and its negative test, as the registry does.
    #[test]
    fn the_spec_names_what_the_registry_names() {
        let spec = include_str!("../../../../spec/50-checks.md");
        let section = &spec[spec.find("## 50.5").unwrap()..];
        for info in &REGISTRY {
            let row = section
                .lines()
                .find(|l| l.starts_with(&format!("| {} |", info.id)))
                .unwrap_or_else(|| panic!("{} has no row in spec/50.5", info.id));
            let negative = info.negative.rsplit(['/', ':']).next().unwrap_or_default();
            let negative = negative.trim_end_matches(".json");
            assert!(
                row.contains(negative),
                "{}: the row does not name {negative}",
                info.id
            );
            for path in info.code {
                assert!(
                    row.contains(path),
                    "{}: the row does not name {path}",
                    info.id
                );
            }
        }
    }

    #[test]
    fn every_id_is_in_the_spec() {
        let spec = include_str!("../../../../spec/50-checks.md");
        for c in Check::all() {
            assert!(
                spec.contains(&format!("| {} |", c.id())),
                "{} is not in spec/50",
                c.id()
            );
        }
    }
}
