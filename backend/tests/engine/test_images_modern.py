"""HEIC/HEIF, AVIF and JPEG XL: detected by content (also from the API's bounded sniff),
decoded within the bomb limits, turned upright, stripped of EXIF/GPS/XMP, re-encoded (HEIC as
JPEG, with a `converted` finding). Every sample is generated here with the same plugins."""

from __future__ import annotations

import io
import struct
import time
from pathlib import Path

import pytest
from PIL import Image

from sanitas.engine import image as image_family
from sanitas.engine import sanitize_file
from sanitas.engine.detect import HEAD_SIZE, detect, sniff
from sanitas.engine.report import Rejected, RejectionCode
from tests.engine.corpus import picture
from tests.engine.fidelity import ssim

for _kind in image_family.MODERN:
    image_family.load_plugin(_kind)  # the samples are written with the plugins the engine reads

MARKERS = (b"MARKER-CAMERA", b"MARKER-GPS-DATUM", b"MARKER-XMP")
XMP = (b'<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">'
       b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description>'
       b'MARKER-XMP</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>')
PILLOW = {"heic": "HEIF", "avif": "AVIF", "jxl": "JXL"}
EXTENSION = {"heic": "heic", "avif": "avif", "jxl": "jxl"}


def _exif(orientation: int = 6) -> bytes:
    exif = Image.Exif()
    exif[0x0112] = orientation
    exif[0x010F] = "MARKER-CAMERA"  # Make
    gps = exif.get_ifd(0x8825)
    gps[0x0001] = "N"
    gps[0x0002] = (48.0, 51.0, 24.0)
    gps[0x0012] = "MARKER-GPS-DATUM"  # GPSMapDatum
    return exif.tobytes()


def _encode(kind: str, image: Image.Image | None = None, **params) -> bytes:
    buffer = io.BytesIO()
    (image or picture()).save(buffer, PILLOW[kind], **params)
    return buffer.getvalue()


def _with_metadata(kind: str, orientation: int = 6) -> bytes:
    data = _encode(kind, exif=_exif(orientation), xmp=XMP)
    assert all(marker in data for marker in MARKERS), kind  # the test can fail
    return data


def _jxl_from_jpeg(tmp_path: Path) -> bytes:
    """A JPEG XL file that holds a JPEG (lossless recompression): its EXIF orientation is the
    JPEG's, and decoding gives the JPEG back."""
    jpeg = tmp_path / "source.jpg"
    picture().save(jpeg, "JPEG", quality=92, exif=_exif(6))
    buffer = io.BytesIO()
    with Image.open(jpeg) as source:
        source.save(buffer, "JXL", lossless_jpeg=True)
    data = buffer.getvalue()
    assert b"MARKER-CAMERA" in data or b"jbrd" in data
    return data


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _kinds(result) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for finding in result.findings:
        found.setdefault(finding.kind, set()).add(finding.action)
    return found


def _assert_no_metadata(output: Path) -> None:
    data = output.read_bytes()
    assert [m for m in MARKERS if m in data] == []
    assert b"x:xmpmeta" not in data and b"Exif\x00\x00" not in data
    with Image.open(output) as after:
        assert not after.info.get("exif") and not after.info.get("xmp")
        assert not after.getexif()


# --- detection -------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["heic", "avif", "jxl"])
def test_detected_by_content_also_from_the_sniff(kind, tmp_path):
    data = _with_metadata(kind)
    path = _write(tmp_path, f"photo.{EXTENSION[kind]}", data)
    assert detect(path, path.name).kind == kind
    assert sniff(data[:HEAD_SIZE], path.name).kind == kind
    assert sniff(data[:64], "upload.bin").kind == kind  # the first bytes are enough
    misnamed = _write(tmp_path, "photo.jpg", data)
    assert detect(misnamed, misnamed.name).kind == kind


def test_jxl_container_and_codestream_both_detected(tmp_path):
    bare = _encode("jxl")
    boxed = _encode("jxl", use_container=True)
    assert bare.startswith(b"\xff\x0a") and boxed.startswith(b"\x00\x00\x00\x0cJXL ")
    assert sniff(bare[:32]).kind == "jxl" and sniff(boxed[:32]).kind == "jxl"


