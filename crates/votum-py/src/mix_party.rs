//! A mixnet election's parties in processes of their own (spec/91.9), for `votum.parties.mix`:
//! `MixParty` (an authority or the voters' client, with its own copy of the board),
//! `MixBoardFile` (the controller's board, writing the record), `mix_parameters`.

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use votum_group::{Group, GroupId, ModpGroup, Ristretto255};
use votum_mixnet::board::MixBoard;
use votum_mixnet::count::count;
use votum_mixnet::election::decrypt_rows;
use votum_mixnet::params::{random_rows, Parameters};
use votum_mixnet::party::{MixParty, Role, Signed};
use votum_mixnet::{wire, MixError};

use crate::convert::{release, rng_from};
use crate::errors::NativeError;

fn mix(e: MixError) -> PyErr {
    NativeError::Mix(e).into()
}

fn key32(bytes: &[u8]) -> PyResult<[u8; 32]> {
    <[u8; 32]>::try_from(bytes)
        .map_err(|_| PyErr::from(NativeError::Value("a signing key is 32 bytes")))
}

/// The group a parameters line names (ristretto255 or a modp group).
fn group_of(parameters: &[u8]) -> PyResult<GroupId> {
    Ok(Parameters::decode(parameters).map_err(mix)?.0)
}

/// The `parameters` payload of an election whose authorities' node keys are `signers`
/// (authority a's at a − 1), spec/91.5 and 91.9.
#[pyfunction]
#[pyo3(signature = (group, *, candidates, width, rule, signers, seats = 1, k = None,
    ties = "lower-number", mixers = 3, trustees = 3, quorum = 2, election_id = "mix-election"))]
#[allow(clippy::too_many_arguments)]
pub fn mix_parameters<'py>(
    py: Python<'py>,
    group: &str,
    candidates: usize,
    width: usize,
    rule: &str,
    signers: Vec<Vec<u8>>,
    seats: usize,
    k: Option<usize>,
    ties: &str,
    mixers: usize,
    trustees: usize,
    quorum: usize,
    election_id: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let params = Parameters {
        election_id: election_id.to_owned(),
        width,
        candidates,
        rule: crate::mix::parse_rule(rule, seats, k, width)?,
        ties: crate::mix::parse_ties(ties)?,
        mixers,
        trustees,
        quorum,
        signers: signers.iter().map(|s| key32(s)).collect::<PyResult<_>>()?,
    };
    params.check().map_err(mix)?;
    let id = GroupId::from_name(group).map_err(NativeError::Group)?;
    Ok(PyBytes::new(py, &params.encode_for(id)))
}

enum AnyParty {
    R(Box<MixParty<Ristretto255>>),
    M(Box<MixParty<ModpGroup>>),
}

macro_rules! with_party {
    ($party:expr, $p:ident => $body:expr) => {
        match $party {
            AnyParty::R($p) => $body,
            AnyParty::M($p) => $body,
        }
    };
}

fn signed_dict<'py>(py: Python<'py>, s: &Signed) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("kind", s.kind)?;
    d.set_item("name", &s.name)?;
    d.set_item("payload", PyBytes::new(py, &s.payload))?;
    d.set_item("statement", PyBytes::new(py, &s.statement))?;
    Ok(d)
}

/// One party of a mixnet election (spec/91.9): authority `index` (its node signing key
/// `signing_key`, which the parameters must name in its slot) or, with `index` 0, the voters'
/// client. It acts only on its own copy of the board, once per phase.
#[pyclass(name = "MixParty", module = "votum._native")]
pub struct PyMixParty {
    inner: AnyParty,
}

#[pymethods]
impl PyMixParty {
    #[new]
    #[pyo3(signature = (parameters, index, signing_key = None))]
    fn new(
        py: Python<'_>,
        parameters: Vec<u8>,
        index: usize,
        signing_key: Option<Vec<u8>>,
    ) -> PyResult<Self> {
        let key = signing_key.as_deref().map(key32).transpose()?;
        let role = if index == 0 {
            Role::Voters
        } else {
            Role::Authority(index)
        };
        let inner = match group_of(&parameters)? {
            GroupId::Ristretto255 => AnyParty::R(Box::new(
                release(py, || {
                    MixParty::new(&Ristretto255, &parameters, role, key.as_ref())
                })
                .map_err(mix)?,
            )),
            id => {
                let group = ModpGroup::of_id(id)
                    .ok_or(NativeError::Group(votum_group::GroupError::UnknownGroup))?;
                AnyParty::M(Box::new(
                    release(py, || {
                        MixParty::new(&group, &parameters, role, key.as_ref())
                    })
                    .map_err(mix)?,
                ))
            }
        };
        Ok(Self { inner })
    }

