"""Asserts downloaded files are clean. Usage: check_clean.py office|jpeg PATH; prints a JSON verdict."""
import json
import sys
import zipfile

kind, path = sys.argv[1], sys.argv[2]
problems = []
if kind == "office":
    if not zipfile.is_zipfile(path):
        # A flattened PDF is also a clean result of an office file; it must carry no macro bytes.
        data = open(path, "rb").read()
        if not data.startswith(b"%PDF"):
            problems.append("not a zip package nor a PDF")
        if b"AutoOpen" in data or b"vbaProject" in data:
            problems.append("macro bytes present")
    else:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            for name in names:
                if "vbaproject" in name.lower() or name.lower().endswith(".bin"):
                    problems.append(f"part {name} present")
            for name in names:
                if name.endswith(".xml") or name.endswith(".rels"):
                    text = z.read(name).decode("utf-8", "replace")
                    if "vbaProject" in text or "macroEnabled" in text:
                        problems.append(f"{name} still references macros")
elif kind == "jpeg":
    from PIL import Image

    data = open(path, "rb").read()
    img = Image.open(path)
    img.load()
    exif = img.getexif()
    if 0x8825 in exif:
        problems.append("GPS IFD present")
    if len(exif):
        problems.append(f"EXIF tags present: {sorted(exif.keys())}")
    if b"Exif\x00\x00" in data:
        problems.append("APP1 Exif segment present")
    if b"E2E Camera Maker" in data:
        problems.append("camera maker string present")
else:
    problems.append(f"unknown kind {kind}")
print(json.dumps({"clean": not problems, "problems": problems}))
sys.exit(0 if not problems else 1)
