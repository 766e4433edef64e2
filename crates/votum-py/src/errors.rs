//! Every core error becomes one Python exception from `votum.errors`, in one exhaustive match.

use pyo3::prelude::*;
use votum_arith::ArithError;
use votum_eg::ceremony::CeremonyError;
use votum_eg::decrypt::DecryptionError;
use votum_eg::json::FieldError;
use votum_eg::{BallotError, EncryptError, ManifestError};
use votum_elgamal::ElGamalError;
use votum_group::{GroupError, GroupId};
use votum_hash::HashError;
use votum_proofs::ProofError;

/// Errors raised by the binding layer.
#[derive(Debug)]
pub enum NativeError {
    Arith(ArithError),
    Group(GroupError),
    Hash(HashError),
    ElGamal(ElGamalError),
    Proof(ProofError),
    Manifest(ManifestError),
    Encrypt(EncryptError),
    Ballot(BallotError),
    Ceremony(CeremonyError),
    Decryption(DecryptionError),
    /// A proof in a batch failed: its index and why.
    ProofAt(usize, ProofError),
    GroupMismatch {
        expected: GroupId,
        got: GroupId,
    },
    SeedLength(usize),
    LengthMismatch {
        what: &'static str,
        left: usize,
        right: usize,
    },
    NotModp(GroupId),
    Value(&'static str),
    /// Input that does not read, with why (a verifier's parameters).
    Input(String),
    Record(votum_record::RecordError),
    Board(votum_hash::board::ChainError),
    Mix(votum_mixnet::MixError),
    Sv(votum_splitvalue::SvError),
    Chvote(votum_chvote::ChvoteError),
    Eg2(votum_eg2::Eg2Error),
}

impl From<ArithError> for NativeError {
    fn from(e: ArithError) -> Self {
        Self::Arith(e)
    }
}
impl From<GroupError> for NativeError {
    fn from(e: GroupError) -> Self {
        Self::Group(e)
    }
}
impl From<HashError> for NativeError {
    fn from(e: HashError) -> Self {
        Self::Hash(e)
    }
}
impl From<ElGamalError> for NativeError {
    fn from(e: ElGamalError) -> Self {
        Self::ElGamal(e)
    }
}
impl From<ProofError> for NativeError {
    fn from(e: ProofError) -> Self {
        Self::Proof(e)
    }
}

/// The Python exception class names in `votum.errors`.
enum Kind {
    InvalidInput,
    InvalidProof,
    VerificationFailed,
    DecryptionFailed,
    RecordFormatError,
    UnsupportedVersion,
    DuplicateBallot,
    WrongPhase,
    /// Not an election error: the operating system refused a file (Python's OSError).
    Os,
}

fn classify_field(x: &FieldError) -> Kind {
    match x {
        FieldError::Format { .. } => Kind::RecordFormatError,
        FieldError::BadElement { .. } => Kind::InvalidInput,
    }
}

fn classify_ballot(x: &BallotError) -> Kind {
    match x {
        BallotError::Format(_) => Kind::RecordFormatError,
        BallotError::Proof { .. } => Kind::InvalidProof,
        BallotError::HashMismatch { .. } => Kind::VerificationFailed,
        BallotError::Duplicate(_) | BallotError::Replayed { .. } => Kind::DuplicateBallot,
        BallotError::BadElement { .. }
        | BallotError::WrongManifest
        | BallotError::UnknownStyle(_)
        | BallotError::ContestMismatch(_)
        | BallotError::SelectionMismatch { .. }
        | BallotError::BadState(_) => Kind::InvalidInput,
    }
}

fn classify_ceremony(x: &CeremonyError) -> Kind {
    match x {
        CeremonyError::Field(f) => classify_field(f),
        CeremonyError::Proof { .. } => Kind::InvalidProof,
        CeremonyError::KeyMismatch { .. }
        | CeremonyError::InvalidBackup { .. }
        | CeremonyError::Unreadable { .. } => Kind::VerificationFailed,
        CeremonyError::WrongQuorum { .. }
        | CeremonyError::BadQuorum { .. }
        | CeremonyError::BadSequenceOrder { .. }
        | CeremonyError::DuplicateGuardian(_)
        | CeremonyError::Misaddressed { .. }
        | CeremonyError::UnknownGuardian(_)
        | CeremonyError::MissingBackup { .. } => Kind::InvalidInput,
    }
}

fn classify(e: &NativeError) -> (Kind, String) {
    use Kind::*;
    match e {
        NativeError::Ceremony(x) => (classify_ceremony(x), x.to_string()),
        NativeError::Decryption(x) => {
            let kind = match x {
                DecryptionError::Field(f) => classify_field(f),
                DecryptionError::Ceremony(c) => classify_ceremony(c),
                DecryptionError::Ballot(b) => classify_ballot(b),
                DecryptionError::Proof { .. } => InvalidProof,
                DecryptionError::Mismatch { .. } => VerificationFailed,
                DecryptionError::CountOutOfRange { .. } => DecryptionFailed,
                DecryptionError::UnknownGuardian(_)
                | DecryptionError::DuplicateShare(_)
                | DecryptionError::ShareCount { .. }
                | DecryptionError::TooFewGuardians { .. }
                | DecryptionError::NotEnoughHelpers { .. } => InvalidInput,
            };
            (kind, x.to_string())
        }
        NativeError::Arith(x) => (InvalidInput, x.to_string()),
        NativeError::Group(x) => (InvalidInput, x.to_string()),
        NativeError::Hash(x) => (InvalidInput, x.to_string()),
        NativeError::ElGamal(x) => match x {
            ElGamalError::DlogNotFound { .. } | ElGamalError::BadTag => {
                (DecryptionFailed, x.to_string())
            }
            ElGamalError::InvalidShare { .. } => (VerificationFailed, x.to_string()),
            ElGamalError::BadIndex { .. }
            | ElGamalError::DuplicateIndex(_)
            | ElGamalError::NotPresent(_)
            | ElGamalError::BadQuorum { .. }
            | ElGamalError::TooFewShares { .. }
            | ElGamalError::IdentityKey
            | ElGamalError::MalformedCiphertext
            | ElGamalError::Group(_) => (InvalidInput, x.to_string()),
        },
        NativeError::Proof(ProofError::NotABit { proof }) => (
            InvalidInput,
            format!("{proof}: the plaintext must be 0 or 1 to prove it"),
        ),
        NativeError::Proof(x) => (InvalidProof, x.to_string()),
        NativeError::Manifest(x @ ManifestError::Json { .. }) => (RecordFormatError, x.to_string()),
        NativeError::Manifest(
            x @ (ManifestError::UnknownEnum { .. }
            | ManifestError::BadDate { .. }
            | ManifestError::DuplicateId { .. }
            | ManifestError::UnknownReference { .. }
            | ManifestError::BadContest { .. }
            | ManifestError::Empty(_)),
        ) => (InvalidInput, x.to_string()),
        NativeError::Ballot(x) => (classify_ballot(x), x.to_string()),
        NativeError::Encrypt(x @ EncryptError::Json(_)) => (RecordFormatError, x.to_string()),
        NativeError::Encrypt(EncryptError::Proof(p)) => (InvalidInput, p.to_string()),
        NativeError::Encrypt(
            x @ (EncryptError::UnknownStyle(_)
            | EncryptError::ContestNotOnStyle(..)
            | EncryptError::UnknownSelection { .. }
            | EncryptError::NotABit(_)
            | EncryptError::Overvote { .. }
            | EncryptError::DuplicateContest(_)
            | EncryptError::ZeroNonce),
        ) => (InvalidInput, x.to_string()),
        NativeError::ProofAt(i, x) => (InvalidProof, format!("item {i}: {x}")),
        NativeError::GroupMismatch { expected, got } => (
            InvalidInput,
            format!("value of group {got} used with group {expected}"),
        ),
        NativeError::SeedLength(n) => (InvalidInput, format!("a seed must be 32 bytes, got {n}")),
        NativeError::LengthMismatch { what, left, right } => (
            InvalidInput,
            format!("{what}: lengths differ ({left} vs {right})"),
        ),
        NativeError::NotModp(g) => (
            InvalidInput,
            format!("group {g} has no integer representation"),
        ),
        NativeError::Value(msg) => (InvalidInput, (*msg).to_owned()),
        NativeError::Input(msg) => (InvalidInput, msg.clone()),
        NativeError::Board(x) => (VerificationFailed, x.to_string()),
        NativeError::Mix(x) => {
            use votum_mixnet::MixError as M;
            let kind = match x {
                M::Input(_) => InvalidInput,
                M::Ballot { .. } | M::Key { .. } | M::Decryption { .. } => InvalidProof,
                M::Shuffle { source, .. } => match source {
                    votum_shuffle::ShuffleError::Equation { .. } => InvalidProof,
                    // only seen when the workers' own exception was lost
                    votum_shuffle::ShuffleError::Workers(_) => InvalidInput,
                    votum_shuffle::ShuffleError::Length { .. }
                    | votum_shuffle::ShuffleError::Encoding(_)
                    | votum_shuffle::ShuffleError::Element { .. } => RecordFormatError,
                },
                M::Decoding { .. } => DecryptionFailed,
                M::Count(_) => VerificationFailed,
                M::OutOfTurn(_) | M::Refused(_) => WrongPhase,
                M::Signature(_) => InvalidProof,
                // only seen when the hook's own exception was lost; say what happened
                M::Stopped => InvalidInput,
                M::Record { .. } => RecordFormatError,
                M::Io(_) => Os,
            };
            (kind, x.to_string())
        }
        NativeError::Sv(x) => {
            use votum_splitvalue::SvError as S;
            let kind = match x {
                S::Params(_) | S::Vote(_) => InvalidInput,
                S::Decode(_) => RecordFormatError,
                S::Record(_) => Os,
                S::Phase(_) => WrongPhase,
            };
            (kind, x.to_string())
        }
        NativeError::Eg2(x) => {
            use votum_eg2::Eg2Error as E;
            let kind = match x {
                E::Manifest(_) => RecordFormatError,
                E::Ballot { .. } | E::Parameters(_) => InvalidInput,
                E::Guardian { .. } => InvalidProof,
                E::Decryption(_) => DecryptionFailed,
                E::Io(_) => Os,
                E::Unverified(_) => VerificationFailed,
            };
            (kind, x.to_string())
        }
        NativeError::Chvote(x) => {
            use votum_chvote::ChvoteError as C;
            let kind = match x {
                C::BallotProof(_)
                | C::ConfirmationProof(_)
                | C::BadResponse { .. }
                | C::Shuffle { .. }
                | C::Decryption { .. } => VerificationFailed,
                C::AlreadyVoted(_) | C::AlreadyConfirmed(_) | C::NoBallot(_) => WrongPhase,
                C::UnknownVoter(_)
                | C::CredentialMismatch(_)
                | C::BallotShape(_)
                | C::Selections(_)
                | C::Parameters(_) => InvalidInput,
            };
            (kind, x.to_string())
        }
        NativeError::Record(x) => {
            use votum_record::RecordError as R;
            let kind = match x {
                R::UnsupportedVersion { .. } => UnsupportedVersion,
                // the file system's, not the record's: OSError, as every other I/O failure
                R::Io { .. } => Os,
                R::BadMagic
                | R::Malformed { .. }
                | R::Document { .. }
                | R::Truncated { .. }
                | R::Trailer { .. } => RecordFormatError,
            };
            (kind, x.to_string())
        }
    }
}

// The classes of `votum.errors`, imported once each on first use and kept (pyca/cryptography's
// pattern); a name that does not exist there fails the table test in tests/test_errors.py.
pyo3::import_exception!(votum.errors, InvalidInput);
pyo3::import_exception!(votum.errors, InvalidProof);
pyo3::import_exception!(votum.errors, VerificationFailed);
pyo3::import_exception!(votum.errors, DecryptionFailed);
pyo3::import_exception!(votum.errors, RecordFormatError);
pyo3::import_exception!(votum.errors, UnsupportedVersion);
pyo3::import_exception!(votum.errors, DuplicateBallot);
pyo3::import_exception!(votum.errors, WrongPhase);

fn to_pyerr(kind: Kind, message: String) -> PyErr {
    match kind {
        Kind::InvalidInput => InvalidInput::new_err(message),
        Kind::InvalidProof => InvalidProof::new_err(message),
        Kind::VerificationFailed => VerificationFailed::new_err(message),
        Kind::DecryptionFailed => DecryptionFailed::new_err(message),
        Kind::RecordFormatError => RecordFormatError::new_err(message),
        Kind::UnsupportedVersion => UnsupportedVersion::new_err(message),
        Kind::DuplicateBallot => DuplicateBallot::new_err(message),
        Kind::WrongPhase => WrongPhase::new_err(message),
        Kind::Os => pyo3::exceptions::PyOSError::new_err(message),
    }
}

impl From<NativeError> for PyErr {
    fn from(e: NativeError) -> PyErr {
        let (kind, message) = classify(&e);
        to_pyerr(kind, message)
    }
}

/// One error of each kind the binding raises, with the Python class it must become, for the table
/// test in tests/test_errors.py. A sample goes through the same `classify` as every real error.
#[pyfunction]
pub fn _error_table(py: Python<'_>) -> Vec<(String, PyObject)> {
    use votum_mixnet::MixError;
    use votum_record::RecordError;
    let samples: Vec<(&str, NativeError)> = vec![
        ("InvalidInput", NativeError::SeedLength(3)),
        (
            "InvalidProof",
            NativeError::ProofAt(0, ProofError::ChallengeMismatch { proof: "schnorr" }),
        ),
        (
            "VerificationFailed",
            NativeError::Ballot(BallotError::HashMismatch {
                object: "ballot-1".into(),
                which: votum_eg::BallotHash::BallotCode,
            }),
        ),
        (
            "DecryptionFailed",
            NativeError::Decryption(DecryptionError::CountOutOfRange {
                object: "contest/selection".into(),
                max: 1,
            }),
        ),
        (
            "RecordFormatError",
            NativeError::Record(RecordError::BadMagic),
        ),
        (
            "UnsupportedVersion",
            NativeError::Record(RecordError::UnsupportedVersion {
                version: 9,
                flags: 0,
            }),
        ),
        (
            "DuplicateBallot",
            NativeError::Ballot(BallotError::Duplicate("ballot-1".into())),
        ),
        (
            "WrongPhase",
            NativeError::Mix(MixError::OutOfTurn("mixer 2".into())),
        ),
        (
            "OSError",
            NativeError::Mix(MixError::Io("disk full".into())),
        ),
    ];
    samples
        .into_iter()
        .map(|(name, e)| {
            let err = PyErr::from(e);
            (name.to_owned(), err.into_value(py).into_any())
        })
        .collect()
}

pub type NativeResult<T> = Result<T, NativeError>;
