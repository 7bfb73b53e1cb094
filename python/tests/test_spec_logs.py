"""spec/reader.py's decoder of the log-template payload (spec/FORMAT.md
§5.8) against the Rust encoder's output: the golden payload
testdata/golden/logs_payload_v11.fpl (written by
`fastpair::logs::encode_column`, pinned by tests/logs.rs; the version-5 to
-10 payloads of the same rows beside it) decodes to testdata/golden/logs_payload.rows, and
damaged copies are rejected with a FormatError, never another exception.

Needs no built package: `python3 python/tests/test_spec_logs.py` runs the
same checks as pytest."""

import importlib.util
import lzma
import random
import struct
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("fastpair_spec_reader_logs", REPO / "spec" / "reader.py")
reader = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = reader
_spec.loader.exec_module(reader)

GOLDEN = REPO / "testdata" / "golden"


def golden(name="logs_payload_v11.fpl"):
    payload = (GOLDEN / name).read_bytes()
    rows = (GOLDEN / "logs_payload.rows").read_bytes().split(b"\n")[:-1]
    return payload, rows


def test_golden_payload_decodes_to_its_rows():
    payload, rows = golden()
    assert payload[:4] == b"FPS7", "the golden covers the split form, payload form 7"
    assert reader.decode_log_payload(payload) == rows
    assert reader.log_payload_form(payload) == 7
    # Format 11 (§5.8.6): some block keeps its row index and column data in
    # its open section (method 2 or 3).
    h = struct.unpack_from("<I", payload, 4)[0]
    assert any(b[20] in (2, 3) for b in (payload[8:8 + h], payload[8 + h:]))


def test_older_payloads_still_decode():
    for name, magic, form in (
        ("logs_payload.fpl", b"FPS1", 1),
        ("logs_payload_v6.fpl", b"FPS2", 2),
        ("logs_payload_v7.fpl", b"FPS3", 3),
        ("logs_payload_v8.fpl", b"FPS4", 4),
        ("logs_payload_v9.fpl", b"FPS5", 5),
        ("logs_payload_v10.fpl", b"FPS6", 6),
    ):
        payload, rows = golden(name)
        assert payload[:4] == magic
        assert reader.log_payload_form(payload) == form
        assert reader.decode_log_payload(payload) == rows


def test_split_blocks_of_the_other_form_are_rejected():
    """A split whose blocks are of another form than its own is refused."""
    for name in ("logs_payload_v11.fpl", "logs_payload_v10.fpl", "logs_payload_v9.fpl", "logs_payload_v8.fpl", "logs_payload_v7.fpl", "logs_payload_v6.fpl", "logs_payload.fpl"):
        payload, _ = golden(name)
        for other in b"1234567":
            if other == payload[3]:
                continue
            b = bytearray(payload)
            b[3] = other
            try:
                reader.decode_log_payload(bytes(b))
            except reader.FormatError as e:
                assert e.invariant == "BadMagic", e
                continue
            raise AssertionError(f"{name}: mixed forms accepted")


def test_golden_payload_holds_delta_and_runs_blocks():
    """The version-9 golden stores some integer blocks as delta blocks,
    some as runs blocks and some as stepped runs blocks (§5.8.3), so the
    decoder's delta, runs and step paths are what the rows above checked."""
    modes = []
    real = reader._int_column

    def spy(c, n, used, form, slot=True):
        cps = real(c, n, used, form, slot)
        modes.extend((cp[5], cp[6] > 0, cp[7] != 0) for cp in cps)
        return cps

    reader._int_column = spy
    try:
        payload, rows = golden()
        assert reader.decode_log_payload(payload) == rows
    finally:
        reader._int_column = real
    delta = [d for d, _, _ in modes]
    runs = [r and not s for _, r, s in modes]
    stepped = [s for _, _, s in modes]
    assert any(delta) and not all(delta)
    assert any(runs) and not all(runs)
    assert any(stepped) and not all(stepped)


