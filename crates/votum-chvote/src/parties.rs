//! The parties of a CHVote election as separate processes (spec/92.12): each authority, the
//! printing authority and the voters' client hold their own secrets and exchange bytes. Public
//! messages use the record's encodings (spec/92.10), so what a party posts is what the record
//! holds. Two private messages never reach the record: an authority's secret voter data for the
//! printing authority, and a voter's card for the voters' client. Their encodings are here. The
//! channels seal both to their recipient (spec/95.6); the bytes handed out are `Zeroizing`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use rand_core::OsRng;
use votum_arith::{Integer, Order};
use votum_group::ModpGroup;
use votum_shuffle::{Rows, ShuffleProof};
use zeroize::{Zeroize, Zeroizing};

use crate::authority::{Authority, SecretVoterData};
use crate::client::{self, CastSecrets, ClientTables};
use crate::election::{ElectionSet, Shape};
use crate::messages::{mixing_generators, shuffle_context, PublicBoard};
use crate::params::{Level, Params};
use crate::printing::{voting_cards, write_sheets, VotingCard};
use crate::record::{self as rec, In, Out};
use crate::tally;
use crate::ChvoteError;

/// The `parameters` payload of a new election: every party reads the election from it.
pub fn parameters(
    level: u8,
    shape: &str,
    voters: usize,
    authorities: usize,
    election_id: &str,
    signers: &[[u8; 32]],
) -> Result<Vec<u8>, ChvoteError> {
    if election_id.is_empty() || election_id.len() > rec::MAX_ELECTION_ID {
        return Err(ChvoteError::Parameters(
            "an election id of 1 to 256 bytes".into(),
        ));
    }
    if voters == 0 {
        return Err(ChvoteError::Parameters("no voters".into()));
    }
    if signers.is_empty() {
        return Err(ChvoteError::Parameters(
            "each authority's signing key is due".into(),
        ));
    }
    let params = Params::signed(Level::from_number(level)?, authorities, signers.to_vec())?;
    let set = ElectionSet::of_shape(Shape::from_name(shape)?, voters)?;
    Ok(rec::parameters_bytes(&params, &set, election_id))
}

/// The public board from the posted parameters, key shares and voter data (one each per
/// authority, in authority order).
pub fn public_board(
    parameters: &[u8],
    key_shares: &[&[u8]],
    voter_data: &[&[u8]],
) -> Result<PublicBoard, ChvoteError> {
    let (params, set, election_id) = rec::decode_parameters(parameters)?;
    // every share's proof of knowledge is checked before the joint key is formed (spec/92.3)
    let digest = params.digest_with(&set.shape_bytes(), &election_id);
    let shares = key_shares
        .iter()
        .enumerate()
        .map(|(j, b)| rec::decode_key_share(&params, &digest, j, b))
        .collect::<Result<Vec<_>, _>>()?;
    let data = voter_data
        .iter()
        .map(|b| rec::decode_voter_data(&params, b))
        .collect::<Result<Vec<_>, _>>()?;
    PublicBoard::new(params, set, &election_id, shares, data)
}

fn integer_bytes(o: &mut Out, x: &Integer) {
    let mut digits = x.to_digits::<u8>(Order::Msf);
    o.bytes(&digits);
    digits.zeroize();
}

fn integer_of(i: &mut In<'_>) -> Result<Integer, ChvoteError> {
    let mut digits = i.bytes()?;
    let x = Integer::from_digits(&digits, Order::Msf);
    digits.zeroize();
    Ok(x)
}

/// Authority j's secret voter data for the printing authority (7.10): per voter x, y, F and the
/// return-code shares.
fn secret_data_bytes(data: &[SecretVoterData]) -> Zeroizing<Vec<u8>> {
    let mut o = Out::default();
    o.count(data.len());
    for d in data {
        integer_bytes(&mut o, &d.x);
        integer_bytes(&mut o, &d.y);
        o.bytes(&d.f);
        o.count(d.rc.len());
        d.rc.iter().for_each(|r| o.bytes(r));
    }
    Zeroizing::new(std::mem::take(&mut o.0))
}

