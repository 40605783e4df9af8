//! `pisces ls` for people (a table), programs (one JSON document) and spreadsheets (CSV).

use std::io::Write;

use serde::Serialize;
use serde_json::Value;

use super::leaves::UsageJson;
use super::table::{self, dollars, short_id, thousands, Column};
use super::{safe, sanitize, Ui};
use crate::session::js;
use crate::session::text::sorted_ids;
use crate::store::list::Listing;
use crate::store::summary::Summary;

/// `2026-11-29 19:18` (UTC), or empty.
fn minute(ms: Option<f64>) -> String {
    ms.map(|ms| {
        let iso = js::iso_string(ms as i64);
        iso.get(..16).map_or(iso.clone(), |s| s.replacen('T', " ", 1))
    })
    .unwrap_or_default()
}

fn iso(ms: Option<f64>) -> Option<String> {
    ms.map(|ms| js::iso_string(ms as i64))
}

/// Each row's id, cut to the shortest prefix no other listed id shares (at least 8).
fn short_ids(rows: &[Summary]) -> Vec<String> {
    let mut ids = sorted_ids(rows.iter().map(|r| r.id.as_str()).filter(|i| !i.is_empty()));
    ids.dedup();
    rows.iter().map(|r| short_id(&r.id, &ids, 8)).collect()
}

/// The cwd as pi shows paths: under the home directory as `~/…`.
fn tilde(cwd: Option<&str>, home: Option<&str>) -> String {
    let Some(cwd) = cwd else { return String::new() };
    match home.filter(|h| !h.is_empty() && *h != "/") {
        Some(h) if cwd == h => "~".into(),
        Some(h) => cwd.strip_prefix(h).filter(|r| r.starts_with('/')).map_or(cwd.to_string(), |r| format!("~{r}")),
        None => cwd.to_string(),
    }
}

/// (When it started is in the JSON and the CSV: a terminal has no room for both times.)
const COLUMNS: [Column; 11] = [
    Column::fixed("agent"),
    Column::fixed("id"),
    Column::text("title", 48),
    Column::text("cwd", 32),
    Column::fixed("last active (UTC)"),
    Column::number("entries"),
    Column::number("leaves"),
    Column::number("forks"),
    Column::text("models", 28),
    Column::number("tokens"),
    Column::number("cost"),
];

pub fn write_text(w: &mut dyn Write, ui: &Ui, listing: &Listing, home: Option<&str>) -> std::io::Result<()> {
    let ids = short_ids(&listing.rows);
    let rows: Vec<Vec<String>> = listing
        .rows
        .iter()
        .zip(&ids)
        .map(|(r, id)| {
            vec![
                r.format.to_string(),
                id.clone(),
                // Names show what they hide (`safe::name`); a title's line breaks are
                // spaces in a one-line cell.
                safe::name(&r.title.as_deref().unwrap_or_default().replace(['\n', '\t'], " ")).into_owned(),
                safe::name(&tilde(r.cwd.as_deref(), home)).into_owned(),
                minute(r.last_active),
                thousands(r.entries as f64),
                thousands(r.leaves as f64),
                thousands(r.forks as f64),
                safe::name(&r.models.join(", ")).into_owned(),
                thousands(r.totals.tokens()),
                dollars(r.totals.cost),
            ]
        })
        .collect();
    if !rows.is_empty() {
        table::write_table(w, ui, &COLUMNS, &rows)?;
    }
    Ok(())
}

