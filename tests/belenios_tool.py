"""Belenios elections held with Debian's belenios-tool 2.0 in a scratch folder (spec/94).

The tests and `make bench-other-records` use it to make the archives that `votum verify` checks, honest and
tampered, and to ask `belenios-tool election verify` for its own verdict on the same archive. Everything here
runs belenios-tool as a separate program: no Belenios code is in the project.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

TOOL = shutil.which("belenios-tool")

# one question with blank allowed and one "1 to 2 of 3", as Belenios' own demo has
QUESTIONS = {
    "description": "votum's test election",
    "name": "votum test",
    "questions": [
        {"question": "Q1", "answers": ["a", "b"], "min": 0, "max": 1, "blank": True},
        {"question": "Q2", "answers": ["x", "y", "z"], "min": 1, "max": 2},
    ],
}

# the mixnet shape (spec/94.6): Q1 as above, Q2 a ranking of three answers (non-homomorphic); the stored
# mixnet election and the mixnet benchmark use it
MIXNET_QUESTIONS = {
    "description": "votum's test election with a mixnet question",
    "name": "votum mixnet test",
    "questions": [
        {"question": "Q1", "answers": ["a", "b"], "min": 0, "max": 1, "blank": True},
        {"type": "NonHomomorphic", "value": {"question": "rank", "answers": ["x", "y", "z"]}},
    ],
}


def run(
    args: Sequence[str], cwd: Path, stdin: str | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """belenios-tool with `args` in `cwd` (its archive commands use the one `.bel` there)."""
    if TOOL is None:
        raise RuntimeError("belenios-tool is not installed (make setup installs Debian's package)")
    env = dict(os.environ, BELENIOS_USE_URANDOM="1")
    return subprocess.run(
        [TOOL, *args], cwd=cwd, input=stdin, capture_output=True, text=True, check=check, env=env, timeout=900
    )


@dataclass
class Election:
    """A Belenios election in `dir`: its private credentials, the trustees' private files, and its archive."""

    dir: Path
    uuid: str
    group: str
    credentials: list[str]
    singles: list[Path] = field(default_factory=list)
    threshold: list[tuple[Path, Path]] = field(default_factory=list)

    @property
    def archive(self) -> Path:
        return self.dir / f"{self.uuid}.bel"

    def ballot(self, voter: int, choices: list[list[int]]) -> str:
        """A ballot of voter `voter` (from 0), made by belenios-tool."""
        cred = self.dir / f"cred{voter}.txt"
        cred.write_text(self.credentials[voter] + "\n")
        plain = self.dir / f"plain{voter}.json"
        plain.write_text(json.dumps(choices) + "\n")
        out = run(
            ["election", "generate-ballot", "--privcred", str(cred), "--ballot", str(plain)], self.dir
        ).stdout
        return out.strip()

    def add(self, kind: str, text: str = "") -> None:
        """Appends an event of type `kind` (payload `text`) with belenios-tool, which does not check it."""
        run(["archive", "add-event", f"--type={kind}"], self.dir, stdin=text)

    def vote(self, voter: int, choices: list[list[int]]) -> str:
        ballot = self.ballot(voter, choices)
        self.add("Ballot", ballot)
        return ballot

    def encrypted_tally(self) -> str:
        return run(["election", "compute-encrypted-tally"], self.dir).stdout

    def partial(self, owner: int) -> str:
        """Trustee `owner`'s partial decryption (from 1: the single trustees, then the threshold group's)."""
        if owner <= len(self.singles):
            key = self.singles[owner - 1]
            args = ["election", "decrypt", "--privkey", str(key), "--trustee-id", str(owner)]
        else:
            k, dk = self.threshold[owner - len(self.singles) - 1]
            args = [
                "election",
                "decrypt-threshold",
                "--key",
                str(k),
                "--decryption-key",
                str(dk),
                "--trustee-id",
                str(owner),
            ]
        return run(args, self.dir).stdout

    def result(self) -> str:
        return run(["election", "compute-result"], self.dir).stdout

    def shuffle(self, owner: int) -> str:
        """Trustee `owner`'s shuffle of the mixnet questions' ciphertexts (after the last shuffle posted)."""
        return run(["election", "shuffle", f"--trustee-id={owner}"], self.dir).stdout

    def tally(self, owners: Sequence[int] | None = None, shufflers: Sequence[int] = ()) -> None:
        """Ends the ballots; posts the encrypted tally, the shuffles of `shufflers` in order (an election with
        a mixnet question needs at least one), the partial decryptions of `owners` (all by default) and the
        result."""
        self.add("EndBallots")
        self.add("EncryptedTally", self.encrypted_tally())
        for owner in shufflers:
            self.add("Shuffle", self.shuffle(owner))
        if shufflers:
            self.add("EndShuffles")
        everyone = range(1, len(self.singles) + len(self.threshold) + 1)
        for owner in owners if owners is not None else everyone:
            self.add("PartialDecryption", self.partial(owner))
        self.add("Result", self.result())

    def verify(self) -> tuple[bool, str]:
        """belenios-tool's verdict on the archive: (passed, what it printed)."""
        done = run(["election", "verify"], self.dir, check=False)
        return done.returncode == 0, done.stdout + done.stderr

    def copy(self, dest: Path) -> Election:
        """The election in another folder (for a tampered copy)."""
        shutil.copytree(self.dir, dest)
        return Election(
            dest,
            self.uuid,
            self.group,
            self.credentials,
            [dest / p.name for p in self.singles],
            [(dest / k.name, dest / d.name) for k, d in self.threshold],
        )


