//! The ElectionGuard 1.0 homomorphic election protocol, byte-compatible with electionguard 1.4.0.
//!
//! This crate grows with the homomorphic-election work. Today: the election manifest in the
//! ElectionGuard 1.4 JSON layout, its validation, and its crypto hashes exactly as the reference
//! computes them (spec/60-eg-manifest.md).

pub mod manifest;

pub use manifest::{Manifest, ManifestError};
