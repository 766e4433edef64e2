//! ElectionGuard 1.4 JSON documents of decryption: votum's share messages, the encrypted tally
//! and a spoiled ballot read as decryption targets, and `PlaintextTally` written and re-checked.

pub mod plaintext;
pub mod shares;
pub mod target;

pub use shares::{shares_from_json, shares_to_json, SHARES_FORMAT};
