"""HTTPS interception: simproxy's certificate authority and the leaf certificates it signs per host.

The CA is one for the whole fleet, so a client that trusts it trusts every worker and pod: it comes
from ``-cert``/``-key``, else from the store, else from the file kept under the simproxy home
folder, else it is generated; the first worker to store it wins (compare-and-set) and every other
one uses that one. Leaf certificates are made on first use per host name and kept (LRU) with the
TLS context that serves them; a client's SNI picks the context.

Nothing here is done at start-up: ``Interception`` finds the CA on the first CONNECT to intercept
(or the first ``GET .../ca-cert``), and ``cryptography`` is imported then, so a start that never
intercepts HTTPS pays for neither.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import logging
import os
import ssl
import tempfile
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from simproxy.engine.errors import EngineError
from simproxy.store import Documents

if TYPE_CHECKING:
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec

log = logging.getLogger(__name__)

CA_DOCUMENT = "ca"
CA_NAME = "simproxy CA"
CA_ORG = "simproxy"
LEAF_ORG = "GoProxy untrusted MITM proxy Inc"
"""The organisation of the certificates made for intercepted hosts: Hoverfly's, which clients may check."""
LEAF_CACHE = 1000
_DAY = datetime.timedelta(days=1)


class CertificateError(EngineError):
    """A CA certificate or key that cannot be used."""


@dataclass(frozen=True, slots=True)
class CertificateAuthority:
    cert_pem: bytes
    key_pem: bytes

    def to_json(self) -> bytes:
        return orjson.dumps({"cert": self.cert_pem.decode("ascii"), "key": self.key_pem.decode("ascii")})

    @classmethod
    def from_json(cls, raw: bytes) -> CertificateAuthority:
        doc = orjson.loads(raw)
        return cls(doc["cert"].encode("ascii"), doc["key"].encode("ascii"))


def generate_ca(common_name: str = CA_NAME, organisation: str = CA_ORG) -> CertificateAuthority:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    usage = x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=True,
        crl_sign=True,
        encipher_only=False,
        decipher_only=False,
    )
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, organisation),
        ]
    )
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _DAY)
        .not_valid_after(now + 3650 * _DAY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(usage, critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return CertificateAuthority(_cert_pem(cert), _key_pem(key))


def load_ca(cert_path: str, key_path: str) -> CertificateAuthority:
    """``-cert``/``-key``: PEM files of a CA certificate and its private key, checked to belong together."""
    try:
        cert_pem, key_pem = Path(cert_path).read_bytes(), Path(key_path).read_bytes()
    except OSError as exc:
        raise CertificateError(f"cannot read {exc.filename}: {exc.strerror}") from exc
    return checked(CertificateAuthority(cert_pem, key_pem))


def checked(ca: CertificateAuthority) -> CertificateAuthority:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    try:
        cert = x509.load_pem_x509_certificate(ca.cert_pem)
        key = serialization.load_pem_private_key(ca.key_pem, password=None)
    except ValueError as exc:
        raise CertificateError(f"not a PEM certificate and private key: {exc}") from exc
    if cert.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ) != key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo):
        raise CertificateError("the private key does not belong to the certificate")
    return ca


async def fleet_ca(
    store: Documents,
    given: CertificateAuthority | None,
    folder: Path,
    names: tuple[str, str] = (CA_NAME, CA_ORG),
) -> CertificateAuthority:
    """The CA every worker and pod signs with (see the module's docstring); ``folder`` keeps a generated one,
    ``names`` (common name, organisation) are those a generated one is given.

    The store keeps one CA per pair of names, so instances of both dialects sharing a store (the
    default and ``-compat hoverfly``, whose CA is named as Hoverfly's) each get their own."""
    if given is not None:
        return given
    wanted = _names_key(*names)
    candidate: CertificateAuthority | None = None
    for _ in range(_CA_ATTEMPTS):
        doc = await store.read_document(CA_DOCUMENT)
        version, kept = (doc[0], _authorities(doc[1])) if doc is not None else (0, {})
        found = kept.get(wanted)
        if found is None:
            if candidate is None:  # files, key generation: once, however often the write is refused
                candidate = await asyncio.to_thread(lambda: _read_kept(folder) or generate_ca(*names))
            kept[wanted] = found = candidate
            if await store.write_document(CA_DOCUMENT, _encode(kept), expected_version=version) is None:
                continue  # another worker wrote first: read again, and use its CA if it has these names
        if candidate is not None:  # this worker tried to store one: keep the fleet's for the next run
            await asyncio.to_thread(_keep, folder, found)
        return found
    raise CertificateError("the fleet's CA document kept changing; try again")


_CA_ATTEMPTS = 5


def _names_key(common_name: str, organisation: str) -> str:
    return f"{common_name}\n{organisation}"


