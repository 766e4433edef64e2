//! `votum._native`: the Python face of votum's Rust core.
//!
//! Each binding converts its arguments, calls the core, and maps the core's error through
//! [`errors`]. Heavy work runs without the GIL through [`convert::release`].

// `with_group!` expands one body for ristretto255 (Copy values) and modp groups (heap integers),
// so `.clone()` is needed even where one expansion sees a Copy type.
#![allow(clippy::clone_on_copy)]

mod board;
mod chvote;
mod convert;
mod dual;
mod eg1;
mod eg2;
mod eg21_party;
mod eg21_service;
mod eg2_party;
mod eg_ballot;
mod eg_context;
mod eg_decrypt;
mod eg_device;
mod eg_guardian;
mod eg_json;
mod eg_manifest;
mod elgamal;
mod errors;
mod group;
mod mix;
mod mix_party;
mod node;
mod polynomial;
mod proofs;
mod record;
mod sv;
mod verify;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(eg2::eg2_election, m)?)?;
    m.add_function(wrap_pyfunction!(eg21_service::eg21_publish, m)?)?;
    m.add_class::<eg2_party::Eg2Trustee>()?;
    m.add_class::<eg2_party::Eg2Coordinator>()?;
    m.add_class::<eg21_party::Eg21Trustee>()?;
    m.add_class::<eg21_party::Eg21Coordinator>()?;
    m.add_class::<eg21_party::Eg21Ceremony>()?;
    m.add_class::<eg21_party::Eg21Round>()?;
    m.add_class::<eg21_service::Eg21BallotBox>()?;
    m.add_class::<eg21_service::Eg21Device>()?;
    m.add_class::<eg21_service::Eg21Printer>()?;
    m.add_class::<eg21_service::Eg21Recorder>()?;
    m.add_function(wrap_pyfunction!(node::node_check_frame, m)?)?;
    m.add_function(wrap_pyfunction!(node::node_digests, m)?)?;
    m.add_function(wrap_pyfunction!(node::node_id, m)?)?;
    m.add_function(wrap_pyfunction!(node::node_channel_id, m)?)?;
    m.add_function(wrap_pyfunction!(node::node_signed_message, m)?)?;
    m.add_class::<node::PyNodeSigner>()?;
    m.add_class::<node::PyNodePeerKey>()?;
    m.add_class::<group::PyGroup>()?;
    m.add_class::<group::PyElement>()?;
    m.add_class::<group::PyScalar>()?;
    m.add_class::<elgamal::PySecretKey>()?;
    m.add_class::<elgamal::PyPublicKey>()?;
    m.add_class::<elgamal::PyCiphertext>()?;
    m.add_class::<elgamal::PyDlogTable>()?;
    m.add_class::<polynomial::PySecretPolynomial>()?;
    m.add_class::<elgamal::PyHashedCiphertext>()?;
    m.add_class::<proofs::PySchnorrProof>()?;
    m.add_class::<proofs::PyChaumPedersenProof>()?;
    m.add_class::<proofs::PyProvenBit>()?;
    m.add_class::<eg1::PyEg1Verifier>()?;
    m.add_class::<eg_manifest::PyEgManifest>()?;
    m.add_class::<eg_device::PyEgEncryptionDevice>()?;
    m.add_class::<eg_ballot::PyEgBallotBox>()?;
    m.add_class::<eg_ballot::PyEgBallotVerifier>()?;
    m.add_class::<eg_ballot::PyEgBallotChecker>()?;
    m.add_function(wrap_pyfunction!(eg_ballot::eg_ballot_check_params, m)?)?;
    m.add_class::<eg_ballot::PyEgTally>()?;
    m.add_class::<eg_ballot::PyEgVerifiedBallot>()?;
    m.add_class::<eg_guardian::PyEgGuardian>()?;
    m.add_class::<eg_context::PyEgContext>()?;
    m.add_class::<eg_decrypt::PyEgDecryptionTarget>()?;
    m.add_class::<eg_decrypt::PyEgShares>()?;
    m.add_class::<eg_decrypt::PyEgDecryptor>()?;
    m.add_class::<eg_decrypt::PyEgPlaintext>()?;
    m.add_function(wrap_pyfunction!(
        eg_guardian::eg_verify_challenge_answer,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(eg_guardian::eg_verify_guardian_record, m)?)?;
    m.add_function(wrap_pyfunction!(
        eg_guardian::eg_verify_guardian_records,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(eg_guardian::eg_constants_json, m)?)?;
    m.add_function(wrap_pyfunction!(eg_guardian::eg_key_ceremony, m)?)?;
    m.add_class::<board::PyBoardChecker>()?;
    m.add_function(wrap_pyfunction!(board::board_genesis, m)?)?;
    m.add_function(wrap_pyfunction!(board::board_link, m)?)?;
    m.add_function(wrap_pyfunction!(board::board_payload_digest, m)?)?;
    m.add_function(wrap_pyfunction!(chvote::chvote_simulate, m)?)?;
    m.add_function(wrap_pyfunction!(chvote::chvote_parameters, m)?)?;
    m.add_function(wrap_pyfunction!(chvote::chvote_print_cards, m)?)?;
    m.add_function(wrap_pyfunction!(chvote::chvote_tally, m)?)?;
    m.add_class::<chvote::PyChvoteAuthority>()?;
    m.add_class::<chvote::PyChvoteVoters>()?;
    m.add_class::<chvote::PyChvoteRecordFile>()?;
    m.add_function(wrap_pyfunction!(mix::mix_election, m)?)?;
    m.add_function(wrap_pyfunction!(mix::mix_count, m)?)?;
    m.add_function(wrap_pyfunction!(mix_party::mix_parameters, m)?)?;
    m.add_class::<mix_party::PyMixParty>()?;
    m.add_class::<mix_party::PyMixBoardFile>()?;
    m.add_function(wrap_pyfunction!(sv::sv_election, m)?)?;
    m.add_function(wrap_pyfunction!(sv::sv_parameters, m)?)?;
    m.add_function(wrap_pyfunction!(sv::sv_cast, m)?)?;
    m.add_function(wrap_pyfunction!(sv::sv_mix, m)?)?;
    m.add_function(wrap_pyfunction!(sv::sv_permutation, m)?)?;
    m.add_function(wrap_pyfunction!(sv::sv_compose, m)?)?;
    m.add_function(wrap_pyfunction!(sv::sv_cut, m)?)?;
    m.add_function(wrap_pyfunction!(sv::sv_tally, m)?)?;
    m.add_function(wrap_pyfunction!(sv::sv_record_ballots, m)?)?;
    m.add_class::<sv::PySvParams>()?;
    m.add_class::<sv::PySvRowInputs>()?;
    m.add_class::<sv::PySvLastColumn>()?;
    m.add_class::<sv::PySvBoardFile>()?;
    m.add_function(wrap_pyfunction!(errors::_error_table, m)?)?;
    m.add_class::<record::PyRecordWriter>()?;
    m.add_class::<record::PyRecordReader>()?;
    m.add_function(wrap_pyfunction!(record::record_pack, m)?)?;
    m.add_function(wrap_pyfunction!(verify::verify_record_report, m)?)?;
    m.add_class::<verify::PyBeleniosBallotChecker>()?;
    m.add_class::<verify::PyIvxvProofChecker>()?;
    m.add_class::<verify::PyEg2BallotChecker>()?;
    m.add_function(wrap_pyfunction!(verify::mix_check_shuffle, m)?)?;
    m.add_function(wrap_pyfunction!(verify::sv_check_task, m)?)?;
    m.add_class::<verify::MixPowTables>()?;
    m.add_function(wrap_pyfunction!(record::record_check, m)?)?;
    m.add_function(wrap_pyfunction!(record::record_unpack, m)?)?;
    m.add_function(wrap_pyfunction!(group::_restore_element, m)?)?;
    m.add_function(wrap_pyfunction!(group::_restore_scalar, m)?)?;
    m.add_function(wrap_pyfunction!(elgamal::_restore_ciphertext, m)?)?;
    m.add_function(wrap_pyfunction!(elgamal::verify_share, m)?)?;
    m.add_function(wrap_pyfunction!(elgamal::public_share, m)?)?;
    m.add_function(wrap_pyfunction!(elgamal::lagrange_coefficient, m)?)?;
    m.add_function(wrap_pyfunction!(elgamal::combine_partials, m)?)?;
    m.add_function(wrap_pyfunction!(elgamal::recover_secret, m)?)?;
    m.add_function(wrap_pyfunction!(proofs::encrypt_bits_with_proofs, m)?)?;
    m.add_function(wrap_pyfunction!(proofs::verify_bits, m)?)?;
    m.add_function(wrap_pyfunction!(proofs::eg_hash_elems, m)?)?;
    m.add_function(wrap_pyfunction!(proofs::eg_to_hex, m)?)?;
    m.add_function(wrap_pyfunction!(proofs::eg_from_hex, m)?)?;
    Ok(())
}