fn decode_secret_data(
    bytes: &[u8],
    voters: usize,
    candidates: usize,
) -> Result<Vec<SecretVoterData>, ChvoteError> {
    let mut i = In::new("secret voter data", bytes);
    let n = i.count(1)?;
    if n != voters {
        return Err(ChvoteError::Parameters(format!(
            "secret voter data for {n} voters, not {voters}"
        )));
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let x = integer_of(&mut i)?;
        let y = integer_of(&mut i)?;
        let f = i.bytes()?;
        let m = i.count(8)?;
        if m != candidates {
            return Err(ChvoteError::Parameters(
                "return-code shares for another election".into(),
            ));
        }
        let rc = (0..m).map(|_| i.bytes()).collect::<Result<Vec<_>, _>>()?;
        out.push(SecretVoterData { x, y, f, rc });
    }
    i.done()?;
    Ok(out)
}

/// A voting card as the printing authority hands it to its voter.
fn card_bytes(card: &VotingCard) -> Zeroizing<Vec<u8>> {
    let mut o = Out::default();
    o.count(card.voter);
    o.bytes(card.voting_code.as_bytes());
    o.bytes(card.confirmation_code.as_bytes());
    o.bytes(card.finalization_code.as_bytes());
    o.count(card.return_codes.len());
    card.return_codes.iter().for_each(|c| o.bytes(c.as_bytes()));
    Zeroizing::new(std::mem::take(&mut o.0))
}

fn decode_card(bytes: &[u8]) -> Result<VotingCard, ChvoteError> {
    let mut i = In::new("voting card", bytes);
    let text = |i: &mut In<'_>| {
        String::from_utf8(i.bytes()?)
            .map_err(|_| ChvoteError::Parameters("a voting card's code is not text".into()))
    };
    let voter = i.num()?;
    let voting_code = text(&mut i)?;
    let confirmation_code = text(&mut i)?;
    let finalization_code = text(&mut i)?;
    let n = i.count(8)?;
    let return_codes = (0..n)
        .map(|_| text(&mut i))
        .collect::<Result<Vec<_>, _>>()?;
    i.done()?;
    Ok(VotingCard {
        voter,
        voting_code,
        confirmation_code,
        finalization_code,
        return_codes,
    })
}

/// One election authority in its own process (spec/92.12): its key, its voters' points and
/// the ballots it has accepted never leave it.
pub struct AuthorityParty {
    authority: Authority,
    set: ElectionSet,
    /// The id in the parameters, bound into the key shares' proofs (spec/92.3).
    election_id: String,
    board: Option<Arc<PublicBoard>>,
    /// The shuffle this authority made: it decrypts only a chain holding it in its own slot.
    shuffled: Mutex<Option<Vec<u8>>>,
    /// What opens single rows of that shuffle, kept to trace invalid votes (spec/92.8), and
    /// whether it has traced (once per election).
    opening: Mutex<(Option<votum_shuffle::ShuffleOpening<ModpGroup>>, bool)>,
}

impl std::fmt::Debug for AuthorityParty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AuthorityParty({})", self.authority.index())
    }
}

impl AuthorityParty {
    /// 7.15 GenKeyPair for authority `index` of the election `parameters` describes; `signer` is
    /// this authority's node signing key, which the parameters must name in its slot (its shuffle,
    /// share and trace are signed with it, spec/92.10).
    pub fn new(parameters: &[u8], index: usize, signer: &[u8; 32]) -> Result<Self, ChvoteError> {
        let (params, set, election_id) = rec::decode_parameters(parameters)?;
        let s = params.authorities();
        if index >= s {
            return Err(ChvoteError::Parameters(format!(
                "authority {index} of an election with {s}"
            )));
        }
        if params.signers().get(index) != Some(signer) {
            return Err(ChvoteError::Parameters(format!(
                "the parameters name another signing key for authority {index}"
            )));
        }
        Ok(Self {
            authority: Authority::new(index, params, &mut OsRng),
            set,
            election_id,
            board: None,
            shuffled: Mutex::new(None),
            opening: Mutex::new((None, false)),
        })
    }

