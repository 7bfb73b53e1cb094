//! Where a log-template payload's bytes go (issue 20, ratio work): per
//! column, the payload (`fastpair::logs::encode_column`, default options)
//! split into framing, meta, row index, column data and the pool, the pool
//! further into its token table, offsets and codes; the sizes only, no
//! timing (fast enough to run after every change; the full table with the
//! peers is `logs_ratio`).
//!
//! ```text
//! cargo run --release -p fastpair-lab --example logs_parts -- [FILTER...]   (default: loghub)
//! ```

use fastpair::logs::{encode_column, part_sizes, LogOptions, BREAKDOWN_PARTS};

/// Reads a LEB128 varint at `*at`.
fn varint(b: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let x = b[*at];
        *at += 1;
        v |= ((x & 0x7f) as u64) << shift;
        if x < 0x80 {
            return v;
        }
        shift += 7;
    }
}

/// (token table, offsets, codes) bytes of the form-2 pool `p` (spec/FORMAT.md §5.8.4).
fn pool_parts(p: &[u8], open_section: bool) -> [usize; 3] {
    let mut at = 0;
    if open_section {
        // Format 10 (§5.8.6): the token table is in the open section.
        varint(p, &mut at);
        let m = varint(p, &mut at) as usize;
        at += m;
        let k = varint(p, &mut at) as usize;
        at += k;
        return [0, at, p.len() - at];
    }
    let l = varint(p, &mut at) as usize;
    let nib = &p[at..at + l.div_ceil(2)];
    at += l.div_ceil(2);
    // Form 2 (format version 6): a nibble of shared prefix per token, then
    // each token's bytes after it.
    let pre = &p[at..at + l.div_ceil(2)];
    at += l.div_ceil(2);
    let nibble = |t: &[u8], i: usize| ((t[i / 2] >> (4 * (i % 2))) & 15) as usize;
    let bytes: usize = (0..l).map(|i| nibble(nib, i) + 1 - nibble(pre, i)).sum();
    at += bytes;
    let table = at;
    varint(p, &mut at);
    let m = varint(p, &mut at) as usize;
    at += m;
    let k = varint(p, &mut at) as usize;
    at += k;
    [table, at - table, p.len() - at]
}

/// Adds block `b`'s parts to `acc`: framing, meta, rowidx, data, table, offsets, codes.
fn block_parts(b: &[u8], acc: &mut [usize; 7]) {
    let p = part_sizes(b).unwrap();
    acc[0] += p[0] + p[5];
    acc[1] += p[1];
    acc[2] += p[2];
    acc[3] += p[3];
    let at = 20 + p[1] + p[2] + p[3];
    let pp = pool_parts(&b[at..at + p[4]], b.starts_with(b"FPL6"));
    acc[4] += pp[0];
    acc[5] += pp[1];
    acc[6] += pp[2];
}

