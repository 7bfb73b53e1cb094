//! Writes a synthetic web-server access log, one line per row, in the
//! combined log format (client, user, time, request, status, size, referer,
//! user agent): the log-like column `demo.sh` compresses beside TPC-H
//! `l_comment`. Deterministic (a fixed seed), generated on the spot, no
//! network: a clone with nothing beside it can show what the log codec does.
//!
//! ```text
//! cargo run --release --example log_column -- OUT.txt [ROWS]
//! ```
//!
//! It is generated, not a real server's log, and says so wherever the demo
//! prints it: real logs carry more noise (bots, odd clients, long query
//! strings), so their ratios are lower; bench/LOGS.md has the Loghub columns.
//! What it keeps from real access logs is their shape: a few hundred URL
//! shapes with numeric and word slots, skewed clients and user agents,
//! timestamps a second or so apart, status codes and sizes that follow the
//! request.

use proptest::prelude::RngExt;
use proptest::test_runner::{RngAlgorithm, TestRng};
use std::fmt::Write as _;

const USER_AGENTS: [&str; 12] = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
    "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
    "curl/8.5.0",
    "python-requests/2.32.3",
    "Go-http-client/1.1",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
];

const WORDS: [&str; 24] = [
    "shoes", "jacket", "lamp", "desk", "chair", "laptop", "phone", "case", "cable", "mug",
    "kettle", "tent", "boots", "scarf", "watch", "camera", "lens", "tripod", "bag", "bottle",
    "blender", "pillow", "rug", "mirror",
];

const USERS: [&str; 6] = ["alice", "bob", "carol", "dave", "erin", "frank"];

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Index in `0..n`, skewed towards 0 (a few clients and agents make most
/// requests, as on real servers).
fn skewed(rng: &mut TestRng, n: usize) -> usize {
    let u: f64 = rng.random();
    ((u * u * u) * n as f64) as usize
}

/// (year, month 1..=12, day) of a day count since 1970-01-01 (the civil
/// calendar algorithm of Howard Hinnant's date library, in integers).
fn civil(days: i64) -> (i64, usize, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month as usize, day)
}

/// The request path and the size of its body.
fn request(rng: &mut TestRng) -> (String, u32) {
    let word = WORDS[skewed(rng, WORDS.len())];
    match rng.random_range(0..100u32) {
        0..=17 => ("/".into(), rng.random_range(14_000..16_000)),
        18..=29 => (
            format!(
                "/static/js/app.{:08x}.js",
                0x5eed_0000u32 + rng.random_range(0..4u32)
            ),
            rng.random_range(180_000..182_000),
        ),
        30..=39 => (
            format!(
                "/static/css/site.{:08x}.css",
                0xc0de_0000u32 + rng.random_range(0..3u32)
            ),
            rng.random_range(40_000..41_000),
        ),
        40..=54 => (
            format!("/products/{word}-{}", rng.random_range(1..5_000u32)),
            rng.random_range(20_000..60_000),
        ),
        55..=64 => (
            format!("/api/v1/users/{}", rng.random_range(1..200_000u32)),
            rng.random_range(300..2_000),
        ),
        65..=72 => (
            format!(
                "/api/v1/orders/{}/items?page={}",
                rng.random_range(100_000..999_999u32),
                rng.random_range(1..6u32)
            ),
            rng.random_range(500..8_000),
        ),
        73..=81 => (
            format!("/search?q={word}&page={}", rng.random_range(1..10u32)),
            rng.random_range(10_000..30_000),
        ),
        82..=89 => (
            format!("/images/{}.jpg", rng.random_range(10_000..99_999u32)),
            rng.random_range(20_000..400_000),
        ),
        90..=93 => ("/favicon.ico".into(), 1_150),
        94..=96 => ("/robots.txt".into(), 68),
        _ => (
            format!(
                "/cart/add?sku={}{:05}&qty={}",
                word.to_ascii_uppercase(),
                rng.random_range(0..99_999u32),
                rng.random_range(1..4u32)
            ),
            rng.random_range(100..400),
        ),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: log_column OUT.txt [ROWS]";
    let Some(out) = args.first() else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let rows = match args.get(1).map(|r| r.parse::<usize>()) {
        None => 200_000,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("log_column: ROWS {:?}: {e}", args[1]);
            std::process::exit(2);
        }
    };
    let mut rng = TestRng::from_seed(RngAlgorithm::ChaCha, b"fastpair demo access log, v1 ...");
    let clients: Vec<String> = (0..4_000)
        .map(|_| {
            let a = [10u8, 172, 192, 81, 89, 94][rng.random_range(0..6)];
            format!(
                "{a}.{}.{}.{}",
                rng.random::<u8>(),
                rng.random::<u8>(),
                rng.random_range(1..255u8)
            )
        })
        .collect();
    // 2026-11-01 00:00:00 UTC, in seconds since the epoch.
    let mut now: i64 = 1_793_491_200;
    let mut text = String::with_capacity(rows * 220);
    for _ in 0..rows {
        now += rng.random_range(0..3i64);
        let (y, m, d) = civil(now.div_euclid(86_400));
        let secs = now.rem_euclid(86_400);
        let method = match rng.random_range(0..100u32) {
            0..=84 => "GET",
            85..=96 => "POST",
            97..=98 => "HEAD",
            _ => "PUT",
        };
        let (path, size) = request(&mut rng);
        let status = match rng.random_range(0..100u32) {
            0..=79 => 200,
            80..=87 => 304,
            88..=92 => 404,
            93..=95 => 302,
            96..=98 => 403,
            _ => 500,
        };
        let size = match status {
            304 => "-".to_string(),
            200 => size.to_string(),
            _ => rng.random_range(150..600u32).to_string(),
        };
        let user = if rng.random_range(0..100u32) < 95 {
            "-"
        } else {
            USERS[skewed(&mut rng, USERS.len())]
        };
        let referer = match rng.random_range(0..10u32) {
            0..=3 => "-".to_string(),
            4..=7 => format!(
                "https://shop.example.com/products/{}",
                WORDS[skewed(&mut rng, WORDS.len())]
            ),
            _ => format!(
                "https://www.google.com/search?q={}",
                WORDS[skewed(&mut rng, WORDS.len())]
            ),
        };
        let _ = writeln!(
            text,
            "{} - {user} [{d:02}/{}/{y}:{:02}:{:02}:{:02} +0000] \"{method} {path} HTTP/1.1\" {status} {size} \"{referer}\" \"{}\"",
            clients[skewed(&mut rng, clients.len())],
            MONTHS[m - 1],
            secs / 3600,
            secs / 60 % 60,
            secs % 60,
            USER_AGENTS[skewed(&mut rng, USER_AGENTS.len())],
        );
    }
    if let Err(e) = std::fs::write(out, &text) {
        eprintln!("log_column: {out}: {e}");
        std::process::exit(1);
    }
}
