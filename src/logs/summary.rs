//! What a log-template payload holds and what each part costs (`fastpair
//! inspect`): templates with their slot types, slot types over the whole
//! payload, and the bytes of each part (spec/FORMAT.md §5.8).

use super::decode::LogBlock;
use super::split::LogColumn;

/// One template of a block.
#[derive(Clone, Debug)]
pub struct TemplateSummary {
    /// `"header"`, `"body"` or `"whole"` (an unsplit payload).
    pub block: &'static str,
    /// Template id in its block (0 = the escape template: whole rows as text).
    pub id: usize,
    /// Rows that use it.
    pub rows: u64,
    /// Its static text with each slot shown as `<type>` (lossy UTF-8).
    pub text: String,
    /// Its slots' types, in order (`dec`, `hex`, `HEX`, `dict`, `text`).
    pub slots: Vec<&'static str>,
}

/// Slots of one type over the payload.
#[derive(Clone, Debug, Default)]
pub struct SlotTypeSummary {
    /// `dec`, `hex`, `HEX`, `dict` or `text`.
    pub name: &'static str,
    /// Slots of this type (over every template).
    pub slots: u64,
    /// Values stored (rows of their templates).
    pub values: u64,
    /// Bytes of their integer columns (values, per-row widths, dictionary
    /// ids: checkpoints and residuals); text lives in the pool.
    pub column_bytes: u64,
}

/// A log-template payload, summarized.
#[derive(Clone, Debug, Default)]
pub struct LogSummary {
    /// Split into header and body blocks.
    pub split: bool,
    /// Templates of every block (escape templates included).
    pub templates: usize,
    /// Every template, most rows first.
    pub top: Vec<TemplateSummary>,
    /// Per slot type.
    pub slot_types: Vec<SlotTypeSummary>,
    /// Bytes of the payload's parts: framing (magics, lengths, padding),
    /// meta (template table, slot kinds, integer checkpoints, row-block
    /// tables), row index (local template ids), integer column data, text
    /// pool (static text, dictionary values, free text, escaped rows as
    /// OnPair-12 codes with their token table and offsets).
    pub framing: u64,
    /// See [`LogSummary::framing`].
    pub meta: u64,
    /// See [`LogSummary::framing`].
    pub row_index: u64,
    /// See [`LogSummary::framing`].
    pub column_data: u64,
    /// See [`LogSummary::framing`].
    pub pool: u64,
}

impl LogColumn {
    /// What the payload holds and what each part costs.
    pub fn summary(&self) -> LogSummary {
        let mut s = LogSummary::default();
        let blocks: Vec<(&'static str, &LogBlock)> = match self {
            LogColumn::Single(b) => vec![("whole", b)],
            LogColumn::Split(hb) => {
                s.split = true;
                s.framing += 8;
                vec![("header", &hb.0), ("body", &hb.1)]
            }
        };
        for (name, b) in blocks {
            b.summarize(name, &mut s);
        }
        s.top
            .sort_by(|a, b| b.rows.cmp(&a.rows).then(a.id.cmp(&b.id)));
        s
    }
}

impl SlotTypeSummary {
    pub(super) fn of<'s>(all: &'s mut Vec<SlotTypeSummary>, name: &'static str) -> &'s mut Self {
        if let Some(i) = all.iter().position(|t| t.name == name) {
            return &mut all[i];
        }
        all.push(SlotTypeSummary {
            name,
            ..Default::default()
        });
        all.last_mut().expect("pushed")
    }
}
