//! The printing authority (spec/92.5): one voting card per voter from the authorities' secret
//! voter data (7.13, 7.14).

use votum_arith::{wipe_integer, Integer};
use zeroize::Zeroize;

use crate::authority::SecretVoterData;
use crate::codes;
use crate::params::{Params, N_MAX};
use crate::ChvoteError;

/// A voter's code sheet: voting code X, confirmation code Y, finalization code FC and one return
/// code per candidate. Wiped on drop, never printed by `Debug`.
pub struct VotingCard {
    pub voter: usize,
    pub voting_code: String,
    pub confirmation_code: String,
    pub finalization_code: String,
    pub return_codes: Vec<String>,
}

impl Drop for VotingCard {
    fn drop(&mut self) {
        self.voting_code.zeroize();
        self.confirmation_code.zeroize();
        self.finalization_code.zeroize();
        self.return_codes.iter_mut().for_each(|c| c.zeroize());
    }
}

impl std::fmt::Debug for VotingCard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "VotingCard(voter {}, <redacted>)", self.voter)
    }
}

/// 7.13 GetVotingCards: `data[j][i]` is authority j's secret data for voter i.
pub fn voting_cards(
    params: &Params,
    data: &[Vec<SecretVoterData>],
) -> Result<Vec<VotingCard>, ChvoteError> {
    if data.len() != params.authorities() || data.iter().any(|d| d.len() != data[0].len()) {
        return Err(ChvoteError::Parameters(
            "one list of voter data per authority".into(),
        ));
    }
    let chars = params.credential_chars();
    let voters = data[0].len();
    let mut cards = Vec::with_capacity(voters);
    for i in 0..voters {
        let mut x = Integer::new();
        let mut y = Integer::new();
        let mut f = vec![0u8; params.l_f()];
        let n = data[0][i].rc.len();
        let mut rc = vec![vec![0u8; params.l_r()]; n];
        for d in data {
            let v = &d[i];
            x += &v.x;
            y += &v.y;
            crate::hash::xor_into(&mut f, &v.f);
            for (acc, share) in rc.iter_mut().zip(&v.rc) {
                crate::hash::xor_into(acc, share);
            }
        }
        cards.push(VotingCard {
            voter: i,
            voting_code: codes::integer_to_code(&x, chars),
            confirmation_code: codes::integer_to_code(&y, chars),
            finalization_code: codes::bytes_to_code(&f),
            return_codes: rc
                .iter()
                .enumerate()
                .map(|(v, r)| codes::bytes_to_code(&codes::mark(r, v, N_MAX)))
                .collect(),
        });
        wipe_integer(&mut x);
        wipe_integer(&mut y);
        f.zeroize();
        rc.iter_mut().for_each(|r| r.zeroize());
    }
    Ok(cards)
}