def _ftyp(major: bytes, *compatible: bytes, size: int | None = None) -> bytes:
    body = major + b"\x00\x00\x00\x00" + b"".join(compatible)
    box = struct.pack(">I", size if size is not None else 8 + len(body)) + b"ftyp" + body
    return box + b"\x00\x00\x00\x08free" + b"\x00" * 64


@pytest.mark.parametrize("head,kind", [
    (_ftyp(b"heic", b"mif1", b"heic"), "heic"),
    (_ftyp(b"heix", b"mif1"), "heic"),
    (_ftyp(b"mif1", b"mif1", b"heic", b"miaf"), "heic"),
    (_ftyp(b"mif1", b"mif1", b"miaf"), "heic"),  # a HEIF file that names no codec
    (_ftyp(b"msf1", b"msf1", b"hevc"), "heic"),
    (_ftyp(b"avif", b"avif", b"mif1", b"miaf", b"MA1B"), "avif"),
    (_ftyp(b"mif1", b"mif1", b"avif", b"miaf"), "avif"),  # the shared brand: AVIF decides
    (_ftyp(b"avis", b"avis", b"msf1", b"iso8"), "avif"),
])
def test_ftyp_brands_decide_heif_or_avif(head, kind):
    assert sniff(head, "x.bin").kind == kind


def test_other_iso_media_is_refused_with_its_brand():
    # MP4/MOV/M4A are the media family's now (tests/engine/test_media.py); 3GP is not taken
    with pytest.raises(Rejected) as refused:
        sniff(_ftyp(b"3gp4", b"3gp4", b"3gp5"), "clip.3gp")
    assert refused.value.code == RejectionCode.UNSUPPORTED_TYPE
    assert "'3gp4'" in refused.value.reason and "not recognised" not in refused.value.reason


@pytest.mark.parametrize("size", [12, 18, 4100, 0x7FFFFFFF])
def test_a_damaged_ftyp_box_is_refused(size):
    with pytest.raises(Rejected) as refused:
        sniff(_ftyp(b"heic", b"mif1", size=size))
    assert refused.value.code == RejectionCode.DAMAGED


def test_the_ftyp_sniff_stays_cheap_on_a_box_full_of_brands():
    head = _ftyp(b"mif1", *([b"zzzz"] * 1019), b"avif")  # the largest box the sniff reads
    assert len(head) >= 4096
    started = time.perf_counter()
    for _ in range(200):
        assert sniff(head).kind == "avif"
    assert time.perf_counter() - started < 2.0


# --- sanitizing ------------------------------------------------------------------------------

@pytest.mark.parametrize("kind,output_type", [("heic", "jpg"), ("avif", "avif")])
def test_metadata_removed_and_orientation_applied(kind, output_type, tmp_path, out_dir):
    source = _write(tmp_path, f"photo.{EXTENSION[kind]}", _with_metadata(kind))
    result = sanitize_file(source, out_dir)
    assert result.status == "ok", result.reason
    assert result.detected_type == kind and result.output_type == output_type
    assert Path(result.output).name == f"photo.{output_type}"
    _assert_no_metadata(Path(result.output))
    found = _kinds(result)
    assert {"gps_location", "exif", "xmp_metadata"} <= set(found), found
    with Image.open(result.output) as after:
        assert after.format == ("JPEG" if output_type == "jpg" else "AVIF")
        assert after.size == (100, 200)  # orientation 6: turned upright
        upright = picture().transpose(Image.Transpose.ROTATE_270)
        assert ssim(upright, after) >= 0.9


