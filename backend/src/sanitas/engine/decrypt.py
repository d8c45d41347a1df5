"""Password-protected inputs: opening what the password given with the upload opens.

Runs inside the sandbox only (the API process never decrypts anything: its sniff does not look
for encryption at all). The password is `Context.password`; it is never stored, logged, or put
into a finding, a reason or the result.

- An OOXML document encrypted with a password (ECMA-376 agile or standard encryption: an OLE
  compound file holding `EncryptionInfo` and `EncryptedPackage`) is decrypted with
  msoffcrypto-tool into the job's scratch folder, and the plain package is detected again
  (docx, xlsx, pptx...) and sanitized like any other. `detect_opening` does this for the upload
  and for archive members alike.
- A ZIP archive with encrypted members (ZipCrypto or WinZip AES) is detected as an archive;
  `archive.py` extracts the members with pyzipper (`open_zip`) inside its bounded extraction.

Without a password either is refused as encrypted, with a reason saying that a password can be
given with the upload; with a wrong one, as WRONG_PASSWORD. The output is never encrypted (the
sanitizers write new files), and a finding says so. Legacy binary Office files (.doc, .xls,
.ppt) with RC4 encryption stay refused: `detect` says so.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

from sanitas.engine.detect import Detected, EncryptedInput, _found, detect
from sanitas.engine.report import Context, Rejected, RejectionCode

OPENED_DETAIL = "opened with the password given; the output is not encrypted"
# The decrypted package is about as large as the encrypted stream; msoffcrypto builds it in
# memory, so a stream larger than this is refused before anything is decrypted.
MAX_ENCRYPTED_PACKAGE = 512 * 1024 * 1024

def detect_opening(path: Path, name: str | None, ctx: Context) -> tuple[Path, Detected]:
    """`detect`, opening what `ctx.password` opens. Returns the file to sanitize (`path`, or
    the decrypted package in `ctx.workdir`) and its kind. Raises Rejected as `detect` does,
    and WRONG_PASSWORD when the password given does not open the file."""
    try:
        return path, detect(path, name, ctx)
    except EncryptedInput as exc:
        if not ctx.password:
            raise
        if exc.container == "zip":
            return path, _found("zip")  # members are decrypted as archive.py extracts them
        opened = decrypt_ooxml(path, ctx)
    try:
        detected = detect(opened, name, ctx)
    except Rejected:
        opened.unlink(missing_ok=True)
        raise
    if detected.family != "ooxml":
        opened.unlink(missing_ok=True)
        raise Rejected("The encrypted document does not hold an Office document (Word, Excel "
                       "or PowerPoint); it is not accepted.", RejectionCode.UNSUPPORTED_TYPE)
    ctx.add("encryption", "document", action="removed", detail=OPENED_DETAIL)
    return opened, detected


def decrypt_ooxml(path: Path, ctx: Context) -> Path:
    """Decrypt an encrypted OOXML package (an OLE file) into a new file in `ctx.workdir`."""
    import msoffcrypto
    from msoffcrypto import exceptions

    assert ctx.workdir is not None and ctx.password
    target = _unused(ctx.workdir, "decrypted")
    try:
        with open(path, "rb") as fh:
            office = msoffcrypto.OfficeFile(fh)
            if getattr(office, "format", None) != "ooxml" or \
                    getattr(office, "type", None) not in ("agile", "standard"):
                raise Rejected("The document uses an encryption that cannot be opened here; "
                               "only Office 2007 and later password encryption is supported.",
                               RejectionCode.ENCRYPTED)
            if office.file.get_size("EncryptedPackage") > MAX_ENCRYPTED_PACKAGE:
                raise Rejected("The encrypted document is larger than "
                               f"{MAX_ENCRYPTED_PACKAGE // 2**20} MB once opened.",
                               RejectionCode.TOO_LARGE)
            try:
                office.load_key(password=ctx.password, verify_password=True)
            except exceptions.InvalidKeyError:
                raise Rejected("The password given does not open this document (it is wrong "
                               "for this file); nothing was processed.",
                               RejectionCode.WRONG_PASSWORD) from None
            with open(target, "wb") as out:
                # The password is verified: what fails from here on is a damaged package.
                office.decrypt(out)
    except Rejected:
        target.unlink(missing_ok=True)
        raise
    except (exceptions.FileFormatError, exceptions.ParseError, exceptions.DecryptionError,
            OSError, ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        target.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno is not None:
            raise  # the scratch disk (e.g. full): the caller reports it as such
        raise Rejected("The document's encryption data is damaged or of an unsupported kind, "
                       "so it cannot be opened.", RejectionCode.DAMAGED) from None
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    return target


def _unused(folder: Path, stem: str) -> Path:
    for n in range(1, 10_000):
        candidate = folder / f"{stem}-{n}"
        if not candidate.exists():
            return candidate
    raise Rejected("Too many encrypted documents in one file.", RejectionCode.TOO_COMPLEX)


# -- ZIP archives with encrypted members -----------------------------------------------------
def has_encrypted_members(zf: zipfile.ZipFile) -> bool:
    return any(info.flag_bits & 0x1 for info in zf.infolist())


def open_zip(src: Path, password: str) -> zipfile.ZipFile:
    """The archive opened by pyzipper with `password` (WinZip AES and ZipCrypto members are
    decrypted as they are read; pyzipper's reader is a zipfile.ZipFile, so the archive's
    bounded extraction reads it exactly as it reads any archive)."""
    import pyzipper

    try:
        zf: zipfile.ZipFile = pyzipper.AESZipFile(src)
    except (pyzipper.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise Rejected("The ZIP archive is damaged.", RejectionCode.DAMAGED) from exc
    zf.setpassword(password.encode("utf-8"))
    return zf


def bad_zip_errors() -> tuple[type[Exception], ...]:
    """The "damaged member" errors of the ZIP readers in use: zipfile's, and pyzipper's once
    an archive was opened with it (pyzipper is not imported for anything else)."""
    pyzipper = sys.modules.get("pyzipper")
    if pyzipper is None:
        return (zipfile.BadZipFile,)
    return (zipfile.BadZipFile, pyzipper.BadZipFile)


def wrong_zip_password(member: str) -> Rejected:
    return Rejected(f"The password given does not open the archive member {member[:100]!r} "
                    "(it is wrong for this archive, or the member is damaged); nothing was "
                    "processed.", RejectionCode.WRONG_PASSWORD)
