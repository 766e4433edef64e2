"""votum: end-to-end verifiable elections at national scale.

All cryptography runs in votum's Rust core (``votum._native``); this package re-exports it
with types, plus the command line and (later) the service, storage and cluster layers.
"""

from __future__ import annotations

from votum._native import (
    ChaumPedersenProof,
    Ciphertext,
    DlogTable,
    Eg1Verifier,
    EgManifest,
    Element,
    Group,
    HashedCiphertext,
    ProvenBit,
    PublicKey,
    Scalar,
    SchnorrProof,
    SecretKey,
    SecretPolynomial,
    __version__,
    combine_partials,
    eg_from_hex,
    eg_hash_elems,
    eg_to_hex,
    encrypt_bits_with_proofs,
    lagrange_coefficient,
    public_share,
    recover_secret,
    verify_bits,
    verify_share,
)
from votum.errors import (
    DecryptionFailed,
    InvalidInput,
    InvalidProof,
    RecordFormatError,
    UnsupportedVersion,
    VerificationFailed,
    VotumError,
)

__all__ = [
    "ChaumPedersenProof",
    "Ciphertext",
    "DecryptionFailed",
    "DlogTable",
    "Eg1Verifier",
    "EgManifest",
    "Element",
    "Group",
    "HashedCiphertext",
    "InvalidInput",
    "InvalidProof",
    "ProvenBit",
    "PublicKey",
    "RecordFormatError",
    "Scalar",
    "SchnorrProof",
    "SecretKey",
    "SecretPolynomial",
    "UnsupportedVersion",
    "VerificationFailed",
    "VotumError",
    "__version__",
    "combine_partials",
    "eg_from_hex",
    "eg_hash_elems",
    "eg_to_hex",
    "encrypt_bits_with_proofs",
    "lagrange_coefficient",
    "public_share",
    "recover_secret",
    "verify_bits",
    "verify_share",
]
