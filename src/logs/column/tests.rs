//! Tests of `column.rs`: round trips of every block mode, the plans and
//! their sizes, delta reads kept inside their data, delta and runs modes
//! checked.

use super::super::bits::PAD;
use super::read::sum_packed;
use super::*;

/// Every mode a slot's column may hold (format version 9).
const ALL: Modes = Modes {
    delta: true,
    runs: true,
    stepped: true,
};

/// Modes of a format-8 slot column: runs that repeat their heads only.
const V8: Modes = Modes {
    delta: true,
    runs: true,
    stepped: false,
};

/// Modes of a format-7 column: FoR, linear and delta.
const V7: Modes = Modes {
    delta: true,
    runs: false,
    stepped: false,
};

/// Bytes the writer's block plans under `modes` take for `values`.
fn planned_size(values: &[u64], modes: Modes) -> usize {
    values
        .chunks(BLOCK)
        .map(|b| {
            let p = plan(b, modes);
            p.meta_len() + p.data_len(b.len())
        })
        .sum()
}

fn round_trip(values: &[u64]) -> usize {
    let (mut meta, mut data) = (Vec::new(), Vec::new());
    write(values, &mut meta, &mut data, Use::Slot);
    let size = meta.len() + data.len();
    assert_eq!(size, super::size(values));
    data.resize(data.len() + PAD, 0);
    let mut r = VarReader::new(&meta, 0);
    let (mut cps, mut used) = (Vec::new(), 0u64);
    let col = parse(&mut r, values.len() as u32, &mut cps, &mut used, ALL).unwrap();
    assert!(r.at_end());
    assert_eq!(used as usize + PAD, data.len());
    for (i, &v) in values.iter().enumerate() {
        assert_eq!(col.get(&cps, &data, i), v, "value {i}");
    }
    let mut all = Vec::new();
    col.decode_all(&cps, &data, &mut all);
    assert_eq!(all, values);
    check_ranges(&col, &cps, &data, values);
    size
}

/// `decode_range` gives `values[from..to]` for every single value and for
/// ranges starting and ending in and across blocks (whole blocks, a
/// block's head, middle and tail), and clamps at the column's end.
fn check_ranges(col: &IntCol, cps: &[Checkpoint], data: &[u8], values: &[u64]) {
    let n = values.len();
    let mut got = Vec::new();
    for (i, &v) in values.iter().enumerate() {
        got.clear();
        col.decode_range(cps, data, i, i + 1, &mut got);
        assert_eq!(got, [v], "value {i} alone");
    }
    let mut cuts: Vec<usize> = [
        0, 1, 5, 63, 64, 127, 128, 129, 200, 255, 256, 300, 383, 384, 385,
    ]
    .into_iter()
    .chain([n.saturating_sub(1), n, n / 2, n / 3 + 7])
    .filter(|&c| c <= n)
    .collect();
    cuts.sort_unstable();
    cuts.dedup();
    for &a in &cuts {
        for &b in cuts.iter().filter(|&&b| b >= a) {
            got.clear();
            col.decode_range(cps, data, a, b, &mut got);
            assert_eq!(got, &values[a..b], "values {a}..{b}");
        }
    }
    got.clear();
    col.decode_range(cps, data, n.saturating_sub(3), n + 50, &mut got);
    assert_eq!(got, &values[n.saturating_sub(3)..], "a range past the end");
}

#[test]
fn for_and_delta_blocks() {
    round_trip(&[]);
    round_trip(&[5]);
    round_trip(&[u64::MAX, 0, u64::MAX, 1]);
    let ts: Vec<u64> = (0..1000u64)
        .map(|i| 1_700_000_000 + i * 3 + i % 2)
        .collect();
    // Steps alternate 4, 2: linear FoR at 2 bits per value (FoR needs 9+).
    assert!(round_trip(&ts) <= 1000 * 2 / 8 + 8 * 8);
    let noisy: Vec<u64> = (0..777u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40)
        .collect();
    round_trip(&noisy);
    let down: Vec<u64> = (0..300u64).rev().map(|i| i * 1000).collect();
    round_trip(&down);
    // A steady counter whose last value repeats: the end points' slope
    // (6) drifts away, the median step (7) fits: 4 bits, not 8.
    let mut last: Vec<u64> = (0..128u64).map(|i| 5000 + 7 * i + i % 3).collect();
    last[127] = last[126];
    assert!(round_trip(&last) <= 128 * 4 / 8 + 8);
}