def test_delta_modes_are_checked():
    """Modes 193-251 are delta blocks of 1-59 bits, only in payload form 3
    and only for a block of two values or more; 192 is linear at 64 bits."""
    def column(mode, n, form):
        c = reader._LogCursor(bytes([mode, 5, 2]), 0)
        return reader._int_column(c, n, [0], form)

    (off, bits, base, slope, m, delta, heads, step), = column(195, 10, 3)
    assert (bits, base, slope, m, delta, heads, step) == (3, 5, 1, 10, True, 0, 0)
    assert reader._int_values([(0, 3, 5, 1, 3, True, 0, 0)], bytes([0b010_001, 0])) == [5, 7, 10]
    # 33 values: 32 residuals of 1 bit (all 1), then their group sum at 6 bits.
    stream = (1 << 32) - 1 | 32 << 32
    good = stream.to_bytes(5, "little") + bytes(16)
    assert reader._int_values([(0, 1, 0, 0, 33, True, 0, 0)], good) == list(range(33))
    bad = (stream ^ 1 << 33).to_bytes(5, "little") + bytes(16)
    try:
        reader._int_values([(0, 1, 0, 0, 33, True, 0, 0)], bad)
        raise AssertionError("a wrong group sum accepted")
    except reader.FormatError as e:
        assert e.invariant == "BadField" and "group sum" in str(e), e
    (_, bits, _, _, _, delta, _, _), = column(192, 10, 3)
    assert (bits, delta) == (64, False)
    for mode, n, form in ((195, 10, 2), (195, 10, 1), (195, 1, 3), (252, 10, 3), (253, 10, 4), (254, 10, 5), (255, 10, 3)):
        try:
            column(mode, n, form)
        except reader.FormatError as e:
            assert e.invariant == "BadField", e
            continue
        raise AssertionError(f"mode {mode}, {n} values, form {form} accepted")


def test_runs_modes_are_checked():
    """Mode 252 is a runs block: only in payload form 4 and a slot's
    column, 2 to m heads whose own mode is not 252; its bitmap starts a
    run at value 0, one per head, none past the values."""
    def column(meta, n, form, slot=True):
        return reader._int_column(reader._LogCursor(bytes(meta), 0), n, [0], form, slot)

    used = [0]
    (off, bits, base, slope, m, delta, heads, step), = reader._int_column(
        reader._LogCursor(bytes([252, 3, 2, 7]), 0), 10, used, 4)
    assert (off, bits, base, slope, m, delta, heads, step) == (0, 2, 7, 0, 10, False, 3, 0)
    assert used == [2 + 1]  # the bitmap, then 3 heads of 2 bits
    # Runs start at values 0, 4 and 9; heads 7 + 0, 7 + 2, 7 + 1.
    data = bytes([0b0001_0001, 0b10, 0b01_10_00]) + bytes(16)
    cps = [(0, 2, 7, 0, 10, False, 3, 0)]
    assert reader._int_values(cps, data) == [7] * 4 + [9] * 5 + [8]
    for bad in (bytes([0b0001_0000, 0b10]), bytes([0b0001_0011, 0b10]), bytes([0b0001_0001, 0b110])):
        try:
            reader._int_values(cps, bad + data[2:])
        except reader.FormatError as e:
            assert e.invariant == "BadField" and "bitmap" in str(e), e
            continue
        raise AssertionError(f"bitmap {bad!r} accepted")
    for meta, n, form, slot in (
        ([252, 3, 2, 7], 10, 3, True),
        ([252, 3, 2, 7], 10, 4, False),
        ([252, 1, 2, 7], 10, 4, True),
        ([252, 11, 2, 7], 10, 4, True),
        ([252, 2, 2, 7], 1, 4, True),
        ([252, 3, 252, 3, 2, 7], 10, 4, True),
        ([253, 3, 2, 2, 7], 10, 4, True),
        ([253, 3, 2, 2, 7], 10, 5, False),
        ([253, 3, 0, 2, 7], 10, 5, True),
        ([253, 3, 2, 253, 3, 2, 2, 7], 10, 5, True),
        ([253, 3, 2, 252, 3, 2, 7], 10, 5, True),
    ):
        try:
            column(meta, n, form, slot)
        except reader.FormatError as e:
            assert e.invariant == "BadField", e
            continue
        raise AssertionError(f"{meta}, {n} values, form {form}, slot {slot} accepted")


def test_stepped_runs_blocks():
    """Mode 253 is a runs block whose runs step (payload form 5): each value
    of a run adds the step to the one before it, mod 2^64."""
    used = [0]
    (off, bits, base, slope, m, delta, heads, step), = reader._int_column(
        reader._LogCursor(bytes([253, 3, 2, 2, 7]), 0), 10, used, 5)
    assert (bits, base, m, heads, step) == (2, 7, 10, 3, 1)
    assert used == [2 + 1]
    data = bytes([0b0001_0001, 0b10, 0b01_10_00]) + bytes(16)
    assert reader._int_values([(0, 2, 7, 0, 10, False, 3, 1)], data) == [7, 8, 9, 10, 9, 10, 11, 12, 13, 8]
    # A step of -1 (zigzag 1) wraps below 0.
    (_, _, _, _, _, _, _, down), = reader._int_column(
        reader._LogCursor(bytes([253, 2, 1, 0, 0]), 0), 4, [0], 5)
    assert down == (1 << 64) - 1
    assert reader._int_values([(0, 0, 0, 0, 4, False, 2, down)], bytes([0b0101]) + bytes(16)) == [0, (1 << 64) - 1, 0, (1 << 64) - 1]


