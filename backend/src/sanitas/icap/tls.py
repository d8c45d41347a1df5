"""ICAP over TLS (icaps://): the server's SSL context from SANITAS_ICAP_TLS_CERT/_KEY, with
client certificates required when SANITAS_ICAP_TLS_CLIENT_CA is set. Built once at start, so
a bad file stops `sanitas icap` there rather than failing the first connection."""

from __future__ import annotations

import ssl
from datetime import datetime
from pathlib import Path

from sanitas.config import Settings


class TlsSetupError(Exception):
    """The TLS settings cannot be used; the message names the setting and the reason."""


def server_context(settings: Settings) -> ssl.SSLContext | None:
    """The server context, or None when TLS is not configured."""
    cert, key, client_ca = settings.icap_tls_cert, settings.icap_tls_key, \
        settings.icap_tls_client_ca
    if cert is None and key is None:
        if client_ca is not None:
            raise TlsSetupError("SANITAS_ICAP_TLS_CLIENT_CA needs SANITAS_ICAP_TLS_CERT and "
                                "SANITAS_ICAP_TLS_KEY (client certificates are only asked "
                                "for over TLS).")
        return None
    if cert is None or key is None:
        raise TlsSetupError("SANITAS_ICAP_TLS_CERT and SANITAS_ICAP_TLS_KEY go together: set "
                            "both (PEM certificate chain and its private key) or neither.")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert, key, password=_no_passphrase)
    except _Encrypted as exc:
        raise TlsSetupError(f"SANITAS_ICAP_TLS_KEY ({key}) is protected by a passphrase; the "
                            "server needs the key without one.") from exc
    except (OSError, ssl.SSLError) as exc:
        raise TlsSetupError(f"SANITAS_ICAP_TLS_CERT ({cert}) and SANITAS_ICAP_TLS_KEY ({key}) "
                            f"cannot be loaded: {_reason(exc)}") from exc
    if client_ca is not None:
        try:
            context.load_verify_locations(cafile=client_ca)
        except (OSError, ssl.SSLError) as exc:
            raise TlsSetupError(f"SANITAS_ICAP_TLS_CLIENT_CA ({client_ca}) cannot be loaded: "
                                f"{_reason(exc)}") from exc
        if not context.get_ca_certs():
            raise TlsSetupError(f"SANITAS_ICAP_TLS_CLIENT_CA ({client_ca}) holds no CA "
                                "certificate.")
        context.verify_mode = ssl.CERT_REQUIRED
    return context


def describe(settings: Settings) -> str:
    """How connections are protected, for the start log and `sanitas doctor`."""
    if settings.icap_tls_cert is None:
        return "plain ICAP (no TLS)"
    if settings.icap_tls_client_ca is None:
        return f"TLS with {settings.icap_tls_cert}"
    return (f"TLS with {settings.icap_tls_cert}; client certificates of "
            f"{settings.icap_tls_client_ca} required")


def expiry(cert: Path) -> datetime:
    """When the first certificate of the PEM file `cert` stops being valid (UTC)."""
    from cryptography import x509

    return x509.load_pem_x509_certificate(cert.read_bytes()).not_valid_after_utc


class _Encrypted(Exception):
    pass


def _no_passphrase() -> str:
    """Called only for a key that needs a passphrase: refuse rather than let OpenSSL prompt
    on the terminal."""
    raise _Encrypted


def _reason(exc: Exception) -> str:
    if isinstance(exc, ssl.SSLError):
        return exc.reason or str(exc)
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)