/// Block plans made in parallel runs are the plans of one pass: the
/// same sizes and the same bytes written, on columns long enough to be
/// split (steady, noisy, a random walk, a last partial block).
#[test]
fn plans_in_parallel_runs_are_the_serial_plans() {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut walk = 1_700_000_000_000u64;
    let values: Vec<u64> = (0..100_003u64)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            walk += x % 5;
            match (i / 20_000) % 3 {
                0 => 5000 + 7 * i,
                1 => x >> (i % 60),
                _ => walk,
            }
        })
        .collect();
    let serial = Planned::of(&values);
    let par = Planned::of_par(&values, true);
    assert_eq!(serial.sizes(), par.sizes());
    let write = |p: &Planned| {
        let (mut meta, mut data) = (Vec::new(), Vec::new());
        p.write(&values, &mut meta, &mut data);
        (meta, data)
    };
    assert!(write(&serial) == write(&par));
    assert_eq!(Planned::of_par(&values, false).sizes(), serial.sizes());
}

/// Timestamps growing by irregular small steps drift from any line (a
/// random walk): linear FoR needs the drift's bits, a delta block the
/// steps' (0–3 here: 2 bits). Values near 2^64 wrap like the rest.
#[test]
fn delta_blocks_take_irregular_steps() {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut t = 1_733_000_000_000u64;
    let ts: Vec<u64> = (0..1000)
        .map(|_| {
            t += 1000 + rnd() % 4;
            t
        })
        .collect();
    let blocks = ts.len().div_ceil(BLOCK);
    let size = round_trip(&ts);
    assert!(size <= 1000 * 2 / 8 + blocks * 12, "{size} bytes");
    let p = Planned::of(&ts);
    assert!(p.blocks.iter().all(|b| b.delta && b.bits == 2));
    // Steps of both signs, and values that wrap around 2^64.
    let mut v = u64::MAX - 300;
    let wrap: Vec<u64> = (0..400)
        .map(|_| {
            v = v.wrapping_add(rnd() % 9).wrapping_sub(3);
            v
        })
        .collect();
    round_trip(&wrap);
    // Steps spanning 2^59 or more: never delta (a group sum of 32 wider
    // residuals would not fit 64 bits; the proptest below found the
    // wrong reads that gave before the bound).
    // (A runs block's heads here, 0, 1 and 2^64 − 1, step by 1 and −2
    // mod 2^64: delta at 2 bits is theirs to take.)
    let wide = [0, u64::MAX / 2 + 7, 1, u64::MAX];
    assert!(Planned::of(&wide)
        .blocks
        .iter()
        .all(|b| !b.delta || (b.heads > 0 && b.bits <= DELTA_MAX_BITS)));
    round_trip(&wide);
    let mut walk = 0u64;
    let steep: Vec<u64> = (0..128u64)
        .map(|i| {
            walk = walk.wrapping_add(if i % 3 == 0 { 1 << 60 } else { 1 });
            walk
        })
        .collect();
    assert!(Planned::of(&steep).blocks.iter().all(|b| !b.delta));
    round_trip(&steep);
    // The proptest's first finding, shrunk: 33 values, one wild.
    let mut found = vec![0u64; 33];
    for (k, v) in found.iter_mut().enumerate().skip(1) {
        *v = 0u64.wrapping_sub(100 * k as u64);
    }
    found[1] = 17_293_822_569_102_704_541;
    round_trip(&found);
    // A last block of one value after delta blocks.
    round_trip(&ts[..129]);
    // The group sums: checked, and a changed one is an error.
    let (mut meta, mut data) = (Vec::new(), Vec::new());
    write(&ts[..128], &mut meta, &mut data, Use::Slot);
    assert_eq!(data.len(), (127 * 2 + 3 * 7usize).div_ceil(8));
    data.resize(data.len() + PAD, 0);
    let mut r = VarReader::new(&meta, 0);
    let (mut cps, mut used) = (Vec::new(), 0u64);
    let col = parse(&mut r, 128, &mut cps, &mut used, ALL).unwrap();
    col.check_blocks(&cps, &data, 0).unwrap();
    data[127 * 2 / 8 + 1] ^= 0x10;
    assert!(col.check_blocks(&cps, &data, 0).is_err());
}

