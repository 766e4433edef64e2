//! ElectionGuard 1.4 JSON documents: an encrypted ballot written in either form ([`ballot`]), and
//! those of decryption: votum's share messages, the encrypted tally and a spoiled ballot read as
//! decryption targets, and `PlaintextTally` written and re-checked.

pub mod ballot;
pub mod plaintext;
pub mod shares;
pub mod target;

pub use ballot::BallotForm;
pub use shares::{shares_from_json, shares_to_json, SHARES_FORMAT};
