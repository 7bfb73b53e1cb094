//! # fastpair-ballista — SQL over fastpair datasets on a Ballista cluster
//!
//! [Apache DataFusion Ballista](https://datafusion.apache.org/ballista/)
//! runs DataFusion plans on a scheduler and executors in other processes,
//! shipping plans as protobuf. A plan over a fastpair dataset holds two
//! things DataFusion's protobuf does not know: the table
//! (`fastpair_datafusion::FastpairTable`, sent from the client to the
//! scheduler inside the logical plan) and its scan (`FastpairScanExec`, with
//! the string predicates pushed into it, sent from the scheduler to the
//! executors inside each stage). [`logical_codec`] and [`physical_codec`]
//! carry them (`fastpair_datafusion::codec`) and hand everything else to
//! Ballista's own codecs. Every process of the cluster needs both, which is
//! why this crate has its own scheduler and executor ([`run_scheduler`],
//! [`run_executor`], the `fastpair-ballista` binary) instead of Ballista's
//! stock binaries; [`remote_context`] is the client side.
//!
//! Every process opens the datasets at the path the client registered them
//! under, so on several machines that path must name the same dataset on
//! each (shared storage mounted at the same place).

use std::net::SocketAddr;
use std::sync::Arc;

use ballista::prelude::{SessionConfigExt, SessionContextExt};
use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::{SchedulerConfig, TaskDistributionPolicy};
use ballista_scheduler::scheduler_process::start_server;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::PhysicalExtensionCodec;
use fastpair_datafusion::codec::{FastpairLogicalCodec, FastpairPhysicalCodec};

/// Fastpair tables over Ballista's logical codec. The tables the scheduler
/// decodes scan as one partition: Ballista 55 gives each task of a stage
/// only its own partitions by rewriting the scans it knows (a
/// `FileScanConfig`'s file groups, memory tables, shuffle readers) and
/// leaves any other scan whole, so each task of a stage over a scan of N
/// partitions would read all N (rows counted several times: seen in this
/// crate's test). One partition is one task, read on one executor with all
/// its cores (the search and the decoder are parallel inside); the stages
/// above the first shuffle spread over every executor.
pub fn logical_codec() -> Arc<dyn LogicalExtensionCodec> {
    Arc::new(
        FastpairLogicalCodec::new(Arc::new(BallistaLogicalExtensionCodec::default()))
            .with_max_scan_partitions(1),
    )
}

/// Fastpair scans over Ballista's physical codec (its shuffle readers and
/// writers, and DataFusion's operators).
pub fn physical_codec() -> Arc<dyn PhysicalExtensionCodec> {
    Arc::new(FastpairPhysicalCodec::new(Arc::new(
        BallistaPhysicalExtensionCodec::default(),
    )))
}

fn ballista_err(e: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::External(e.to_string().into())
}

/// Where a scheduler listens and how others reach it.
#[derive(Clone, Debug)]
pub struct SchedulerOptions {
    /// The address to listen on (e.g. `0.0.0.0:50050`).
    pub bind: SocketAddr,
    /// The host name executors and clients use for this scheduler.
    pub external_host: String,
}

/// Runs a Ballista scheduler with the fastpair codecs until the process
/// ends. Tasks are dealt round-robin over the executors (Ballista's default,
/// `Bias`, fills one executor's slots first, which on a small query leaves
/// the others idle).
pub async fn run_scheduler(opts: SchedulerOptions) -> Result<()> {
    let config = SchedulerConfig {
        bind_host: opts.bind.ip().to_string(),
        bind_port: opts.bind.port(),
        external_host: opts.external_host,
        scheduling_policy: TaskSchedulingPolicy::PushStaged,
        task_distribution: TaskDistributionPolicy::RoundRobin,
        override_logical_codec: Some(logical_codec()),
        override_physical_codec: Some(physical_codec()),
        ..SchedulerConfig::default()
    };
    let cluster = BallistaCluster::new_from_config(&config)
        .await
        .map_err(ballista_err)?;
    start_server(cluster, opts.bind, Arc::new(config))
        .await
        .map_err(ballista_err)
}

/// Where an executor listens, how others reach it, and its scheduler.
#[derive(Clone, Debug)]
pub struct ExecutorOptions {
    /// The address to listen on (host only; the ports are below).
    pub bind_host: String,
    /// The host name the scheduler and other executors use for this one.
    pub external_host: String,
    /// Arrow Flight port (shuffle data is fetched from it).
    pub flight_port: u16,
    /// gRPC port (the scheduler pushes tasks to it).
    pub grpc_port: u16,
    pub scheduler_host: String,
    pub scheduler_port: u16,
    /// Tasks run at once (one partition each).
    pub concurrent_tasks: usize,
    /// Where shuffle files are written (None: a temporary directory).
    pub work_dir: Option<String>,
}

/// Runs a Ballista executor with the fastpair codecs until the process
/// ends.
pub async fn run_executor(opts: ExecutorOptions) -> Result<()> {
    let config = ExecutorProcessConfig {
        bind_host: opts.bind_host,
        external_host: Some(opts.external_host),
        port: opts.flight_port,
        grpc_port: opts.grpc_port,
        scheduler_host: opts.scheduler_host,
        scheduler_port: opts.scheduler_port,
        // Wait for a scheduler that is still starting instead of failing.
        scheduler_connect_timeout_seconds: 30,
        vcores: opts.concurrent_tasks.max(1),
        task_scheduling_policy: TaskSchedulingPolicy::PushStaged,
        work_dir: opts.work_dir,
        override_logical_codec: Some(logical_codec()),
        override_physical_codec: Some(physical_codec()),
        ..ExecutorProcessConfig::default()
    };
    start_executor_process(Arc::new(config))
        .await
        .map_err(ballista_err)
}

/// A client session whose queries run on the Ballista scheduler at `url`
/// (`df://host:port`), with `config`'s settings and the fastpair codecs.
/// Register tables in it with `ctx.register_table(name,
/// Arc::new(FastpairTable::open(dir)?))`.
pub async fn remote_context(url: &str, config: SessionConfig) -> Result<SessionContext> {
    let config = config
        .upgrade_for_ballista()
        .with_ballista_logical_extension_codec(logical_codec())
        .with_ballista_physical_extension_codec(physical_codec());
    let state = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features()
        .build();
    SessionContext::remote_with_state(url, state).await
}
