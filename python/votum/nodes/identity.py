"""Node identities (spec/95.1): the key file (Ed25519 for TLS and envelope signatures, X25519 for sealing, a
self-signed certificate), the public card, fingerprints people can read aloud, and sealed boxes (spec/95.6).

Private keys live in OpenSSL objects (`cryptography`), which clear their memory when freed; they are never
held as Python bytes after loading, and never appear in a repr or a log."""

from __future__ import annotations

import base64
import ctypes
import datetime
import json
import os
import ssl
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hpke, serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.x509.oid import NameOID

from votum.channels import NodeSigner, make_node_id
from votum.nodes.errors import KeyFileError, SealError

KEY_FILE = "key.pem"
CARD_FILE = "card.json"
ALPN = "votum-node/2"
SEAL_TAG = b"votum-node/seal/v1\0"
_SUITE = hpke.Suite(hpke.KEM.X25519, hpke.KDF.HKDF_SHA256, hpke.AEAD.CHACHA20_POLY1305)
_RAW = (serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def _wipe(secret: bytes) -> None:
    """Overwrites the buffer of a bytes object nobody else holds (the one copy of a key seed that passes
    through Python on its way to native code)."""
    ctypes.memset(ctypes.c_char_p(secret), 0, len(secret))


def _envelope_signer(key: Ed25519PrivateKey) -> NodeSigner:
    """The native signer of `key`: envelopes are signed there (about twice OpenSSL's speed, spec/95.3); the
    seed is wiped from the Python buffer it was copied through."""
    seed = key.private_bytes_raw()
    try:
        return NodeSigner(seed)
    finally:
        _wipe(seed)


def fingerprint(node_id: bytes) -> str:
    """The first 20 bytes of a node id in base32, as eight groups of four (spec/95.1)."""
    text = base64.b32encode(node_id[:20]).decode()
    return "-".join(text[i : i + 4] for i in range(0, 32, 4))


def normalise_fingerprint(text: str) -> str:
    """A fingerprint as typed by a person (any case, spaces or dashes) in its canonical form."""
    raw = "".join(ch for ch in text.upper() if ch.isalnum())
    if len(raw) != 32:
        raise KeyFileError(f"a fingerprint has 32 letters and digits, got {len(raw)}: {text!r}")
    return "-".join(raw[i : i + 4] for i in range(0, 32, 4))


@dataclass(frozen=True)
class Card:
    """A node's public identity: what peers keep in their keystore."""

    name: str
    address: str | None
    signing_key: bytes
    sealing_key: bytes
    certificate: str
    node_id: bytes = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if len(self.signing_key) != 32 or len(self.sealing_key) != 32:
            raise KeyFileError(f"card {self.name!r}: public keys are 32 bytes each")
        object.__setattr__(self, "node_id", make_node_id(self.signing_key, self.sealing_key))

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.node_id)

    def host_port(self) -> tuple[str, int]:
        if not self.address:
            raise KeyFileError(f"card {self.name!r} has no address to dial")
        host, _, port = self.address.rpartition(":")
        if not host or not port.isdigit():
            raise KeyFileError(f"card {self.name!r}: address {self.address!r} is not HOST:PORT")
        return host.strip("[]"), int(port)

    def to_dict(self) -> dict[str, object]:
        return {
            "version": 1,
            "name": self.name,
            "address": self.address,
            "signing_key": self.signing_key.hex(),
            "sealing_key": self.sealing_key.hex(),
            "certificate": self.certificate,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"

    @staticmethod
    def from_dict(data: object, check: bool = True) -> Card:
        """Reads a card; `check` also proves that the certificate is the signing key's own (spec/95.1)."""
        if not isinstance(data, dict) or data.get("version") != 1:
            raise KeyFileError("a node card is a JSON object with version 1")
        try:
            card = Card(
                name=str(data["name"]),
                address=None if data.get("address") is None else str(data["address"]),
                signing_key=bytes.fromhex(str(data["signing_key"])),
                sealing_key=bytes.fromhex(str(data["sealing_key"])),
                certificate=str(data["certificate"]),
            )
        except (KeyError, ValueError) as e:
            raise KeyFileError(f"a node card lacks or garbles a field: {e}") from None
        if check:
            card.check_certificate()
        return card

    @staticmethod
    def from_json(text: str) -> Card:
        try:
            data = json.loads(text)
        except ValueError as e:
            raise KeyFileError(f"a node card is not JSON: {e}") from None
        return Card.from_dict(data)

    def check_certificate(self) -> None:
        try:
            cert = x509.load_pem_x509_certificate(self.certificate.encode())
        except ValueError as e:
            raise KeyFileError(f"card {self.name!r}: the certificate does not parse: {e}") from None
        key = cert.public_key()
        if not isinstance(key, Ed25519PublicKey) or key.public_bytes(*_RAW) != self.signing_key:
            raise KeyFileError(f"card {self.name!r}: the certificate is not for the card's signing key")
        try:
            key.verify(cert.signature, cert.tbs_certificate_bytes)
        except InvalidSignature:
            raise KeyFileError(
                f"card {self.name!r}: the certificate's self-signature does not verify"
            ) from None
        try:
            is_ca = cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
        except x509.ExtensionNotFound:
            is_ca = False
        if is_ca:
            raise KeyFileError(
                f"card {self.name!r}: the certificate may sign other certificates (CA:TRUE, made by votum "
                "before spec/95.1 forbade it); make a new identity with `votum node keygen`, trust its card"
            )


def signing_key_of_certificate(der: bytes) -> bytes:
    """The raw Ed25519 key of a peer's certificate as received in the handshake."""
    key = x509.load_der_x509_certificate(der).public_key()
    if not isinstance(key, Ed25519PublicKey):
        raise KeyFileError("a node certificate holds an Ed25519 key")
    return key.public_bytes(*_RAW)


def _certificate(name: str, key: Ed25519PrivateKey, node_id: bytes) -> str:
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"votum node {name}")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(int.from_bytes(node_id[:16], "big") >> 1 or 1)
        .not_valid_before(datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc))
        .not_valid_after(datetime.datetime(9999, 12, 31, tzinfo=datetime.timezone.utc))
        # no CA: the pinned certificate must not be able to vouch for any other key in a handshake
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, None)
    )
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def keygen(home: Path, name: str, address: str | None, passphrase: bytes | None = None) -> Card:
    """Writes a new identity to `home` (key.pem with mode 0600, card.json) and returns its card. Refuses to
    overwrite an existing key file."""
    if not name or len(name) > 64 or not all(ch.isalnum() or ch in "-_." for ch in name):
        raise KeyFileError("a node name is 1-64 letters, digits, '-', '_' or '.'")
    home.mkdir(parents=True, exist_ok=True)
    signing = Ed25519PrivateKey.generate()
    sealing = X25519PrivateKey.generate()
    node_id = make_node_id(signing.public_key().public_bytes(*_RAW), sealing.public_key().public_bytes(*_RAW))
    pem = _certificate(name, signing, node_id)
    card = Card(
        name,
        address,
        signing.public_key().public_bytes(*_RAW),
        sealing.public_key().public_bytes(*_RAW),
        pem,
    )
    enc: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(passphrase) if passphrase else serialization.NoEncryption()
    )
    fmt = (serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, enc)
    path = home / KEY_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise KeyFileError(
            f"{path} exists: a node keeps its identity (remove it by hand to start over)"
        ) from None
    with os.fdopen(fd, "wb") as f:
        f.write(signing.private_bytes(*fmt))
        f.write(sealing.private_bytes(*fmt))
        f.write(pem.encode())
    (home / CARD_FILE).write_text(card.to_json())
    return card