/// `sum_packed` over a run that its data does not hold (a damaged
/// column a safe `LogColumn::get` may reach): no read outside `data`,
/// the fields past its end read as 0.
#[test]
fn sums_never_read_past_their_data() {
    let data = [0xffu8; 5];
    for bits in [1u8, 3, 8, 17, 56, 59] {
        for n in [0usize, 1, 7, 31, 200] {
            let s = sum_packed(&data, bits, 3, n);
            let whole = (40 / bits as usize).saturating_sub(3).min(n) as u64;
            assert!(s <= whole.max(1) * ((1u64 << bits) - 1), "{bits} {n}");
        }
    }
    assert_eq!(sum_packed(&[], 7, 0, 31), 0);
    // The fast path at its edge: exactly 8 bytes past the run.
    for bits in [1u8, 5, 13, 56] {
        let data = vec![0xffu8; packed_len(34, bits) + 8];
        let all = (1u64 << bits) - 1;
        assert_eq!(sum_packed(&data, bits, 3, 31), 31 * all);
    }
}

proptest::proptest! {
    /// Any column round-trips through its blocks, whichever mode each
    /// takes: random walks (steps of either sign around a slope, values
    /// wrapping past 2^64) spliced with arbitrary values; the group sums
    /// of its delta blocks check.
    #[test]
    fn columns_round_trip(
        start in proptest::prelude::any::<u64>(),
        slope in 0u64..5000,
        steps in proptest::collection::vec(0u64..300, 0..700),
        wild in proptest::collection::vec((0usize..700, proptest::prelude::any::<u64>()), 0..4),
        repeats in proptest::collection::vec(0usize..12, 0..700),
        step in proptest::prop_oneof![proptest::strategy::Just(0u64), proptest::strategy::Just(1), proptest::prelude::any::<u64>()],
    ) {
        let mut v = start;
        let mut values: Vec<u64> = steps
            .iter()
            .zip(repeats.iter().chain(std::iter::repeat(&0)))
            .flat_map(|(&d, &r)| {
                v = v.wrapping_add(slope).wrapping_add(d).wrapping_sub(100);
                // Runs: a value repeated (a log's second, pid or host), or
                // counting on by a step (frames of a trace seen again).
                let head = v;
                (0..1 + r % 4 * (r / 4)).map(move |k| head.wrapping_add(step.wrapping_mul(k as u64)))
            })
            .collect();
        for (at, x) in wild {
            if at < values.len() {
                values[at] = x;
            }
        }
        round_trip(&values);
        let (mut meta, mut data) = (Vec::new(), Vec::new());
        write(&values, &mut meta, &mut data, Use::Slot);
        data.resize(data.len() + PAD, 0);
        let mut r = VarReader::new(&meta, 0);
        let (mut cps, mut used) = (Vec::new(), 0u64);
        let col = parse(&mut r, values.len() as u32, &mut cps, &mut used, ALL).unwrap();
        proptest::prop_assert!(col.check_blocks(&cps, &data, 0).is_ok());
    }
}

