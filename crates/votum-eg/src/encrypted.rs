//! Encrypted ballots as the ballot box, the tally and the batch checks hold them: contests of
//! selections, each an ElGamal ciphertext with its proofs (spec/61, spec/62). Data only.

use votum_arith::Integer;
use votum_elgamal::Ciphertext;
use votum_group::{ModScalar, ModpGroup};
use votum_proofs::{ConstantProof, DisjunctiveProof};

#[derive(Clone, Debug)]
pub struct EncryptedSelection {
    pub object_id: String,
    pub sequence_order: i64,
    pub description_hash: Integer,
    pub ciphertext: Ciphertext<ModpGroup>,
    pub crypto_hash: Integer,
    pub is_placeholder: bool,
    /// Present on the device (private form), absent once submitted.
    pub nonce: Option<ModScalar>,
    pub proof: DisjunctiveProof<ModpGroup>,
}

#[derive(Clone, Debug)]
pub struct EncryptedContest {
    pub object_id: String,
    pub sequence_order: i64,
    pub description_hash: Integer,
    pub selections: Vec<EncryptedSelection>,
    pub accumulation: Ciphertext<ModpGroup>,
    pub crypto_hash: Integer,
    pub nonce: Option<ModScalar>,
    pub proof: ConstantProof<ModpGroup>,
}

#[derive(Clone, Debug)]
pub struct EncryptedBallot {
    pub object_id: String,
    pub style_id: String,
    pub manifest_hash: Integer,
    pub code_seed: Integer,
    pub contests: Vec<EncryptedContest>,
    pub code: Integer,
    pub timestamp: i64,
    pub crypto_hash: Integer,
    pub nonce: Option<ModScalar>,
}