def test_front_coded_dictionaries_decode():
    """testdata/golden/logs_payload_access_v9.fpl (tests/logs.rs pins it):
    one block of access-log lines whose request paths, referrers and user
    agents are front-coded dictionaries (rule 1, payload form 5); it
    decodes to its rows, and damaged copies are FormatErrors or rows."""
    payload = (GOLDEN / "logs_payload_access_v9.fpl").read_bytes()
    rows = (GOLDEN / "logs_payload_access.rows").read_bytes().split(b"\n")[:-1]
    assert payload[:4] == b"FPL5"
    assert reader.decode_log_payload(payload) == rows
    rng = random.Random(9)
    for _ in range(200):
        b = bytearray(payload)
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        try:
            got = reader.decode_log_payload(bytes(b))
            assert all(isinstance(r, bytes) for r in got)
        except reader.FormatError as e:
            assert e.section == "§5.8"


def test_front_coded_prefix_rule():
    """A front-coded value's prefix is at most the value before it and at
    most 16 bytes a code of its own pool string; rule 1 only in form 5."""
    payload = (GOLDEN / "logs_payload_access_v9.fpl").read_bytes()
    relabelled = b"FPL4" + payload[4:]
    try:
        reader.decode_log_payload(relabelled)
        raise AssertionError("a front-coded dictionary accepted in form 4")
    except reader.FormatError as e:
        assert e.invariant == "BadField", e
    values = reader._front_coded_values([b"/blog/a", b"b", b"/c", b"x"], [3, 1, 2, 1], [0, 6, 5, 0], 0)
    assert values == [b"/blog/a", b"/blog/b", b"/blog/c", b"x"]
    for strings, codes, prefixes in (
        ([b"a", b"b"], [1, 1], [1, 0]),  # value 0 has no value before it
        ([b"abc", b"d"], [1, 1], [0, 4]),  # past the value before
        ([b"a" * 40, b"d"], [3, 1], [0, 17]),  # past 16 bytes a code
        ([b"a" * 40, b""], [3, 0], [0, 1]),  # an empty string copies nothing
    ):
        try:
            reader._front_coded_values(strings, codes, prefixes, 0)
        except reader.FormatError as e:
            assert e.invariant == "BadField" and "prefix" in str(e), e
            continue
        raise AssertionError(f"{prefixes} accepted")


def test_each_block_decodes_on_its_own():
    payload, rows = golden()
    h = struct.unpack_from("<I", payload, 4)[0]
    head = reader.decode_log_block(payload[8:8 + h])
    body = reader.decode_log_block(payload[8 + h:])
    assert [a + b for a, b in zip(head, body)] == rows
    assert len(head) == len(body) == len(rows)


def test_truncated_payloads_are_format_errors():
    payload, _ = golden()
    for cut in list(range(0, 64)) + list(range(len(payload) - 64, len(payload))):
        try:
            reader.decode_log_payload(payload[:cut])
        except reader.FormatError:
            continue
        raise AssertionError(f"cut at {cut} accepted")


def test_damaged_payloads_fail_cleanly():
    """Flipped bytes either decode (to rows of some other valid payload) or
    raise FormatError; nothing else escapes."""
    payload, rows = golden()
    rng = random.Random(20)
    rejected = 0
    for _ in range(300):
        b = bytearray(payload)
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
        try:
            got = reader.decode_log_payload(bytes(b))
            assert all(isinstance(r, bytes) for r in got)
        except reader.FormatError as e:
            assert e.section == "§5.8"
            rejected += 1
    assert rejected > 0


def test_named_invariants():
    # Version 9's golden: its meta lies in the block (version 10's is in
    # the open section, test_open_sections_are_checked).
    payload, _ = golden("logs_payload_v9.fpl")
    h = struct.unpack_from("<I", payload, 4)[0]
    body = bytearray(payload[8 + h:])

    def fails(buf, invariant):
        try:
            reader.decode_log_block(bytes(buf))
        except reader.FormatError as e:
            assert e.invariant == invariant, (e.invariant, invariant, str(e))
            return
        raise AssertionError(f"accepted, expected {invariant}")

    bad = bytearray(body)
    bad[0:4] = b"FPL9"
    fails(bad, "BadMagic")
    bad = bytearray(body)
    bad[-1] = 1
    fails(bad, "NonZeroReserved")
    # The meta's first varint (rows) spelled overlong: one more byte.
    meta_len = struct.unpack_from("<I", body, 4)[0]
    bad = bytearray(body[:20]) + bytes([body[20] | 0x80, 0]) + body[21:]
    struct.pack_into("<I", bad, 4, meta_len + 1)
    fails(bad, "BadField")



