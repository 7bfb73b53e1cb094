//! TPC-H over fastpair datasets on a Ballista cluster of separate processes
//! (a scheduler and two executors, the `fastpair-ballista` binary, on
//! localhost TCP) against the same queries in one process
//! (`fastpair_datafusion::session_context`): the string-predicate queries
//! (Q2, Q9, Q13, Q14, Q16, Q20) and scans with every kind of pushed
//! predicate, row for row. The processes are killed when the test ends,
//! passing or not, and every wait has a deadline, so a hung cluster fails
//! the test instead of blocking CI.

use std::fs::File;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::{SessionConfig, SessionContext};
use fastpair_datafusion::{session_context, FastpairTable};

#[path = "../../fastpair-datafusion/tests/support/mod.rs"]
mod support;
use support::{compress, tpch_batches, write_parquet, TABLES};

/// How long the cluster may take to come up, and one query to run.
const START_DEADLINE: Duration = Duration::from_secs(60);
const QUERY_DEADLINE: Duration = Duration::from_secs(120);

/// The TPC-H tables at SF 0.01 as datasets DIR/NAME.fpd, parts of 16,384
/// rows (lineitem and orders have several, so scans have several
/// partitions to spread over the executors).
fn write_datasets(dir: &Path) {
    for t in TABLES {
        let pq = dir.join(format!("{t}.parquet"));
        write_parquet(&pq, &tpch_batches(t));
        compress(&pq, &dir.join(format!("{t}.fpd")), 16_384);
    }
}

/// A process of the cluster, killed (and reaped) when dropped.
struct Proc {
    name: &'static str,
    child: Child,
    log: PathBuf,
}