def setup(
    dir: Path,
    *,
    group: str = "BELENIOS-2048",
    weights: Sequence[int] = (1, 1, 1),
    singles: int = 1,
    threshold: tuple[int, int] | None = None,
    questions: dict | None = None,
) -> Election:
    """A new election in `dir` (made, must be empty): one voter per weight, `singles` single trustees, and an
    optional threshold group of `threshold` = (size, needed) trustees; its archive holds the setup."""
    dir.mkdir(parents=True, exist_ok=True)
    g = ["--group", group]
    uuid = run(["setup", "generate-token"], dir).stdout.strip()
    (dir / "voters.txt").write_text("".join(f"v{i}@example.org,v{i},{w}\n" for i, w in enumerate(weights)))
    run(["setup", "generate-credentials", "--uuid", uuid, *g, "--file", "voters.txt"], dir)
    next(dir.glob("*.pubcreds")).rename(dir / "public_creds.json")
    privcreds = next(dir.glob("*.privcreds"))
    # "v0@example.org,v0,1 XXX-XXX-…" per line, in the file's order
    by_voter = dict(line.rsplit(" ", 1) for line in privcreds.read_text().splitlines())
    creds = [by_voter[f"v{i}@example.org,v{i},{w}"] for i, w in enumerate(weights)]
    privcreds.unlink()
    election = Election(dir, uuid, group, creds)
    if threshold is not None:
        size, needed = threshold
        tt = ["setup", "generate-trustee-key-threshold", *g]
        for _ in range(size):
            run([*tt, "--step", "1"], dir)
        certs = sorted(dir.glob("*.cert"))
        (dir / "certs.jsons").write_text("".join(c.read_text() for c in certs))
        run([*tt, "--certs", "certs.jsons", "--step", "2"], dir)
        keys = sorted(dir.glob("*.key"))
        polys = "".join(
            run(
                [*tt, "--certs", "certs.jsons", "--key", k.name, "--step", "3", "--threshold", str(needed)],
                dir,
            ).stdout
            for k in keys
        )
        (dir / "polynomials.jsons").write_text(polys)
        run([*tt, "--certs", "certs.jsons", "--step", "4", "--polynomials", "polynomials.jsons"], dir)
        outs = ""
        for k in keys:
            vinput = (dir / f"{k.stem}.vinput").read_text()
            outs += run(
                [*tt, "--certs", "certs.jsons", "--key", k.name, "--step", "5"], dir, stdin=vinput
            ).stdout
        threshold_json = run(
            [*tt, "--certs", "certs.jsons", "--step", "6", "--polynomials", "polynomials.jsons"],
            dir,
            stdin=outs,
        )
        (dir / "threshold.json").write_text(threshold_json.stdout)
        # the group's trustees are numbered in the certificates' order (certs.jsons); the keys sort alike
        election.threshold = [(k, dir / f"{k.stem}.dkey") for k in keys]
    for _ in range(singles):
        before = set(dir.glob("*.privkey"))
        run(["setup", "generate-trustee-key", *g], dir)
        election.singles += sorted(set(dir.glob("*.privkey")) - before)
    (dir / "public_keys.jsons").write_text(
        "".join(p.with_suffix(".pubkey").read_text() for p in election.singles)
    )
    run(["setup", "make-trustees"], dir)
    (dir / "template.json").write_text(json.dumps(questions or QUESTIONS))
    run(["setup", "make-election", "--uuid", uuid, *g, "--template", "template.json"], dir)
    run(["archive", "init"], dir)
    for name in (
        "election.json",
        "trustees.json",
        "public_creds.json",
        "public_keys.jsons",
        "threshold.json",
    ):
        (dir / name).unlink(missing_ok=True)
    return election


