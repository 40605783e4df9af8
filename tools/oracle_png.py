"""A small one-colour PNG, for the oracles' scenarios (an image the clients read or are sent).

Each oracle imports it from here (`tools/`), so that all of them write the same bytes for the
same size and colour.
"""
import struct
import zlib


def png(w=2, h=2, rgb=(255, 0, 0)):
    """A `w` x `h` PNG of one colour (red by default), uncompressed filter 0 rows."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
    raw = b"".join(b"\x00" + bytes(rgb) * w for _ in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
