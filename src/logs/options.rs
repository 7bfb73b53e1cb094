//! The log encoder's knobs ([`LogOptions`]): what the writer and the
//! experiments (lab/examples/logs_*) choose per column.

/// Knobs of the encoder.
#[derive(Clone, Debug)]
pub struct LogOptions {
    /// Design A (true): integer and hex slots are typed sub-columns. Design
    /// B (false): every slot is token-coded text (dictionary or free).
    pub typed: bool,
    /// Rows the first mining pass looks at (evenly spaced over the block).
    pub sample_rows: usize,
    /// A template is kept only when at least this many rows use it.
    pub min_count: usize,
    /// Share of static word positions two skeletons must share to merge
    /// (Drain's similarity threshold).
    pub similarity: f64,
    /// Tokenize with alphanumeric runs that mix letters and digits split
    /// into their letter and digit runs (`cn615` → `cn` `615`).
    pub mixed: bool,
    /// Tokenize at spaces and tabs only, whole fields as words
    /// (`tokenize.rs`, `Tokens::coarse`): what [`encode`](fn@crate::logs::encode)
    /// does with one block; [`super::encode_column`] sets it per candidate.
    pub coarse: bool,
    /// [`super::encode_column`] tries the coarse split of the whole block as
    /// a candidate (one more encode of its decision sample; bench/LOGS.md:
    /// `/var/log/dpkg.log` 31% smaller, no Loghub column changed, ~8% of
    /// the compress speed).
    pub try_coarse: bool,
    /// `encode_column`: `Some(true)` forces the header/body split (when
    /// a header is found), `Some(false)` one block; `None` keeps the
    /// smaller.
    pub split: Option<bool>,
    /// Store adjacent slots whose values repeat together (an IP address,
    /// a date) as one slot when that is estimated smaller.
    pub group_slots: bool,
    /// Merge templates that differ only between a common prefix and
    /// suffix into one template with a slot there (`family.rs`) when that
    /// is estimated smaller.
    pub families: bool,
    /// Drop the pool's learned tokens that cost more table bytes than they
    /// save, in up to three rounds, keeping the smaller pool (`text.rs`):
    /// about 1% smaller payloads for about 5% more compress time
    /// (bench/LOGS.md, round 7). Off in the encodes that only compare
    /// candidates (the column's sample decisions, the writer's screen and
    /// estimate), whose choices then stay what they were.
    pub prune_pool: bool,
    /// Encode a large block with rayon's threads inside it (tokenizing and
    /// matching runs of rows, typing templates and slots, searching family
    /// buckets, header and body at once: `mod.rs`, `PAR_MIN_ROWS`). The
    /// bytes are the same either way. The writer keeps it on also while it
    /// encodes several chunks at once (idle threads steal a slower chunk's
    /// tasks).
    pub threads: bool,
    /// A text slot whose values are all distinct may still be a value
    /// dictionary (format 10 keeps a dictionary's values in the block's
    /// LZMA2 open section, where they cost less than pool codes), and so
    /// may the rows that match no template (a template of one slot, not
    /// the escape template's pool strings), when the column is small:
    /// `encode_column` turns it off past
    /// `UNIQUE_DICT_COLUMN` bytes of text, since a block's open section is
    /// decoded whole, and held, before any of its rows is read.
    pub unique_dicts: bool,
    /// A block's row index and column data may lie in its LZMA2 open
    /// section too (format 11, spec/FORMAT.md §5.8.6 methods 2 and 3),
    /// when that is smaller and the column is small: decoded once at open
    /// like the rest of the section, so a row's read stays O(1), at the
    /// cost of holding them decoded. Off past `UNIQUE_DICT_COLUMN` bytes of
    /// text, as `unique_dicts`: a real-size chunk's integers would be
    /// decoded at every open (a GPU scan's host work among it).
    pub resident: bool,
}

impl Default for LogOptions {
    fn default() -> Self {
        Self {
            typed: true,
            sample_rows: 4096,
            min_count: 2,
            similarity: 0.5,
            mixed: false,
            coarse: false,
            try_coarse: true,
            split: None,
            group_slots: true,
            families: true,
            prune_pool: true,
            threads: true,
            unique_dicts: true,
            resident: true,
        }
    }
}