class Identity:
    """This node: its card and its private keys (held by OpenSSL), and its TLS contexts."""

    def __init__(self, home: Path, passphrase: bytes | None = None) -> None:
        self.home = home
        path = home / KEY_FILE
        try:
            mode = path.stat().st_mode & 0o777
            data = path.read_bytes()
        except OSError as e:
            raise KeyFileError(f"cannot read the key file {path}: {e.strerror}") from None
        if mode & 0o077:
            raise KeyFileError(f"{path} is readable by others (mode {mode:o}); chmod 600 it")
        blocks = [b"-----BEGIN" + part for part in data.split(b"-----BEGIN")[1:]]
        keys = [b for b in blocks if b"PRIVATE KEY" in b.split(b"\n", 1)[0]]
        certs = [b for b in blocks if b.startswith(b"-----BEGIN CERTIFICATE")]
        if len(keys) != 2 or len(certs) != 1:
            raise KeyFileError(f"{path}: expected two private keys and one certificate")
        try:
            signing = serialization.load_pem_private_key(keys[0], passphrase)
            sealing = serialization.load_pem_private_key(keys[1], passphrase)
        except TypeError as e:  # a passphrase given for a clear key, or none for an encrypted one
            raise KeyFileError(f"{path}: {e}") from None
        except ValueError:
            raise KeyFileError(f"{path}: wrong passphrase or damaged key") from None
        if not isinstance(signing, Ed25519PrivateKey) or not isinstance(sealing, X25519PrivateKey):
            raise KeyFileError(f"{path}: expected an Ed25519 key then an X25519 key")
        self._signing = _envelope_signer(signing)
        self._sealing = sealing
        try:
            card_data = json.loads((home / CARD_FILE).read_text())
            address = card_data.get("address") if isinstance(card_data, dict) else None
            name = str(card_data["name"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise KeyFileError(f"cannot read {home / CARD_FILE}: {e}") from None
        self.card = Card(
            name,
            address,
            signing.public_key().public_bytes(*_RAW),
            sealing.public_key().public_bytes(*_RAW),
            certs[0].decode(),
        )
        self.card.check_certificate()
        self._key_path = path
        self._passphrase = passphrase

    def __repr__(self) -> str:
        return f"Identity({self.card.name!r}, {self.card.fingerprint})"

    @property
    def node_id(self) -> bytes:
        return self.card.node_id

    @property
    def name(self) -> str:
        return self.card.name

    def sign_record(self, statement: bytes) -> bytes:
        """This node's signature on a statement about an entry it posts to a record (spec/95.3: the record
        domain, never an envelope's)."""
        return self._signing.sign_record(statement)

    def sign_header(self, header: bytes) -> bytes:
        """The envelope signature of a frame header (spec/95.3)."""
        return self._signing.sign_header(header)

    def tls_context(
        self, server: bool, trusted_pem: str, context_class: type[ssl.SSLContext] = ssl.SSLContext
    ) -> ssl.SSLContext:
        """A TLS 1.3 context presenting this node's certificate and trusting exactly `trusted_pem` (95.2)."""
        ctx = context_class(ssl.PROTOCOL_TLS_SERVER if server else ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.set_alpn_protocols([ALPN])
        passphrase = self._passphrase
        ctx.load_cert_chain(
            self._key_path, self._key_path, password=(lambda: passphrase) if passphrase else None
        )
        if trusted_pem:
            ctx.load_verify_locations(cadata=trusted_pem)
        return ctx

    def forget_passphrase(self) -> None:
        """Drops the passphrase once the TLS contexts are built (a running node keeps them)."""
        self._passphrase = None

    def open_sealed(self, sender: Card, purpose: str, box: bytes) -> bytes:
        """Opens a box sealed to this node by `sender` for `purpose` (spec/95.6)."""
        info = SEAL_TAG + sender.node_id + self.node_id + purpose.encode()
        try:
            return _SUITE.decrypt(box, self._sealing, info=info)
        except Exception:
            raise SealError(f"a box from {sender.name} for {purpose!r} does not open", sender.name) from None

    def seal_for(self, recipient: Card, purpose: str, data: bytes) -> bytes:
        """Seals `data` to `recipient` for `purpose`: only its X25519 key opens it (spec/95.6)."""
        info = SEAL_TAG + self.node_id + recipient.node_id + purpose.encode()
        return _SUITE.encrypt(data, X25519PublicKey.from_public_bytes(recipient.sealing_key), info=info)
