"""spec/reader.py's decoder of the log-template payload (spec/FORMAT.md
§5.8) against the Rust encoder's output: the golden payload
testdata/golden/logs_payload.fpl (written by `fastpair::logs::encode_column`,
pinned by tests/logs.rs) decodes to testdata/golden/logs_payload.rows, and
damaged copies are rejected with a FormatError, never another exception.

Needs no built package: `python3 python/tests/test_spec_logs.py` runs the
same checks as pytest."""

import importlib.util
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


def golden(name="logs_payload_v6.fpl"):
    payload = (GOLDEN / name).read_bytes()
    rows = (GOLDEN / "logs_payload.rows").read_bytes().split(b"\n")[:-1]
    return payload, rows


def test_golden_payload_decodes_to_its_rows():
    payload, rows = golden()
    assert payload[:4] == b"FPS2", "the golden covers the split form, pool form 2"
    assert reader.decode_log_payload(payload) == rows
    assert reader.log_payload_form(payload) == 2


def test_version_5_payload_still_decodes():
    payload, rows = golden("logs_payload.fpl")
    assert payload[:4] == b"FPS1"
    assert reader.log_payload_form(payload) == 1
    assert reader.decode_log_payload(payload) == rows


def test_split_blocks_of_the_other_form_are_rejected():
    """An "FPS2" split whose blocks are "FPL1" (or the reverse) is refused."""
    for name in ("logs_payload_v6.fpl", "logs_payload.fpl"):
        payload, _ = golden(name)
        b = bytearray(payload)
        b[3] = ord("1") if b[3] == ord("2") else ord("2")
        try:
            reader.decode_log_payload(bytes(b))
        except reader.FormatError as e:
            assert e.invariant == "BadMagic", e
            continue
        raise AssertionError(f"{name}: mixed forms accepted")


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
    payload, _ = golden()
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


if __name__ == "__main__":
    for name, f in sorted(globals().items()):
        if name.startswith("test_") and callable(f):
            f()
            print("ok", name)