/// The line under the table (on stderr): what was read, kept, skipped and failed.
/// `cached`: how many sessions the cache answered for, and how many that grew it answered
/// for with their new entries read (said with `-v`).
pub fn write_footer(
    w: &mut dyn Write,
    listing: &Listing,
    verbose: bool,
    scope: &str,
    (cached, extended): (usize, usize),
) -> std::io::Result<()> {
    let n = listing.rows.len();
    write!(w, "{n} session{} {scope}", if n == 1 { "" } else { "s" })?;
    if listing.read != n {
        write!(w, " (of {} read)", listing.read)?;
    }
    if !listing.skipped.is_empty() {
        let k = listing.skipped.len();
        write!(w, "; {k} file{} in session folders skipped, not sessions", if k == 1 { "" } else { "s" })?;
        if !verbose {
            write!(w, " (-v lists them)")?;
        }
    }
    if verbose {
        write!(w, "; {cached} of {} read from the cache", listing.read)?;
        if extended > 0 {
            write!(w, ", {extended} grown since, their new entries added to what it held")?;
        }
    }
    writeln!(w)?;
    if verbose {
        for s in &listing.skipped {
            writeln!(w, "  skipped {}: {}", sanitize(&s.path.display().to_string()), sanitize(&s.what))?;
        }
    }
    for (name, e) in &listing.failed {
        writeln!(w, "{}", super::failure_line(name, e))?;
    }
    Ok(())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListingJson<'a> {
    version: u32,
    sessions: Vec<RowJson<'a>>,
    skipped: Vec<SkippedJson>,
    failed: Vec<FailedJson<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RowJson<'a> {
    agent: &'static str,
    format: &'static str,
    session: &'a str,
    id: &'a str,
    short_id: String,
    title: Option<&'a str>,
    cwd: Option<&'a str>,
    started: Option<String>,
    last_active: Option<String>,
    entries: usize,
    leaves: usize,
    forks: usize,
    parent_session: Option<&'a str>,
    models: &'a [String],
    usage: UsageJson,
    warnings: usize,
}

#[derive(Serialize)]
struct SkippedJson {
    path: String,
    what: String,
}

#[derive(Serialize)]
struct FailedJson<'a> {
    session: &'a str,
    error: &'a str,
}

pub fn write_json(w: &mut dyn Write, listing: &Listing) -> std::io::Result<()> {
    let ids = short_ids(&listing.rows);
    let doc = ListingJson {
        version: 1,
        sessions: listing
            .rows
            .iter()
            .zip(ids)
            .map(|(r, short_id)| RowJson {
                agent: r.agent,
                format: r.format,
                session: &r.name,
                id: &r.id,
                short_id,
                title: r.title.as_deref(),
                cwd: r.cwd.as_deref(),
                started: iso(r.started),
                last_active: iso(r.last_active),
                entries: r.entries,
                leaves: r.leaves,
                forks: r.forks,
                parent_session: r.parent.as_deref(),
                models: &r.models,
                usage: UsageJson::of(&r.totals),
                warnings: r.warnings,
            })
            .collect(),
        skipped: listing
            .skipped
            .iter()
            .map(|s| SkippedJson { path: s.path.display().to_string(), what: s.what.clone() })
            .collect(),
        failed: listing.failed.iter().map(|(s, e)| FailedJson { session: s, error: e }).collect(),
    };
    super::json::write_pretty(&mut *w, &doc)?;
    writeln!(w)
}

/// RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled.
pub(super) fn csv_field(f: &str) -> String {
    if f.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", f.replace('"', "\"\""))
    } else {
        f.to_string()
    }
}

/// Written to a terminal, fields are made safe for it (as every text output is); piped,
/// they are exact.
pub fn write_csv(w: &mut dyn Write, ui: &Ui, listing: &Listing) -> std::io::Result<()> {
    writeln!(
        w,
        "agent,session,id,title,cwd,started,last_active,entries,leaves,forks,models,input,output,cache_read,cache_write,tokens,cost"
    )?;
    let num = |f: f64| js::number_string(f);
    for r in &listing.rows {
        let t = &r.totals;
        let fields = [
            r.format.to_string(),
            r.name.clone(),
            r.id.clone(),
            r.title.clone().unwrap_or_default(),
            r.cwd.clone().unwrap_or_default(),
            iso(r.started).unwrap_or_default(),
            iso(r.last_active).unwrap_or_default(),
            r.entries.to_string(),
            r.leaves.to_string(),
            r.forks.to_string(),
            r.models.join(" "),
            num(t.input),
            num(t.output),
            num(t.cache_read),
            num(t.cache_write),
            num(t.tokens()),
            match Value::from(t.cost) {
                Value::Number(n) => n.to_string(),
                _ => "0".into(),
            },
        ];
        let line: Vec<String> = fields
            .iter()
            .map(|f| csv_field(&if ui.stdout_tty { sanitize(f).into_owned() } else { f.clone() }))
            .collect();
        writeln!(w, "{}", line.join(","))?;
    }
    Ok(())
}
