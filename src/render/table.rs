//! Tables for people: one header line, no borders, columns separated by spaces, in
//! comfy-table's layout (written by hand when piped, see `write_plain`). On a terminal the
//! table is fitted to its width (`COLUMNS`, else the size the terminal reports) and a row
//! never takes more than one line; piped, nothing is cut but what the caller cut already
//! (text columns are clipped to a sensible length).

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
    let (cells, hidden) = cells(columns, rows);
    // (With every column left out, comfy-table's odd output stands.)
    match ui.width.is_none() && !ui.color && hidden.contains(&false) {
        true => write_plain(w, columns, &cells, &hidden),
        false => write_comfy(w, ui, columns, &cells, &hidden),
    }
}

/// Each row's cells as shown (sanitized and on one line, text clipped), and whether each
/// column is left out: a text column with nothing in it (no leaf has a label) takes no room.
fn cells(columns: &[Column], rows: &[Vec<String>]) -> (Vec<Vec<String>>, Vec<bool>) {
    let cells = rows
        .iter()
        .map(|r| {
            columns
                .iter()
                .zip(r)
                .map(|(c, text)| {
                    let text = sanitize(text);
                    match c.max {
                        Some(max) => one_line(&text, max),
                        None => text.replace(['\n', '\t'], " "),
                    }
                })
                .collect()
        })
        .collect();
    let hidden = (0..columns.len())
        .map(|i| {
            columns[i].max.is_some()
                && !rows.is_empty()
                && !rows.iter().any(|r| r.get(i).is_some_and(|t| !t.trim().is_empty()))
        })
        .collect();
    (cells, hidden)
}

/// The table as comfy-table lays it out with no width to fit (piped output) and no color:
/// each column as wide as its widest cell and padded, a space between columns, `─` under
/// the header, trailing spaces cut. Written here because comfy-table took 40,000
/// instructions a row: a warm `ls --all` of 15,000 sessions took 0.39 s as a table and
/// 0.22 s as JSON. A test compares the two on tables of every kind.
fn write_plain(w: &mut dyn Write, columns: &[Column], cells: &[Vec<String>], hidden: &[bool]) -> io::Result<()> {
    use unicode_width::UnicodeWidthStr;
    let widths: Vec<usize> = (0..columns.len())
        .map(|i| {
            let widest = cells.iter().filter_map(|r| r.get(i)).map(|c| c.width()).max().unwrap_or(0);
            // (comfy-table gives a column at least one character.)
            widest.max(columns[i].header.width()).max(1)
        })
        .collect();
    let mut w = io::BufWriter::with_capacity(64 << 10, w);
    let mut line = String::new();
    let row = |line: &mut String, texts: &mut dyn Iterator<Item = (usize, &str)>| {
        line.clear();
        let mut first = true;
        for (i, text) in texts {
            if hidden[i] {
                continue;
            }
            // A space between columns, then the column's padding: none on the left of the
            // first column (even when it is left out), one space on either side otherwise.
            if !first {
                line.push(' ');
            }
            first = false;
            if i != 0 {
                line.push(' ');
            }
            let pad = widths[i].saturating_sub(text.width());
            if columns[i].right {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(text);
            } else {
                line.push_str(text);
                line.extend(std::iter::repeat_n(' ', pad));
            }
            line.push(' ');
        }
        line.truncate(line.trim_end().len());
        line.push('\n');
    };
    row(&mut line, &mut columns.iter().map(|c| c.header).enumerate());
    w.write_all(line.as_bytes())?;
    let rule: Vec<String> = (0..columns.len())
        .filter(|&i| !hidden[i])
        .map(|i| "─".repeat(widths[i] + if i == 0 { 1 } else { 2 }))
        .collect();
    writeln!(w, "{}", rule.join("─"))?;
    for r in cells {
        // (A row with fewer cells than columns has blanks in the rest.)
        let blanks = (r.len()..columns.len()).map(|i| (i, ""));
        row(&mut line, &mut r.iter().map(String::as_str).enumerate().chain(blanks));
        w.write_all(line.as_bytes())?;
    }
    w.flush()
}

/// The table through comfy-table (fitted to a terminal's width, or in color).
fn write_comfy(
    w: &mut dyn Write,
    ui: &Ui,
    columns: &[Column],
    cells: &[Vec<String>],
    hidden: &[bool],
) -> io::Result<()> {
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
    for r in cells {
        let mut row = Row::new();
        for (c, text) in columns.iter().zip(r) {
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
        } else if hidden[i] {
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

    /// The table written by hand is comfy-table's, byte for byte, on tables of every kind:
    /// left and right columns, text columns clipped or left out when empty, wide, combining,
    /// zero-width and control characters, line breaks and tabs, empty cells, short rows, no
    /// rows.
    #[test]
    fn the_plain_table_is_comfy_tables() {
        let long = "a long title that is cut ".repeat(4);
        let pieces = [
            "",
            " ",
            "a",
            "990f0",
            "1,155,496",
            "$2.12",
            "Turn 19: run the tests and fix what fails",
            long.as_str(),
            "漢字のテキスト",
            "🎉 done",
            "e\u{301}te\u{301}",
            "zero\u{200b}width",
            "  padded  ",
            "tab\there",
            "line\nbreak\r\n",
            "esc\x1b[31mred\x1b[0m",
            "bidi\u{202e}txet",
        ];
        let kinds = [
            Column::fixed("id"),
            Column::number("tokens"),
            Column::text("title", 12),
            Column::text("label", 8),
            Column::fixed("漢字"),
            Column::number("n"),
            Column::text("a wide header", 3),
        ];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut hidden_seen = 0;
        for case in 0..400 {
            let columns: Vec<Column> = (0..1 + next(kinds.len())).map(|_| kinds[next(kinds.len())]).collect();
            let rows: Vec<Vec<String>> = (0..next(6))
                .map(|_| {
                    let n = if next(7) == 0 { next(columns.len() + 1) } else { columns.len() };
                    // Every fourth table: text columns left empty, so that they are left out.
                    (0..n)
                        .map(|i| match case % 4 == 0 && columns[i].max.is_some() {
                            true => " ".to_string(),
                            false => pieces[next(pieces.len())].to_string(),
                        })
                        .collect()
                })
                .collect();
            let mut plain = Vec::new();
            write_table(&mut plain, &Ui::plain(), &columns, &rows).unwrap();
            let (cells, hidden) = cells(&columns, &rows);
            hidden_seen += hidden.iter().filter(|&&h| h).count();
            let mut comfy = Vec::new();
            write_comfy(&mut comfy, &Ui::plain(), &columns, &cells, &hidden).unwrap();
            assert_eq!(String::from_utf8(plain).unwrap(), String::from_utf8(comfy).unwrap(), "{columns:?} {rows:?}");
        }
        assert!(hidden_seen > 50, "{hidden_seen}");
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