def entries(archive: Path) -> list[tuple[str, bytes]]:
    """The archive's entries in order: (name, bytes)."""
    with tarfile.open(archive, format=tarfile.USTAR_FORMAT) as tar:
        out = []
        for member in tar.getmembers():
            f = tar.extractfile(member)
            out.append((member.name, f.read() if f is not None else b""))
        return out


# --- tampering: a changed entry, with every name and hash that depends on it remade ----------------------

BELENIOS_2048 = {
    "p": int(
        "20694785691422546401013643657505008064922989295751104097100884787057374219242717401922237254497684338129066633138"
        "07895840496005438963628979639303877390572280360597374942767137677761889858987273586504908116709931053586778098003"
        "07904916540637771737641986785272734744763418356000356983051931442845617019110007867373073335641239717328979132404"
        "74578834468260652327974647951137672658693582180046317922073668860052627186363386088796882120769432366149491002923"
        "44434637322214588410058642105024212036543356120132048111885240873107701415166620016231317716937218924807850771182"
        "7842317498073276598828825169183103125680162072880719"
    ),
    "g": int(
        "24023526775018522092276877035323999327122876573783649165100753187876632741463532193202856761552696787996946682987"
        "49389095083896573425601900601068477164491735474137283104610458681314511781646755400527402889846139864532661215055"
        "79709716201616827031288643245666383486363578210615491841998253431518974065818686865115135857641013888221539601604"
        "32288436039309893336627728484065931384060102316750957637779826651036068224066350766977640253462537730851331734951"
        "94248967754052573659049492477631475991575198775177711481490920456600205478127054728238140972518639858334115700568"
        "353695553423781475582491896050296680037745308460627"
    ),
    "q": 78571733251071885079927659812671450121821421258408794611510081919805623223441,
}
RFC_3526_2048_P = int(
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B"
    "302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE6"
    "49286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F83655D23DCA3AD961C62F356208552BB9ED529077096966D"
    "670C354E4ABC9804F1746C08CA18217C32905E462E36CE3BE39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF695581718"
    "3995497CEA956AE515D2261898FA051015728E5A8AACAA68FFFFFFFFFFFFFFFF",
    16,
)
GROUPS = {
    "BELENIOS-2048": BELENIOS_2048,
    "RFC-3526-2048": {"p": RFC_3526_2048_P, "g": 2, "q": (RFC_3526_2048_P - 1) // 2},
}


def header(name: str, size: int, mtime: int) -> bytes:
    """A tar header block as Belenios writes it (old-style: name, mode, uid, gid, size, mtime, checksum,
    type)."""
    block = bytearray(512)
    block[0 : len(name)] = name.encode()
    block[100:107] = b"0000644"
    block[108:115] = b"0000000"
    block[116:123] = b"0000000"
    block[124:135] = b"%011o" % size
    block[136:147] = b"%011o" % mtime
    block[148:156] = b" " * 8
    block[156:157] = b"0"
    block[148:156] = b"%06o\0 " % sum(block)
    return bytes(block)


def write_archive(path: Path, entries: list[tuple[str, bytes, int]]) -> None:
    """Writes (name, bytes, mtime) entries as a Belenios archive."""
    with path.open("wb") as f:
        for name, data, mtime in entries:
            f.write(header(name, len(data), mtime))
            f.write(data)
            f.write(b"\0" * (-len(data) % 512))


def read_archive(path: Path) -> list[tuple[str, bytes, int]]:
    with tarfile.open(path) as tar:
        out = []
        for m in tar.getmembers():
            f = tar.extractfile(m)
            out.append((m.name, f.read() if f is not None else b"", int(m.mtime)))
        return out


def roles(entries: list[tuple[str, bytes, int]]) -> dict[str, str]:
    """What each data entry is (by its hash): election, trustees, credentials, setup, ballot, sized_tally,
    tally, owned_shuffle, shuffle, owned_partial, partial, result."""
    role: dict[str, str] = {}
    for name, data, _ in entries:
        if not name.endswith(".event.json"):
            continue
        event = json.loads(data)
        payload = event.get("payload")
        kind = {
            "Setup": "setup",
            "Ballot": "ballot",
            "EncryptedTally": "sized_tally",
            "PartialDecryption": "owned_partial",
            "Result": "result",
            "Shuffle": "owned_shuffle",
        }.get(event["type"])
        if payload and kind:
            role[payload] = kind
    for name, data, _ in entries:
        h = name.split(".")[0]
        if role.get(h) == "setup":
            setup_data = json.loads(data)
            for k in ("election", "trustees", "credentials"):
                role[setup_data[k]] = k
        elif role.get(h) == "sized_tally":
            role[json.loads(data)["encrypted_tally"]] = "tally"
        elif role.get(h) == "owned_partial":
            role[json.loads(data)["payload"]] = "partial"
        elif role.get(h) == "owned_shuffle":
            role[json.loads(data)["payload"]] = "shuffle"
    return role


def tamper(src: Path, dest: Path, role: str, change, nth: int = 0, rehash: bool = True) -> None:
    """A copy of archive `src` at `dest` whose `nth` entry of `role` is `change(bytes)`. With `rehash`, every
    name and hash that depends on it is remade (what a liar who controls the server can do); without, only the
    bytes change."""
    entries = read_archive(src)
    role_of = roles(entries)
    renamed: dict[str, str] = {}
    seen = 0
    out = []
    for name, data, mtime in entries:
        if name == "BELENIOS":
            out.append((name, data, mtime))
            continue
        old, kind = name.split(".", 1)
        for a, b in renamed.items():
            data = data.replace(a.encode(), b.encode())
        if role_of.get(old) == role:
            if seen == nth:
                data = change(data)
            seen += 1
        new = hashlib.sha256(data).hexdigest() if rehash else old
        if new != old:
            renamed[old] = new
        out.append((f"{new}.{kind}", data, mtime))
    write_archive(dest, out)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode().rstrip("=")


def secret(credential: str, uuid: str, q: int) -> int:
    """A private credential's secret exponent (Belenios spec 4.8: PBKDF2-HMAC-SHA256, the uuid as salt)."""
    raw = hashlib.pbkdf2_hmac("sha256", credential.encode(), uuid.encode(), 1000, 32)
    return int.from_bytes(raw, "big") % q


def resign(ballot: dict, credential: str, uuid: str, group: str) -> bytes:
    """`ballot` signed again with `credential`, as a cheating voting client that holds the credential can."""
    p, g, q = GROUPS[group]["p"], GROUPS[group]["g"], GROUPS[group]["q"]
    body = {k: v for k, v in ballot.items() if k != "signature"}
    digest = b64(hashlib.sha256(json.dumps(body, separators=(",", ":")).encode()).digest())
    s = secret(credential, uuid, q)
    w = int.from_bytes(os.urandom(64), "big") % q
    commitment = pow(g, w, p)
    challenge = int(hashlib.sha256(f"sig|{digest}|{commitment}".encode()).hexdigest(), 16) % q
    response = (w - s * challenge) % q
    body["signature"] = {"hash": digest, "proof": {"challenge": str(challenge), "response": str(response)}}
    return json.dumps(body, separators=(",", ":")).encode()


def bump(digits: str) -> str:
    """A decimal string with its last digit changed."""
    return digits[:-1] + str((int(digits[-1]) + 1) % 10)
