"""The frame cutter of a connection (votum.nodes.wire): any split of the byte stream gives the same frames."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from votum.nodes.wire import BUFFER, FrameTimeout, FrameTooLarge, PeerClosed, Wire


class _Transport:
    def __init__(self) -> None:
        self.paused = False
        self.pauses = 0

    def pause_reading(self) -> None:
        assert not self.paused
        self.paused = True
        self.pauses += 1

    def resume_reading(self) -> None:
        assert self.paused
        self.paused = False

    def get_extra_info(self, name: str, default: object = None) -> object:
        return default


def _feed(wire: Wire, data: bytes, cuts: list[int]) -> None:
    """Hands `data` to the wire as TLS would: into the buffers it gives out, in pieces of the sizes `cuts`."""
    i = 0
    k = 0
    while i < len(data):
        buf = wire.get_buffer(-1)
        assert len(buf) > 0
        n = min(len(buf), len(data) - i, cuts[k % len(cuts)])
        k += 1
        buf[:n] = data[i : i + n]
        wire.buffer_updated(n)
        i += n


def _framed(bodies: list[bytes]) -> bytes:
    return b"".join(len(b).to_bytes(4, "big") + b for b in bodies)


sizes = st.one_of(st.integers(1, 300), st.integers(1, 70_000), st.sampled_from([BUFFER - 4, BUFFER, 600_000]))


@settings(max_examples=60, deadline=None)
@given(
    lengths=st.lists(sizes, min_size=1, max_size=12),
    cuts=st.lists(st.integers(1, 300_000), min_size=1, max_size=8),
    seed=st.integers(0, 255),
)
def test_any_split_of_the_stream_gives_the_frames_back(
    lengths: list[int], cuts: list[int], seed: int
) -> None:
    async def main() -> None:
        bodies = [
            bytes([(seed + i + j) % 251 for j in range(min(n, 64))]) * (n // 64) + b"\x07" * (n % 64)
            for i, n in enumerate(lengths)
        ]
        wire = Wire(1 << 20, 1 << 20, queue_frames=len(bodies) + 1)
        wire.connection_made(_Transport())  # type: ignore[arg-type]
        _feed(wire, _framed(bodies), cuts)
        got = [bytes(await wire.read_frame()) for _ in bodies]
        assert got == bodies
        wire.eof_received()
        with pytest.raises(PeerClosed) as e:
            await wire.read_frame()
        assert e.value.partial == 0

    asyncio.run(main())


def test_limits_back_pressure_and_a_peer_closing_mid_frame() -> None:
    async def main() -> None:
        # the first frame is held to the hello's limit, the next ones to the frame limit
        wire = Wire(1000, 10, queue_frames=4)
        t = _Transport()
        wire.connection_made(t)  # type: ignore[arg-type]
        _feed(wire, _framed([b"h" * 10, b"x" * 1000]), [7])
        assert bytes(await wire.read_frame()) == b"h" * 10
        assert bytes(await wire.read_frame()) == b"x" * 1000
        _feed(wire, (1001).to_bytes(4, "big") + b"y" * 20, [100])
        with pytest.raises(FrameTooLarge) as too_large:
            await wire.read_frame()
        assert too_large.value.size == 1001
        # a zero-length frame is refused like an oversize one
        wire = Wire(1000, 1000)
        wire.connection_made(_Transport())  # type: ignore[arg-type]
        _feed(wire, bytes(4), [4])
        with pytest.raises(FrameTooLarge):
            await wire.read_frame()
        # frames nobody reads pause reading; reading them resumes it, and every frame arrives in order
        wire = Wire(1000, 1000, queue_frames=4)
        t = _Transport()
        wire.connection_made(t)  # type: ignore[arg-type]
        _feed(wire, _framed([bytes([i]) * 5 for i in range(6)]), [1000])
        assert t.paused and t.pauses == 1
        assert [bytes(await wire.read_frame())[0] for _ in range(3)] == [0, 1, 2]
        assert t.paused  # three still waiting: more than half the queue
        assert bytes(await wire.read_frame())[0] == 3
        assert not t.paused
        assert [bytes(await wire.read_frame())[0] for _ in range(2)] == [4, 5]
        # the peer closes after half a frame: every whole frame first, then PeerClosed with what was lost
        wire = Wire(1 << 20, 1 << 20)
        wire.connection_made(_Transport())
        _feed(wire, _framed([b"whole"]) + (500_000).to_bytes(4, "big") + b"z" * 300_000, [65536])
        wire.connection_lost(None)
        assert bytes(await wire.read_frame()) == b"whole"
        with pytest.raises(PeerClosed) as closed:
            await wire.read_frame()
        assert closed.value.partial == 300_004
        with pytest.raises(ConnectionResetError):
            wire.write(b"late")

    asyncio.run(main())


def test_a_big_frame_grows_as_it_arrives_and_has_a_deadline() -> None:
    """Issue 43, item 8: four bytes announcing a 64 MiB frame made the node allocate 64 MiB at once,
    with no deadline; 24 connections cost 1.35 GB. The frame's buffer now grows with the bytes that
    arrive, and a frame that does not arrive whole within `frame_seconds` ends the connection."""

    class Closing(_Transport):
        closed = False

        def close(self) -> None:
            self.closed = True

    async def main() -> None:
        wire = Wire(64 << 20, 64 << 20, frame_seconds=0.3)
        t = Closing()
        wire.connection_made(t)  # type: ignore[arg-type]
        _feed(wire, (64 << 20).to_bytes(4, "big") + b"a" * 100, [1 << 20])
        held = len(wire._big or b"")
        assert 0 < held <= 2 << 20, f"{held} bytes held for 100 received"
        # the rest arrives: the frame is whole and as sent
        wire2 = Wire(8 << 20, 8 << 20, frame_seconds=30)
        wire2.connection_made(Closing())  # type: ignore[arg-type]
        body = bytes(range(256)) * (5 << 12)  # 5 MiB
        _feed(wire2, _framed([body, b"after"]), [65536, 300_000, 7])
        assert bytes(await wire2.read_frame()) == body
        assert bytes(await wire2.read_frame()) == b"after"
        # nothing more of the first: after its deadline the connection ends, and the reader says why
        with pytest.raises(FrameTimeout):
            await asyncio.wait_for(wire.read_frame(), 5)
        assert t.closed

    asyncio.run(main())


def test_a_message_of_empty_containers_is_refused_before_it_is_built() -> None:
    """Issue 43, item 17: MessagePack from a split-value controller took 74 times its size once
    decoded. A party's decoder stops past 4 times the message's size (plus 1 MiB)."""
    import msgpack  # type: ignore[import-untyped]
    from votum.nodes import errors as ne
    from votum.nodes.messages import unpack, unpack_list

    bomb = msgpack.packb({"election": "e", "rows": [[] for _ in range(1_000_000)]})
    with pytest.raises(ne.MalformedFrame):
        unpack(bomb)
    with pytest.raises(ne.MalformedFrame):
        unpack_list(msgpack.packb([b""] * 2_000_000))
    honest = {"election": "e", "entries": [b"\x01" * 4096 for _ in range(256)], "head": b"\x02" * 32}
    assert unpack(msgpack.packb(honest)) == honest