    pub fn index(&self) -> usize {
        self.authority.index()
    }

    fn params(&self) -> Result<&Params, ChvoteError> {
        Ok(&self.board()?.params)
    }

    fn board(&self) -> Result<&PublicBoard, ChvoteError> {
        self.board
            .as_deref()
            .ok_or_else(|| ChvoteError::Parameters("the authority has not seen the board".into()))
    }

    /// What this authority signs with its node key for its entry of `kind` (spec/92.10): bound to
    /// the election digest, so to the parameters, the joint key and the signing keys.
    pub fn statement(&self, kind: &str, payload: &[u8]) -> Result<Vec<u8>, ChvoteError> {
        let board = self.board()?;
        Ok(rec::statement(
            &board.digest,
            kind,
            &format!("authority-{}", self.index()),
            payload,
        ))
    }

    /// The `key-share` payload: the share and its proof of knowledge (spec/92.3).
    pub fn key_share(&self) -> Vec<u8> {
        let digest = self
            .authority
            .params()
            .digest_with(&self.set.shape_bytes(), &self.election_id);
        self.authority.key_share_payload(&digest, &mut OsRng)
    }

    /// 7.6 GenElectorateData: the secret voter data for the printing authority and the
    /// `voter-data` payload for the board.
    pub fn electoral_data(&mut self) -> Result<(Zeroizing<Vec<u8>>, Vec<u8>), ChvoteError> {
        let (secret, public) = self.authority.gen_electorate_data(&self.set)?;
        Ok((
            secret_data_bytes(&secret),
            rec::voter_data_bytes(self.authority.params(), &public),
        ))
    }

    /// Takes the published board; refuses one whose key share for this authority is not its own.
    pub fn attach(
        &mut self,
        parameters: &[u8],
        key_shares: &[&[u8]],
        voter_data: &[&[u8]],
    ) -> Result<(), ChvoteError> {
        let board = public_board(parameters, key_shares, voter_data)?;
        if board.key_shares.get(self.index()) != Some(&self.authority.key_share()) {
            return Err(ChvoteError::Parameters(format!(
                "the board does not hold authority {}'s key share",
                self.index()
            )));
        }
        let board = Arc::new(board);
        self.authority.attach(board.clone());
        self.board = Some(board);
        Ok(())
    }

    /// 7.22 CheckBallot and 7.25 GenResponse: the `responses` encoding of this one response.
    pub fn ballot(&self, voter: usize, ballot: &[u8]) -> Result<Vec<u8>, ChvoteError> {
        let params = self.params()?;
        let ballot = rec::decode_ballot(params, ballot)?;
        let response = self.authority.handle_ballot(voter, &ballot, &mut OsRng)?;
        Ok(rec::responses_bytes(params, &[response]))
    }

    /// 7.34 CheckConfirmation and 7.37 GetFinalization: the `finalizations` encoding of this one.
    pub fn confirmation(&self, voter: usize, confirmation: &[u8]) -> Result<Vec<u8>, ChvoteError> {
        let params = self.params()?;
        let gamma = rec::decode_confirmation(params, confirmation)?;
        let f = self.authority.handle_confirmation(voter, &gamma)?;
        Ok(rec::finalizations_bytes(params, &[f]))
    }

    /// The `input` payload: the confirmed ballots' encryptions in voter order.
    pub fn input(&self) -> Result<Vec<u8>, ChvoteError> {
        let params = self.params()?;
        let rows = Rows::new(1, self.authority.encryptions())
            .map_err(|e| ChvoteError::Parameters(e.to_string()))?;
        Ok(rec::input_bytes(params, &rows))
    }

    /// Refuses an input other than the one this authority derives from the ballots it confirmed
    /// itself (spec/92.12): the controller can neither drop a confirmed ballot nor add one.
    fn own_input(&self, input: &[u8]) -> Result<(), ChvoteError> {
        if input != self.input()? {
            return Err(ChvoteError::Parameters(format!(
                "the mix input is not the ballots authority {} confirmed",
                self.index()
            )));
        }
        Ok(())
    }