impl Proc {
    fn start(name: &'static str, args: &[String], logs: &Path) -> Proc {
        let log = logs.join(format!("{name}.log"));
        let out = File::create(&log).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_fastpair-ballista"))
            .args(args)
            .env("FASTPAIR_BALLISTA_LOG", "info")
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("starting the {name}: {e}"));
        Proc { name, child, log }
    }

    /// Panics (with the process's log) if it has exited.
    fn check_alive(&mut self) {
        if let Some(status) = self.child.try_wait().unwrap() {
            panic!(
                "the {} exited ({status}):\n{}",
                self.name,
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `n` distinct free ports on 127.0.0.1 (held together while chosen, then
/// released for the processes to bind).
fn free_ports(n: usize) -> Vec<u16> {
    let ls: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    ls.iter().map(|l| l.local_addr().unwrap().port()).collect()
}

/// Waits until `port` accepts connections, failing if any process exits
/// or the deadline passes.
fn wait_port(port: u16, procs: &mut [Proc], deadline: Instant) {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    loop {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return;
        }
        for p in procs.iter_mut() {
            p.check_alive();
        }
        if Instant::now() > deadline {
            let logs: Vec<String> = procs
                .iter()
                .map(|p| {
                    format!(
                        "--- {}:\n{}",
                        p.name,
                        std::fs::read_to_string(&p.log).unwrap_or_default()
                    )
                })
                .collect();
            panic!(
                "port {port} not listening after {START_DEADLINE:?}\n{}",
                logs.join("\n")
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A scheduler and two executors (two task slots each), each its own
/// process, work directories under `dir`. Returns the processes and the
/// scheduler's port.
fn start_cluster(dir: &Path) -> (Vec<Proc>, u16) {
    let ports = free_ports(5);
    let sched = ports[0];
    let mut procs = vec![Proc::start(
        "scheduler",
        &[
            "scheduler".into(),
            "--bind".into(),
            format!("127.0.0.1:{sched}"),
            "--external-host".into(),
            "127.0.0.1".into(),
        ],
        dir,
    )];
    let deadline = Instant::now() + START_DEADLINE;
    wait_port(sched, &mut procs, deadline);
    for (i, name) in ["executor-1", "executor-2"].into_iter().enumerate() {
        let work = dir.join(format!("{name}-work"));
        std::fs::create_dir_all(&work).unwrap();
        let (flight, grpc) = (ports[1 + 2 * i], ports[2 + 2 * i]);
        let args: Vec<String> = [
            "executor",
            "--scheduler-host",
            "127.0.0.1",
            "--scheduler-port",
            &sched.to_string(),
            "--bind-host",
            "127.0.0.1",
            "--external-host",
            "127.0.0.1",
            "--flight-port",
            &flight.to_string(),
            "--grpc-port",
            &grpc.to_string(),
            "--concurrent-tasks",
            "2",
            "--work-dir",
            work.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        procs.push(Proc::start(name, &args, dir));
    }
    for &p in &ports[1..] {
        wait_port(p, &mut procs, deadline);
    }
    (procs, sched)
}

fn config() -> SessionConfig {
    SessionConfig::new().with_target_partitions(4)
}

/// A query's rows, printed, in the query's order.
async fn rows(ctx: &SessionContext, sql: &str, procs: &mut [Proc]) -> Vec<String> {
    let run = async {
        ctx.sql(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .collect()
            .await
    };
    let batches = match tokio::time::timeout(QUERY_DEADLINE, run).await {
        Ok(b) => b.unwrap_or_else(|e| {
            for p in procs.iter_mut() {
                p.check_alive();
            }
            panic!("{sql}: {e}")
        }),
        Err(_) => panic!("{sql}: no result after {QUERY_DEADLINE:?}"),
    };
    let text = pretty_format_batches(&batches).unwrap().to_string();
    text.lines().map(str::to_string).collect()
}

fn tpch_query(n: usize) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../fastpair-datafusion/tpch/q{n:02}.sql"));
    std::fs::read_to_string(p).unwrap()
}

/// Scans whose string predicates are pushed into the fastpair scan (each
/// kind the codec carries: LIKE with `%` inside, NOT LIKE, ILIKE (inexact,
/// re-checked above the scan), IN, =, <>, prefix, strpos, and a LIMIT).
const SCANS: &[&str] = &[
    "SELECT count(*), sum(l_quantity) FROM lineitem WHERE l_comment LIKE '%special%'",
    "SELECT l_orderkey, l_linenumber, l_comment FROM lineitem \
     WHERE l_comment LIKE '%final%dep%' ORDER BY l_orderkey, l_linenumber",
    "SELECT o_orderpriority, count(*) FROM orders \
     WHERE o_comment LIKE '%special%requests%' GROUP BY o_orderpriority ORDER BY o_orderpriority",
    "SELECT ps_partkey, ps_suppkey, ps_availqty FROM partsupp \
     WHERE ps_comment LIKE '%carefully ironic%' ORDER BY ps_partkey, ps_suppkey",
    "SELECT l_shipmode, count(*), sum(l_extendedprice) FROM lineitem \
     WHERE l_shipmode IN ('MAIL', 'SHIP') AND l_comment NOT LIKE '%e%' \
     GROUP BY l_shipmode ORDER BY l_shipmode",
    "SELECT l_returnflag, count(*) FROM lineitem WHERE l_comment ILIKE '%FURIOU%' \
     GROUP BY l_returnflag ORDER BY l_returnflag",
    "SELECT c_mktsegment, count(*) FROM customer \
     WHERE starts_with(c_name, 'Customer#00000') AND c_mktsegment <> 'BUILDING' \
     GROUP BY c_mktsegment ORDER BY c_mktsegment",
    "SELECT l_orderkey, l_linenumber FROM lineitem WHERE strpos(l_comment, 'pinto') > 0 \
     ORDER BY l_orderkey, l_linenumber LIMIT 10",
    // A limit without an order goes into the scan (any 25 rows: count them).
    "SELECT count(*) FROM (SELECT l_orderkey FROM lineitem \
     WHERE l_comment LIKE '%quick%' LIMIT 25)",
    "SELECT n_name, count(*) FROM supplier JOIN nation ON s_nationkey = n_nationkey \
     WHERE s_comment NOT LIKE '%Customer%Complaints%' AND n_name <> 'GERMANY' \
     GROUP BY n_name ORDER BY n_name",
];

/// TPC-H queries with string predicates (issue 22's list).
const TPCH: &[usize] = &[2, 9, 13, 14, 16, 20];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queries_on_a_ballista_cluster_equal_one_process() {
    let tmp = tempfile::Builder::new()
        .prefix("fastpair-ballista-")
        .tempdir()
        .unwrap();
    let dir = tmp.path();
    write_datasets(dir);
    // The free ports are released before the processes bind them, so
    // another program may take one in between: a cluster that fails to
    // start is started again on new ports (twice at most), its processes
    // killed while the failure unwinds.
    let mut attempt = 1;
    let (mut procs, port) = loop {
        let start = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| start_cluster(dir)));
        match start {
            Ok(c) => break c,
            Err(e) if attempt < 3 => {
                eprintln!("cluster start {attempt} failed; starting again");
                drop(e);
                attempt += 1;
            }
            Err(e) => std::panic::resume_unwind(e),
        }
    };

    let local = session_context(config());
    let remote = tokio::time::timeout(
        START_DEADLINE,
        fastpair_ballista::remote_context(&format!("df://127.0.0.1:{port}"), config()),
    )
    .await
    .expect("connecting to the scheduler timed out")
    .unwrap();
    for t in TABLES {
        let ds = dir.join(format!("{t}.fpd"));
        local
            .register_table(t, Arc::new(FastpairTable::open(&ds).unwrap()))
            .unwrap();
        remote
            .register_table(t, Arc::new(FastpairTable::open(&ds).unwrap()))
            .unwrap();
    }

    let queries: Vec<(String, String)> = TPCH
        .iter()
        .map(|&n| (format!("TPC-H Q{n}"), tpch_query(n)))
        .chain(SCANS.iter().map(|s| (s.to_string(), s.to_string())))
        .collect();
    let mut nonempty = 0;
    // Per executor, whether it has written shuffle output (looked at after
    // every query: the scheduler has executors delete a job's files some
    // minutes after it ends).
    let works = ["executor-1", "executor-2"].map(|e| dir.join(format!("{e}-work")));
    let mut worked = [false; 2];
    for (name, sql) in &queries {
        // The one-process plan pushes the query's string predicates into the
        // scan (what the cluster's scans must carry over the wire); Q14's
        // LIKE sits in a CASE, evaluated above the scan.
        let explain = rows(&local, &format!("EXPLAIN {sql}"), &mut procs).await;
        assert!(
            name == "TPC-H Q14" || explain.iter().any(|l| l.contains("search=[")),
            "{name}: no predicate pushed into the scan:\n{}",
            explain.join("\n")
        );
        let want = rows(&local, sql, &mut procs).await;
        let got = rows(&remote, sql, &mut procs).await;
        assert_eq!(
            got, want,
            "{name}: the cluster's rows differ from one process's"
        );
        for (w, seen) in works.iter().zip(&mut worked) {
            *seen |= std::fs::read_dir(w).unwrap().next().is_some();
        }
        // A header (3 lines) and a bottom line around any rows.
        if want.len() > 4 {
            nonempty += 1;
        }
    }
    assert_eq!(
        nonempty,
        queries.len(),
        "every query selects rows at SF 0.01"
    );

    // The work went to both executors: each wrote shuffle output.
    for p in procs.iter_mut() {
        p.check_alive();
    }
    for (w, seen) in works.iter().zip(worked) {
        assert!(
            seen,
            "an executor ran no task ({} stayed empty)",
            w.display()
        );
    }
    drop(procs);
}
