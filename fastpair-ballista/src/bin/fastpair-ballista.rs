//! `fastpair-ballista scheduler|executor`: a Ballista scheduler or executor
//! that can run plans over fastpair datasets (the fastpair codecs
//! registered). Runs until killed. Logs (Ballista's `log` records at the
//! level of `FASTPAIR_BALLISTA_LOG`, default `warn`) go to standard error.

use std::net::SocketAddr;

use clap::{Parser, Subcommand};
use fastpair_ballista::{run_executor, run_scheduler, ExecutorOptions, SchedulerOptions};

#[derive(Parser)]
#[command(
    name = "fastpair-ballista",
    about = "Ballista scheduler and executor for fastpair datasets"
)]
struct Cli {
    #[command(subcommand)]
    role: Role,
}

#[derive(Subcommand)]
enum Role {
    /// The scheduler: clients submit queries to it, it plans them into
    /// stages and hands their tasks to the executors.
    Scheduler {
        /// Address to listen on.
        #[arg(long, default_value = "0.0.0.0:50050")]
        bind: SocketAddr,
        /// Host name by which executors and clients reach this machine.
        #[arg(long, default_value = "localhost")]
        external_host: String,
    },
    /// An executor: runs tasks, serves their shuffle output over Arrow Flight.
    Executor {
        /// Scheduler host.
        #[arg(long, default_value = "localhost")]
        scheduler_host: String,
        /// Scheduler port.
        #[arg(long, default_value_t = 50050)]
        scheduler_port: u16,
        /// Host (IP) to listen on.
        #[arg(long, default_value = "0.0.0.0")]
        bind_host: String,
        /// Host name by which the scheduler and the other executors reach
        /// this machine.
        #[arg(long, default_value = "localhost")]
        external_host: String,
        /// Arrow Flight port (shuffle reads).
        #[arg(long, default_value_t = 50051)]
        flight_port: u16,
        /// gRPC port (task launches).
        #[arg(long, default_value_t = 50052)]
        grpc_port: u16,
        /// Tasks run at once (default: the machine's cores).
        #[arg(long)]
        concurrent_tasks: Option<usize>,
        /// Directory for shuffle files (default: a temporary one).
        #[arg(long)]
        work_dir: Option<String>,
    },
}

/// Ballista's `log` records to standard error, one line each.
struct StderrLog;

impl log::Log for StderrLog {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }
    fn log(&self, r: &log::Record) {
        if self.enabled(r.metadata()) {
            eprintln!("{} {}: {}", r.level(), r.target(), r.args());
        }
    }
    fn flush(&self) {}
}

fn main() {
    let level = std::env::var("FASTPAIR_BALLISTA_LOG")
        .ok()
        .and_then(|l| l.parse().ok())
        .unwrap_or(log::LevelFilter::Warn);
    log::set_logger(&StderrLog).expect("the only logger");
    log::set_max_level(level);
    let cli = Cli::parse();
    // Ballista's own binaries run on a multi-threaded runtime with large
    // stacks (deep plans are planned and decoded recursively).
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(32 << 20)
        .build()
        .expect("a tokio runtime");
    let r = rt.block_on(async {
        match cli.role {
            Role::Scheduler {
                bind,
                external_host,
            } => {
                run_scheduler(SchedulerOptions {
                    bind,
                    external_host,
                })
                .await
            }
            Role::Executor {
                scheduler_host,
                scheduler_port,
                bind_host,
                external_host,
                flight_port,
                grpc_port,
                concurrent_tasks,
                work_dir,
            } => {
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                run_executor(ExecutorOptions {
                    bind_host,
                    external_host,
                    flight_port,
                    grpc_port,
                    scheduler_host,
                    scheduler_port,
                    concurrent_tasks: concurrent_tasks.unwrap_or(cores),
                    work_dir,
                })
                .await
            }
        }
    });
    if let Err(e) = r {
        eprintln!("fastpair-ballista: {e}");
        std::process::exit(1);
    }
}