/// Delta modes (193–251) only where the payload allows them, and never
/// for a block of one value; mode 192 is linear FoR at 64 bits.
#[test]
fn delta_modes_are_checked() {
    let meta_of = |mode: u8| vec![mode, 5, 2];
    let parse_with = |meta: &[u8], len: u32, delta: bool| {
        let mut r = VarReader::new(meta, 0);
        let (mut cps, mut used) = (Vec::new(), 0u64);
        let modes = Modes {
            delta,
            runs: delta,
            stepped: delta,
        };
        parse(&mut r, len, &mut cps, &mut used, modes).map(|_| (cps, used))
    };
    let (cps, used) = parse_with(&meta_of(DELTA_MODE + 3), 10, true).unwrap();
    assert!(cps[0].delta && cps[0].bits == 3 && used == packed_len(9, 3) as u64);
    let (cps, _) = parse_with(&meta_of(DELTA_MODE), 10, true).unwrap();
    assert!(!cps[0].delta && cps[0].bits == 64);
    for (mode, len, delta) in [
        (DELTA_MODE + 3, 10, false),
        (DELTA_MODE + 3, 1, true),
        (RUNS_MODE, 10, false),
        (STEP_RUNS_MODE, 10, false),
        (254, 10, true),
        (255, 10, true),
    ] {
        match parse_with(&meta_of(mode), len, delta) {
            Err(crate::Error::Corrupt {
                invariant: Invariant::BadField { value, .. },
                ..
            }) => assert!(value == mode as u64 || value == (mode - DELTA_MODE) as u64),
            other => panic!("mode {mode} len {len} delta {delta}: {:?}", other.err()),
        }
    }
}

/// The bytes and checkpoints of `values` written as a slot's column.
fn written(values: &[u64]) -> (Vec<u8>, Vec<u8>, Vec<Checkpoint>, IntCol) {
    let (mut meta, mut data) = (Vec::new(), Vec::new());
    write(values, &mut meta, &mut data, Use::Slot);
    data.resize(data.len() + PAD, 0);
    let mut r = VarReader::new(&meta, 0);
    let (mut cps, mut used) = (Vec::new(), 0u64);
    let col = parse(&mut r, values.len() as u32, &mut cps, &mut used, ALL).unwrap();
    (meta, data, cps, col)
}

/// Values that repeat (a second's timestamps, a pid) take runs blocks,
/// whose heads take any mode, and read back; a runs block is smaller than
/// the block it replaces.
#[test]
fn runs_blocks() {
    // Timestamps: each second repeated 1–5 times, the seconds in delta.
    let mut ts = Vec::new();
    let mut t = 1_700_000_000u64;
    for k in 0..600u64 {
        t += k * 7 % 3;
        ts.extend(std::iter::repeat(t).take(1 + (k * 13 % 5) as usize));
    }
    let size = round_trip(&ts);
    let (_, _, cps, _) = written(&ts);
    let runs: Vec<u8> = cps.iter().map(|c| c.runs).collect();
    // (The last block, 8 values, is smaller without a bitmap.)
    assert!(
        runs[..14].iter().all(|&h| h > 0),
        "every block runs: {runs:?}"
    );
    assert!(cps.iter().any(|c| c.delta), "heads in delta");
    let plain_size = planned_size(&ts, V7);
    assert!(size < plain_size, "{size} against {plain_size}");
    // Dictionary ids in runs, heads FoR; a last block of two values.
    let ids: Vec<u64> = (0..258u64).map(|i| (i / 9) * 37 % 11).collect();
    round_trip(&ids);
    assert!(written(&ids)
        .2
        .iter()
        .take(2)
        .all(|c| c.runs > 0 && !c.delta));
    round_trip(&[4, 4, 4, 9, 9]);
    // Values that never repeat never take runs.
    let (_, _, cps, _) = written(&(0..300u64).map(|i| i * i).collect::<Vec<_>>());
    assert!(cps.iter().all(|c| c.runs == 0));
}

