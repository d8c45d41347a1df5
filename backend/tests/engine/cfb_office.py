"""A small OLE compound file (CFB v3) writer and a VBA project builder, for the test corpus.

Real macro documents cannot be produced here (no Office), so the corpus builds vbaProject.bin
and OLE packages itself, following MS-CFB and MS-OVBA closely enough that oletools (an
independent parser) finds the macros and objects in the input files."""

from __future__ import annotations

import struct

SECTOR = 512
MINI = 64
CUTOFF = 4096
ENDOFCHAIN = 0xFFFFFFFE
FREESECT = 0xFFFFFFFF
FATSECT = 0xFFFFFFFD
NOSTREAM = 0xFFFFFFFF


class _Node:
    def __init__(self, name: str, data: bytes | None):
        self.name = name
        self.data = data  # None for a storage
        self.children: dict[str, _Node] = {}
        self.sid = 0
        self.start = ENDOFCHAIN
        self.left = self.right = self.child = NOSTREAM


def write_cfb(streams: dict[str, bytes]) -> bytes:
    """streams: {"VBA/dir": b"...", "PROJECT": b"..."}; storages are implied by the paths."""
    root = _Node("Root Entry", None)
    for path, data in streams.items():
        node = root
        parts = path.split("/")
        for p in parts[:-1]:
            node = node.children.setdefault(p, _Node(p, None))
        node.children[parts[-1]] = _Node(parts[-1], bytes(data))
    nodes: list[_Node] = []

    def number(n: _Node) -> None:
        n.sid = len(nodes)
        nodes.append(n)
        for c in n.children.values():
            number(c)

    number(root)

    def key(n: _Node):
        return (len(n.name), n.name.upper())

    def tree(kids: list[_Node]) -> int:
        if not kids:
            return NOSTREAM
        kids = sorted(kids, key=key)
        mid = len(kids) // 2
        kids[mid].left = tree(kids[:mid])
        kids[mid].right = tree(kids[mid + 1:])
        return kids[mid].sid

    for n in nodes:
        if n.data is None:
            n.child = tree(list(n.children.values()))

    # mini stream for small streams, regular sectors for the rest
    mini = bytearray()
    minifat: list[int] = []
    regular: list[tuple[_Node, bytes]] = []
    for n in nodes:
        if n.data is None:
            continue
        if len(n.data) < CUTOFF:
            if not n.data:
                n.start = ENDOFCHAIN
                continue
            first = len(mini) // MINI
            count = -(-len(n.data) // MINI)
            n.start = first
            minifat.extend(first + i + 1 for i in range(count - 1))
            minifat.append(ENDOFCHAIN)
            mini += n.data + b"\0" * (count * MINI - len(n.data))
        else:
            regular.append((n, n.data))

    fat: list[int] = []
    body = bytearray()

    def alloc(data: bytes) -> int:
        if not data:
            return ENDOFCHAIN
        count = -(-len(data) // SECTOR)
        first = len(fat)
        fat.extend(first + i + 1 for i in range(count - 1))
        fat.append(ENDOFCHAIN)
        body.extend(data + b"\0" * (count * SECTOR - len(data)))
        return first

    for n, data in regular:
        n.start = alloc(data)
    root.start = alloc(bytes(mini))
    minifat_bytes = b"".join(struct.pack("<I", v) for v in minifat)
    minifat_bytes += struct.pack("<I", FREESECT) * ((-len(minifat)) % (SECTOR // 4))
    first_minifat = alloc(minifat_bytes) if minifat else ENDOFCHAIN
    n_minifat = len(minifat_bytes) // SECTOR if minifat else 0

    dir_bytes = bytearray()
    for n in nodes:
        name = n.name.encode("utf-16-le")
        etype = 5 if n is root else (1 if n.data is None else 2)
        size = len(mini) if n is root else (len(n.data) if n.data is not None else 0)
        # An empty stream has no sector: its start is ENDOFCHAIN (olefile checks it).
        start = n.start if (n is root or n.data) else (0 if n.data is None else ENDOFCHAIN)
        if n is root and not mini:
            start = ENDOFCHAIN
        dir_bytes += struct.pack("<64sHBBIII16sIQQIQ", name + b"\0\0", len(name) + 2, etype, 1,
                                 n.left, n.right, n.child, b"\0" * 16, 0, 0, 0, start, size)
    while len(dir_bytes) % SECTOR:
        dir_bytes += struct.pack("<64sHBBIII16sIQQIQ", b"", 0, 0, 0, NOSTREAM, NOSTREAM,
                                 NOSTREAM, b"\0" * 16, 0, 0, 0, 0, 0)
    first_dir = alloc(bytes(dir_bytes))

    n_fat = 1
    while (len(fat) + n_fat) > n_fat * (SECTOR // 4):
        n_fat += 1
    assert n_fat <= 109, "test CFB writer: file too large"
    fat_start = len(fat)
    fat.extend([FATSECT] * n_fat)
    fat.extend([FREESECT] * (n_fat * (SECTOR // 4) - len(fat)))
    fat_bytes = b"".join(struct.pack("<I", v) for v in fat)

    difat = [fat_start + i for i in range(n_fat)] + [FREESECT] * (109 - n_fat)
    header = struct.pack("<8s16sHHHHH6sIIIIIIIII", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",
                         b"\0" * 16, 0x3E, 3, 0xFFFE, 9, 6, b"\0" * 6, 0, n_fat, first_dir, 0,
                         CUTOFF, first_minifat, n_minifat, ENDOFCHAIN, 0)
    header += b"".join(struct.pack("<I", v) for v in difat)
    assert len(header) == SECTOR
    return header + bytes(body) + fat_bytes


def ovba_compress(data: bytes) -> bytes:
    """MS-OVBA CompressedContainer using literal tokens only (valid, just not small)."""
    out = bytearray(b"\x01")
    for i in range(0, max(len(data), 1), 4096):
        chunk = data[i:i + 4096]
        if len(chunk) == 4096:
            out += struct.pack("<H", 0x3000 | 4095) + chunk  # uncompressed chunk
            continue
        body = bytearray()
        for j in range(0, len(chunk), 8):
            body += b"\x00" + chunk[j:j + 8]
        out += struct.pack("<H", 0xB000 | (len(body) + 2 - 3)) + body
    return bytes(out)


def _rec(rid: int, payload: bytes) -> bytes:
    return struct.pack("<HI", rid, len(payload)) + payload


def vba_project(modules: dict[str, str], prefix: str = "") -> dict[str, bytes]:
    """Streams of a VBA project (module name -> source); `prefix` e.g. "Macros/" for .doc."""
    d = bytearray()
    d += _rec(0x01, struct.pack("<I", 1))  # SYSKIND win32
    d += _rec(0x02, struct.pack("<I", 0x409))
    d += _rec(0x14, struct.pack("<I", 0x409))
    d += _rec(0x03, struct.pack("<H", 1252))
    d += _rec(0x04, b"Project")
    d += _rec(0x05, b"") + struct.pack("<HI", 0x40, 0)
    d += _rec(0x06, b"") + struct.pack("<HI", 0x3D, 0)
    d += _rec(0x07, struct.pack("<I", 0))
    d += _rec(0x08, struct.pack("<I", 0))
    d += struct.pack("<HIIH", 0x09, 4, 1, 0)
    d += _rec(0x0C, b"") + struct.pack("<HI", 0x3C, 0)
    d += struct.pack("<HIH", 0x0F, 2, len(modules))
    d += _rec(0x13, struct.pack("<H", 0xFFFF))
    streams: dict[str, bytes] = {}
    project_lines = ['ID="{00000000-0000-0000-0000-000000000000}"']
    for name, source in modules.items():
        nb = name.encode("latin-1")
        d += _rec(0x19, nb)
        d += _rec(0x47, name.encode("utf-16-le"))
        d += _rec(0x1A, nb) + struct.pack("<HI", 0x32, len(nb) * 2) + name.encode("utf-16-le")
        d += _rec(0x1C, b"") + struct.pack("<HI", 0x48, 0)
        d += _rec(0x31, struct.pack("<I", 0))
        d += _rec(0x1E, struct.pack("<I", 0))
        d += _rec(0x2C, struct.pack("<H", 0xFFFF))
        d += struct.pack("<HI", 0x21, 0)
        d += struct.pack("<HI", 0x2B, 0)
        code = f'Attribute VB_Name = "{name}"\r\n{source}'.encode("latin-1")
        streams[f"{prefix}VBA/{name}"] = ovba_compress(code)
        project_lines.append(f"Module={name}")
    d += struct.pack("<HI", 0x10, 0)
    project_lines += ['Name="Project"', 'HelpContextID="0"', "", "[Host Extender Info]", ""]
    streams[f"{prefix}VBA/dir"] = ovba_compress(bytes(d))
    streams[f"{prefix}VBA/_VBA_PROJECT"] = b"\xcc\x61\xff\xff\x00\x00\x00"
    streams[f"{prefix}PROJECT"] = "\r\n".join(project_lines).encode("latin-1")
    return streams


AUTO_MACRO = ('Sub AutoOpen()\r\n    Dim s As String\r\n    s = "inert test macro"\r\n'
              '    Shell "cmd.exe /c echo " & s\r\nEnd Sub\r\n'
              'Sub Workbook_Open()\r\n    AutoOpen\r\nEnd Sub\r\n')


def vba_project_bin(source: str = AUTO_MACRO) -> bytes:
    return write_cfb(vba_project({"Module1": source}))


def ole_package_object(filename: str = "payload.exe",
                       payload: bytes = b"MZ inert test payload") -> bytes:
    """An embedded 'Package' OLE object (Ole10Native), the classic dropper container."""
    fn = filename.encode("latin-1") + b"\0"
    path = f"C:\\Temp\\{filename}".encode("latin-1") + b"\0"
    native = (struct.pack("<H", 2) + fn + path + struct.pack("<HH", 0, 3)
              + struct.pack("<I", len(path)) + path + struct.pack("<I", len(payload)) + payload)
    native = struct.pack("<I", len(native)) + native
    return write_cfb({"\x01Ole10Native": native, "\x01CompObj": b"\x01\x00\xfe\xff" + b"\0" * 24})
