"""A trusted node that mints certificates (issue 45, finding 11; spec/95.1, docs/adr/0005).

A node's certificate is self-signed and pinned: the TLS handshake itself must accept exactly the keystore's
certificates. If a node's certificate could act as a CA, a leaf it signed for any other key would pass the
handshake (the keystore lookup after it would still refuse the key; the claim is that the handshake does)."""

from __future__ import annotations

import datetime
import socket
import ssl
import threading
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.x509.oid import NameOID
from votum.nodes import Identity
from votum.nodes.errors import KeyFileError
from votum.nodes.identity import Card, keygen


def _issuer_key(home: Path) -> Ed25519PrivateKey:
    data = (home / "key.pem").read_bytes()
    first = b"-----BEGIN" + data.split(b"-----BEGIN")[1]
    key = serialization.load_pem_private_key(first, None)
    assert isinstance(key, Ed25519PrivateKey)
    return key


def _minted_leaf(issuer: Card, issuer_key: Ed25519PrivateKey, tmp_path: Path) -> tuple[Path, Path]:
    """A certificate for a fresh key, signed by a trusted node's key under that node's name."""
    leaf_key = Ed25519PrivateKey.generate()
    issuer_cert = x509.load_pem_x509_certificate(issuer.certificate.encode())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "votum node impostor")]))
        .issuer_name(issuer_cert.subject)
        .public_key(leaf_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc))
        .not_valid_after(datetime.datetime(9999, 12, 31, tzinfo=datetime.timezone.utc))
        .sign(issuer_key, None)
    )
    cert_path, key_path = tmp_path / "leaf.pem", tmp_path / "leaf.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM) + issuer.certificate.encode())
    key_path.write_bytes(
        leaf_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


def _handshake(client: ssl.SSLContext, server: ssl.SSLContext) -> BaseException | None:
    """One TLS handshake over a socket pair; the client's error, or None when it completed."""
    a, b = socket.socketpair()
    a.settimeout(10)
    b.settimeout(10)

    def serve() -> None:
        try:
            with server.wrap_socket(b, server_side=True) as s:
                s.recv(1)
        except (ssl.SSLError, OSError):
            pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        with client.wrap_socket(a, server_side=False) as s:
            s.sendall(b"x")
        return None
    except (ssl.SSLError, OSError) as e:
        return e
    finally:
        a.close()
        t.join(10)


def test_a_leaf_signed_by_a_trusted_node_fails_the_handshake_itself(tmp_path: Path) -> None:
    honest_home, trusted_home = tmp_path / "honest", tmp_path / "trusted"
    keygen(honest_home, "honest", None)
    trusted = keygen(trusted_home, "trusted", None)
    honest = Identity(honest_home)
    cert_path, key_path = _minted_leaf(trusted, _issuer_key(trusted_home), tmp_path)

    impostor = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    impostor.minimum_version = ssl.TLSVersion.TLSv1_3
    impostor.load_cert_chain(cert_path, key_path)
    impostor.set_alpn_protocols(["votum-node/2"])
    refused = _handshake(honest.tls_context(False, trusted.certificate), impostor)
    assert isinstance(refused, ssl.SSLCertVerificationError), (
        f"the handshake accepted a minted leaf: {refused}"
    )

    # the trusted node's own certificate passes, so the refusal is about the minted leaf
    genuine = Identity(trusted_home).tls_context(True, honest.card.certificate)
    assert _handshake(honest.tls_context(False, trusted.certificate), genuine) is None


def test_a_node_certificate_is_no_ca(tmp_path: Path) -> None:
    card = keygen(tmp_path / "n", "n", None)
    cert = x509.load_pem_x509_certificate(card.certificate.encode())
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False


def test_a_card_whose_certificate_can_sign_others_is_refused(tmp_path: Path) -> None:
    """Cards made by an earlier votum carried CA:TRUE: the keystore refuses them with a clear error."""
    home = tmp_path / "old"
    card = keygen(home, "old", None)
    key = _issuer_key(home)
    cert = x509.load_pem_x509_certificate(card.certificate.encode())
    ca = (
        x509.CertificateBuilder()
        .subject_name(cert.subject)
        .issuer_name(cert.subject)
        .public_key(key.public_key())
        .serial_number(cert.serial_number)
        .not_valid_before(cert.not_valid_before_utc)
        .not_valid_after(cert.not_valid_after_utc)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, None)
    )
    old = Card(
        card.name,
        None,
        card.signing_key,
        card.sealing_key,
        ca.public_bytes(serialization.Encoding.PEM).decode(),
    )
    with pytest.raises(KeyFileError, match="keygen"):
        old.check_certificate()