/// A runs block's bitmap: a run at value 0, as many runs as heads, no bit
/// past the values (checked at open), and its mode only where allowed,
/// with 2 to `n` heads whose own mode is not runs.
#[test]
fn runs_modes_are_checked() {
    let values: Vec<u64> = (0..100u64).map(|i| 1000 + i / 10 * 3).collect();
    let (meta, data, cps, col) = written(&values);
    assert!(cps[0].runs == 10 && meta[0] == RUNS_MODE);
    col.check_blocks(&cps, &data, 0).unwrap();
    for (byte, bit) in [(0usize, 0u8), (0, 3), (12, 5), (1, 2)] {
        let mut bad = data.clone();
        bad[byte] ^= 1 << bit;
        assert!(
            col.check_blocks(&cps, &bad, 0).is_err(),
            "bitmap byte {byte} bit {bit}"
        );
    }
    // A bitmap that check_blocks refuses still reads without a panic
    // (every bit set, none set): values of the heads, nothing outside.
    for fill in [0xffu8, 0] {
        let mut bad = data.clone();
        bad[..13].fill(fill);
        let mut all = Vec::new();
        col.decode_all(&cps, &bad, &mut all);
        assert_eq!(all.len(), values.len());
        for (i, &v) in all.iter().enumerate() {
            assert!(v >= 1000 && col.get(&cps, &bad, i) >= 1000);
        }
    }
    let parse_with = |meta: &[u8], len: u32, modes: Modes| {
        let mut r = VarReader::new(meta, 0);
        let (mut cps, mut used) = (Vec::new(), 0u64);
        parse(&mut r, len, &mut cps, &mut used, modes).map(|_| (cps, used))
    };
    let (cps, used) = parse_with(&[RUNS_MODE, 3, 2, 7], 10, ALL).unwrap();
    assert!(cps[0].runs == 3 && cps[0].bits == 2 && cps[0].base == 7);
    assert_eq!(used, 2 + 1);
    for (meta, len, modes) in [
        (vec![RUNS_MODE, 3, 2, 7], 10, V7),
        (vec![RUNS_MODE, 1, 2, 7], 10, ALL),
        (vec![RUNS_MODE, 11, 2, 7], 10, ALL),
        (vec![RUNS_MODE, 2, 2, 7], 1, ALL),
        (vec![RUNS_MODE, 3, RUNS_MODE, 3, 2, 7], 10, ALL),
        // Stepped runs: only in format 9, a step of 0 is mode 252's, the
        // heads' mode not runs of either kind.
        (vec![STEP_RUNS_MODE, 3, 2, 2, 7], 10, V8),
        (vec![STEP_RUNS_MODE, 3, 0, 2, 7], 10, ALL),
        (
            vec![STEP_RUNS_MODE, 3, 2, STEP_RUNS_MODE, 3, 2, 2, 7],
            10,
            ALL,
        ),
        (vec![RUNS_MODE, 3, STEP_RUNS_MODE, 3, 2, 2, 7], 10, ALL),
        (vec![STEP_RUNS_MODE, 1, 2, 2, 7], 10, ALL),
    ] {
        match parse_with(&meta, len, modes) {
            Err(crate::Error::Corrupt {
                invariant: Invariant::BadField { .. },
                ..
            }) => {}
            other => panic!("{meta:?} len {len}: {:?}", other.err()),
        }
    }
}

/// The GPU's table of a runs block (`IntCol::device_sums`): its values
/// less the block's own line (base, step), constant along each run, the
/// base where the shortest arc holding them starts. Runs stepping down by
/// one past 0 (values wrapping to 2^64 − 1) and runs around 2^63 take
/// entries of a few bits, not 64; every value is its base + k·step + entry.
#[cfg(feature = "gpu")]
#[test]
fn runs_device_tables_stay_narrow() {
    let down: Vec<u64> = (0..128u64)
        .map(|j| (j / 16 * 3).wrapping_sub(j % 16))
        .collect();
    let around: Vec<u64> = (0..128u64)
        .map(|j| (1u64 << 63).wrapping_add(j / 8 % 3).wrapping_sub(1))
        .collect();
    for (values, step, most) in [(&down, u64::MAX, 8), (&around, 0, 2)] {
        let (_, data, cps, col) = written(values);
        assert_eq!((cps[0].runs > 0, cps[0].step), (true, step), "{cps:?}");
        let mut seen = 0;
        col.device_sums(&cps, &data, |_, line, entries| {
            let (base, slope) = line.expect("a runs block's line");
            assert_eq!(slope, step);
            for (k, &e) in entries.iter().enumerate() {
                let v = base
                    .wrapping_add(slope.wrapping_mul(k as u64))
                    .wrapping_add(e);
                assert_eq!(v, values[k], "value {k}");
            }
            let widest = entries.iter().copied().max().unwrap_or(0);
            assert!(widest < 1 << most, "entries up to {widest}");
            seen += 1;
        });
        assert_eq!(seen, 1);
    }
}