def test_heic_becomes_jpeg_with_a_converted_finding(tmp_path, out_dir):
    source = _write(tmp_path, "IMG_0001.HEIC", _encode("heic", quality=90))
    result = sanitize_file(source, out_dir)
    assert result.status == "ok", result.reason
    assert result.output_type == "jpg" and Path(result.output).name == "IMG_0001.jpg"
    converted = [f for f in result.findings if f.kind == "image_format"]
    assert [f.action for f in converted] == ["converted"]
    assert "JPEG" in converted[0].detail and "HEIC" in converted[0].detail
    with Image.open(result.output) as after:  # read by Pillow's JPEG decoder, not libheif
        after.load()
        assert after.size == (200, 100) and ssim(picture(), after) >= 0.9


def test_heic_with_transparency_becomes_png(tmp_path, out_dir):
    rgba = picture().convert("RGBA")
    rgba.putalpha(Image.linear_gradient("L").resize(rgba.size))
    source = _write(tmp_path, "cutout.heic", _encode("heic", rgba, quality=90))
    result = sanitize_file(source, out_dir)
    assert result.status == "ok", result.reason
    assert result.output_type == "png"
    with Image.open(result.output) as after:
        assert after.mode == "RGBA" and after.getchannel("A").getextrema()[0] < 40


def test_heic_thumbnails_reported_and_not_carried(tmp_path, out_dir):
    data = _encode("heic", thumbnails=[64], exif=_exif(1))
    assert data.count(b"ispe") == 2  # the picture and its thumbnail
    result = sanitize_file(_write(tmp_path, "thumbs.heic", data), out_dir)
    assert result.status == "ok", result.reason
    assert "removed" in _kinds(result).get("thumbnail", set())
    with Image.open(result.output) as after:
        assert after.format == "JPEG" and "thumbnails" not in after.info


def test_heic_icc_profile_kept(tmp_path, out_dir):
    from PIL import ImageCms

    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    result = sanitize_file(_write(tmp_path, "icc.heic", _encode("heic", icc_profile=icc)),
                           out_dir)
    assert result.status == "ok", result.reason
    with Image.open(result.output) as after:
        assert after.info.get("icc_profile") == icc


def test_avif_stays_avif_without_a_converted_finding(tmp_path, out_dir):
    result = sanitize_file(_write(tmp_path, "plain.avif", _encode("avif", quality=90)), out_dir)
    assert result.status == "ok", result.reason
    assert result.output_type == "avif"
    assert "image_format" not in _kinds(result)
    assert Path(result.output).read_bytes()[4:12] == b"ftypavif"


def test_animated_avif_keeps_its_frames(tmp_path, out_dir):
    frames = [picture().rotate(angle) for angle in (0, 90, 180)]
    buffer = io.BytesIO()
    frames[0].save(buffer, "AVIF", save_all=True, append_images=frames[1:], duration=100,
                   xmp=XMP)
    result = sanitize_file(_write(tmp_path, "anim.avif", buffer.getvalue()), out_dir)
    assert result.status == "ok", result.reason
    assert b"MARKER-XMP" not in Path(result.output).read_bytes()
    with Image.open(result.output) as after:
        assert after.format == "AVIF" and after.n_frames == 3


def test_avif_written_as_jpeg_where_no_avif_encoder(tmp_path, out_dir, monkeypatch):
    monkeypatch.setattr(image_family, "_can_write", lambda kind: False)
    result = sanitize_file(_write(tmp_path, "p.avif", _with_metadata("avif")), out_dir)
    assert result.status == "ok", result.reason
    assert result.output_type == "jpg"
    assert _kinds(result)["image_format"] == {"converted"}
    _assert_no_metadata(Path(result.output))


def test_jxl_metadata_removed_exif_orientation_ignored_as_the_standard_says(tmp_path,
                                                                           out_dir):
    # JPEG XL keeps the orientation in the codestream (applied by libjxl); the Exif box's
    # orientation is ignored (ISO/IEC 18181-2), as JPEG XL viewers do.
    result = sanitize_file(_write(tmp_path, "photo.jxl", _with_metadata("jxl")), out_dir)
    assert result.status == "ok", result.reason
    assert result.output_type == "jxl"
    _assert_no_metadata(Path(result.output))
    assert {"gps_location", "exif", "xmp_metadata"} <= set(_kinds(result))
    with Image.open(result.output) as after:
        assert after.format == "JXL" and after.size == (200, 100)
        assert ssim(picture(), after) >= 0.9