    /// Shuffles the last list (the input after the earlier authorities' shuffles): the `shuffle`
    /// payload of this authority, made once. The input must be the one this authority confirmed;
    /// the earlier shuffles are checked at decryption (spec/92.8), where every authority checks
    /// at once; here they are only decoded.
    pub fn shuffle(&self, input: &[u8], shuffles: &[&[u8]]) -> Result<Vec<u8>, ChvoteError> {
        self.own_input(input)?;
        let mut made = self.shuffled.lock().unwrap_or_else(|e| e.into_inner());
        if made.is_some() {
            return Err(ChvoteError::Parameters(format!(
                "authority {} has shuffled already",
                self.index()
            )));
        }
        if shuffles.len() != self.index() {
            return Err(ChvoteError::Parameters(format!(
                "authority {} shuffles after {} shuffles, not {}",
                self.index(),
                self.index(),
                shuffles.len()
            )));
        }
        let board = self.board.clone().ok_or_else(|| {
            ChvoteError::Parameters("the authority has not seen the board".into())
        })?;
        let (lists, gens) = self.lists(&board, input, shuffles, false)?;
        let last = lists
            .last()
            .ok_or_else(|| ChvoteError::Parameters("no list".into()))?;
        let (out, proof, opening) = self.authority.shuffle(&gens, last, &mut OsRng)?;
        let payload = rec::shuffle_bytes(&board.params, &out, &proof);
        *made = Some(payload.clone());
        self.opening.lock().unwrap_or_else(|e| e.into_inner()).0 = Some(opening);
        Ok(payload)
    }

