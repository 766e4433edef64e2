//! The ElectionGuard 1.4 record's checks on the guardians (spec/50.3, V-PARAM-03, V-GUARD-01..03),
//! one function per check, on parsed documents. The walker (`crate::eg`) reads the record document
//! by document; the checks of single documents are its methods (one per document kind), and the
//! ballot checks run in batches through `votum_eg::ballot::BallotBox`, here or on a cluster.

use std::collections::hash_map::Entry;
use std::collections::{BTreeSet, HashMap, HashSet};

use votum_arith::Integer;
use votum_eg::ceremony::{joint_key, CeremonyError, GuardianPublicKey};
use votum_eg::context::ElectionContext;
use votum_group::{Group, ModElement, ModpGroup};
use votum_hash::eg::{hash_elems, EgHashItem};

use crate::checks::Check;
use crate::report::Ledger;

/// V-PARAM-03: the context's guardian count is the record's, and its quorum is possible. Returns
/// whether the guardians can be checked against that quorum.
pub(crate) fn check_guardian_count(ledger: &mut Ledger, ctx: &ElectionContext, n: usize) -> bool {
    let k = ctx.quorum as usize;
    if ctx.number_of_guardians != n as u64 {
        ledger.fail(
            Check::Param03,
            "context.json",
            format!(
                "number_of_guardians is {}, the record has {n} guardian records",
                ctx.number_of_guardians
            ),
        );
    }
    if k == 0 || k > n {
        ledger.fail(
            Check::Param03,
            "context.json",
            format!("quorum {k} is impossible with {n} guardians"),
        );
        return false;
    }
    true
}

/// V-GUARD-01 (distinct ids, sequence orders 1..=n, no commitment copied from another guardian, a
/// quorum of commitments) and V-GUARD-02 (each commitment in the subgroup with its Schnorr proof),
/// over every guardian record.
pub(crate) fn check_guardians(
    ledger: &mut Ledger,
    group: &ModpGroup,
    guardians: &[GuardianPublicKey],
    quorum: usize,
) {
    let n = guardians.len();
    let mut ids = HashSet::new();
    let mut orders = HashSet::new();
    // a commitment in two guardians' records: one guardian copied another's
    let mut holders: HashMap<&Integer, &str> = HashMap::new();
    for g in guardians {
        let object = format!("guardian {:?}", g.id);
        let mut repeats = BTreeSet::new();
        for c in &g.commitments {
            match holders.entry(c.value()) {
                Entry::Occupied(e) if *e.get() != g.id.as_str() => {
                    repeats.insert(*e.get());
                }
                Entry::Occupied(_) => {}
                Entry::Vacant(e) => {
                    e.insert(g.id.as_str());
                }
            }
        }
        for other in repeats {
            ledger.fail(
                Check::Guard01,
                &object,
                format!("a coefficient commitment repeats one of guardian {other:?}'s"),
            );
        }
        if !ids.insert(g.id.clone()) {
            ledger.fail(Check::Guard01, &object, "a second record with this id");
        }
        if g.sequence_order == 0 || g.sequence_order > n as u64 || !orders.insert(g.sequence_order)
        {
            ledger.fail(
                Check::Guard01,
                &object,
                format!(
                    "sequence order {} is not a distinct one of 1..={n}",
                    g.sequence_order
                ),
            );
        }
        match g.verify(group, quorum) {
            Ok(()) => {}
            Err(e @ CeremonyError::WrongQuorum { .. }) => {
                ledger.fail(Check::Guard01, &object, e.to_string());
            }
            Err(e) => ledger.fail(Check::Guard02, &object, e.to_string()),
        }
    }
}

/// The joint values the guardians' records give: the joint key, the commitment hash and the
/// extended base hash.
pub(crate) struct JointValues {
    pub key: ModElement,
    pub commitment_hash: Integer,
    pub extended: Integer,
}

/// V-GUARD-03: the context's joint key, commitment hash and extended base hash are the ones the
/// guardians' records give, in sequence order.
pub(crate) fn check_joint_values(
    ledger: &mut Ledger,
    group: &ModpGroup,
    guardians: &[GuardianPublicKey],
    ctx: &ElectionContext,
) -> JointValues {
    let mut ordered = guardians.to_vec();
    ordered.sort_by_key(|g| g.sequence_order);
    let (key, commitment_hash) = joint_key(&ordered);
    let extended = hash_elems(
        &[
            EgHashItem::Num(ctx.crypto_base_hash.clone()),
            EgHashItem::Num(commitment_hash.clone()),
        ],
        group.order(),
    );
    ledger.examined(Check::Guard03, 1);
    for (ok, what) in [
        (
            key == ctx.elgamal_public_key,
            "elgamal_public_key is not the product of the guardians' keys",
        ),
        (
            commitment_hash == ctx.commitment_hash,
            "commitment_hash does not recompute",
        ),
        (
            extended == ctx.crypto_extended_base_hash,
            "crypto_extended_base_hash is not H(crypto_base_hash, commitment_hash)",
        ),
    ] {
        if !ok {
            ledger.fail(Check::Guard03, "context.json", what);
        }
    }
    JointValues {
        key,
        commitment_hash,
        extended,
    }
}
