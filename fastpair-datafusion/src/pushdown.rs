//! Which `WHERE` filters go into the compressed-domain search
//! (`fastpair::search`) and how exact the answer is.
//!
//! A filter is pushed when it is one string predicate on one `.fpc` column
//! against literals:
//!
//! | SQL | predicate | answer |
//! |---|---|---|
//! | `c = 'x'`, `c <> 'x'` | `equals`, negated | exact |
//! | `c IN ('x', 'y')`, `c NOT IN (...)` | `in_list`, negated | exact |
//! | `c = 'x' OR c = 'y'` (also with `IN`) | `in_list` | exact |
//! | `c LIKE p`, `c NOT LIKE p` (text column; `p` without `\`) | `like`, negated | exact |
//! | `c ILIKE p`, `c NOT ILIKE p` (ASCII `p` without `\`, `k`, `s`) | `like`, ASCII case folding | inexact |
//! | `starts_with(c, 'x')` | `prefix` | exact |
//! | `contains(c, 'x')`, `strpos(c, 'x') > 0` (also `<> 0`, `>= 1`) | `contains` | exact |
//! | `strpos(c, 'x') = 0` | `contains`, negated | exact |
//!
//! Exact: the search selects exactly the rows for which DataFusion's own
//! evaluation is true (SQL nulls included: a null row is never selected,
//! negated or not, as `NULL = 'x'` and `NOT (NULL = 'x')` are both unknown),
//! so DataFusion drops the filter. `ILIKE` folds only ASCII letters in the
//! search where DataFusion folds Unicode: for an ASCII pattern the two agree
//! except through the letters whose Unicode folds include a non-ASCII
//! character (`k`: KELVIN SIGN, `s`: LONG S), which are therefore not pushed;
//! it is still answered inexact, so DataFusion re-checks the rows the search
//! kept. A LIKE pattern with a backslash is not pushed (DataFusion's LIKE
//! treats `\` as an escape with its own rules for a dangling one), nor one
//! with `_` on a binary column (a byte there, a character in the search).
//! Anything else is unsupported and evaluated by DataFusion after the scan.

use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{BinaryExpr, Expr, Operator, TableProviderFilterPushDown};
use fastpair::search::{Pattern, Predicate};

/// A filter pushed into the search of one column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pushed {
    /// The column's index in the table.
    pub column: usize,
    /// The predicate the search evaluates on the column's codes.
    pub predicate: Predicate,
    /// Whether the search's rows are exactly the filter's.
    pub exact: bool,
}

impl Pushed {
    /// DataFusion's answer for this filter.
    pub fn answer(&self) -> TableProviderFilterPushDown {
        if self.exact {
            TableProviderFilterPushDown::Exact
        } else {
            TableProviderFilterPushDown::Inexact
        }
    }
}

fn is_string_type(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
    )
}

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// The table index of a (possibly cast between string types) column, when
/// it is one of the `fpc` columns.
fn fpc_column(e: &Expr, schema: &Schema, fpc: &[bool]) -> Option<usize> {
    match e {
        Expr::Column(c) => {
            let i = schema.index_of(&c.name).ok()?;
            fpc[i].then_some(i)
        }
        // A cast between string types keeps the bytes (a text -> binary cast
        // too; binary -> text is not taken, it may fail on invalid UTF-8).
        Expr::Cast(c) if is_string_type(c.field.data_type()) => {
            let i = fpc_column(&c.expr, schema, fpc)?;
            let from = schema.field(i).data_type();
            (is_text(from) || !is_text(c.field.data_type())).then_some(i)
        }
        _ => None,
    }
}

/// The bytes of a non-null string or binary literal.
fn literal(e: &Expr) -> Option<Vec<u8>> {
    match e {
        Expr::Literal(v, _) => match v {
            ScalarValue::Utf8(Some(s))
            | ScalarValue::LargeUtf8(Some(s))
            | ScalarValue::Utf8View(Some(s)) => Some(s.as_bytes().to_vec()),
            ScalarValue::Binary(Some(b))
            | ScalarValue::LargeBinary(Some(b))
            | ScalarValue::BinaryView(Some(b)) => Some(b.clone()),
            _ => None,
        },
        Expr::Cast(c) if is_string_type(c.field.data_type()) => literal(&c.expr),
        _ => None,
    }
}

fn is_null_literal(e: &Expr) -> bool {
    match e {
        Expr::Literal(v, _) => v.is_null(),
        Expr::Cast(c) => is_null_literal(&c.expr),
        _ => false,
    }
}

fn int_literal(e: &Expr) -> Option<i64> {
    match e {
        Expr::Literal(v, _) => match v {
            ScalarValue::Int8(Some(x)) => Some(*x as i64),
            ScalarValue::Int16(Some(x)) => Some(*x as i64),
            ScalarValue::Int32(Some(x)) => Some(*x as i64),
            ScalarValue::Int64(Some(x)) => Some(*x),
            ScalarValue::UInt32(Some(x)) => Some(*x as i64),
            ScalarValue::UInt64(Some(x)) => i64::try_from(*x).ok(),
            _ => None,
        },
        Expr::Cast(c) => int_literal(&c.expr),
        _ => None,
    }
}