    /// The `trace` payload of this authority (spec/92.8): the rows of its shuffle that invalid
    /// votes lead back to, opened. It derives them itself: it checks the chain (its own slot
    /// holding its shuffle, every other shuffle), every decryption share, decrypts, and takes the
    /// invalid rows of the last list; `later` holds the traces of the authorities after it, last
    /// first, each checked (a trace opens exactly the rows the one after it led to, each a
    /// re-encryption). So no message can make it open the row of a valid vote. Once per
    /// election; the opening is wiped after it.
    pub fn trace(
        &self,
        input: &[u8],
        shuffles: &[&[u8]],
        shares: &[&[u8]],
        later: &[&[u8]],
    ) -> Result<Vec<u8>, ChvoteError> {
        let j = self.index();
        let mut held = self.opening.lock().unwrap_or_else(|e| e.into_inner());
        if held.1 {
            return Err(ChvoteError::Parameters(format!(
                "authority {j} has traced already"
            )));
        }
        let (board, lists) = self.checked_chain(input, shuffles)?;
        let s = board.params.authorities();
        if shares.len() != s || later.len() != s - 1 - j {
            return Err(ChvoteError::Parameters(format!(
                "a trace by authority {j} needs {s} shares and the {} later traces",
                s - 1 - j
            )));
        }
        let shares = decode_shares(&board.params, shares)?;
        let last = lists
            .last()
            .ok_or_else(|| ChvoteError::Parameters("no list".into()))?;
        let plaintexts = tally::decrypt(&board, last, &shares)?;
        let invalid = tally::tally(&board, &plaintexts).invalid_rows;
        if invalid.is_empty() {
            return Err(ChvoteError::Parameters(
                "every vote is valid: nothing to trace".into(),
            ));
        }
        let traces = later
            .iter()
            .enumerate()
            .map(|(x, b)| {
                let k = s - 1 - x;
                rec::decode_trace(&board.params, b)
                    .map(|t| (k, t))
                    .map_err(|e| ChvoteError::Shuffle {
                        authority: k,
                        reason: format!("its trace: {e}"),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let views: Vec<&Rows<ModpGroup>> = lists.iter().collect();
        let rows = tally::check_traces(&board, &views, &invalid, &traces).map_err(
            |(authority, reason)| ChvoteError::Shuffle {
                authority,
                reason: format!("its trace: {reason}"),
            },
        )?;
        let opening = held
            .0
            .take()
            .ok_or_else(|| ChvoteError::Parameters(format!("authority {j} has not shuffled")))?;
        held.1 = true;
        let steps = self.authority.trace_steps(&lists[j], &opening, &rows)?;
        Ok(rec::trace_bytes(&board.params, &steps))
    }

    /// Checks that the input is the one it confirmed, that its own slot holds the shuffle it made,
    /// and every other shuffle (7.47); then its share of the last list's decryption: the
    /// `decryption` payload. A chain the controller made itself (a shuffle needs no secret) has
    /// no shuffle of this authority's, so its permutations would all be the controller's.
    pub fn decrypt(&self, input: &[u8], shuffles: &[&[u8]]) -> Result<Vec<u8>, ChvoteError> {
        let (board, lists) = self.checked_chain(input, shuffles)?;
        let last = lists
            .last()
            .ok_or_else(|| ChvoteError::Parameters("no list".into()))?;
        let pads: Vec<_> = last.ciphertexts().iter().map(|c| c.pad.clone()).collect();
        let share = self.authority.decrypt(&pads, &mut OsRng)?;
        Ok(rec::share_bytes(&board.params, &share))
    }

    /// The whole chain, as decryption and tracing take it: the input this authority confirmed, its
    /// own slot holding the shuffle it made, one shuffle per authority, every other shuffle
    /// checked. Returns the board and every list, the input first.
    fn checked_chain(
        &self,
        input: &[u8],
        shuffles: &[&[u8]],
    ) -> Result<(Arc<PublicBoard>, Vec<Rows<ModpGroup>>), ChvoteError> {
        self.own_input(input)?;
        let mine = self
            .shuffled
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if mine.as_deref() != shuffles.get(self.index()).copied() {
            return Err(ChvoteError::Shuffle {
                authority: self.index(),
                reason: "this slot does not hold the shuffle this authority made".into(),
            });
        }
        let board = self.board.clone().ok_or_else(|| {
            ChvoteError::Parameters("the authority has not seen the board".into())
        })?;
        if shuffles.len() != board.params.authorities() {
            return Err(ChvoteError::Parameters(
                "one shuffle per authority before decryption".into(),
            ));
        }
        let (lists, _) = self.lists(&board, input, shuffles, true)?;
        Ok((board, lists))
    }

    /// Decodes the input and the shuffles' lists; with `check`, checks each shuffle but its own.
    fn lists(
        &self,
        board: &PublicBoard,
        input: &[u8],
        shuffles: &[&[u8]],
        check: bool,
    ) -> Result<(Vec<Rows<ModpGroup>>, votum_shuffle::Generators<ModpGroup>), ChvoteError> {
        let params = &board.params;
        let first = rec::decode_input(params, input, &mut OsRng)?;
        let n = first.len();
        let gens = mixing_generators(board, n);
        let mut lists = vec![first];
        for (j, bytes) in shuffles.iter().enumerate() {
            let (out, proof): (Rows<ModpGroup>, ShuffleProof<ModpGroup>) =
                rec::decode_shuffle(params, bytes, n, &mut OsRng).map_err(|e| {
                    ChvoteError::Shuffle {
                        authority: j,
                        reason: e.to_string(),
                    }
                })?;
            if check && j != self.index() {
                tally::check_shuffle(
                    board,
                    j,
                    &gens,
                    &shuffle_context(board, j),
                    &lists[j],
                    &out,
                    &proof,
                    &mut OsRng,
                )?;
            }
            lists.push(out);
        }
        Ok((lists, gens))
    }
}

/// 7.13 GetVotingCards by the printing authority: one card per voter from every authority's
/// secret voter data (in authority order); with `sheets`, one printable page per voter there.
pub fn print_cards(
    parameters: &[u8],
    secret_data: &[&[u8]],
    sheets: Option<&std::path::Path>,
) -> Result<Vec<Zeroizing<Vec<u8>>>, ChvoteError> {
    let (params, set, _) = rec::decode_parameters(parameters)?;
    if secret_data.len() != params.authorities() {
        return Err(ChvoteError::Parameters(
            "secret voter data from every authority".into(),
        ));
    }
    let data = secret_data
        .iter()
        .map(|b| decode_secret_data(b, set.voters(), set.total_candidates()))
        .collect::<Result<Vec<_>, _>>()?;
    let cards = voting_cards(&params, &data)?;
    drop(data);
    if let Some(dir) = sheets {
        write_sheets(dir, &cards, &set)?;
    }
    Ok(cards.iter().map(card_bytes).collect())
}

/// Where one voter stands in the voters' client.
struct Voting {
    card: VotingCard,
    secrets: Option<CastSecrets>,
    selections: Vec<usize>,
}

/// The voters' client (spec/92.12): every voter's card, ballot and confirmation. A real client
/// serves one voter; this one serves the electorate of a simulation.
pub struct VotersClient {
    board: Arc<PublicBoard>,
    tables: ClientTables,
    voters: HashMap<usize, Mutex<Voting>>,
}

impl std::fmt::Debug for VotersClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "VotersClient({} voters, <redacted>)", self.voters.len())
    }
}

impl VotersClient {
    pub fn new(
        parameters: &[u8],
        key_shares: &[&[u8]],
        voter_data: &[&[u8]],
    ) -> Result<Self, ChvoteError> {
        let board = Arc::new(public_board(parameters, key_shares, voter_data)?);
        let tables = ClientTables::new(&board);
        Ok(Self {
            board,
            tables,
            voters: HashMap::new(),
        })
    }

