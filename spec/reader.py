#!/usr/bin/env python3
"""An independent reader of fastpair files, written from spec/FORMAT.md alone.

Pure Python (standard library only, Python >= 3.9). It reads a whole file,
runs every check of the validation checklist (spec/FORMAT.md §9) and returns
the rows: ``bytes`` for a value, ``None`` for a null. Any violation raises
:class:`FormatError`, which names the spec section, the absolute file offset
and the invariant (the names of §9, e.g. ``ChecksumMismatch``). The checks
run in §9's order, so the first violation found, and its invariant, are the
ones the Rust reader reports (python/tests/test_spec_reader.py checks this on
every testdata/corrupt file); offsets are diagnostic (§9) and may differ.

It is slow (a pure-Python token decoder) and meant as documentation and as a
cross-check of the Rust reader, not for production use::

    >>> import reader
    >>> rows = reader.read_rows("col.fpc")

CLI::

    python3 spec/reader.py FILE            # one row per line (repr of bytes; None for null)
    python3 spec/reader.py --count FILE    # the number of rows
    python3 spec/reader.py --raw FILE      # raw bytes, one row per line (nulls as empty)

Section numbers (§N) in comments refer to spec/FORMAT.md.
"""

from __future__ import annotations

import lzma
import struct
import sys
import zlib
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

# ---------------------------------------------------------------- constants (§1, §2, §3, §8)

MAGIC = b"FASTPAIR"
VERSIONS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
HEADER_LEN = 16
TAIL_LEN = 24
FOOTER_PREFIX_LEN = 32
DICT_ENTRY_LEN = 24
CHUNK_ENTRY_LEN = 48
DICT_HEADER_LEN = 136
CHUNK_HEADER_LEN = 32
CASCADE_BLOCK = 128

MAX_CHUNK_ROWS = 1 << 26
MAX_CHUNK_CODES = (1 << 32) - 2
MAX_CHUNK_BYTES = (1 << 32) - 1
MAX_VALUE_LEN = 1 << 30
MAX_CHUNKS = 1 << 24
MAX_DICTS = 1 << 16
U32_MAX = (1 << 32) - 1

# §4.2: codec id -> (name, code_bits, maximum token length)
CODECS = {1: ("OnPair-12", 12, 16), 2: ("OnPair-16", 16, 16), 3: ("FSST-12", 12, 8)}

CHUNK_FLAG_VALIDITY = 1  # §5.1 bit 0
CHUNK_FLAG_VALUE_DICT = 2  # §5.1 bit 1 (versions 2-3)

# §5.0 (version 4): chunk kinds, part tags, the parts of each kind in order.
KIND_CODED, KIND_VALUE_DICT, KIND_LOG_TEMPLATES = 1, 2, 3
P_CODES, P_SIDECAR, P_ROW_CODES, P_ROW_BYTES, P_VALIDITY, P_VALUE_INDEX, P_CHECKSUMS, P_LOG_PAYLOAD = range(1, 9)
KIND_PARTS = {
    KIND_CODED: [P_CODES, P_SIDECAR, P_ROW_CODES, P_ROW_BYTES, P_VALIDITY, P_CHECKSUMS],
    KIND_VALUE_DICT: [P_CODES, P_SIDECAR, P_ROW_CODES, P_ROW_BYTES, P_VALIDITY, P_VALUE_INDEX, P_CHECKSUMS],
    KIND_LOG_TEMPLATES: [P_VALIDITY, P_LOG_PAYLOAD, P_CHECKSUMS],
}


def kind_of_entry(version: int, values: int, codes: int, nbytes: int) -> int:
    """§5.0/§5.8: the kind the footer entry alone tells."""
    if values > 0:
        return KIND_VALUE_DICT
    if version >= 4 and codes == 0 and nbytes > 0:
        return KIND_LOG_TEMPLATES
    return KIND_CODED
CHUNK_FRAME_LEN = 16
PART_ENTRY_LEN = 8
MAX_PARTS = 16
CODE_BLOCK = 1024  # §5.7: codes per checksum block of the codes part
BYTE_BLOCK = 4096  # §5.7: bytes per checksum block of every other part


class FormatError(ValueError):
    """A file that violates spec/FORMAT.md. ``section`` is the spec section
    (e.g. ``"§6.4"``), ``offset`` the absolute byte offset in the file where
    the offending structure starts, ``invariant`` the §9 check name."""

    def __init__(self, section: str, offset: int, invariant: str, detail: str):
        self.section = section
        self.offset = offset
        self.invariant = invariant
        self.detail = detail
        super().__init__(f"{section} at offset {offset}: {invariant}: {detail}")


def align16(n: int) -> int:
    return (n + 15) & ~15


def u32(buf: bytes, off: int) -> int:
    return struct.unpack_from("<I", buf, off)[0]


def u64(buf: bytes, off: int) -> int:
    return struct.unpack_from("<Q", buf, off)[0]


def check(cond: bool, section: str, offset: int, invariant: str, detail: str) -> None:
    if not cond:
        raise FormatError(section, offset, invariant, detail)


def check_zero(buf: bytes, start: int, end: int, section: str, base: int, what: str) -> None:
    """Reserved fields and padding are zero (§1). ``base`` is the file offset of ``buf[0]``."""
    nz = next((i for i in range(start, end) if buf[i]), None)
    check(nz is None, section, base + (nz if nz is not None else start), "NonZeroReserved", f"{what} not zero")


# ---------------------------------------------------------------- footer (§3)


@dataclass
class DictEntry:
    offset: int
    length: int
    crc: int


@dataclass
class ChunkEntry:
    offset: int
    length: int
    crc: int
    dict: int
    rows: int
    codes: int
    bytes: int
    nulls: int
    values: int  # versions 2-3: distinct values of a value-dictionary chunk, else 0


@dataclass
class Footer:
    num_dicts: int
    num_chunks: int
    total_rows: int
    total_bytes: int
    dicts: List[DictEntry]
    chunks: List[ChunkEntry]


# ---------------------------------------------------------------- dictionary (§4)


@dataclass
class Dictionary:
    id: int
    offset: int  # file offset of the section
    codec: int
    code_bits: int
    width: int  # W
    n: int  # N
    hist: List[int]
    tokens: List[bytes]
    used_hist: List[int] = field(default_factory=lambda: [0] * 16)  # §9 step 14
    users: int = 0


# ---------------------------------------------------------------- cascaded sequences (§6)


def unpack_block(data: bytes, bits: int) -> List[int]:
    """§6.2: 128 residuals packed BitPacker4x-style at ``bits`` bits: value i
    is lane (i mod 4)'s value (i div 4); lane l's words are the u32 numbers
    l, l+4, l+8, .. of the block, each lane LSB first across its words."""
    if bits == 0:
        return [0] * CASCADE_BLOCK
    words = struct.unpack(f"<{4 * bits}I", data)
    mask = (1 << bits) - 1
    out = [0] * CASCADE_BLOCK
    for lane in range(4):
        lane_words = words[lane::4]
        stream = int.from_bytes(struct.pack(f"<{bits}I", *lane_words), "little")
        for j in range(32):
            out[4 * j + lane] = (stream >> (j * bits)) & mask
    return out


def read_sequence(part: bytes, base: int, what: str) -> List[int]:
    """Decodes and checks (§6.4) one cascaded sequence stored in ``part``
    (the part's exact, unpadded bytes; ``base`` = its file offset)."""
    sec = "§6.4"
    check(len(part) >= 16, sec, base, "LengthPastEnd", f"{what}: no room for the 16-byte sequence header")
    n, blocks, v0, reserved = struct.unpack_from("<4I", part, 0)
    check(reserved == 0, sec, base + 12, "NonZeroReserved", f"{what}: reserved header word")
    check(n >= 1, sec, base, "BadField", f"{what}: sequence count n = 0")
    want_blocks = (n - 1 + CASCADE_BLOCK - 1) // CASCADE_BLOCK
    check(blocks == want_blocks, sec, base + 4, "SequenceBlockCount", f"{what}: {blocks} blocks for n = {n} (want {want_blocks})")
    dir_end = 16 + 16 * blocks
    check(dir_end <= len(part), sec, base, "LengthPastEnd", f"{what}: directory of {blocks} blocks past the part's end")
    # Directory: base, min, offset, bits, 3 reserved bytes.
    entries = []
    running = 0
    for k in range(blocks):
        e = 16 + 16 * k
        b_base, b_min, b_off, b_bits = struct.unpack_from("<IIIB", part, e)
        check_zero(part, e + 13, e + 16, sec, base, f"{what}: block {k} reserved bytes")
        check(b_bits <= 32, sec, base + e + 12, "BadField", f"{what}: block {k} bits = {b_bits} > 32")
        check(b_off == running, sec, base + e + 8, "Overlap", f"{what}: block {k} offset {b_off}, want {running}")
        entries.append((b_base, b_min, b_off, b_bits))
        running += 16 * b_bits
    check(len(part) == dir_end + running, sec, base, "SizeMismatch",
          f"{what}: part is {len(part)} bytes, header and directory imply {dir_end + running}")
    values = [v0]
    v = v0
    deltas = n - 1
    for k, (b_base, b_min, b_off, b_bits) in enumerate(entries):
        e = base + 16 + 16 * k
        check(b_base == v, sec, e, "SequenceBase", f"{what}: block {k} base {b_base}, running sum {v}")
        start = dir_end + b_off
        res = unpack_block(part[start:start + 16 * b_bits], b_bits)
        own = min(CASCADE_BLOCK, deltas - CASCADE_BLOCK * k)
        check(all(r == 0 for r in res[own:]), sec, e, "NonZeroReserved", f"{what}: block {k} padding residuals not 0")
        real = res[:own]
        check(min(real) == 0 and max(real).bit_length() == b_bits, sec, e, "NonCanonicalFrame",
              f"{what}: block {k} frame not canonical (min residual {min(real)}, width {max(real).bit_length()} vs bits {b_bits})")
        for r in real:
            v += b_min + r
            check(v <= U32_MAX, sec, e, "LimitExceeded", f"{what}: value exceeds u32::MAX")
            values.append(v)
    return values


