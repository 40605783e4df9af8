//! Tables for people (comfy-table): one header line, no borders, columns separated by
//! spaces. On a terminal the table is fitted to its width (`COLUMNS`, else the size the
//! terminal reports) and a row never takes more than one line; piped, nothing is cut but
//! what the caller cut already (text columns are clipped to a sensible length).

use std::io::{self, Write};

use comfy_table::{Attribute, Cell, CellAlignment, ColumnConstraint, ContentArrangement, Row, Table};

use super::{sanitize, Ui};
use crate::session::text::one_line;

/// One column of a [`write_table`] table.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    pub header: &'static str,
    /// Text columns are clipped to this many characters (with `…`); `None`: a column that is
    /// never clipped nor wrapped (ids, numbers, times).
    pub max: Option<usize>,
    pub right: bool,
}

impl Column {
    /// A column shown whole (ids, numbers, times).
    pub const fn fixed(header: &'static str) -> Column {
        Column { header, max: None, right: false }
    }

    /// A right-aligned number column.
    pub const fn number(header: &'static str) -> Column {
        Column { header, max: None, right: true }
    }

    /// A text column clipped to `max` characters.
    pub const fn text(header: &'static str, max: usize) -> Column {
        Column { header, max: Some(max), right: false }
    }
}

/// Header line only: `─` under the header, nothing else drawn.
const STYLE: &str = "     ──             ";

/// Writes `rows` (already plain text; sanitized and flattened to one line here) under
/// `columns`' headers. A text column that is empty in every row is left out.
pub fn write_table(w: &mut dyn Write, ui: &Ui, columns: &[Column], rows: &[Vec<String>]) -> io::Result<()> {
    let mut table = Table::new();
    table.load_preset(STYLE);
    // Decisions are the Ui's: comfy-table must not probe the terminal itself.
    table.force_no_tty();
    if ui.color {
        table.enforce_styling();
    }
    let width = ui.width.map(|w| w.min(u16::MAX as usize) as u16);
    match width {
        Some(width) => {
            table.set_width(width).set_content_arrangement(ContentArrangement::Dynamic).set_truncation_indicator("…");
        }
        None => {
            table.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    let mut header = Row::new();
    for c in columns {
        let mut cell = Cell::new(c.header);
        if ui.color {
            cell = cell.add_attribute(Attribute::Bold);
        }
        if c.right {
            cell = cell.set_alignment(CellAlignment::Right);
        }
        header.add_cell(cell);
    }
    if width.is_some() {
        header.max_height(1);
    }
    table.set_header(header);
    for r in rows {
        let mut row = Row::new();
        for (c, text) in columns.iter().zip(r) {
            let text = sanitize(text);
            let text = match c.max {
                Some(max) => one_line(&text, max),
                None => text.replace(['\n', '\t'], " "),
            };
            let mut cell = Cell::new(text);
            if c.right {
                cell = cell.set_alignment(CellAlignment::Right);
            }
            row.add_cell(cell);
        }
        if width.is_some() {
            row.max_height(1);
        }
        table.add_row(row);
    }
    for (i, c) in columns.iter().enumerate() {
        let Some(column) = table.column_mut(i) else { continue };
        // No left margin before the first column (there is no border).
        if i == 0 {
            column.set_padding((0, 1));
        }
        if c.max.is_none() {
            column.set_constraint(ColumnConstraint::ContentWidth);
        } else if !rows.is_empty() && !rows.iter().any(|r| r.get(i).is_some_and(|t| !t.trim().is_empty())) {
            // A text column with nothing in it (no leaf has a label) takes no room.
            column.set_constraint(ColumnConstraint::Hidden);
        }
    }
    for line in table.lines() {
        writeln!(w, "{}", line.trim_end())?;
    }
    Ok(())
}

pub use crate::session::text::short_id;

/// `1234567` as `1,234,567`.
pub fn thousands(n: f64) -> String {
    if !n.is_finite() {
        return n.to_string();
    }
    let digits: Vec<char> = format!("{}", n.abs().round() as u64).chars().rev().collect();
    let groups: Vec<String> = digits.chunks(3).rev().map(|g| g.iter().rev().collect()).collect();
    let mut out = groups.join(",");
    if n < 0.0 && n.round() != 0.0 {
        out.insert(0, '-');
    }
    out
}

/// A cost in dollars, for a column: cents from a dollar up, else four decimals.
pub fn dollars(cost: f64) -> String {
    if cost == 0.0 || !cost.is_finite() {
        format!("${cost}")
    } else if cost.abs() >= 1.0 {
        format!("${cost:.2}")
    } else if cost.abs() < 0.00005 {
        "<$0.0001".into()
    } else {
        format!("${cost:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_ids_are_unique_prefixes() {
        let mut ids = vec!["a3f9c1d2", "a3f9c7e0", "b0000000", "L12", "L120", "abcd"];
        ids.sort();
        assert_eq!(short_id("a3f9c1d2", &ids, 4), "a3f9c1");
        assert_eq!(short_id("b0000000", &ids, 4), "b000");
        assert_eq!(short_id("L12", &ids, 4), "L12");
        assert_eq!(short_id("L120", &ids, 4), "L120");
        assert_eq!(short_id("abcd", &ids, 4), "abcd");
        assert_eq!(short_id("missing", &ids, 4), "missing");
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(36187.0), "36,187");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(1_000_000.0), "1,000,000");
        assert_eq!(thousands(0.0), "0");
        assert_eq!(dollars(0.0333576), "$0.0334");
        assert_eq!(dollars(1.5), "$1.50");
        assert_eq!(dollars(0.5), "$0.5000");
        assert_eq!(dollars(0.00123), "$0.0012");
        assert_eq!(dollars(0.00001), "<$0.0001");
        assert_eq!(dollars(0.0), "$0");
    }
}
