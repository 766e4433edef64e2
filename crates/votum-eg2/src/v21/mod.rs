//! ElectionGuard 2.1.0 as its specification defines it (spec/66), beside the 2.0 cryptography of egk-ec's
//! records (spec/65): H_P with n and k, H_B from the manifest, two joint keys K and K̂, the guardians'
//! communication keys κ with shares in signed ElGamal, selection encryption identifiers, the ballot nonce
//! under K̂, 2.1's challenges and codes with chaining, the commitment round of the decryption, and
//! challenged ballots opened by their nonces. The hashes, the record and the checks are shared with the
//! verifier; the parties are behind `prove`.

pub mod check;
pub mod hashes;
pub mod record;

#[cfg(feature = "prove")]
pub mod ballot;
#[cfg(feature = "prove")]
pub mod board;
#[cfg(feature = "prove")]
pub mod data;
#[cfg(feature = "prove")]
pub mod decrypt;
#[cfg(feature = "prove")]
pub mod election;
#[cfg(feature = "prove")]
pub mod keys;
#[cfg(feature = "prove")]
pub mod preencrypt;
#[cfg(feature = "prove")]
pub mod trustee;
