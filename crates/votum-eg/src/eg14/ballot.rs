//! An encrypted ballot written in electionguard 1.4.0's JSON layout: the device's private form and
//! the ballot box's public `SubmittedBallot` (spec/61, spec/62). A public document: built without
//! the `prove` feature, so the verifier and the service's readers have it too.

use crate::encrypted::EncryptedBallot;
use crate::json::{ciphertext_json, hx};
use votum_group::ModScalar;

/// How a ciphertext ballot is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BallotForm {
    /// `CiphertextBallot` with every nonce: for the voter's device only (Benaloh challenge).
    Private,
    /// `SubmittedBallot`: nonces null, with the ballot box state (1 = cast, 2 = spoiled).
    Submitted { state: u8 },
}

impl EncryptedBallot {
    /// The ballot in electionguard 1.4.0's JSON layout (`extended_data` is written as null).
    pub fn to_eg14_json(&self, form: BallotForm) -> serde_json::Value {
        let private = form == BallotForm::Private;
        let nonce = |n: &Option<ModScalar>| match n {
            Some(n) if private => hx(n.value()),
            _ => serde_json::Value::Null,
        };
        let contests: Vec<serde_json::Value> = self
            .contests
            .iter()
            .map(|c| {
                let selections: Vec<serde_json::Value> = c
                    .selections
                    .iter()
                    .map(|s| {
                        let p = &s.proof;
                        serde_json::json!({
                            "object_id": s.object_id,
                            "sequence_order": s.sequence_order,
                            "description_hash": hx(&s.description_hash),
                            "ciphertext": ciphertext_json(&s.ciphertext),
                            "crypto_hash": hx(&s.crypto_hash),
                            "is_placeholder_selection": s.is_placeholder,
                            "nonce": nonce(&s.nonce),
                            "proof": {
                                "proof_zero_pad": hx(p.zero_pad.value()),
                                "proof_zero_data": hx(p.zero_data.value()),
                                "proof_one_pad": hx(p.one_pad.value()),
                                "proof_one_data": hx(p.one_data.value()),
                                "proof_zero_challenge": hx(p.zero_challenge.value()),
                                "proof_one_challenge": hx(p.one_challenge.value()),
                                "challenge": hx(p.challenge.value()),
                                "proof_zero_response": hx(p.zero_response.value()),
                                "proof_one_response": hx(p.one_response.value()),
                                "usage": "Prove selection's value (0 or 1)",
                            },
                        })
                    })
                    .collect();
                let p = &c.proof;
                serde_json::json!({
                    "object_id": c.object_id,
                    "sequence_order": c.sequence_order,
                    "description_hash": hx(&c.description_hash),
                    "ballot_selections": selections,
                    "ciphertext_accumulation": ciphertext_json(&c.accumulation),
                    "crypto_hash": hx(&c.crypto_hash),
                    "nonce": nonce(&c.nonce),
                    "proof": {
                        "pad": hx(p.pad.value()),
                        "data": hx(p.data.value()),
                        "challenge": hx(p.challenge.value()),
                        "response": hx(p.response.value()),
                        "constant": p.constant,
                        "usage": "Prove value within selection's limit",
                    },
                    "extended_data": serde_json::Value::Null,
                })
            })
            .collect();
        let mut out = serde_json::json!({
            "object_id": self.object_id,
            "style_id": self.style_id,
            "manifest_hash": hx(&self.manifest_hash),
            "code_seed": hx(&self.code_seed),
            "contests": contests,
            "code": hx(&self.code),
            "timestamp": self.timestamp,
            "crypto_hash": hx(&self.crypto_hash),
            "nonce": nonce(&self.nonce),
        });
        if let (BallotForm::Submitted { state }, Some(obj)) = (form, out.as_object_mut()) {
            obj.insert("state".to_owned(), serde_json::Value::from(state));
        }
        out
    }
}