fn main() {
    let mut filters: Vec<String> = std::env::args().skip(1).collect();
    if filters.is_empty() {
        filters.push("loghub".into());
    }
    let files = fastpair::testing::corpus::files(&filters);
    println!("| column | text | A bytes | ratio | framing | meta | rowidx | data | pool table | pool offs | pool codes | compress MB/s |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut logs = Vec::new();
    let mut total = [0usize; 7];
    // `LOGS_FINE=1`: the finer breakdown (`LogColumn::breakdown`) and
    // `zstd -19` of the whole column file, printed after the table.
    let fine = std::env::var_os("LOGS_FINE").is_some();
    let mut fine_rows: Vec<(String, usize, usize, [u64; 17])> = Vec::new();
    let (mut all_text, mut all_secs) = (0usize, 0f64);
    for f in &files {
        let data = std::fs::read(f).unwrap();
        let vals = fastpair::testing::corpus::lines(&data);
        let text: usize = vals.iter().map(|r| r.len()).sum();
        let t = std::time::Instant::now();
        // `LOGS_NO_GROUP=1`: slots never grouped (what the grouping costs).
        // `LOGS_SPLIT=1` / `=0`: the header/body split forced on / off.
        let opts = LogOptions {
            group_slots: std::env::var_os("LOGS_NO_GROUP").is_none(),
            families: std::env::var_os("LOGS_NO_FAMILY").is_none(),
            try_coarse: std::env::var_os("LOGS_NO_COARSE").is_none(),
            split: std::env::var("LOGS_SPLIT").ok().map(|v| v == "1"),
            ..Default::default()
        };
        let a = encode_column(&vals, &opts);
        let secs = t.elapsed().as_secs_f64();
        let mut acc = [0usize; 7];
        if a.starts_with(b"FPS6") {
            let h = u32::from_le_bytes(a[4..8].try_into().unwrap()) as usize;
            acc[0] += 8;
            block_parts(&a[8..8 + h], &mut acc);
            block_parts(&a[8 + h..], &mut acc);
        } else {
            block_parts(&a, &mut acc);
        }
        assert_eq!(acc.iter().sum::<usize>(), a.len());
        for (t, a) in total.iter_mut().zip(acc) {
            *t += a;
        }
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        // `LOGS_DUMP=DIR`: each payload and its rows (one per line) into DIR,
        // for `spec/reader.py` (`decode_log_payload`).
        if let Some(dir) = std::env::var_os("LOGS_DUMP") {
            let dir = std::path::Path::new(&dir);
            std::fs::write(dir.join(format!("{name}.fpl")), &a).unwrap();
            let mut text = Vec::new();
            for r in &vals {
                text.extend_from_slice(r);
                text.push(b'\n');
            }
            std::fs::write(dir.join(format!("{name}.rows")), text).unwrap();
        }
        if fine {
            let z = zstd::bulk::compress(&data, 19).unwrap().len();
            let col = fastpair::logs::LogColumn::open(&a).unwrap();
            let b = col.breakdown();
            let (now, then, chains) = col.mixed_radix_estimate();
            eprintln!("{name}: mixed-radix time chains {chains}: {now} B as fields, {then} B as one integer (saves {} B, {:.1}% of A)", now as i64 - then as i64, 100.0 * (now as f64 - then as f64) / a.len() as f64);
            assert_eq!(b.iter().sum::<u64>(), a.len() as u64, "{name}");
            fine_rows.push((name.clone(), a.len(), z, b));
        }
        // `LOGS_OPEN=DIR`: the strings every row shares (static text,
        // dictionary values) written raw to DIR/NAME.shared (a u32 length
        // before each), with their pool code bytes and zstd -19 of them.
        if let Some(dir) = std::env::var_os("LOGS_OPEN") {
            let col = fastpair::logs::LogColumn::open(&a).unwrap();
            let (strs, code_bytes) = col.shared_strings();
            let mut raw = Vec::new();
            for s in &strs {
                raw.extend_from_slice(&(s.len() as u32).to_le_bytes());
                raw.extend_from_slice(s);
            }
            let plain: usize = strs.iter().map(|s| s.len()).sum();
            let mut joined = Vec::new();
            for s in &strs {
                joined.extend_from_slice(s);
                joined.push(0);
            }
            let z = zstd::bulk::compress(&joined, 19).unwrap().len();
            eprintln!(
                "{name}: shared strings {} ({plain} B raw), pool codes {code_bytes} B, zstd-19 {z} B; payload {} B",
                strs.len(),
                a.len()
            );
            std::fs::write(
                std::path::Path::new(&dir).join(format!("{name}.shared")),
                raw,
            )
            .unwrap();
            // And each block's meta and pool token table, as stored.
            let mut meta = Vec::new();
            let mut table = Vec::new();
            let mut blocks = vec![&a[..]];
            if a.starts_with(b"FPS6") {
                let h = u32::from_le_bytes(a[4..8].try_into().unwrap()) as usize;
                blocks = vec![&a[8..8 + h], &a[8 + h..]];
            }
            for b in blocks {
                let p = fastpair::logs::part_sizes(b).unwrap();
                meta.extend_from_slice(&b[20..20 + p[1]]);
                let at = 20 + p[1] + p[2] + p[3];
                let pp = pool_parts(&b[at..at + p[4]], b.starts_with(b"FPL6"));
                table.extend_from_slice(&b[at..at + pp[0]]);
            }
            std::fs::write(
                std::path::Path::new(&dir).join(format!("{name}.meta")),
                meta,
            )
            .unwrap();
            std::fs::write(
                std::path::Path::new(&dir).join(format!("{name}.table")),
                table,
            )
            .unwrap();
        }
        // `LOGS_SHARED=1`: the dictionary values' codes if shared by the
        // block's slots (`LogColumn::shared_dict_estimate`).
        if std::env::var_os("LOGS_SHARED").is_some() {
            let col = fastpair::logs::LogColumn::open(&a).unwrap();
            let (v, d, now, shared) = col.shared_dict_estimate();
            eprintln!(
                "shared,{name},{},{v},{d},{now},{shared},{},{:.1}%",
                a.len(),
                (now - shared) * 3 / 2,
                100.0 * ((now - shared) * 3 / 2) as f64 / a.len() as f64
            );
        }
        // `LOGS_RUNS=1`: integer blocks stored as runs (`runs_estimate`).
        if std::env::var_os("LOGS_RUNS").is_some() {
            let col = fastpair::logs::LogColumn::open(&a).unwrap();
            let (now, then, t, n) = col.runs_estimate();
            eprintln!(
                "runs,{name},{},{now},{then},{t}/{n},{:.1}%",
                a.len(),
                100.0 * (now - then) as f64 / a.len() as f64
            );
            let (now, then, t, n) = col.row_runs_estimate();
            eprintln!(
                "rowruns,{name},{},{now},{then},{t}/{n},{:.1}%",
                a.len(),
                100.0 * (now - then) as f64 / a.len() as f64
            );
        }
        // `LOGS_SHOW=NAME`: that column's templates and slot types too.
        if std::env::var("LOGS_SHOW").is_ok_and(|v| name.contains(&v)) {
            let s = fastpair::logs::LogColumn::open(&a).unwrap().summary();
            for t in &s.slot_types {
                eprintln!(
                    "{}: {} slots, {} values, {} column bytes",
                    t.name, t.slots, t.values, t.column_bytes
                );
            }
            let mut costs = fastpair::logs::LogColumn::open(&a).unwrap().slot_costs();
            costs.sort_by_key(|c| std::cmp::Reverse(c.column_bytes));
            for c in costs.iter().take(25) {
                let text = s
                    .top
                    .iter()
                    .find(|t| t.block == c.block && t.id == c.template)
                    .map_or(String::new(), |t| t.text.clone());
                eprintln!(
                    "slot {} #{} s{} {} rows {} bytes {} bits {:?}: {}",
                    c.block,
                    c.template,
                    c.slot,
                    c.kind,
                    c.rows,
                    c.column_bytes,
                    &c.bits[..c.bits.len().min(16)],
                    text
                );
            }
            for t in s.top.iter().take(60) {
                eprintln!("{} #{} {} rows: {}", t.block, t.id, t.rows, t.text);
            }
        }
        let ratio = text as f64 / a.len() as f64;
        logs.push(ratio.ln());
        all_text += text;
        all_secs += secs;
        println!(
            "| {name} | {text} | {} | {ratio:.2} | {} | {} | {} | {} | {} | {} | {} | {:.1} |",
            a.len(),
            acc[0],
            acc[1],
            acc[2],
            acc[3],
            acc[4],
            acc[5],
            acc[6],
            text as f64 / secs / 1e6
        );
    }
    println!(
        "| **geomean** | | | **{:.3}** | {} | {} | {} | {} | {} | {} | {} | {:.1} |",
        (logs.iter().sum::<f64>() / logs.len().max(1) as f64).exp(),
        total[0],
        total[1],
        total[2],
        total[3],
        total[4],
        total[5],
        total[6],
        all_text as f64 / all_secs / 1e6
    );
    if fine {
        print_fine(&fine_rows);
    }
}

/// The finer breakdown: bytes per part per column, then the sums over the
/// columns and, per part, its share of the payload's excess over
/// `zstd -19` (sum over the columns of A − zstd-19 bytes).
fn print_fine(rows: &[(String, usize, usize, [u64; 17])]) {
    println!();
    print!("| column | A bytes | zstd-19 |");
    for p in BREAKDOWN_PARTS {
        print!(" {p} |");
    }
    println!();
    print!("|---|---:|---:|");
    for _ in BREAKDOWN_PARTS {
        print!("---:|");
    }
    println!();
    let mut sum = [0u64; BREAKDOWN_PARTS.len()];
    let (mut sa, mut sz) = (0usize, 0usize);
    for (name, a, z, b) in rows {
        print!("| {name} | {a} | {z} |");
        for (t, v) in sum.iter_mut().zip(b) {
            print!(" {v} |");
            *t += v;
        }
        println!();
        sa += a;
        sz += z;
    }
    print!("| **sum** | {sa} | {sz} |");
    for v in sum {
        print!(" {v} |");
    }
    println!();
    print!("| share of A | | |");
    for v in sum {
        print!(" {:.1}% |", 100.0 * v as f64 / sa as f64);
    }
    println!();
}