def check_sequence_ends(seq: List[int], n: int, last: Optional[int], base: int, what: str, section: str) -> None:
    """§9 step 10: length, first value 0, last value."""
    check(len(seq) == n, section, base, "SequenceLength", f"{what}: {len(seq)} values, want {n}")
    check(seq[0] == 0, section, base, "SequenceFirst", f"{what}: first value {seq[0]}, want 0")
    if last is not None:
        check(seq[-1] == last, section, base, "SequenceLast", f"{what}: last value {seq[-1]}, want {last}")


# ---------------------------------------------------------------- the reader


class Reader:
    """Opens and fully validates a fastpair file held in memory. ``rows()``
    returns every row. All checks run in ``__init__`` (the reader is eager:
    §9 steps 1-7 at open, then 8-14 for every chunk, in order)."""

    def __init__(self, data: bytes):
        self.data = data
        self.version = self._check_header_and_tail()  # §9 steps 1-4
        self.footer = self._parse_footer()  # steps 5-6
        self.dicts = [self._parse_dictionary(i, e) for i, e in enumerate(self.footer.dicts)]  # step 7
        # §3, version 11: log-template chunks alone name the implicit
        # dictionary 0, stored nowhere (not in ``dicts``): OnPair-12's 256
        # single bytes, whose tokens none of them uses.
        self.implicit = Dictionary(0, 0, 1, 12, 8, 256, [0] * 16, [bytes([b]) for b in range(256)])
        last_user = {e.dict: i for i, e in enumerate(self.footer.chunks)}
        for d in self.dicts:  # step 7: a dictionary no chunk uses has an all-zero histogram
            if d.id not in last_user:
                self._check_histogram(d)
        self._rows: List[Optional[bytes]] = []
        for i, e in enumerate(self.footer.chunks):  # steps 8-13b
            self._rows.extend(self._read_chunk(i, e))
            if last_user[e.dict] == i and self.dicts:  # step 14: its last chunk is validated
                self._check_histogram(self.dicts[e.dict])

    @staticmethod
    def _check_histogram(d: "Dictionary") -> None:
        check(d.used_hist == d.hist, "§4", d.offset + 8, "HistogramMismatch",
              f"dictionary {d.id}: histogram {d.hist} but its chunks emit {d.used_hist}")

    @classmethod
    def open(cls, path: str) -> "Reader":
        with open(path, "rb") as f:
            return cls(f.read())

    def rows(self) -> List[Optional[bytes]]:
        return list(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    # ------------------------------------------------------------ §2: header and tail

    def _check_header_and_tail(self) -> int:
        d = self.data
        flen = len(d)
        check(flen >= HEADER_LEN + TAIL_LEN, "§2", 0, "FileTooSmall", f"{flen} bytes < header + tail ({HEADER_LEN + TAIL_LEN})")
        t = flen - TAIL_LEN
        check(d[t + 16:t + 24] == MAGIC, "§2", t + 16, "BadMagic", "tail magic is not FASTPAIR")
        check(d[0:8] == MAGIC, "§2", 0, "BadMagic", "header magic is not FASTPAIR")
        hv, tv = u32(d, 8), u32(d, t + 8)
        check(tv in VERSIONS, "§10", t + 8, "UnsupportedVersion", f"tail version {tv}")
        check(hv in VERSIONS, "§10", 8, "UnsupportedVersion", f"header version {hv}")
        check(hv == tv, "§2", t + 8, "VersionMismatch", f"header version {hv}, tail version {tv}")
        check_zero(d, t + 12, t + 16, "§2", 0, "tail reserved")
        check_zero(d, 12, 16, "§2", 0, "header reserved")
        footer_len = u32(d, t)
        # The footer lies between the header and the tail.
        check(footer_len <= flen - TAIL_LEN - HEADER_LEN, "§2", t, "LengthPastEnd",
              f"footer_len {footer_len} does not fit between header and tail")
        self.footer_start = flen - TAIL_LEN - footer_len
        self.footer_len = footer_len
        return hv

    # ------------------------------------------------------------ §3: footer

    def _parse_footer(self) -> Footer:
        d, fs, fl = self.data, self.footer_start, self.footer_len
        footer = d[fs:fs + fl]
        crc = u32(d, len(d) - TAIL_LEN + 4)
        check(zlib.crc32(footer) == crc, "§2", fs, "ChecksumMismatch", "footer CRC32")
        sec = "§3"
        check(fl >= FOOTER_PREFIX_LEN, sec, fs, "LengthPastEnd", f"footer of {fl} bytes has no 32-byte prefix")
        num_dicts, num_chunks, total_rows, total_bytes = struct.unpack_from("<IIQQ", footer, 0)
        check(num_dicts <= MAX_DICTS, sec, fs, "LimitExceeded", f"num_dicts {num_dicts} > {MAX_DICTS}")
        check(num_chunks <= MAX_CHUNKS, sec, fs + 4, "LimitExceeded", f"num_chunks {num_chunks} > {MAX_CHUNKS}")
        want = FOOTER_PREFIX_LEN + DICT_ENTRY_LEN * num_dicts + CHUNK_ENTRY_LEN * num_chunks
        check(fl == want, sec, fs, "SizeMismatch", f"footer is {fl} bytes, counts imply {want}")
        check_zero(footer, 24, 32, sec, fs, "footer prefix reserved")

        dicts = []
        for i in range(num_dicts):
            o = FOOTER_PREFIX_LEN + DICT_ENTRY_LEN * i
            off, length, crc = struct.unpack_from("<QQI", footer, o)
            check_zero(footer, o + 20, o + 24, sec, fs, f"dictionary entry {i} reserved")
            dicts.append(DictEntry(off, length, crc))
        chunks = []
        base = FOOTER_PREFIX_LEN + DICT_ENTRY_LEN * num_dicts
        for i in range(num_chunks):
            o = base + CHUNK_ENTRY_LEN * i
            at = fs + o
            off, length, crc, dict_id, rows, codes, nbytes, nulls, values = struct.unpack_from("<QQIIIIQII", footer, o)
            e = ChunkEntry(off, length, crc, dict_id, rows, codes, nbytes, nulls, values)
            check(rows <= MAX_CHUNK_ROWS, sec, at + 24, "LimitExceeded", f"chunk {i}: rows {rows}")
            check(codes <= MAX_CHUNK_CODES, sec, at + 28, "LimitExceeded", f"chunk {i}: codes {codes}")
            check(nbytes <= MAX_CHUNK_BYTES, sec, at + 32, "LimitExceeded", f"chunk {i}: bytes {nbytes}")
            implicit = self.version >= 11 and num_dicts == 0 and dict_id == 0  # §3: checked with the kinds below
            check(dict_id < num_dicts or implicit, sec, at + 20, "BadDictionaryRef",
                  f"chunk {i}: dict {dict_id} >= num_dicts {num_dicts}")
            check(nulls <= rows, sec, at + 40, "NullsOverRows", f"chunk {i}: nulls {nulls} > rows {rows}")
            if self.version == 1:
                check(values == 0, sec, at + 44, "NonZeroReserved", f"chunk {i}: version-1 reserved word (values) not zero")
            check(values <= rows - nulls, sec, at + 44, "ValuesOverRows", f"chunk {i}: values {values} > rows - nulls {rows - nulls}")
            if self.version >= 4 and values == 0 and codes == 0 and nbytes > 0:
                ok = True  # §5.8: a log-template chunk has no codes
            elif values == 0:
                ok = codes <= nbytes <= 16 * codes
            else:  # §3: a value-dictionary chunk's bytes repeat its values
                ok = codes <= nbytes
            check(ok, sec, at + 28, "BytesAgainstCodes", f"chunk {i}: codes {codes}, bytes {nbytes}")
            chunks.append(e)

        # Sections: chunks in row order, then dictionaries in id order, back
        # to back from byte 16, the footer right after the last (§2).
        expect = HEADER_LEN
        for kind, entries, entry_base, entry_len in (("chunk", chunks, base, CHUNK_ENTRY_LEN),
                                                     ("dictionary", dicts, FOOTER_PREFIX_LEN, DICT_ENTRY_LEN)):
            for i, e in enumerate(entries):
                at = fs + entry_base + entry_len * i
                check(e.offset >= HEADER_LEN, sec, at, "Overlap", f"{kind} {i}: section starts at {e.offset}, inside the header")
                check(e.offset + e.length <= fs, sec, at, "LengthPastEnd",
                      f"{kind} {i}: section [{e.offset}, {e.offset + e.length}) ends past the footer start {fs}")
                check(e.offset >= expect, sec, at, "Overlap", f"{kind} {i}: starts at {e.offset}, before {expect}")
                check(e.offset == expect, sec, at, "Gap", f"{kind} {i}: starts at {e.offset}, want {expect}")
                check(e.length % 16 == 0, sec, at + 8, "SizeMismatch", f"{kind} {i}: length {e.length} not a multiple of 16")
                expect = e.offset + e.length
        check(expect == fs, sec, fs, "Gap", f"last section ends at {expect}, footer starts at {fs}")

        rows_sum = sum(c.rows for c in chunks)
        bytes_sum = sum(c.bytes for c in chunks)
        check(total_rows == rows_sum, sec, fs + 8, "TotalRows", f"total_rows {total_rows}, chunks sum to {rows_sum}")
        check(total_bytes == bytes_sum, sec, fs + 16, "TotalBytes", f"total_bytes {total_bytes}, chunks sum to {bytes_sum}")
        if self.version >= 4:  # §9 step 6, one spelling (§10.1)
            for i, e in enumerate(chunks):
                check(e.rows > 0, sec, fs + base + CHUNK_ENTRY_LEN * i, "ZeroRowChunk", f"chunk {i} has no row")
            logs = [kind_of_entry(self.version, e.values, e.codes, e.bytes) == KIND_LOG_TEMPLATES for e in chunks]
            implicit = self.version >= 11 and chunks and num_dicts == 0
            if implicit:  # §3, version 11: only log-template chunks name the implicit dictionary
                for i, log in enumerate(logs):
                    check(log, sec, fs + base + CHUNK_ENTRY_LEN * i, "BadDictionaryRef",
                          f"chunk {i} is not log templates and names dictionary 0, but the file stores none")
            else:
                check(not (self.version >= 11 and chunks and all(logs)), sec, fs + FOOTER_PREFIX_LEN, "UnusedDictionary",
                      "every chunk is log templates, yet the file stores a dictionary (version 11: none)")
                nxt = 0
                for i, e in enumerate(chunks):
                    at = fs + base + CHUNK_ENTRY_LEN * i
                    check(e.dict <= nxt, sec, at, "DictionaryOrder", f"chunk {i} names dictionary {e.dict}, at most {nxt} (numbered by first use)")
                    nxt = max(nxt, e.dict + 1)
                check(nxt == num_dicts, sec, fs, "UnusedDictionary", f"dictionary {nxt} is used by no chunk")
        return Footer(num_dicts, num_chunks, total_rows, total_bytes, dicts, chunks)

    # ------------------------------------------------------------ §4: dictionaries

    def _parse_dictionary(self, i: int, e: DictEntry) -> Dictionary:
        d = self.data
        s = d[e.offset:e.offset + e.length]
        base = e.offset
        check(zlib.crc32(s) == e.crc, "§3", base, "ChecksumMismatch", f"dictionary {i} CRC32")
        sec = "§4"
        check(len(s) >= DICT_HEADER_LEN, sec, base, "LengthPastEnd", f"dictionary {i}: section shorter than its header")
        codec, code_bits, width, flags, n = struct.unpack_from("<BBBBI", s, 0)
        hist = list(struct.unpack_from("<16Q", s, 8))
        check(codec in CODECS, sec, base, "BadField", f"dictionary {i}: codec {codec}")
        name, want_bits, max_len = CODECS[codec]
        check(code_bits == want_bits, sec, base + 1, "BadField", f"dictionary {i}: code_bits {code_bits} for {name}")
        check(width in (8, 16), sec, base + 2, "BadField", f"dictionary {i}: W = {width}")
        check(256 <= n <= (1 << code_bits), sec, base + 4, "BadField", f"dictionary {i}: N = {n}")
        if self.version >= 5:
            # §4.5: bit 1 = planes stored, bit 0 = high plane (only with bit 1).
            check(flags & ~3 == 0 and flags != 1, sec, base + 3, "BadField", f"dictionary {i}: flags {flags:#x}")
        if self.version >= 5 and flags & 2:
            tokens = self._plane_tokens(i, s, base, n, width, flags & 1, max_len)
        elif self.version >= 6:
            # §4: the 256 single bytes are codes 0-255, not stored.
            tokens = [bytes([b]) for b in range(256)] + self._front_coded_tokens(i, s, base, n - 256, max_len)
        elif self.version >= 3:
            check(flags == 0, sec, base + 3, "BadField", f"dictionary {i}: flags {flags:#x} (zero in versions 3-4)")
            tokens = self._front_coded_tokens(i, s, base, n, max_len)
        else:
            tokens = self._plane_tokens(i, s, base, n, width, flags, max_len)
        # §4.1: all 256 single bytes are present.
        singles = {t[0] for t in tokens if len(t) == 1}
        check(len(singles) == 256, "§4.1", base, "MissingSingleByte",
              f"dictionary {i}: single bytes missing: {sorted(set(range(256)) - singles)[:8]}...")
        if self.version >= 4:  # §4.4, one spelling (§10.1)
            # Error offsets: token c's length nibble (version 6 front coding
            # stores the learned tokens only).
            first = 256 if self.version >= 6 and not flags & 2 else 0
            total, long = sum(hist), sum(hist[8:])
            derived = 16 if 10 * long > total else 8  # §4.3, in integers
            check(width == derived, "§4.3", base + 2, "WidthNotDerived", f"dictionary {i}: W = {width}, histogram gives {derived}")
            for c in range(256):
                check(tokens[c] == bytes([c]), "§4.4", base + 136 + c // 2, "SingleByteOrder", f"dictionary {i}: code {c} is {tokens[c]!r}")
            for c in range(256, n):
                check(len(tokens[c]) > 1, "§4.4", base + 136 + (c - first) // 2, "DuplicateToken", f"dictionary {i}: token {c} is a single byte")
                check(c == 256 or tokens[c - 1] < tokens[c], "§4.4", base + 136 + (c - first) // 2, "TokenOrder",
                      f"dictionary {i}: token {c} not after token {c - 1}")
        return Dictionary(i, base, codec, code_bits, width, n, hist, tokens)

    @staticmethod
    def _nibbles(s: bytes, start: int, n: int, base: int, what: str, sec: str, padding: bool = True) -> List[int]:
        """A nibble table of ``n`` entries at ``s[start:]``: entry c in the low
        nibble of byte c/2 when c is even, the high one when odd. An odd
        ``n`` leaves the last high nibble unused and zero (checked here
        unless ``padding`` is false: the caller checks it after sizes)."""
        out = []
        for c in range(n):
            b = s[start + c // 2]
            out.append(b & 15 if c % 2 == 0 else b >> 4)
        if n % 2 and padding:
            check(s[start + n // 2] >> 4 == 0, sec, base + start + n // 2, "NonZeroReserved", f"{what}: padding nibble")
        return out

    def _front_coded_tokens(self, i: int, s: bytes, base: int, n: int, max_len: int) -> List[bytes]:
        """Versions 3-6 (§4): lengths, shared prefixes, suffixes, zero padding,
        of the ``n`` tokens stored (version 6: the learned ones, the first
        of them coded against nothing)."""
        sec = "§4"
        half = (n + 1) // 2
        lengths_at = DICT_HEADER_LEN
        prefixes_at = lengths_at + half
        suffixes_at = prefixes_at + half
        check(suffixes_at <= len(s), sec, base, "LengthPastEnd", f"dictionary {i}: token lengths / shared prefixes")
        # §9 step 7: every size first (from the nibbles), then the padding
        # nibbles and the tokens.
        lens = [x + 1 for x in self._nibbles(s, lengths_at, n, base, f"dictionary {i} token lengths", sec, False)]
        prefs = self._nibbles(s, prefixes_at, n, base, f"dictionary {i} shared prefixes", "§4", False)
        # Size everything from the nibbles before touching the token bytes. A
        # prefix longer than its token counts 0 bytes here (§4); it is
        # rejected as TokenPrefix below, after the size checks (§9 step 7).
        suffix_total = sum(max(0, lens[c] - prefs[c]) for c in range(n))
        end = suffixes_at + suffix_total
        check(end <= len(s), sec, base + suffixes_at, "LengthPastEnd", f"dictionary {i}: token suffixes ({suffix_total} B)")
        check(len(s) == align16(end), sec, base, "SizeMismatch", f"dictionary {i}: section {len(s)} B, parts imply {align16(end)}")
        check_zero(s, end, len(s), sec, base, f"dictionary {i} padding")
        if n % 2:
            for at, what in ((lengths_at, "token lengths"), (prefixes_at, "shared prefixes")):
                check(s[at + n // 2] >> 4 == 0, sec, base + at + n // 2, "NonZeroReserved",
                      f"dictionary {i} {what}: padding nibble")
        if n:
            check(prefs[0] == 0, "§4.4", base + prefixes_at, "TokenPrefix", f"dictionary {i}: prefix(0) = {prefs[0]}")
        for c in range(1, n):
            check(prefs[c] <= lens[c] and prefs[c] <= lens[c - 1], "§4.4", base + prefixes_at + c // 2, "TokenPrefix",
                  f"dictionary {i}: prefix({c}) = {prefs[c]} exceeds len({c}) = {lens[c]} or len({c - 1}) = {lens[c - 1]}")
        for c in range(n):
            check(lens[c] <= max_len, "§4.4", base + lengths_at + c // 2, "BadTokenLength",
                  f"dictionary {i}: token {c} has {lens[c]} bytes > {max_len}")
        tokens: List[bytes] = []
        p = suffixes_at
        prev = b""
        for c in range(n):
            k = lens[c] - prefs[c]
            tok = prev[:prefs[c]] + s[p:p + k]
            p += k
            if c > 0:  # the prefix is the longest shared one, capped at 15
                lcp = 0
                while lcp < min(len(prev), len(tok)) and prev[lcp] == tok[lcp]:
                    lcp += 1
                check(prefs[c] == min(lcp, 15), "§4.4", base + prefixes_at + c // 2, "TokenPrefix",
                      f"dictionary {i}: prefix({c}) = {prefs[c]}, longest shared prefix {min(lcp, 15)}")
            tokens.append(tok)
            prev = tok
        return tokens

    def _plane_tokens(self, i: int, s: bytes, base: int, n: int, width: int, flags: int, max_len: int) -> List[bytes]:
        """Versions 1-2, and 5 with flag bit 1 (§4.5): lengths, low plane,
        optional high plane, each padded to 16. ``flags`` is bit 0 only."""
        sec = "§4.5"
        check(flags & ~1 == 0, sec, base + 3, "BadField", f"dictionary {i}: flags {flags:#x}")
        high = bool(flags & 1)
        check(not (high and width == 16), sec, base + 3, "BadField", f"dictionary {i}: high plane flag with W = 16")
        lengths_at = DICT_HEADER_LEN
        half = (n + 1) // 2
        low_at = align16(lengths_at + half)
        high_at = align16(low_at + n * width)
        end = align16(high_at + n * (16 - width)) if high else high_at
        check(end <= len(s), sec, base, "LengthPastEnd", f"dictionary {i}: planes")
        check(len(s) == end, sec, base, "SizeMismatch", f"dictionary {i}: section {len(s)} B, header implies {end}")
        lens = [x + 1 for x in self._nibbles(s, lengths_at, n, base, f"dictionary {i} token lengths", sec)]
        check_zero(s, lengths_at + half, low_at, sec, base, f"dictionary {i} lengths padding")
        check_zero(s, low_at + n * width, high_at, sec, base, f"dictionary {i} low plane padding")
        if high:
            check_zero(s, high_at + n * (16 - width), end, sec, base, f"dictionary {i} high plane padding")
        tokens = []
        for c in range(n):
            L = lens[c]
            check(L <= max_len, "§4.4", base + lengths_at + c // 2, "BadTokenLength", f"dictionary {i}: token {c} has {L} bytes > {max_len}")
            check(high or L <= width, "§4.4", base + lengths_at + c // 2, "BadTokenLength",
                  f"dictionary {i}: token {c} has {L} bytes > W = {width} without a high plane")
            slot = s[low_at + c * width:low_at + (c + 1) * width]
            if high:
                slot += s[high_at + c * (16 - width):high_at + (c + 1) * (16 - width)]
            check(not any(slot[L:]), "§4.1", base + low_at + c * width, "NonZeroReserved", f"dictionary {i}: token {c} slot padding")
            tokens.append(bytes(slot[:L]))
        if high:
            check(any(len(t) > width for t in tokens), sec, base + 3, "UnusedHighPlane", f"dictionary {i}: no token needs the high plane")
        return tokens

    # ------------------------------------------------------------ §5: chunks

    def _read_chunk(self, i: int, e: ChunkEntry) -> List[Optional[bytes]]:
        d = self.data
        base = e.offset
        s = d[base:base + e.length]
        dic = self.dicts[e.dict] if self.dicts else self.implicit
        value_dict = e.values > 0
        if self.version >= 4:
            parts, has_validity, g = self._chunk_frame_v4(i, e, s, base, dic)
        else:
            parts, has_validity, g = self._chunk_header_v1(i, e, s, base, dic)
        if kind_of_entry(self.version, e.values, e.codes, e.bytes) == KIND_LOG_TEMPLATES:
            return self._read_log_chunk(i, e, base, parts, has_validity)
        (codes_at, codes_part), (side_at, side_part), (rc_at, rc_part), (rb_at, rb_part), (val_at, val_part) = parts[:5]

        # Step 10: the three sequences (§5.3, §5.4, §6). In a value-dictionary
        # chunk their "rows" are the D values (§5.6).
        n_items = e.values if value_dict else e.rows
        side = read_sequence(side_part, base + side_at, f"chunk {i} sidecar")
        rc = read_sequence(rc_part, base + rc_at, f"chunk {i} row codes")
        rb = read_sequence(rb_part, base + rb_at, f"chunk {i} row bytes")
        batches = (e.codes + g - 1) // g
        check_sequence_ends(side, batches + 1, None if value_dict else e.bytes, base + side_at, f"chunk {i} sidecar", "§5.3")
        check_sequence_ends(rc, n_items + 1, e.codes, base + rc_at, f"chunk {i} row codes", "§5.4")
        check_sequence_ends(rb, n_items + 1, None if value_dict else e.bytes, base + rb_at, f"chunk {i} row bytes", "§5.4")
        if value_dict:  # both end at the values' total length
            check(side[-1] == rb[-1], "§5.6", base + side_at, "SequenceLast",
                  f"chunk {i}: sidecar ends at {side[-1]}, row bytes at {rb[-1]}")

        # Step 11: codes (§5.2).
        codes = self._unpack_codes(codes_part, e.codes, dic.code_bits, base + codes_at, i)
        toklen = [len(t) for t in dic.tokens]
        n = dic.n
        for j, c in enumerate(codes):
            if c >= n:
                raise FormatError("§5.2", base + codes_at, "CodeOutOfRange", f"chunk {i}: code {j} = {c} >= N = {n}")
        code_len = [toklen[c] for c in codes]
        for b in range(batches):
            got = sum(code_len[b * g:(b + 1) * g])
            check(got == side[b + 1] - side[b], "§5.3", base + side_at, "SidecarMismatch",
                  f"chunk {i}: batch {b} codes are {got} B, sidecar says {side[b + 1] - side[b]}")
        # Step 12: row (or value) lengths.
        for r in range(n_items):
            check(rb[r + 1] - rb[r] <= MAX_VALUE_LEN, "§8", base + rb_at, "LimitExceeded",
                  f"chunk {i}: row {r} longer than MAX_VALUE_LEN")
            got = sum(code_len[rc[r]:rc[r + 1]])
            check(rc[r] <= rc[r + 1] and rb[r] <= rb[r + 1] and got == rb[r + 1] - rb[r], "§5.4", base + rb_at,
                  "RowLengthMismatch", f"chunk {i}: row {r} codes are {got} B, row bytes say {rb[r + 1] - rb[r]}")
        items = [b"".join(dic.tokens[c] for c in codes[rc[r]:rc[r + 1]]) for r in range(n_items)]

        # Step 13: validity (§5.5).
        valid = [True] * e.rows
        if has_validity:
            bits = int.from_bytes(val_part, "little")
            check(bits >> e.rows == 0, "§5.5", base + val_at, "NonZeroReserved", f"chunk {i}: validity padding bits")
            valid = [bool((bits >> r) & 1) for r in range(e.rows)]
            nulls = valid.count(False)
            check(nulls == e.nulls, "§5.5", base + val_at, "NullCount", f"chunk {i}: {nulls} zero bits, footer says {e.nulls} nulls")
            if not value_dict:
                for r in range(e.rows):
                    check(valid[r] or rc[r] == rc[r + 1], "§5.5", base + val_at, "NullWithValue", f"chunk {i}: null row {r} has codes")

        # Step 13b: value dictionary (§5.6).
        if value_dict:
            idx_at, idx_part = parts[5]
            k = self._value_index(i, e, idx_part, base + idx_at)
            rows: List[Optional[bytes]] = []
            top = -1
            total_bytes = 0
            for r in range(e.rows):
                if not valid[r]:
                    check(k[r] == 0, "§5.6", base + idx_at, "NullWithValue", f"chunk {i}: null row {r} names value {k[r]}")
                    rows.append(None)
                    continue
                check(k[r] < e.values, "§5.6", base + idx_at, "ValueIndexOutOfRange", f"chunk {i}: row {r} names value {k[r]} >= D = {e.values}")
                check(k[r] <= top + 1, "§5.6", base + idx_at, "ValueOrder", f"chunk {i}: row {r} names value {k[r]} before value {top + 1}")
                top = max(top, k[r])
                total_bytes += len(items[k[r]])
                rows.append(items[k[r]])
            check(top + 1 == e.values, "§5.6", base + idx_at, "ValueOrder", f"chunk {i}: only {top + 1} of {e.values} values used")
            check(total_bytes == e.bytes, "§5.6", base + idx_at, "ValueBytesMismatch", f"chunk {i}: rows add up to {total_bytes} B, footer says {e.bytes}")
            check(len(set(items)) == len(items), "§5.6", base + codes_at, "DuplicateValue", f"chunk {i}: two values are equal")
        else:
            rows = [items[r] if valid[r] else None for r in range(e.rows)]

        # Step 14 bookkeeping: the histogram counts every emitted code.
        for ln in code_len:
            dic.used_hist[ln - 1] += 1
        return rows

    def _read_log_chunk(self, i: int, e: ChunkEntry, base: int, parts, has_validity: bool) -> List[Optional[bytes]]:
        """§5.8 (§9 steps 13 and 13c): the validity bitmap, then the payload's
        rows: as many as the chunk's, null rows empty, at most MAX_VALUE_LEN
        each, adding up to the entry's bytes."""
        (val_at, val_part), (pay_at, payload) = parts
        valid = [True] * e.rows
        if has_validity:
            bits = int.from_bytes(val_part, "little")
            check(bits >> e.rows == 0, "§5.5", base + val_at, "NonZeroReserved", f"chunk {i}: validity padding bits")
            valid = [bool((bits >> r) & 1) for r in range(e.rows)]
            nulls = valid.count(False)
            check(nulls == e.nulls, "§5.5", base + val_at, "NullCount", f"chunk {i}: {nulls} zero bits, footer says {e.nulls} nulls")
        items = decode_log_payload(payload, base + pay_at)
        want = (7 if self.version >= 11 else 6 if self.version >= 10 else 5 if self.version >= 9
                else 4 if self.version >= 8 else 3 if self.version >= 7 else 2 if self.version >= 6 else 1)
        check(log_payload_form(payload) == want, LOG_SECTION, base + pay_at, "BadField",
              f"chunk {i}: log payload magic {payload[:4]!r} (FPL7/FPS7 in format version 11, FPL6/FPS6 in 10, FPL5/FPS5 in 9, "
              "FPL4/FPS4 in 8, FPL3/FPS3 in 7, FPL2/FPS2 in 6, FPL1/FPS1 in 4-5)")
        check(len(items) == e.rows, LOG_SECTION, base + pay_at, "SizeMismatch", f"chunk {i}: log payload rows {len(items)}, want {e.rows}")
        for r, v in enumerate(items):
            check(len(v) <= MAX_VALUE_LEN, "§8", base + pay_at, "LimitExceeded", f"chunk {i}: row {r} longer than MAX_VALUE_LEN")
            check(valid[r] or not v, "§5.5", base + val_at, "NullWithValue", f"chunk {i}: null row {r} has a value")
        total = sum(len(v) for v in items)
        check(total == e.bytes, LOG_SECTION, base + pay_at, "SizeMismatch", f"chunk {i}: log rows bytes {total}, footer says {e.bytes}")
        return [items[r] if valid[r] else None for r in range(e.rows)]

    def _chunk_header_v1(self, i: int, e: ChunkEntry, s: bytes, base: int, dic: "Dictionary"):
        """Versions 1-3: §9 steps 8-9, the whole-section CRC32 and §5.1's
        fixed header. Returns the parts [(offset in section, bytes)] in §5.1
        order, whether the bitmap is present, and G."""
        check(zlib.crc32(s) == e.crc, "§3", base, "ChecksumMismatch", f"chunk {i} CRC32")  # step 8
        value_dict = e.values > 0

        # Step 9: the header (§5.1).
        sec = "§5.1"
        check(len(s) >= CHUNK_HEADER_LEN, sec, base, "LengthPastEnd", f"chunk {i}: shorter than its header")
        g, flags, l_codes, l_side, l_rc, l_rb, l_val, l_idx = struct.unpack_from("<8I", s, 0)
        check(16 <= g <= 65536 and g & (g - 1) == 0, sec, base, "BadField", f"chunk {i}: G = {g}")
        check(flags & ~3 == 0, sec, base + 4, "BadField", f"chunk {i}: flags {flags:#x}")
        check(bool(flags & CHUNK_FLAG_VALUE_DICT) == value_dict, sec, base + 4, "BadField",
              f"chunk {i}: chunk flags: value-dictionary bit {bool(flags & 2)} but footer values = {e.values}")
        if not value_dict:
            check(l_idx == 0, sec, base + 28, "NonZeroReserved", f"chunk {i}: reserved word")
        want_codes = 2 * e.codes if dic.code_bits == 16 else 3 * ((e.codes + 1) // 2)
        check(l_codes == want_codes, sec, base + 8, "SizeMismatch", f"chunk {i}: codes part {l_codes} B, want {want_codes}")
        has_validity = bool(flags & CHUNK_FLAG_VALIDITY)
        check(not (e.nulls > 0 and not has_validity), "§5.5", base + 4, "NullsWithoutValidity", f"chunk {i}: {e.nulls} nulls, no bitmap")
        check(not (e.nulls == 0 and has_validity), "§5.5", base + 4, "ValidityWithoutNulls", f"chunk {i}: bitmap but no nulls")
        want_val = (e.rows + 7) // 8 if has_validity else 0
        check(l_val == want_val, sec, base + 24, "SizeMismatch", f"chunk {i}: validity part {l_val} B, want {want_val}")
        lens = [l_codes, l_side, l_rc, l_rb, l_val] + ([l_idx] if value_dict else [])
        total = CHUNK_HEADER_LEN + sum(align16(x) for x in lens)
        check(total <= len(s), sec, base, "LengthPastEnd", f"chunk {i}: parts ({total} B) past the section ({len(s)} B)")
        check(total == len(s), sec, base, "SizeMismatch", f"chunk {i}: parts ({total} B) do not fill the section ({len(s)} B)")
        parts = []
        p = CHUNK_HEADER_LEN
        for k, ln in enumerate(lens):
            parts.append((p, s[p:p + ln]))
            check_zero(s, p + ln, p + align16(ln), "§5", base, f"chunk {i} padding after part {k}")
            p += align16(ln)
        return parts, has_validity, g

    def _chunk_frame_v4(self, i: int, e: ChunkEntry, s: bytes, base: int, dic: "Dictionary"):
        """Version 4: §9 step 8 (the header's CRC32), step 9 (§5.0: kind,
        parts table) and step 9b (§5.7: every block's CRC32). Returns the
        parts [(offset in section, bytes)] in §5.1 order (codes, sidecar, row
        codes, row bytes, validity and, for a value dictionary, the value
        index), whether the bitmap is present, and G."""
        sec = "§5.0"
        value_dict = e.values > 0
        check(len(s) >= CHUNK_FRAME_LEN, sec, base, "LengthPastEnd", f"chunk {i}: shorter than its header")
        kind, g, reserved, nparts = struct.unpack_from("<4I", s, 0)
        check(nparts <= MAX_PARTS, sec, base + 16, "LimitExceeded", f"chunk {i}: {nparts} parts > {MAX_PARTS}")
        hlen = align16(CHUNK_FRAME_LEN + PART_ENTRY_LEN * nparts)
        check(hlen <= len(s), sec, base, "LengthPastEnd", f"chunk {i}: parts table past the section")
        check(zlib.crc32(s[:hlen]) == e.crc, "§3", base, "ChecksumMismatch", f"chunk {i} header CRC32")  # step 8
        check(kind in KIND_PARTS, sec, base, "UnknownChunkKind", f"chunk {i}: kind {kind}")
        check(kind == kind_of_entry(self.version, e.values, e.codes, e.bytes), sec, base + 4, "BadField",
              f"chunk {i}: chunk kind {kind}, footer values = {e.values}, codes = {e.codes}, bytes = {e.bytes}")
        check(16 <= g <= 65536 and g & (g - 1) == 0, sec, base + 8, "BadField", f"chunk {i}: G = {g}")
        check(reserved == 0, sec, base + 8, "NonZeroReserved", f"chunk {i}: chunk header reserved")
        want_tags = KIND_PARTS[kind]
        check(nparts == len(want_tags), sec, base + 16, "BadField", f"chunk {i}: chunk part count {nparts}")
        lens = {}
        for k, want in enumerate(want_tags):
            tag, ln = struct.unpack_from("<II", s, CHUNK_FRAME_LEN + PART_ENTRY_LEN * k)
            check(tag == want, sec, base + 24 + 8 * k, "BadField", f"chunk {i}: chunk part kind {tag}, want {want}")
            lens[tag] = ln
        check_zero(s, CHUNK_FRAME_LEN + PART_ENTRY_LEN * nparts, hlen, sec, base, f"chunk {i} header padding")
        want_codes = 2 * e.codes if dic.code_bits == 16 else 3 * ((e.codes + 1) // 2)
        check(lens.get(P_CODES, 0) == want_codes, sec, base + hlen, "SizeMismatch", f"chunk {i}: codes part {lens.get(P_CODES, 0)} B, want {want_codes}")
        has_validity = lens[P_VALIDITY] > 0
        want_val = (e.rows + 7) // 8 if has_validity else 0
        check(lens[P_VALIDITY] == want_val, sec, base + hlen, "SizeMismatch", f"chunk {i}: validity part {lens[P_VALIDITY]} B, want {want_val}")
        check(not (e.nulls > 0 and not has_validity), "§5.5", base, "NullsWithoutValidity", f"chunk {i}: {e.nulls} nulls, no bitmap")
        check(not (e.nulls == 0 and has_validity), "§5.5", base, "ValidityWithoutNulls", f"chunk {i}: bitmap but no nulls")
        # §5.7: one CRC32 per block of each part but the table.
        block = {t: (CODE_BLOCK * dic.code_bits // 8 if t == P_CODES else BYTE_BLOCK) for t in want_tags}
        want_table = 4 * sum((lens[t] + block[t] - 1) // block[t] for t in want_tags if t != P_CHECKSUMS)
        check(lens[P_CHECKSUMS] == want_table, "§5.7", base + hlen, "SizeMismatch", f"chunk {i}: checksum table {lens[P_CHECKSUMS]} B, want {want_table}")
        total = hlen + sum(align16(lens[t]) for t in want_tags)
        check(total <= len(s), sec, base, "LengthPastEnd", f"chunk {i}: parts ({total} B) past the section ({len(s)} B)")
        check(total == len(s), sec, base, "SizeMismatch", f"chunk {i}: parts ({total} B) do not fill the section ({len(s)} B)")
        at = {}
        p = hlen
        for t in want_tags:
            at[t] = p
            p += align16(lens[t])
        # Step 9b: every block against its CRC32, parts in table order.
        table = s[at[P_CHECKSUMS]:at[P_CHECKSUMS] + lens[P_CHECKSUMS]]
        entry = 0
        for t in want_tags:
            if t == P_CHECKSUMS:
                continue
            for b0 in range(0, lens[t], block[t]):
                blk = s[at[t] + b0:at[t] + min(b0 + block[t], lens[t])]
                check(zlib.crc32(blk) == u32(table, 4 * entry), "§5.7", base + at[t] + b0, "ChecksumMismatch",
                      f"chunk {i}: part {t} block {b0 // block[t]} CRC32")
                entry += 1
        for t in want_tags:  # zero padding after each part
            check_zero(s, at[t] + lens[t], at[t] + align16(lens[t]), "§5", base, f"chunk {i} padding after part {t}")
        if kind == KIND_LOG_TEMPLATES:
            order = [P_VALIDITY, P_LOG_PAYLOAD]
        else:
            order = [P_CODES, P_SIDECAR, P_ROW_CODES, P_ROW_BYTES, P_VALIDITY] + ([P_VALUE_INDEX] if value_dict else [])
        return [(at[t], s[at[t]:at[t] + lens[t]]) for t in order], has_validity, g

    @staticmethod
    def _unpack_codes(part: bytes, count: int, code_bits: int, at: int, i: int) -> List[int]:
        if code_bits == 16:
            return list(struct.unpack(f"<{count}H", part))
        out = []
        for j in range(0, len(part), 3):
            x = part[j] | part[j + 1] << 8 | part[j + 2] << 16
            out.append(x & 0xFFF)
            out.append(x >> 12)
        if count % 2:
            check(out[-1] == 0, "§5.2", at + len(part) - 3, "NonZeroPaddingCode", f"chunk {i}: 12-bit padding code {out[-1]}")
            out.pop()
        return out

    def _value_index(self, i: int, e: ChunkEntry, part: bytes, at: int) -> List[int]:
        """§5.6: each row's value number."""
        if self.version == 2:
            s = read_sequence(part, at, f"chunk {i} value index")
            check_sequence_ends(s, e.rows + 1, None, at, f"chunk {i} value index", "§5.6")
            return [s[r + 1] - s[r] for r in range(e.rows)]
        b = (e.values - 1).bit_length()
        want = (e.rows * b + 7) // 8
        check(len(part) == want, "§5.6", at, "SizeMismatch", f"chunk {i}: value index {len(part)} B, want {want}")
        stream = int.from_bytes(part, "little")
        check(stream >> (e.rows * b) == 0, "§5.6", at, "NonZeroReserved", f"chunk {i}: value index padding bits")
        mask = (1 << b) - 1
        return [(stream >> (r * b)) & mask for r in range(e.rows)]


# ---------------------------------------------------------------- log templates (§5.8)

# Payload forms, §5.8.1: 1 (format versions 4-5: pool form 1), 2 (version 6:
# pool form 2), 3 (version 7: pool form 2, delta integer blocks, §5.8.3),
# 4 (version 8: as 3, and runs blocks in slot columns, §5.8.3), 5 (version 9:
# as 4, and runs blocks may step), 6 (version 10: as 5, with the open
# section, §5.8.6), 7 (version 11: as 6, and the open section may hold the
# row index and column data, methods 2 and 3).
LOG_BLOCK_MAGICS = {b"FPL1": 1, b"FPL2": 2, b"FPL3": 3, b"FPL4": 4, b"FPL5": 5, b"FPL6": 6, b"FPL7": 7}
LOG_SPLIT_MAGICS = {b"FPS1": 1, b"FPS2": 2, b"FPS3": 3, b"FPS4": 4, b"FPS5": 5, b"FPS6": 6, b"FPS7": 7}
# §5.8.6: an open image is at most this many times its section, plus the slack.
LOG_OPEN_EXPANSION = 256
LOG_OPEN_SLACK = 1 << 16
LOG_RUNS_MODE = 252
LOG_STEP_RUNS_MODE = 253
LOG_ROW_BLOCK = 128
LOG_COLUMN_BLOCK = 128
LOG_DELTA_GROUP = 32
LOG_PAD = 16
LOG_MAX_LEARNED = 4096 - 256
LOG_MAX_WIDTH = 40
LOG_SECTION = "§5.8"


class _LogCursor:
    """Checked reads inside a log payload (§5.8.1 conventions); ``base`` is
    the file offset of ``buf[0]``."""

    def __init__(self, buf: bytes, base: int):
        self.buf, self.pos, self.base = buf, 0, base

    def fail(self, invariant: str, detail: str) -> None:
        raise FormatError(LOG_SECTION, self.base + self.pos, invariant, detail)

    def take(self, n: int, what: str) -> bytes:
        if n < 0 or self.pos + n > len(self.buf):
            self.fail("LengthPastEnd", f"{what} past the end")
        s = self.buf[self.pos:self.pos + n]
        self.pos += n
        return s

    def u8(self, what: str) -> int:
        return self.take(1, what)[0]

    def u32(self, what: str) -> int:
        return struct.unpack("<I", self.take(4, what))[0]

    def varint(self, what: str) -> int:
        v = 0
        for k in range(10):
            b = self.u8(what)
            if (k == 9 and b > 1) or (b == 0 and k > 0):
                self.fail("BadField", f"{what} (overlong varint)")
            v |= (b & 0x7F) << (7 * k)
            if b < 0x80:
                return v
        self.fail("BadField", f"{what} (overlong varint)")

    def bounded(self, what: str, limit: int) -> int:
        v = self.varint(what)
        if v > limit:
            self.fail("LimitExceeded", f"{what} {v} > {limit}")
        return v

    def at_end(self) -> bool:
        return self.pos == len(self.buf)


def _packed(data: bytes, at: int, bits: int, i: int) -> int:
    """Value ``i`` of the packed run at ``data[at:]`` (§5.8.1)."""
    if bits == 0:
        return 0
    bit = i * bits
    lo = at + bit // 8
    w = int.from_bytes(data[lo:lo + 16], "little")
    return (w >> (bit % 8)) & ((1 << bits) - 1)


def _packed_len(n: int, bits: int) -> int:
    return (n * bits + 7) // 8


def _int_column(c: "_LogCursor", n: int, used: List[int], form: int, slot: bool = True) -> List[tuple]:
    """Checkpoints of an integer column of ``n`` values (§5.8.3) in a block
    of payload form ``form``; ``slot``: a slot's column (runs blocks allowed
    in forms 4-5, stepped ones in form 5), not the pool's offsets. A list of
    (data offset, bits, base, slope, values in the block, delta, heads,
    step): ``heads`` > 0 for a runs block, whose bitmap is at the data
    offset, whose other fields describe its heads, and whose ``step`` each
    value of a run adds to the one before it (mod 2^64)."""
    cps = []
    left = n
    while left > 0:
        m = min(left, LOG_COLUMN_BLOCK)
        left -= m
        mode = c.u8("integer block mode")
        heads, step = 0, 0
        if mode in (LOG_RUNS_MODE, LOG_STEP_RUNS_MODE):
            if form < 4 or not slot or (mode == LOG_STEP_RUNS_MODE and form < 5):
                c.fail("BadField", f"integer block mode {mode} (runs blocks are format version 8's, stepped ones 9's, in slot columns)")
            heads = c.varint("runs block heads")
            if heads < 2 or heads > m:
                c.fail("BadField", f"runs block heads {heads} (2 to the block's values)")
            if mode == LOG_STEP_RUNS_MODE:
                z = c.varint("runs block step")
                step = ((z >> 1) ^ -(z & 1)) & ((1 << 64) - 1)
                if step == 0:
                    c.fail("BadField", "runs block step 0 (a stepped runs block's is not 0)")
            mode = c.u8("runs block heads' mode")
            if mode in (LOG_RUNS_MODE, LOG_STEP_RUNS_MODE):
                c.fail("BadField", f"runs block heads' mode {mode} (a runs block's heads are not runs)")
        own = heads if heads else m
        delta = mode > 192
        if delta:
            bits, linear = mode - 192, True
            if form < 3:
                c.fail("BadField", f"integer block mode {mode} (delta blocks are format version 7's)")
            if bits > 59:
                c.fail("BadField", f"integer block bit width {bits} (a delta block's is at most 59)")
            if own < 2:
                c.fail("BadField", f"integer block mode {mode} (a delta block of one value)")
        else:
            bits, linear = mode & 0x7F, mode & 0x80
        if bits > 64:
            c.fail("BadField", f"integer block bit width {bits}")
        base = c.varint("integer block base")
        slope = 0
        if linear:
            z = c.varint("integer block slope")
            slope = ((z >> 1) ^ -(z & 1)) & ((1 << 64) - 1)
        cps.append((used[0], bits, base, slope, m, delta, heads, step))
        if heads:  # the bitmap, then the heads as a block
            used[0] += (m + 7) // 8
        if delta:  # own - 1 residuals, then a (bits + 5)-bit sum per full group of 32
            used[0] += ((own - 1) * bits + (own - 1) // LOG_DELTA_GROUP * (bits + 5) + 7) // 8
        else:
            used[0] += _packed_len(own, bits)
    return cps


def _block_values(data: bytes, off: int, bits: int, base: int, slope: int, m: int, delta: bool) -> List[int]:
    """The ``m`` values of a FoR, linear or delta block whose residuals
    start at ``data[off:]`` (§5.8.3), a delta block's group sums checked."""
    mask = (1 << 64) - 1
    if not delta:
        return [(base + _packed(data, off, bits, j) + j * slope) & mask for j in range(m)]
    r = [_packed(data, off, bits, j) for j in range(m - 1)]
    for k in range((m - 1) // LOG_DELTA_GROUP):
        at = (m - 1) * bits + k * (bits + 5)
        w = int.from_bytes(data[off + at // 8:off + at // 8 + 16], "little")
        got = (w >> (at % 8)) & ((1 << (bits + 5)) - 1)
        if got != sum(r[LOG_DELTA_GROUP * k:LOG_DELTA_GROUP * (k + 1)]):
            raise FormatError(LOG_SECTION, off, "BadField", f"delta block group sum {got}")
    out = [base]
    for x in r:
        out.append((out[-1] + slope + x) & mask)
    return out


def _int_values(cps: List[tuple], data: bytes) -> List[int]:
    out = []
    for off, bits, base, slope, m, delta, heads, step in cps:
        if not heads:
            out.extend(_block_values(data, off, bits, base, slope, m, delta))
            continue
        # A runs block: bit j of the bitmap starts a run at value j; value 0
        # starts one, exactly `heads` do, and no bit lies past the values.
        nb = (m + 7) // 8
        bitmap = int.from_bytes(data[off:off + nb], "little")
        if bitmap & 1 == 0 or bin(bitmap).count("1") != heads or bitmap >> m:
            raise FormatError(LOG_SECTION, off, "BadField",
                              "runs block bitmap (a run at value 0, one per head, none past the values)")
        hv = _block_values(data, off + nb, bits, base, slope, heads, delta)
        k, start = -1, 0
        for j in range(m):
            if (bitmap >> j) & 1:
                k, start = k + 1, j
            out.append((hv[k] + (j - start) * step) & ((1 << 64) - 1))
    return out


def _log_pool(buf: bytes, base: int, form: int) -> Tuple[List[bytes], List[int]]:
    """Every string of a block's pool (§5.8.4) of payload form 1 (pool form
    1) or later (pool form 2), checked, and each string's number of codes."""
    c = _LogCursor(buf, base)
    tokens, code_bits = _log_pool_table(c, form)
    return _log_pool_rest(c, buf, tokens, code_bits, form)


def _log_pool_table(c: "_LogCursor", form: int) -> Tuple[List[bytes], int]:
    """A pool's token table at ``c`` (§5.8.4): the tokens and the code width."""
    learned = c.bounded("pool learned tokens", LOG_MAX_LEARNED)
    half = (learned + 1) // 2
    nib = c.take(half, "pool token lengths")
    lens = [((nib[i // 2] >> (4 * (i % 2))) & 15) + 1 for i in range(learned)]
    tokens = [bytes([b]) for b in range(256)]
    if form == 1:
        for i in range(learned):
            tokens.append(c.take(lens[i], "pool token bytes"))
        code_bits = 12
    else:
        pre_buf = c.take(half, "pool token prefixes")
        pre = [(pre_buf[i // 2] >> (4 * (i % 2))) & 15 for i in range(learned)]
        if learned % 2 and (nib[-1] >> 4 or pre_buf[-1] >> 4):
            c.fail("NonZeroReserved", "pool token padding nibble")
        prev = b""
        for i in range(learned):
            if lens[i] == 1:
                c.fail("DuplicateToken", f"pool token {256 + i} is a single byte")
            if pre[i] > lens[i] or pre[i] > len(prev):
                c.fail("TokenPrefix", f"pool token {256 + i}: prefix {pre[i]}")
            tok = prev[:pre[i]] + c.take(lens[i] - pre[i], "pool token bytes")
            lcp = 0
            while lcp < min(len(prev), len(tok)) and prev[lcp] == tok[lcp]:
                lcp += 1
            if pre[i] != min(lcp, 15):
                c.fail("TokenPrefix", f"pool token {256 + i}: prefix {pre[i]}, longest shared {min(lcp, 15)}")
            if i > 0 and not prev < tok:
                c.fail("TokenOrder", f"pool token {256 + i} not after the one before")
            tokens.append(tok)
            prev = tok
        code_bits = (256 + learned - 1).bit_length()  # ceil(log2(256 + learned))
    return tokens, code_bits


def _log_pool_rest(c: "_LogCursor", buf: bytes, tokens: List[bytes], code_bits: int,
                   form: int) -> Tuple[List[bytes], List[int]]:
    """The pool's strings, offsets and codes from ``c`` to the end of ``buf``
    (§5.8.4), checked: every string and its number of codes."""
    base = c.base
    strings = c.bounded("pool strings", U32_MAX - 1)
    meta_len = c.bounded("pool offsets meta length", len(buf))
    meta = _LogCursor(c.take(meta_len, "pool offsets meta"), base + c.pos - meta_len)
    data_len = c.bounded("pool offsets data length", len(buf))
    data = c.take(data_len, "pool offsets data")
    used = [0]
    cps = _int_column(meta, strings + 1, used, form, slot=False)
    if not meta.at_end() or used[0] != data_len:
        meta.fail("SizeMismatch", "pool offsets")
    offs = _int_values(cps, data + bytes(16))
    if offs[0] != 0 or any(b < a for a, b in zip(offs, offs[1:])) or offs[-1] > U32_MAX:
        c.fail("BadField", "pool offsets (not from 0, non-decreasing, < 2^32)")
    ncodes = offs[-1]
    codes = c.take(_packed_len(ncodes, code_bits), "pool codes")
    if not c.at_end():
        c.fail("SizeMismatch", "pool")
    codes = codes + bytes(16)
    code_list = [_packed(codes, 0, code_bits, i) for i in range(ncodes)]
    bad = next((i for i, x in enumerate(code_list) if x >= len(tokens)), None)
    if bad is not None:
        c.fail("BadField", f"pool code {bad} past the token table")
    return ([b"".join(tokens[x] for x in code_list[offs[i]:offs[i + 1]]) for i in range(strings)],
            [offs[i + 1] - offs[i] for i in range(strings)])


def _open_image(section: bytes, base: int, resident_ok: bool = False):
    """The image of a version-10 block's open section (§5.8.6), checked:
    method 0 (stored) or 1 (raw LZMA2, dictionary max(4096, N)), N within
    the bound, the stream ending with its end marker at the section's end,
    decoding to exactly N bytes. With ``resident_ok`` (version 11) also
    methods 2 and 3, the same with the row index and column data at the
    image's end. Returns (image, resident)."""
    c = _LogCursor(section, base)
    method = c.u8("open section method")
    resident = resident_ok and method in (2, 3)
    if resident:
        method -= 2
    n = c.bounded("open image length", len(section) * LOG_OPEN_EXPANSION + LOG_OPEN_SLACK)
    rest = section[c.pos:]
    if method == 0:
        if len(rest) != n:
            c.fail("SizeMismatch", "stored open image")
        return bytes(rest), resident
    if method != 1:
        raise FormatError(LOG_SECTION, base, "BadField", f"open section method {section[0]}")
    d = lzma.LZMADecompressor(format=lzma.FORMAT_RAW,
                              filters=[{"id": lzma.FILTER_LZMA2, "dict_size": max(4096, n)}])
    try:
        image = d.decompress(rest, max_length=n + 1)
    except lzma.LZMAError:
        raise FormatError(LOG_SECTION, base, "BadField", "open section's LZMA2 stream (does not decode)")
    if len(image) > n:
        raise FormatError(LOG_SECTION, base, "BadField", "open section's LZMA2 stream (longer than its declared image)")
    if not d.eof:
        raise FormatError(LOG_SECTION, base, "BadField", "open section's LZMA2 stream (ends before its end marker)")
    if len(image) != n:
        raise FormatError(LOG_SECTION, base, "SizeMismatch", f"open image: {len(image)} bytes, declared {n}")
    if d.unused_data:
        raise FormatError(LOG_SECTION, base, "BadField", "bytes after the open section's LZMA2 end marker")
    return image, resident


def _shared_strings(c: "_LogCursor") -> List[bytes]:
    """The shared strings ending a version-10 open image (§5.8.6)."""
    left = lambda: len(c.buf) - c.pos
    n = c.bounded("shared strings", left())
    lens = [c.bounded("shared string length", left()) for _ in range(n)]
    if sum(lens) != left():
        c.fail("SizeMismatch", "shared strings' bytes")
    return [c.take(l, "shared string") for l in lens]


def _front_coded_values(strings: List[bytes], codes: List[int], prefixes: List[int], at: int) -> List[bytes]:
    """A front-coded dictionary's values (§5.8.2, rule 1): value i is the
    first ``prefixes[i]`` bytes of value i - 1 (none before value 0), then
    its pool string ``strings[i]`` of ``codes[i]`` codes; each prefix at most
    the value before's length and 16 bytes a code of its own string."""
    out, prev = [], b""
    for s, c, p in zip(strings, codes, prefixes):
        if p > len(prev) or p > 16 * c:
            raise FormatError(LOG_SECTION, at, "BadField",
                              f"dictionary value prefix {p} (at most the value before, and 16 bytes a code of its own)")
        prev = prev[:p] + s
        out.append(prev)
    return out


def decode_log_block(buf: bytes, base: int = 0, form: Optional[int] = None) -> List[bytes]:
    """The rows of one log block (§5.8.2), every check run first; ``form``,
    when given, the payload form its magic must name."""
    c = _LogCursor(buf, base)
    magic = c.take(4, "block magic")
    if magic not in LOG_BLOCK_MAGICS or form not in (None, LOG_BLOCK_MAGICS[magic]):
        raise FormatError(LOG_SECTION, base, "BadMagic", "log block magic")
    form = LOG_BLOCK_MAGICS[magic]
    lens = [c.u32(w) for w in ("meta length", "row index length", "column data length", "pool length")]
    meta_at = c.pos
    meta = c.take(lens[0], "meta")
    # §5.8.6, version 11: methods 2 and 3 hold the row index and column data
    # at the image's end; the block then has neither part.
    resident = form >= 7 and len(meta) > 0 and meta[0] in (2, 3)
    rowidx_at = c.pos
    if not resident:
        rowidx = c.take(lens[1], "row index") + bytes(LOG_PAD)
    data_at = c.pos
    if not resident:
        data = c.take(lens[2], "column data") + bytes(LOG_PAD)
    pool_at = c.pos
    pool_bytes = c.take(lens[3], "pool")
    pad = c.take(LOG_PAD, "padding")
    if not c.at_end() or any(pad):
        c.fail("NonZeroReserved", "block padding")
    if form >= 6:
        # §5.8.6: the first part is the open section; its image holds the
        # meta, the pool's token table and the shared strings (static
        # strings and dictionary values, their "codes" for the front-coding
        # bound being their bytes).
        image, _ = _open_image(meta, base + meta_at, form >= 7)
        if resident:
            tail = lens[1] + lens[2]
            if len(image) < tail:
                raise FormatError(LOG_SECTION, base + meta_at, "SizeMismatch",
                                  "open image (shorter than its row index and column data)")
            cut = len(image) - tail
            rowidx = image[cut:cut + lens[1]] + bytes(LOG_PAD)
            data = image[cut + lens[1]:] + bytes(LOG_PAD)
            image = image[:cut]
        ic = _LogCursor(image, base + meta_at)
        meta = ic.take(ic.bounded("meta length", len(image)), "meta")
        tokens, code_bits = _log_pool_table(ic, form)
        shared = _shared_strings(ic)
        shared_codes = [len(x) for x in shared]
        pc = _LogCursor(pool_bytes, base + pool_at)
        pool, pool_codes = _log_pool_rest(pc, pool_bytes, tokens, code_bits, form)
    else:
        pool, pool_codes = _log_pool(pool_bytes, base + pool_at, form)
        shared, shared_codes = pool, pool_codes

    m = _LogCursor(meta, base + meta_at)
    rows = m.bounded("rows", U32_MAX)
    ntemp = m.bounded("templates", rows + 1)
    if ntemp == 0:
        m.fail("BadField", "templates 0")
    temps = []  # (slots, count, first static)
    nstatics = total = 0
    for _ in range(ntemp):
        slots = m.bounded("template slots", len(meta))
        count = m.bounded("template rows", rows)
        temps.append((slots, count, nstatics))
        total += count
        nstatics += slots + 1
    if total != rows:
        m.fail("SizeMismatch", "template rows")
    if temps[0][0] != 1:
        m.fail("BadField", "escape template slots")
    if nstatics > len(shared):
        m.fail("LimitExceeded", "static strings")
    slots_of = []  # per template: list of slot descriptions
    used = [0]
    # Dictionaries take the strings after the statics, free slots the
    # pool's: in version 10 two lists (§5.8.6), before it one.
    next_shared = nstatics
    next_pool = 0 if form >= 6 else nstatics
    for tid, (nslots, count, _) in enumerate(temps):
        desc = []
        for _ in range(nslots):
            byte = m.u8("slot kind")
            kind, rule = byte & 7, byte >> 3
            if kind <= 2 and tid != 0:
                if rule > 2:
                    m.fail("BadField", "slot width rule")
                width = m.u8("slot width") if rule == 2 else 0
                vals = _int_column(m, count, used, form)
                wids = _int_column(m, count, used, form) if rule == 1 else None
                desc.append(("int", kind, rule, width, vals, wids))
            elif kind == 3 and tid != 0 and (rule == 0 or (rule == 1 and form >= 5)):
                # Rule 1 (payload form 5): front-coded, the values' prefix
                # lengths before the ids.
                if form < 6:
                    next_shared = next_pool
                n = m.bounded("dictionary values", len(shared) - next_shared)
                pre = _int_column(m, n, used, form) if rule == 1 else None
                ids = _int_column(m, count, used, form)
                desc.append(("dict", next_shared, n, ids, pre))
                next_shared += n
                if form < 6:
                    next_pool = next_shared
            elif kind == 3 and tid != 0 and rule == 1:
                m.fail("BadField", "slot width rule (front-coded dictionaries are format version 9's)")
            elif kind == 4 and rule == 0:
                desc.append(("free", next_pool))
                next_pool += count
                if next_pool > len(pool):
                    m.fail("LimitExceeded", "free text strings")
            else:
                m.fail("BadField", "slot kind")
        slots_of.append(desc)
    if used[0] != lens[2]:
        m.fail("SizeMismatch", "column data")
    if form >= 6 and next_shared != len(shared):
        m.fail("SizeMismatch", "shared strings")
    if form >= 6 and next_pool != len(pool):
        m.fail("SizeMismatch", "pool strings")
    # Row index (§5.8.2): per row block, its table, then the local ids.
    nblocks = (rows + LOG_ROW_BLOCK - 1) // LOG_ROW_BLOCK
    tables, off = [], 0
    for b in range(nblocks):
        n = m.bounded("block templates", LOG_ROW_BLOCK)
        if n == 0:
            m.fail("BadField", "block templates 0")
        table = [(m.bounded("block template", ntemp - 1), m.bounded("block template rank", rows)) for _ in range(n)]
        bits = next(x for x in (0, 1, 2, 4, 8) if (n - 1) < (1 << x))
        in_block = min(rows - b * LOG_ROW_BLOCK, LOG_ROW_BLOCK)
        tables.append((table, bits, off))
        off += _packed_len(in_block, bits)
    if not m.at_end() or off != lens[1]:
        m.fail("SizeMismatch", "row index")
    running = [0] * ntemp
    row_tid = []
    for b, (table, bits, off) in enumerate(tables):
        for tid, rank in table:
            if running[tid] != rank:
                raise FormatError(LOG_SECTION, base + rowidx_at, "BadField", "block template rank")
        for j in range(min(rows - b * LOG_ROW_BLOCK, LOG_ROW_BLOCK)):
            local = _packed(rowidx, off, bits, j)
            if local >= len(table):
                raise FormatError(LOG_SECTION, base + rowidx_at + off, "BadField", "local template id")
            tid = table[local][0]
            row_tid.append(tid)
            running[tid] += 1
    if any(t[1] != r for t, r in zip(temps, running)):
        raise FormatError(LOG_SECTION, base + rowidx_at, "SizeMismatch", "template rows in the row index")
    # Column values (§5.8.3) and their checks, template by template.
    values = []
    for tid, desc in enumerate(slots_of):
        vs = []
        for d in desc:
            if d[0] == "int":
                _, kind, rule, width, cps, wcps = d
                if rule == 2 and width > LOG_MAX_WIDTH:
                    raise FormatError(LOG_SECTION, base + data_at, "BadField", "slot width")
                wids = _int_values(wcps, data) if wcps is not None else None
                if wids is not None and any(w > LOG_MAX_WIDTH for w in wids):
                    raise FormatError(LOG_SECTION, base + data_at, "BadField", "slot width")
                vs.append((d, _int_values(cps, data), wids))
            elif d[0] == "dict":
                dict_values = shared[d[1]:d[1] + d[2]]
                if d[4] is not None:
                    dict_values = _front_coded_values(dict_values, shared_codes[d[1]:d[1] + d[2]],
                                                      _int_values(d[4], data), base + data_at)
                ids = _int_values(d[3], data)
                if any(i >= d[2] for i in ids):
                    raise FormatError(LOG_SECTION, base + data_at, "BadField", "dictionary id")
                vs.append((d, ids, dict_values))
            else:
                vs.append((d, None, None))
        values.append(vs)
    # Rendering (§5.8.2).
    out, cursor = [], [0] * ntemp
    digits = {0: "0123456789", 1: "0123456789abcdef", 2: "0123456789ABCDEF"}
    for tid in row_tid:
        rank = cursor[tid]
        cursor[tid] += 1
        first = temps[tid][2]
        parts = [shared[first]]
        # `more`: an integer slot's per-row widths, a dictionary's values.
        for s, (d, vals, more) in enumerate(values[tid]):
            if d[0] == "int":
                _, kind, rule, width, _, _ = d
                v, radix, text = vals[rank], (10 if kind == 0 else 16), ""
                while True:
                    text = digits[kind][v % radix] + text
                    v //= radix
                    if v == 0:
                        break
                w = width if rule == 2 else (more[rank] if rule == 1 else 0)
                parts.append(text.rjust(w, "0").encode())
            elif d[0] == "dict":
                parts.append(more[vals[rank]])
            else:
                parts.append(pool[d[1] + rank])
            parts.append(shared[first + s + 1])
        out.append(b"".join(parts))
    return out


def log_payload_form(buf: bytes) -> int:
    """The payload form a payload's magic names (§5.8.1): 1 for "FPL1"/"FPS1"
    (format versions 4-5), 2 for "FPL2"/"FPS2" (version 6), 3 for
    "FPL3"/"FPS3" (version 7), 4 for "FPL4"/"FPS4" (version 8), 5 for
    "FPL5"/"FPS5" (version 9), 6 for "FPL6"/"FPS6" (version 10), 7 for
    "FPL7"/"FPS7" (version 11), 0 otherwise."""
    return LOG_SPLIT_MAGICS.get(buf[:4], LOG_BLOCK_MAGICS.get(buf[:4], 0))


def decode_log_payload(buf: bytes, base: int = 0) -> List[bytes]:
    """The rows of a log payload (§5.8.1): one block, or a header and a body
    block (both of the split's pool form) whose rows are concatenated."""
    if buf[:4] not in LOG_SPLIT_MAGICS:
        return decode_log_block(buf, base)
    form = LOG_SPLIT_MAGICS[buf[:4]]
    c = _LogCursor(buf, base)
    c.take(4, "split magic")
    h = c.u32("header block length")
    head = decode_log_block(c.take(h, "header block"), base + 8, form)
    body = decode_log_block(buf[8 + h:], base + 8 + h, form)
    if len(head) != len(body):
        raise FormatError(LOG_SECTION, base + 8 + h, "SizeMismatch", "body rows")
    return [a + b for a, b in zip(head, body)]



def read_rows(path: str) -> List[Optional[bytes]]:
    """Every row of the fastpair file ``path`` (``None`` for a null); raises
    :class:`FormatError` on any violation of spec/FORMAT.md."""
    return Reader.open(path).rows()


def main(argv: Sequence[str]) -> int:
    import argparse
    import signal

    if hasattr(signal, "SIGPIPE"):  # `reader.py FILE | head` ends quietly
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    ap = argparse.ArgumentParser(description="Independent fastpair reader (spec/FORMAT.md).")
    ap.add_argument("file")
    ap.add_argument("--count", action="store_true", help="print the number of rows only")
    ap.add_argument("--raw", action="store_true", help="write raw row bytes (nulls as empty lines)")
    a = ap.parse_args(argv)
    try:
        rows = read_rows(a.file)
    except FormatError as err:
        print(f"{a.file}: invalid: {err}", file=sys.stderr)
        return 1
    if a.count:
        print(len(rows))
    elif a.raw:
        out = sys.stdout.buffer
        for r in rows:
            out.write((r or b"") + b"\n")
    else:
        for r in rows:
            print(repr(r))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
