"""An election's board written out as its record: a votum archive (spec/70), the record kinds in the
archive's order and board order within a kind; a 2.1 election's, its record directory (spec/80.11). The
service's `/record`, the pages' "verify now" child and the tools use it; it reads the store only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from votum.eg2 import Eg21RecordWriter
from votum.record import LAYOUT, ArchiveSink

RECORD_KINDS = [kind for kind, _folder, _name in LAYOUT]


def export_record(store: Any, election_id: str, out: Path, upto: int | None = None) -> int:
    """Writes the election's record, as on its board, to a votum archive at `out` (spec/70): the record
    kinds in the archive's order, board order within a kind; with `upto`, only the entries up to that
    board sequence number (the head an export covers). Returns the number of documents."""
    store.election(election_id)
    sink = ArchiveSink(out)
    n = 0
    try:
        for kind in RECORD_KINDS:
            for e in store.iter_entries(election_id, [kind]):
                if upto is not None and e.seq > upto:
                    continue
                sink.add(kind, e.name, e.text())
                n += 1
    except BaseException:
        sink.abort()  # no partial archive at `out`
        raise
    sink.close()
    return n


def export_record_21(store: Any, election_id: str, out: Path, upto: int | None = None) -> None:
    """Writes a 2.1 election's record, as on its board, into the new directory `out` (spec/80.11); with
    `upto`, only the entries up to that board sequence number."""
    writer = Eg21RecordWriter(out)
    try:
        for e in store.iter_entries(election_id):
            if upto is not None and e.seq > upto:
                break
            writer.take(e.kind, e.name, e.payload or b"")
    finally:
        writer.close()