/// Runs that count on by a step (format version 9): a stack trace's
/// frames, numbered in order of first appearance, come back as ids
/// counting up by one; each run is one head and a bit a value. Every
/// value reads back by `get` and `decode_all` (steps of either sign,
/// wrapping past 2^64), the block is smaller than format 8's best, and its
/// bitmap is checked as a runs block's.
#[test]
fn stepped_runs_blocks() {
    // 40 traces of 7 to 30 frames, ids from first appearance.
    let mut ids = Vec::new();
    for t in 0..40u64 {
        let (first, len) = (t % 5 * 30, 7 + t * 11 % 24);
        ids.extend(first..first + len);
    }
    let size = round_trip(&ids);
    let (meta, data, cps, col) = written(&ids);
    assert!(cps.iter().all(|c| c.runs > 0 && c.step == 1), "{cps:?}");
    assert_eq!(meta[0], STEP_RUNS_MODE);
    col.check_blocks(&cps, &data, 0).unwrap();
    let v8 = planned_size(&ids, V8);
    assert!(size * 2 < v8, "{size} against format 8's {v8}");
    // Steps down, and steps that wrap.
    for step in [u64::MAX, 3u64 << 62, 977] {
        let v: Vec<u64> = (0..300u64)
            .map(|i| (i / 13 * 5).wrapping_add(step.wrapping_mul(i % 13)))
            .collect();
        round_trip(&v);
        let (_, _, cps, _) = written(&v);
        assert!(cps.iter().any(|c| c.step == step), "step {step}: {cps:?}");
    }
    // One progression that wraps past 2^64 (no linear slope catches it):
    // a single stepped run would have one head, so another mode stores it.
    let wrapping: Vec<u64> = (0..300u64)
        .map(|j| 5u64.wrapping_add(j.wrapping_mul(0xdead_beef_0000_0001)))
        .collect();
    round_trip(&wrapping);
    // A damaged bitmap is refused at open; read anyway, no panic.
    for (byte, bit) in [(0usize, 0u8), (3, 1), (15, 7)] {
        let mut bad = data.clone();
        bad[cps[0].off as usize + byte] ^= 1 << bit;
        assert!(col.check_blocks(&cps, &bad, 0).is_err());
        let mut all = Vec::new();
        col.decode_all(&cps, &bad, &mut all);
        assert_eq!(all.len(), ids.len());
        for i in 0..ids.len() {
            col.get(&cps, &bad, i);
        }
        for (a, b) in [(0, 128), (5, 100), (60, 200)] {
            all.clear();
            col.decode_range(&cps, &bad, a, b, &mut all);
            assert_eq!(all.len(), b - a);
        }
    }
}

/// The unchecked 8-byte loads of a block's unpack (`decode_block`,
/// `sum_packed`) read only where their slice holds 8 bytes past the
/// residuals: a column read over data shorter than its checkpoints say
/// (cut anywhere, runs, delta and FoR blocks) gives values, never a read
/// outside the slice (the loads fall back to checked reads).
#[test]
fn reads_over_cut_data_stay_inside_it() {
    let mut values: Vec<u64> = (0..300u64).map(|i| 1_000 + i / 4 * 3).collect();
    values.extend((0..200u64).map(|i| i * i * 977));
    let (_, data, cps, col) = written(&values);
    for cut in [0, 1, 5, 17, data.len() / 2, data.len() - PAD - 1] {
        let short = &data[..cut];
        let mut all = Vec::new();
        col.decode_all(&cps, short, &mut all);
        assert_eq!(all.len(), values.len());
        for i in (0..values.len()).step_by(7) {
            col.get(&cps, short, i);
        }
        for (a, b) in [(0, values.len()), (3, 250), (130, 131), (299, 420)] {
            all.clear();
            col.decode_range(&cps, short, a, b, &mut all);
            assert_eq!(all.len(), b - a, "values {a}..{b} over {cut} bytes");
        }
    }
}
