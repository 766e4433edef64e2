"""Long native calls stay under the caller's control: an exception from a progress callback, or
Ctrl-C, stops a verification or a mixnet election and is raised, never swallowed; a guardian's lock
is never waited for with the GIL held."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path

import pytest
import votum
from votum.eg import manifest_from_names
from votum.mix import MixConfig, run_mix_election
from votum.verifier import verify

RECORD = Path(__file__).resolve().parent.parent / "vectors" / "verify" / "record"


class Stop(Exception):
    pass


def test_a_progress_callback_that_raises_stops_the_verification() -> None:
    calls: list[str] = []

    def progress(stage: str, n: int) -> None:
        calls.append(stage)
        if len(calls) == 3:
            raise Stop(stage)

    with pytest.raises(Stop):
        verify(RECORD, progress)
    assert len(calls) == 3, "nothing more was read after the exception"
    # and without a failing callback the same record passes
    assert verify(RECORD).passed


def test_ctrl_c_stops_the_verification() -> None:
    calls: list[str] = []

    def progress(stage: str, n: int) -> None:
        calls.append(stage)
        if len(calls) == 2:
            signal.raise_signal(signal.SIGINT)  # as if the user pressed Ctrl-C now

    # Python's own Ctrl-C handler, whatever this process inherited: a test run started in the
    # background by a non-interactive shell begins with SIGINT ignored, and the signal would be lost
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            verify(RECORD, progress)
    finally:
        signal.signal(signal.SIGINT, inherited)
    assert len(calls) == 2


def test_a_progress_callback_that_raises_stops_a_mixnet_election(tmp_path: Path) -> None:
    steps: list[str] = []

    def progress(step: str) -> None:
        steps.append(step)
        if step == "mixing":
            raise Stop(step)

    config = MixConfig(voters=20, mixers=2, trustees=2, quorum=2)
    with pytest.raises(Stop):
        run_mix_election(config, progress, record=tmp_path / "mix.vmix")
    assert steps[-1] == "mixing" and "decryption" not in steps


def test_reading_a_guardian_during_its_long_decryption_leaves_python_running() -> None:
    """One thread decrypts with a guardian (holding its lock for about a second, GIL released);
    another then reads `guardian_id`, which waits for that lock. The main thread, waiting for the
    reader to begin, must get the GIL back while the decryption still runs. When the lock was
    waited for with the GIL held, nothing in Python ran until the decryption had ended."""
    em = votum.EgManifest.from_json(
        json.dumps(manifest_from_names(["Party"], [f"candidate {i}" for i in range(400)]))
    )
    guardian = votum.EgGuardian("guardian-1", 1, 1, 1)
    context = votum.EgContext([guardian.public_record()], 1, em)
    box = votum.EgBallotBox(em, context.elgamal_public_key, context.extended_base_hash)
    target = votum.EgDecryptionTarget.from_ballot_box(box, em)
    decrypting, reading, decrypted = threading.Event(), threading.Event(), threading.Event()

    def decrypt() -> None:
        decrypting.set()
        guardian.decryption_shares(target, context.extended_base_hash)
        decrypted.set()

    def read() -> None:
        reading.set()
        assert guardian.guardian_id == "guardian-1"

    decrypter = threading.Thread(target=decrypt)
    decrypter.start()
    decrypting.wait()
    reader = threading.Thread(target=read)
    reader.start()
    reading.wait()
    # the reader is now in guardian_id, behind the decryption's lock; this line runs at once
    assert not decrypted.is_set(), "Python was frozen until the decryption ended"
    decrypter.join()
    reader.join()