    fn __repr__(&self) -> String {
        let who = with_party!(&self.inner, p => p.role());
        match who {
            Role::Authority(a) => format!("MixParty(authority {a}, secrets redacted)"),
            Role::Voters => "MixParty(voters' client)".into(),
        }
    }

    /// The head of this party's copy of the board.
    fn head<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &with_party!(&self.inner, p => p.head()))
    }

    /// Entries in this party's copy.
    fn entries(&self) -> u64 {
        with_party!(&self.inner, p => p.entries())
    }

    /// Appends the controller's entries [(kind, name, payload)] to this party's copy and
    /// compares its head with the controller's `head`.
    fn sync(
        &mut self,
        py: Python<'_>,
        entries: Vec<(String, String, Vec<u8>)>,
        head: Vec<u8>,
    ) -> PyResult<()> {
        let head =
            key32(&head).map_err(|_| PyErr::from(NativeError::Value("a head is 32 bytes")))?;
        let inner = &mut self.inner;
        release(py, || with_party!(inner, p => p.sync(&entries, &head))).map_err(mix)
    }

    /// Trustee's dealing, once: ({kind, name, payload, statement}, [(trustee j, share bytes)]).
    #[allow(clippy::type_complexity)]
    fn deal<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyDict>, Vec<(u64, Bound<'py, PyBytes>)>)> {
        let inner = &mut self.inner;
        let (signed, shares) = release(py, || {
            let mut rng = rng_from(None)?;
            with_party!(inner, p => p.deal(&mut rng)).map_err(NativeError::Mix)
        })?;
        let shares = shares
            .iter()
            .map(|(j, s)| (*j, PyBytes::new(py, s)))
            .collect();
        Ok((signed_dict(py, &signed)?, shares))
    }

    /// Dealer `dealer`'s share for this trustee, once per dealer.
    fn receive_share(&mut self, py: Python<'_>, dealer: u64, share: Vec<u8>) -> PyResult<()> {
        let inner = &mut self.inner;
        release(
            py,
            || with_party!(inner, p => p.receive_share(dealer, &share)),
        )
        .map_err(mix)
    }

    /// The voters' client's ballots, once: `votes` (one row per voter), or `voters` random rows
    /// when `votes` is None. Returns (the `ballots` payload, the rows cast).
    #[pyo3(signature = (voters, votes = None))]
    fn cast<'py>(
        &mut self,
        py: Python<'py>,
        voters: usize,
        votes: Option<Vec<Vec<u64>>>,
    ) -> PyResult<(Bound<'py, PyBytes>, Vec<Vec<u64>>)> {
        let inner = &mut self.inner;
        let (payload, rows) = release(py, || {
            let mut rng = rng_from(None)?;
            with_party!(inner, p => {
                let rows = votes.unwrap_or_else(|| random_rows(p.parameters(), voters, &mut rng));
                p.cast(&rows, &mut rng).map(|b| (b, rows)).map_err(NativeError::Mix)
            })
        })?;
        Ok((PyBytes::new(py, &payload), rows))
    }

    /// Mixer's shuffle, once: {kind, name, payload, statement}.
    fn shuffle<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let inner = &mut self.inner;
        let s = release(py, || {
            let mut rng = rng_from(None)?;
            with_party!(inner, p => p.shuffle(&mut rng)).map_err(NativeError::Mix)
        })?;
        signed_dict(py, &s)
    }

    /// Trustee's decryption share of the last list, once: {kind, name, payload, statement}.
    fn decrypt<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let inner = &mut self.inner;
        let s = release(py, || {
            let mut rng = rng_from(None)?;
            with_party!(inner, p => p.decrypt(&mut rng)).map_err(NativeError::Mix)
        })?;
        signed_dict(py, &s)
    }
}

enum AnyBoard {
    R(Box<MixBoard<Ristretto255, BufWriter<File>>>),
    M(Box<MixBoard<ModpGroup, BufWriter<File>>>),
}