def _section(method, image, stream=None):
    """An open section (§5.8.6) of ``image``: method byte, varint length,
    then the image (method 0) or ``stream`` / its raw LZMA2 (method 1)."""
    n, head = len(image), bytearray([method])
    while n >= 0x80:
        head.append(n & 0x7F | 0x80)
        n >>= 7
    head.append(n)
    if method == 0:
        return bytes(head) + image
    if stream is None:
        f = [{"id": lzma.FILTER_LZMA2, "preset": 6, "dict_size": max(4096, len(image))}]
        stream = lzma.compress(image, format=lzma.FORMAT_RAW, filters=f)
    return bytes(head) + stream


def test_open_sections_are_checked():
    """§5.8.6: a stored or LZMA2 image comes back; an unknown method, a
    declared length the stream does not meet or one past the bound, bytes
    after the end marker and a stream cut short are FormatErrors."""
    image = b"".join(b"GET /img/%d.png HTTP/1.1\n" % (i * 7919 % 1000) for i in range(400))
    for method in (0, 1):
        assert reader._open_image(_section(method, image), 0) == (image, False)
        # Methods 2 and 3 (version 11): the same, flagged resident, and only
        # where the form allows them.
        z = _section(method, image)
        assert reader._open_image(bytes([method + 2]) + z[1:], 0, True) == (image, True)
    z = _section(1, image)
    assert len(z) < len(image) // 2

    def fails(section, invariant):
        try:
            reader._open_image(section, 0)
        except reader.FormatError as e:
            assert e.invariant == invariant, (e.invariant, invariant, str(e))
            return
        raise AssertionError(f"accepted, expected {invariant}")

    fails(bytes([2]) + z[1:], "BadField")
    fails(bytes([3]) + z[1:], "BadField")
    fails(z + b"\0", "BadField")
    stream = z[len(z) - len(lzma.compress(image, format=lzma.FORMAT_RAW, filters=[
        {"id": lzma.FILTER_LZMA2, "preset": 6, "dict_size": max(4096, len(image))}])):]
    fails(_section(1, image + b"x", stream), "SizeMismatch")  # the stream ends short of it
    fails(_section(1, image[:-1], stream), "BadField")    # the stream goes past it
    for cut in range(1, len(z), max(1, len(z) // 40)):
        try:
            reader._open_image(z[:cut], 0)
        except reader.FormatError:
            continue
        raise AssertionError(f"cut at {cut} accepted")
    fails(_section(0, image)[:-1], "SizeMismatch")
    # Past the bound: an image 256 times its section and 65,536 bytes more.
    n = 5 * reader.LOG_OPEN_EXPANSION + reader.LOG_OPEN_SLACK + 1  # a 5-byte section's bound + 1
    fails(bytes([0, n & 0x7F | 0x80, n >> 7 & 0x7F | 0x80, n >> 14]) + b"x", "LimitExceeded")


def test_stored_open_sections_decode_the_same():
    """The golden's blocks re-spelled with their open images stored
    (method 0, the writer's other choice) decode to the same rows."""
    for name, magic in (("logs_payload_v10.fpl", b"FPS6"), ("logs_payload_v11.fpl", b"FPS7")):
        payload, rows = golden(name)
        h = struct.unpack_from("<I", payload, 4)[0]
        out = []
        for block in (payload[8:8 + h], payload[8 + h:]):
            assert block[:4] == b"FPL" + magic[3:]
            meta_len = struct.unpack_from("<I", block, 4)[0]
            assert block[20] in (1, 3), "the golden's sections are LZMA2"
            image, resident = reader._open_image(block[20:20 + meta_len], 0, magic == b"FPS7")
            section = _section(0, image)
            if resident:  # stored, and the parts still in the image: method 2
                section = bytes([2]) + section[1:]
            b = bytearray(block[:20]) + section + block[20 + meta_len:]
            struct.pack_into("<I", b, 4, len(section))
            out.append(bytes(b))
        again = magic + struct.pack("<I", len(out[0])) + out[0] + out[1]
        assert reader.decode_log_payload(again) == rows


if __name__ == "__main__":
    for name, f in sorted(globals().items()):
        if name.startswith("test_") and callable(f):
            f()
            print("ok", name)
