//! The split-value record file (spec/97.8): the board in the board-file layout of
//! `votum_hash::board_file` behind the magic `VOTUMSVR`.

pub use votum_hash::board_file::{BoardReader, BoardWriter, Entry};

/// The first bytes of every split-value record.
pub const MAGIC: &[u8; 8] = b"VOTUMSVR";
/// How errors name the format.
pub const WHAT: &str = "votum split-value record";

/// Whether the file at `path` starts like a split-value record.
pub fn is_sv_record(path: &std::path::Path) -> bool {
    votum_hash::board_file::has_magic(path, MAGIC)
}
