//! The printing authority (spec/92.5): one voting card per voter from the authorities' secret
//! voter data (7.13, 7.14).

use votum_arith::{wipe_integer, Integer};
use zeroize::Zeroize;

use crate::authority::SecretVoterData;
use crate::codes;
use crate::params::Params;
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
                .map(|(v, r)| codes::return_code(r, v))
                .collect(),
        });
        wipe_integer(&mut x);
        wipe_integer(&mut y);
        f.zeroize();
        rc.iter_mut().for_each(|r| r.zeroize());
    }
    Ok(cards)
}

/// One voter's printable code sheet as a standalone HTML page: the voting code, the return code of
/// every candidate (by election), the confirmation code and the finalization code, with what the
/// voter does with each. The page loads nothing and runs no script.
pub fn sheet_html(card: &VotingCard, set: &crate::election::ElectionSet) -> String {
    let mut rows = String::new();
    let mut v = 0;
    for (l, (&n, &k)) in set.candidates.iter().zip(&set.selections).enumerate() {
        let eligible = set.eligible[card.voter][l];
        rows.push_str(&format!(
            "<tr><th colspan=\"2\">Election {} — choose {k} of {n}{}</th></tr>\n",
            l + 1,
            if eligible {
                ""
            } else {
                " (not on your ballot)"
            }
        ));
        for _ in 0..n {
            rows.push_str(&format!(
                "<tr><td>Candidate {}</td><td><code>{}</code></td></tr>\n",
                v + 1,
                codes::grouped(&card.return_codes[v])
            ));
            v += 1;
        }
    }
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<title>Code sheet, voter {voter}</title>\
<style>body{{font-family:sans-serif;max-width:40em;margin:2em auto}}code{{font-size:1.1em}}\
table{{border-collapse:collapse;width:100%}}td,th{{border:1px solid #999;padding:.3em .6em;text-align:left}}\
.box{{border:2px solid #000;padding:.6em;margin:1em 0}}</style></head><body>\n\
<h1>Code sheet, voter {voter}</h1>\n\
<div class=\"box\"><strong>1. Voting code</strong> (enter it to cast your ballot):<br><code>{x}</code></div>\n\
<p><strong>2. Return codes.</strong> After you vote, your device shows one code per choice. Each must be the \
code printed next to the candidate you chose. If one differs, do not confirm: your vote was not recorded as \
you cast it. Report it.</p>\n<table>\n{rows}</table>\n\
<div class=\"box\"><strong>3. Confirmation code</strong> (enter it only if every return code matched):<br>\
<code>{y}</code></div>\n\
<div class=\"box\"><strong>4. Finalization code</strong> (your device shows it once your vote is counted; it \
must be this):<br><code>{f}</code></div>\n</body></html>\n",
        voter = card.voter + 1,
        x = codes::grouped(&card.voting_code),
        y = codes::grouped(&card.confirmation_code),
        f = codes::grouped(&card.finalization_code),
    )
}

/// Writes one sheet per voter into `dir` (`voter-000001.html` …, voters numbered from 1 as people count
/// them; the record's voter index is one less), created if missing. The files
/// hold secrets: they are created readable by their owner only where the system allows it.
pub fn write_sheets(
    dir: &std::path::Path,
    cards: &[VotingCard],
    set: &crate::election::ElectionSet,
) -> Result<(), ChvoteError> {
    let io = |e: std::io::Error| ChvoteError::Parameters(format!("{}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(io)?;
    let width = cards.len().max(1).to_string().len().max(6);
    for card in cards {
        let path = dir.join(format!("voter-{:0width$}.html", card.voter + 1));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(&path).map_err(io)?;
        let mut html = sheet_html(card, set);
        let written = std::io::Write::write_all(&mut file, html.as_bytes());
        html.zeroize();
        written.map_err(io)?;
    }
    Ok(())
}