/// `(column, literal)` of a scalar function call `name(column, literal)`.
fn string_call<'e>(e: &'e Expr, names: &[&str]) -> Option<(&'e Expr, Vec<u8>)> {
    let Expr::ScalarFunction(f) = e else {
        return None;
    };
    if !names.contains(&f.func.name()) || f.args.len() != 2 {
        return None;
    }
    Some((&f.args[0], literal(&f.args[1])?))
}

/// The search predicate for `filter`, if it can be pushed (module docs).
/// `fpc[i]`: column `i` of `schema` is stored as `.fpc` files.
pub fn classify(filter: &Expr, schema: &Schema, fpc: &[bool]) -> Option<Pushed> {
    let exact = |column, predicate| {
        Some(Pushed {
            column,
            predicate,
            exact: true,
        })
    };
    match filter {
        // `c = 'x' OR c = 'y' OR c IN (...)` on one column (DataFusion
        // rewrites short IN lists this way) is one IN list.
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Or,
            right,
        }) => {
            let a = classify(left, schema, fpc)?;
            let b = classify(right, schema, fpc)?;
            let values = |p: &Pushed| -> Option<Vec<Vec<u8>>> {
                if !p.exact || p.predicate.negated || p.predicate.ignore_case {
                    return None;
                }
                match &p.predicate.pattern {
                    Pattern::Equals(v) => Some(vec![v.clone()]),
                    Pattern::In(vs) => Some(vs.clone()),
                    _ => None,
                }
            };
            if a.column != b.column {
                return None;
            }
            let mut vs = values(&a)?;
            vs.extend(values(&b)?);
            exact(a.column, Predicate::in_list(vs))
        }
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            // column = / <> literal, either way round.
            let pair = fpc_column(left, schema, fpc)
                .zip(literal(right))
                .or_else(|| fpc_column(right, schema, fpc).zip(literal(left)));
            if let Some((c, lit)) = pair {
                return match op {
                    Operator::Eq => exact(c, Predicate::equals(lit)),
                    Operator::NotEq => exact(c, Predicate::equals(lit).not()),
                    _ => None,
                };
            }
            // strpos(column, literal) compared with 0 or 1.
            let (call, op, n) = if let Some(n) = int_literal(right) {
                (left.as_ref(), *op, n)
            } else if let Some(n) = int_literal(left) {
                (right.as_ref(), op.swap()?, n)
            } else {
                return None;
            };
            let (col, needle) = string_call(call, &["strpos", "instr", "position"])?;
            let c = fpc_column(col, schema, fpc)?;
            let found = match (op, n) {
                (Operator::Gt, 0) | (Operator::NotEq, 0) | (Operator::GtEq, 1) => true,
                (Operator::Eq, 0) | (Operator::Lt, 1) | (Operator::LtEq, 0) => false,
                _ => return None,
            };
            let p = Predicate::contains(needle);
            exact(c, if found { p } else { p.not() })
        }
        Expr::InList(l) => {
            let c = fpc_column(&l.expr, schema, fpc)?;
            let mut lits = Vec::new();
            let mut has_null = false;
            for e in &l.list {
                match literal(e) {
                    Some(v) => lits.push(v),
                    None if is_null_literal(e) => has_null = true,
                    None => return None,
                }
            }
            if l.negated {
                // `x NOT IN (.., NULL)` is never true: left to DataFusion.
                (!has_null).then(|| Pushed {
                    column: c,
                    predicate: Predicate::in_list(lits).not(),
                    exact: true,
                })
            } else {
                // `x IN (.., NULL)` is true exactly when x is one of the rest.
                exact(c, Predicate::in_list(lits))
            }
        }
        Expr::Like(l) => {
            let c = fpc_column(&l.expr, schema, fpc)?;
            let pat = literal(&l.pattern)?;
            if l.escape_char.is_some_and(|e| e != '\\') || pat.contains(&b'\\') {
                return None;
            }
            if !is_text(schema.field(c).data_type()) && pat.contains(&b'_') {
                return None;
            }
            let mut p = Predicate::like(pat.clone());
            let mut is_exact = true;
            if l.case_insensitive {
                let safe = pat
                    .iter()
                    .all(|&b| b.is_ascii() && !matches!(b, b'k' | b'K' | b's' | b'S'));
                if !safe || !is_text(schema.field(c).data_type()) {
                    return None;
                }
                p = p.ignore_case();
                is_exact = false;
            }
            if l.negated {
                p = p.not();
            }
            Some(Pushed {
                column: c,
                predicate: p,
                exact: is_exact,
            })
        }
        Expr::ScalarFunction(_) => {
            if let Some((col, lit)) = string_call(filter, &["starts_with"]) {
                return exact(fpc_column(col, schema, fpc)?, Predicate::prefix(lit));
            }
            let (col, lit) = string_call(filter, &["contains"])?;
            exact(fpc_column(col, schema, fpc)?, Predicate::contains(lit))
        }
        _ => None,
    }
}
