//! The object-store reader against a real HTTP server: nginx on localhost,
//! serving the file with range requests (`.ci/run` installs nginx from
//! Debian's packages when it is missing; without it this test prints a
//! notice and passes). Counts the range requests a `get` makes from nginx's
//! own access log.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fastpair::read::{ObjectOptions, ObjectStorage};
use fastpair::write::write_to_vec;
use fastpair::{Codec, ReadOptions, Reader, WriterOptions};

/// An nginx serving `dir/www` on 127.0.0.1, stopped on drop.
struct Nginx {
    child: Child,
    dir: PathBuf,
    port: u16,
}

impl Nginx {
    fn start(dir: &Path) -> Option<Self> {
        let bin = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
            .into_iter()
            .find(|p| Path::new(p).exists())?;
        let port = TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        for d in ["www", "tmp"] {
            std::fs::create_dir_all(dir.join(d)).ok()?;
        }
        let d = dir.display();
        let conf = format!(
            "daemon off;\nmaster_process off;\nworker_processes 1;\n\
             error_log {d}/error.log;\npid {d}/nginx.pid;\n\
             events {{ worker_connections 64; }}\n\
             http {{\n\
               log_format ranges '$request_method $uri $http_range $status $body_bytes_sent';\n\
               access_log {d}/access.log ranges;\n\
               client_body_temp_path {d}/tmp; proxy_temp_path {d}/tmp;\n\
               fastcgi_temp_path {d}/tmp; uwsgi_temp_path {d}/tmp; scgi_temp_path {d}/tmp;\n\
               server {{ listen 127.0.0.1:{port}; root {d}/www; }}\n\
             }}\n"
        );
        std::fs::write(dir.join("nginx.conf"), conf).ok()?;
        let child = Command::new(bin)
            .arg("-p")
            .arg(dir)
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut n = Nginx {
            child,
            dir: dir.to_path_buf(),
            port,
        };
        let t = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if t.elapsed() > Duration::from_secs(10) || n.child.try_wait().ok()?.is_some() {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(n)
    }

    /// Lines of the access log: one per request.
    fn requests(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("access.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rows(n: usize) -> Vec<Option<Vec<u8>>> {
    (0..n)
        .map(|i| {
            (i % 97 != 5).then(|| {
                format!(
                    "GET /api/v{}/items/{}?user={} HTTP/1.1",
                    i % 3,
                    i * 7919 % 10007,
                    i % 500
                )
                .into_bytes()
            })
        })
        .collect()
}

#[test]
fn remote_get_makes_at_most_three_range_requests() {
    let dir = std::env::temp_dir().join(format!("fastpair-nginx-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let Some(nginx) = Nginx::start(&dir) else {
        println!("NOTICE: nginx not found or did not start; object-store test skipped (.ci/run installs it)");
        return;
    };
    let values = rows(120_000);
    let opts = WriterOptions::default()
        .with_codec(Codec::OnPair12)
        .with_chunk_rows(30_000);
    let file = write_to_vec(values.iter().map(|v| v.as_deref()), opts).unwrap();
    std::fs::File::create(dir.join("www/col.fpc"))
        .unwrap()
        .write_all(&file)
        .unwrap();
    let url = format!("http://127.0.0.1:{}/col.fpc", nginx.port);
    let storage = ObjectStorage::http(&url, ObjectOptions::default()).unwrap();
    let r = Reader::open_object(storage, ReadOptions::default()).unwrap();
    let at_open = nginx.requests().len();
    println!("open: {at_open} requests (HEAD, header + tail/footer/dictionaries)");
    // A row in chunk 2, none of whose bytes has been read.
    let row = 2 * 30_000 + 1234;
    let got = r.get(row as u64).unwrap();
    assert_eq!(got, values[row]);
    let log = nginx.requests();
    let first = &log[at_open..];
    println!("first get: {} range requests: {first:?}", first.len());
    assert!(
        first.len() <= 3,
        "first get made {} requests: {first:?}",
        first.len()
    );
    assert!(first
        .iter()
        .all(|l| l.starts_with("GET /col.fpc bytes=") && l.contains(" 206 ")));
    // Another row of the same chunk: the codes only.
    let row2 = 2 * 30_000 + 20_000;
    assert_eq!(r.get(row2 as u64).unwrap(), values[row2]);
    let second = nginx.requests().len() - log.len();
    println!("second get in the chunk: {second} range requests");
    assert!(second <= 1);
    // Every row, remote bulk read against the values.
    let col = r.read_all().unwrap();
    for (i, v) in values.iter().enumerate() {
        assert_eq!(col.value(i), v.as_deref(), "row {i}");
    }
    let stats = r.storage().stats().unwrap();
    println!(
        "total: {} requests, {} bytes of a {}-byte file",
        stats.requests,
        stats.bytes,
        file.len()
    );
    drop(nginx);
    let _ = std::fs::remove_dir_all(&dir);
}