def _authorities(raw: bytes) -> dict[str, CertificateAuthority]:
    """The stored CAs by their names; a document of one CA (as stored before dialects had their
    own) is filed under the names its certificate carries."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    doc = orjson.loads(raw)
    if "byNames" in doc:
        return {key: CertificateAuthority.from_json(orjson.dumps(ca)) for key, ca in doc["byNames"].items()}
    ca = CertificateAuthority.from_json(raw)
    subject = x509.load_pem_x509_certificate(ca.cert_pem).subject

    def name(oid: x509.ObjectIdentifier) -> str:
        values = subject.get_attributes_for_oid(oid)
        return str(values[0].value) if values else ""

    return {_names_key(name(NameOID.COMMON_NAME), name(NameOID.ORGANIZATION_NAME)): ca}


def _encode(authorities: dict[str, CertificateAuthority]) -> bytes:
    """Every CA under ``byNames``, and one of them (simproxy's names first) as the document's own
    ``cert`` and ``key``, where a simproxy from before dialects had their own CA reads it: a rolling
    update or a rollback keeps intercepting."""
    named = {key: orjson.loads(ca.to_json()) for key, ca in authorities.items()}
    first = named.get(_names_key(CA_NAME, CA_ORG)) or next(iter(named.values()))
    return orjson.dumps({**first, "byNames": named})


class Interception:
    """The CA and the leaf certificates of one worker, found on first use and kept from then on.

    ``find`` is called once, by the first caller (later ones wait for it); if it fails (the store is
    away) the next caller tries again.
    """

    def __init__(
        self, find: Callable[[], Awaitable[CertificateAuthority]], alpn: tuple[str, ...] = ("http/1.1",)
    ) -> None:
        self._find = find
        self._alpn = alpn
        """The protocols offered by ALPN, in order of preference (``h2`` first when HTTP/2 is spoken)."""
        self._leaves: LeafCertificates | None = None
        self._lock = asyncio.Lock()

    async def leaves(self) -> LeafCertificates:
        if self._leaves is None:
            async with self._lock:
                if self._leaves is None:
                    ca = await self._find()
                    self._leaves = await asyncio.to_thread(LeafCertificates, ca, LEAF_CACHE, self._alpn)
        return self._leaves

    async def ca(self) -> CertificateAuthority:
        return (await self.leaves()).ca


def _read_kept(folder: Path) -> CertificateAuthority | None:
    try:
        return checked(CertificateAuthority((folder / "ca.pem").read_bytes(), (folder / "ca-key.pem").read_bytes()))
    except (OSError, CertificateError):
        return None


def _keep(folder: Path, ca: CertificateAuthority) -> None:
    """Write the CA under the home folder unless one is there (best effort: it may be read-only)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, data, mode in (("ca-key.pem", ca.key_pem, 0o600), ("ca.pem", ca.cert_pem, 0o644)):
            fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
    except FileExistsError:
        return
    except OSError as exc:
        log.warning("the CA certificate could not be kept in %s: %s", folder, exc.strerror)


class LeafCertificates:
    """TLS server contexts for intercepted hosts, each with a leaf certificate signed by the CA."""

    def __init__(
        self, ca: CertificateAuthority, capacity: int = LEAF_CACHE, alpn: tuple[str, ...] = ("http/1.1",)
    ) -> None:
        from cryptography import x509
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec, rsa

        self.ca = ca
        self.alpn = alpn
        """What the leaves' contexts offer by ALPN, in order of preference."""
        self._ca_cert = x509.load_pem_x509_certificate(ca.cert_pem)
        ca_key = serialization.load_pem_private_key(ca.key_pem, password=None)
        if not isinstance(ca_key, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey):
            raise CertificateError("the CA key must be an RSA or EC key")
        self._ca_key = ca_key
        self._leaf_key = ec.generate_private_key(ec.SECP256R1())
        self._leaf_key_pem = _key_pem(self._leaf_key)
        self._capacity = capacity
        self._contexts: OrderedDict[str, ssl.SSLContext] = OrderedDict()

    def context(self, host: str) -> ssl.SSLContext:
        """The context for ``host``; its SNI callback switches to the name the client asks for."""
        host = host.lower()
        ctx = self._contexts.get(host)
        if ctx is not None:
            self._contexts.move_to_end(host)
            return ctx
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.set_alpn_protocols(list(self.alpn))
        _load_chain(ctx, self._leaf_pem(host) + self._leaf_key_pem + self.ca.cert_pem)
        ctx.sni_callback = self._sni
        self._contexts[host] = ctx
        while len(self._contexts) > self._capacity:
            self._contexts.popitem(last=False)
        return ctx

    def _sni(self, sock: ssl.SSLObject | ssl.SSLSocket, name: str | None, _: ssl.SSLContext) -> None:
        if name:
            sock.context = self.context(name)

    def _leaf_pem(self, host: str) -> bytes:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        now = datetime.datetime.now(datetime.UTC)
        # Hoverfly's (goproxy's) subject: its organisation, and the host as common name unless an IP
        subject = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, LEAF_ORG)]
        try:
            alt: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(host.strip("[]")))
        except ValueError:
            alt = x509.DNSName(host)
            subject.append(x509.NameAttribute(NameOID.COMMON_NAME, host[:64] or "localhost"))
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name(subject))
            .issuer_name(self._ca_cert.subject)
            .public_key(self._leaf_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _DAY)
            .not_valid_after(now + 365 * _DAY)
            .add_extension(x509.SubjectAlternativeName([alt]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self._ca_key.public_key()), critical=False
            )
            .sign(self._ca_key, hashes.SHA256())
        )
        return _cert_pem(cert)


def _load_chain(ctx: ssl.SSLContext, pem: bytes) -> None:
    """``load_cert_chain`` reads only files: hand it an in-memory one (Linux), else a temporary file
    removed at once, so that no file is left behind whatever ends the process."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("simproxy-leaf")
        try:
            os.write(fd, pem)
            ctx.load_cert_chain(f"/proc/self/fd/{fd}")
        finally:
            os.close(fd)
        return
    with tempfile.NamedTemporaryFile(prefix="simproxy-leaf-", suffix=".pem") as handle:
        handle.write(pem)
        handle.flush()
        ctx.load_cert_chain(handle.name)


def _cert_pem(cert: x509.Certificate) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