    /// Takes one voter's card; returns the voter's index.
    pub fn add_card(&mut self, card: &[u8]) -> Result<usize, ChvoteError> {
        let card = decode_card(card)?;
        let voter = card.voter;
        if voter >= self.board.voters() {
            return Err(ChvoteError::UnknownVoter(voter));
        }
        self.voters.insert(
            voter,
            Mutex::new(Voting {
                card,
                secrets: None,
                selections: Vec::new(),
            }),
        );
        Ok(voter)
    }

    /// One voter's state; voters are independent, so several may vote at once.
    fn voting(&self, voter: usize) -> Result<MutexGuard<'_, Voting>, ChvoteError> {
        let v = self
            .voters
            .get(&voter)
            .ok_or(ChvoteError::UnknownVoter(voter))?;
        Ok(v.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// 7.18 GenBallot for `selections` (1-based, increasing), or for a random allowed choice:
    /// the `ballot` payload.
    pub fn ballot(
        &self,
        voter: usize,
        selections: Option<Vec<usize>>,
    ) -> Result<Vec<u8>, ChvoteError> {
        let board = &self.board;
        let mut v = self.voting(voter)?;
        let selections =
            selections.unwrap_or_else(|| client::random_selections(board, voter, &mut OsRng));
        let (ballot, secrets) = client::gen_ballot(
            board,
            &self.tables,
            voter,
            &v.card.voting_code,
            &selections,
            &mut OsRng,
        )?;
        v.secrets = Some(secrets);
        v.selections = selections;
        Ok(rec::ballot_bytes(&board.params, &ballot))
    }

    /// A cheating client's ballot for `selections`, its query for selection `squared` encoding
    /// Γ(c)² (issue 45, finding 7; attack tests only): the codes still match the card.
    #[doc(hidden)]
    pub fn cheating_ballot(
        &self,
        voter: usize,
        selections: Vec<usize>,
        squared: usize,
    ) -> Result<Vec<u8>, ChvoteError> {
        let board = &self.board;
        let mut v = self.voting(voter)?;
        let (ballot, secrets) = client::gen_cheating_ballot(
            board,
            &self.tables,
            voter,
            &v.card.voting_code,
            &selections,
            squared,
            &mut OsRng,
        )?;
        v.secrets = Some(secrets);
        v.selections = selections;
        Ok(rec::ballot_bytes(&board.params, &ballot))
    }

    /// 7.26–7.29: the points from every authority's response (one `responses` payload each, in
    /// authority order; a bad one names its authority), the return codes compared with the
    /// card, then 7.30 GenConfirmation: the `confirmation` payload.
    pub fn confirm(&self, voter: usize, responses: &[&[u8]]) -> Result<Vec<u8>, ChvoteError> {
        let board = self.board.clone();
        let params = &board.params;
        let all = one_each(responses, |b| rec::decode_responses(params, b))?;
        let mut guard = self.voting(voter)?;
        let v = &mut *guard;
        let secrets = v.secrets.as_ref().ok_or(ChvoteError::NoBallot(voter))?;
        let points = client::get_points(&board, secrets, &all)?;
        let shown = client::return_codes(&board, &v.selections, &points);
        if !client::check_return_codes(&v.card.return_codes, &shown, &v.selections) {
            return Err(ChvoteError::Selections(format!(
                "voter {voter}: the return codes shown are not the card's"
            )));
        }
        let gamma = client::gen_confirmation(
            &board,
            secrets,
            &v.card.confirmation_code,
            &points,
            &mut OsRng,
        )?;
        Ok(rec::confirmation_bytes(params, &gamma))
    }

    /// 7.38/7.39: the finalization code from every authority's part (one `finalizations`
    /// payload each), compared with the card. Returns the voter's selections.
    pub fn finalize(
        &self,
        voter: usize,
        finalizations: &[&[u8]],
    ) -> Result<Vec<usize>, ChvoteError> {
        let board = self.board.clone();
        let parts = one_each(finalizations, |b| {
            rec::decode_finalizations(&board.params, b)
        })?;
        let mut v = self.voting(voter)?;
        if client::finalization_code(&board, &parts) != v.card.finalization_code {
            return Err(ChvoteError::Selections(format!(
                "voter {voter}: the finalization code is not the card's"
            )));
        }
        v.secrets = None;
        Ok(v.selections.clone())
    }
}

/// Each authority's answer (a list of one item, in authority order), decoded; one that does not
/// decode, or is not one item, names its authority.
fn one_each<T>(
    payloads: &[&[u8]],
    decode: impl Fn(&[u8]) -> Result<Vec<T>, ChvoteError>,
) -> Result<Vec<T>, ChvoteError> {
    let bad = |authority, reason: String| ChvoteError::BadResponse { authority, reason };
    payloads
        .iter()
        .enumerate()
        .map(|(j, bytes)| {
            let mut one = decode(bytes).map_err(|e| bad(j, e.to_string()))?;
            match one.len() {
                1 => Ok(one.remove(0)),
                n => Err(bad(j, format!("{n} items, not one"))),
            }
        })
        .collect()
}

/// Every authority's decryption share decoded, in authority order; one that does not decode
/// names its authority.
fn decode_shares(
    params: &Params,
    shares: &[&[u8]],
) -> Result<Vec<votum_mixnet::decrypt::DecryptionShare<ModpGroup>>, ChvoteError> {
    shares
        .iter()
        .enumerate()
        .map(|(j, b)| {
            rec::decode_share(params, b).map_err(|e| ChvoteError::Decryption {
                authority: j,
                reason: e.to_string(),
            })
        })
        .collect()
}

/// The board's last step: every decryption share checked against its authority's key share,
/// the plaintexts decoded and counted: the `result` payload and the counts.
pub fn tally_result(
    board: &PublicBoard,
    input: &[u8],
    shuffles: &[&[u8]],
    shares: &[&[u8]],
) -> Result<(Vec<u8>, Vec<u64>, u64), ChvoteError> {
    let params = &board.params;
    let n = rec::decode_input(params, input, &mut OsRng)?.len();
    let last = match shuffles.last() {
        Some(bytes) => rec::decode_shuffle(params, bytes, n, &mut OsRng)?.0,
        None => return Err(ChvoteError::Parameters("no shuffle".into())),
    };
    let shares = decode_shares(params, shares)?;
    let plaintexts = tally::decrypt(board, &last, &shares)?;
    let t = tally::tally(board, &plaintexts);
    Ok((rec::result_bytes(&t.counts, t.invalid), t.counts, t.invalid))
}