def test_jxl_holding_a_jpeg_is_turned_upright_by_its_exif(tmp_path, out_dir):
    result = sanitize_file(_write(tmp_path, "recompressed.jxl", _jxl_from_jpeg(tmp_path)),
                           out_dir)
    assert result.status == "ok", result.reason
    assert result.output_type == "jxl"
    _assert_no_metadata(Path(result.output))
    assert "gps_location" in _kinds(result)
    with Image.open(result.output) as after:
        assert after.size == (100, 200)
        assert ssim(picture().transpose(Image.Transpose.ROTATE_270), after) >= 0.9


# --- bombs -----------------------------------------------------------------------------------

def _jxl_header(width: int, height: int) -> bytes:
    """A bare codestream whose SizeHeader declares width x height (18181-1, bits LSB first),
    followed by junk: nothing a decoder could make a picture of."""
    assert width == height  # ratio 1 (1:1)
    bits = [(0, 1), (3, 2), (height - 1, 30), (1, 3)]
    value, position = 0, 0
    for field, count in bits:
        value |= field << position
        position += count
    return b"\xff\x0a" + value.to_bytes(8, "little") + b"\x5a" * 200


def test_jxl_size_read_from_the_header_as_the_decoder_reads_it(tmp_path):
    for size in [(1, 1), (200, 100), (64, 48), (1920, 1080), (4000, 17), (513, 8193)]:
        for container in (False, True):
            data = _encode("jxl", Image.new("L", size), use_container=container, effort=1)
            path = _write(tmp_path, "s.jxl", data)
            with path.open("rb") as fh:
                fh.read(12)
                code = image_family._jxl_boxes(fh)[0] if container else data[:40]
            assert image_family._jxl_size(code) == size
    with Image.open(io.BytesIO(_jxl_from_jpeg(tmp_path))) as split:  # jxlp parts
        assert split.size == (200, 100)
    path = _write(tmp_path, "j.jxl", _jxl_from_jpeg(tmp_path))
    with path.open("rb") as fh:
        fh.read(12)
        code, boxes = image_family._jxl_boxes(fh)
    assert b"jxlp" in boxes and image_family._jxl_size(code) == (200, 100)
    assert image_family._jxl_size(_jxl_header(40000, 40000)[:12]) == (40000, 40000)


def test_jxl_declaring_a_huge_picture_is_refused_before_decoding(tmp_path, out_dir):
    result = sanitize_file(_write(tmp_path, "bomb.jxl", _jxl_header(40000, 40000)), out_dir)
    assert result.status == "rejected" and result.code == RejectionCode.BOMB
    assert result.duration_ms < 2000


def _declared_size(data: bytes, width: int, height: int) -> bytes:
    """The file with its (only) `ispe` property declaring width x height."""
    assert data.count(b"ispe") == 1
    at = data.index(b"ispe") + 8  # after the type and the version/flags
    return data[:at] + struct.pack(">II", width, height) + data[at + 8:]


@pytest.mark.parametrize("kind,size", [("heic", 20000), ("avif", 16000)])
def test_heif_and_avif_declaring_a_huge_picture_are_refused(kind, size, tmp_path, out_dir):
    data = _declared_size(_encode(kind), size, size)
    result = sanitize_file(_write(tmp_path, f"bomb.{kind}", data), out_dir)
    assert result.status == "rejected" and result.code == RejectionCode.BOMB, result.reason
    assert result.duration_ms < 2000


@pytest.mark.parametrize("kind", ["heic", "avif", "jxl"])
def test_truncated_files_are_refused_as_damaged(kind, tmp_path, out_dir):
    data = _encode(kind)
    result = sanitize_file(_write(tmp_path, f"cut.{kind}", data[: len(data) * 2 // 3]), out_dir)
    assert result.status == "rejected"
    assert result.code in (RejectionCode.DAMAGED, RejectionCode.BOMB), result.reason
    assert "Error" not in result.reason
