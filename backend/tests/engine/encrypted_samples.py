"""Password-protected samples, generated in code: an OOXML document encrypted by
msoffcrypto-tool (ECMA-376 agile encryption, what Office 2010 and later write), ZIP archives
with WinZip AES members (pyzipper) and with traditional PKWARE (ZipCrypto) members (written
here: no library in the environment writes them)."""

from __future__ import annotations

import io
import os
import random
import struct
import zlib

from tests.engine.corpus_office import _p, docx

MARKER = "Confidential quarterly figures"


def plain_docx(seed: int = 5) -> bytes:
    """A real document larger than 4 KB (msoffcrypto writes smaller packages into the OLE mini
    stream wrongly, so they do not decrypt: Office's own files are never that small)."""
    rng = random.Random(seed)
    words = [_p(" ".join(f"{rng.getrandbits(32):08x}" for _ in range(12))) for _ in range(40)]
    return docx(_p(MARKER) + "".join(words))


def encrypted_docx(password: str, plain: bytes | None = None) -> bytes:
    from msoffcrypto.format.ooxml import OOXMLFile

    out = io.BytesIO()
    OOXMLFile(io.BytesIO(plain or plain_docx())).encrypt(password, out)
    return out.getvalue()


def aes_zip(members: dict[str, bytes], password: str) -> bytes:
    import pyzipper

    buffer = io.BytesIO()
    with pyzipper.AESZipFile(buffer, "w", compression=pyzipper.ZIP_DEFLATED,
                             encryption=pyzipper.WZ_AES) as zf:
        zf.setpassword(password.encode())
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


# -- traditional PKWARE encryption (APPNOTE 6.1) ---------------------------------------------
def _crc_byte(crc: int, byte: int) -> int:
    return zlib.crc32(bytes([byte]), crc ^ 0xFFFFFFFF) ^ 0xFFFFFFFF


class _ZipCrypto:
    def __init__(self, password: bytes) -> None:
        self.k0, self.k1, self.k2 = 0x12345678, 0x23456789, 0x34567890
        for byte in password:
            self._update(byte)

    def _update(self, byte: int) -> None:
        self.k0 = _crc_byte(self.k0, byte)
        self.k1 = ((self.k1 + (self.k0 & 0xFF)) * 134775813 + 1) & 0xFFFFFFFF
        self.k2 = _crc_byte(self.k2, self.k1 >> 24)

    def encrypt(self, data: bytes) -> bytes:
        out = bytearray()
        for byte in data:
            temp = (self.k2 | 2) & 0xFFFF
            out.append(byte ^ (((temp * (temp ^ 1)) >> 8) & 0xFF))
            self._update(byte)
        return bytes(out)


def zipcrypto_zip(members: dict[str, bytes], password: str) -> bytes:
    """A ZIP whose members are deflated, then encrypted with ZipCrypto."""
    body, central = bytearray(), bytearray()
    for name, data in members.items():
        raw_name = name.encode()
        crc = zlib.crc32(data)
        compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
        packed = compressor.compress(data) + compressor.flush()
        header = os.urandom(11) + bytes([crc >> 24])  # the check byte: the CRC's high byte
        encrypted = _ZipCrypto(password.encode()).encrypt(header + packed)
        fields = (20, 0x1, 8, 0, 0x21, crc, len(encrypted), len(data), len(raw_name), 0)
        offset = len(body)
        body += b"PK\x03\x04" + struct.pack("<HHHHHIIIHH", *fields) + raw_name + encrypted
        central += (b"PK\x01\x02" + struct.pack("<HHHHHHIIIHHHHHII", 20, *fields, 0, 0, 0,
                                                0o100644 << 16, offset) + raw_name)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central),
                      len(body), 0)
    return bytes(body + central + end)
