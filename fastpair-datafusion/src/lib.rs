//! # fastpair-datafusion — SQL over fastpair datasets
//!
//! A fastpair dataset (spec/DATASET.md in the fastpair repository: a table as a
//! directory of row-aligned parts, string columns as `.fpc` files, the rest
//! in Parquet, a JSON manifest) as an Apache DataFusion table:
//!
//! * [`FastpairTable`]: a `TableProvider` with the schema and exact
//!   statistics (rows, null counts, string min/max) from the manifest,
//!   projection (only the columns a query touches are read), `LIMIT`, one
//!   partition per group of consecutive parts (up to `target_partitions`;
//!   parts are cut into row ranges when there are fewer parts than that),
//!   parts pruned by the manifest's min/max and null counts,
//!   and filter pushdown of string predicates into `fastpair::search`, which
//!   evaluates them on the compressed codes ([`pushdown`] lists what is
//!   pushed and which answers are exact); the selected rows are then the
//!   only ones decoded from the other `.fpc` columns and read from Parquet.
//! * Open files kept between scans: the `.fpc` readers a scan opens (their
//!   checked chunks, and what searches of them share) are kept for the next
//!   scan of the same files in the process, within a byte budget
//!   ([`set_reader_cache_bytes`], [`DEFAULT_READER_CACHE_BYTES`]); a file
//!   written again is opened afresh.
//! * [`FastpairTableFactory`]: `CREATE EXTERNAL TABLE t STORED AS FASTPAIR
//!   LOCATION 'dir'` in a session built with [`session_state_builder`].
//! * The `fastpair-sql` binary (run as `fastpair sql`): one query over
//!   datasets, printed as a table, CSV or JSON.
//! * With the `proto` feature, [`codec`]: the table and its scan (pushed
//!   predicates included) through DataFusion's protobuf plans, for engines
//!   that run plans in other processes (the `fastpair-ballista` crate runs
//!   them on a Ballista cluster).
//!
//! ```no_run
//! # async fn f() -> datafusion::common::Result<()> {
//! let ctx = fastpair_datafusion::session_context(Default::default());
//! ctx.sql("CREATE EXTERNAL TABLE lineitem STORED AS FASTPAIR LOCATION 'lineitem.fpd'").await?;
//! let df = ctx.sql("SELECT count(*) FROM lineitem WHERE l_comment LIKE '%special%'").await?;
//! df.show().await?;
//! # Ok(()) }
//! ```
//!
//! Why a crate of its own: DataFusion 55 needs Rust 1.94 and Arrow 59, where
//! the `fastpair` library keeps Rust 1.80 and Arrow 54; the library's
//! default features never see DataFusion, and the `fastpair` binary (which
//! cannot depend on this crate: it depends on `fastpair`) runs `fastpair-sql`
//! for `fastpair sql`.

#[cfg(feature = "proto")]
pub mod codec;
mod exec;
mod metrics;
mod part;
mod prune;
pub mod pushdown;
mod readers;
mod table;

use std::sync::Arc;

use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};

pub use exec::ScanExec;
pub use readers::{
    reader_cache_held, set_reader_cache_bytes, DEFAULT_BUDGET as DEFAULT_READER_CACHE_BYTES,
};
pub use table::{FastpairTable, FastpairTableFactory};

/// The file type name of `STORED AS FASTPAIR`.
pub const FILE_TYPE: &str = "FASTPAIR";

/// A session state builder with DataFusion's defaults and the `FASTPAIR`
/// table factory.
pub fn session_state_builder(config: SessionConfig) -> SessionStateBuilder {
    SessionStateBuilder::new()
        .with_config(config)
        .with_default_features()
        .with_table_factory(FILE_TYPE.into(), Arc::new(FastpairTableFactory))
}

/// A session context with the `FASTPAIR` table factory registered.
pub fn session_context(config: SessionConfig) -> SessionContext {
    SessionContext::new_with_state(session_state_builder(config).build())
}