macro_rules! with_board {
    ($board:expr, $b:ident => $body:expr) => {
        match $board {
            AnyBoard::R($b) => $body,
            AnyBoard::M($b) => $body,
        }
    };
}

/// The controller's board (spec/91.5, 91.9): every entry through the board's checks, written to
/// the record file at `path`. `abort` removes the file; `finish` closes it.
#[pyclass(name = "MixBoardFile", module = "votum._native")]
pub struct PyMixBoardFile {
    board: Option<AnyBoard>,
    path: PathBuf,
}

impl PyMixBoardFile {
    fn board(&mut self) -> PyResult<&mut AnyBoard> {
        self.board
            .as_mut()
            .ok_or_else(|| NativeError::Value("the board is closed").into())
    }
}

fn decrypt_and_count<G: Group>(
    group: &G,
    board: &mut MixBoard<G, BufWriter<File>>,
    shares: &[Vec<u8>],
) -> Result<(Vec<Vec<u64>>, votum_mixnet::count::Outcome), MixError> {
    let shares = shares
        .iter()
        .map(|s| wire::decode_share(group, s))
        .collect::<Result<Vec<_>, _>>()?;
    let datas: Vec<G::Element> = board
        .current()
        .map(|c| c.ciphertexts().iter().map(|c| c.data.clone()).collect())
        .unwrap_or_default();
    let params = board.parameters().clone();
    let rows = decrypt_rows(group, &params, &datas, &shares)?;
    let outcome = count(params.rule, params.ties, params.candidates, &rows);
    board.post_result(&rows, &outcome)?;
    Ok((rows, outcome))
}

#[pymethods]
impl PyMixBoardFile {
    #[new]
    fn new(py: Python<'_>, path: PathBuf, parameters: Vec<u8>) -> PyResult<Self> {
        let (id, params) = Parameters::decode(&parameters).map_err(mix)?;
        let out =
            BufWriter::new(File::create(&path).map_err(|e| mix(MixError::Io(e.to_string())))?);
        let board = release(py, || match id {
            GroupId::Ristretto255 => {
                MixBoard::create(&Ristretto255, &params, out).map(|b| AnyBoard::R(Box::new(b)))
            }
            id => match ModpGroup::of_id(id) {
                Some(g) => MixBoard::create(&g, &params, out).map(|b| AnyBoard::M(Box::new(b))),
                None => Err(MixError::Input("not a group of mix records".into())),
            },
        });
        match board {
            Ok(b) => Ok(Self {
                board: Some(b),
                path,
            }),
            Err(e) => {
                let _ = std::fs::remove_file(&path);
                Err(mix(e))
            }
        }
    }

    /// Posts an entry (kind, name, payload) through the board's checks.
    fn post(&mut self, py: Python<'_>, kind: &str, name: &str, payload: Vec<u8>) -> PyResult<()> {
        let board = self.board()?;
        release(
            py,
            || with_board!(board, b => b.post_bytes(kind, name, &payload).map(|_| ())),
        )
        .map_err(mix)
    }

    fn head<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let h = with_board!(self.board()?, b => b.head());
        Ok(PyBytes::new(py, &h))
    }

    fn entries(&mut self) -> PyResult<u64> {
        Ok(with_board!(self.board()?, b => b.entries()))
    }

    /// The result from the posted shares' payloads (the first quorum of them), posted; returns
    /// the outcome and the decrypted rows (`plaintexts`).
    fn post_result<'py>(
        &mut self,
        py: Python<'py>,
        shares: Vec<Vec<u8>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let board = self.board()?;
        let (rows, outcome) = release(py, || {
            with_board!(board, b => {
                let g = b.group().clone();
                decrypt_and_count(&g, b, &shares)
            })
        })
        .map_err(mix)?;
        let d = crate::mix::outcome_dict(py, &outcome)?;
        d.set_item("plaintexts", rows)?;
        Ok(d)
    }

    /// Closes the record; returns its head.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let board = self
            .board
            .take()
            .ok_or(NativeError::Value("the board is closed"))?;
        let head = with_board!(board, b => b.finish().map(|(h, _, _)| h)).map_err(mix)?;
        Ok(PyBytes::new(py, &head))
    }

    /// Drops the board and removes its file (a run that failed leaves no record).
    fn abort(&mut self) {
        if self.board.take().is_some() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
