//! `pisces stats` for people (a table with a total), programs (one JSON document) and
//! spreadsheets (CSV).

use std::io::Write;

use serde::Serialize;

use super::leaves::UsageJson;
use super::ls::csv_field;
use super::table::{self, dollars, thousands, Column};
use super::{sanitize, Ui};

/// A name cell (a session, project, model or title): what it hides shown (`safe::name`),
/// line breaks as spaces (a cell is one line).
fn name(s: &str) -> String {
    super::safe::name(&s.replace(['\n', '\t'], " ")).into_owned()
}
use crate::session::js;
use crate::session::usage::Totals;
use crate::store::stats::{By, Row, Stats};

fn group_header(by: By) -> &'static str {
    match by {
        By::Day => "day (UTC)",
        By::Week => "week (UTC, from Monday)",
        By::Month => "month (UTC)",
        By::Agent => "agent",
        By::Model => "model",
        By::Project => "project (cwd)",
        By::Session => "session",
        By::Branch => "tip",
    }
}

fn by_name(by: By) -> &'static str {
    match by {
        By::Day => "day",
        By::Week => "week",
        By::Month => "month",
        By::Agent => "agent",
        By::Model => "model",
        By::Project => "project",
        By::Session => "session",
        By::Branch => "branch",
    }
}

fn token_cells(n: usize, t: &Totals) -> Vec<String> {
    vec![
        thousands(n as f64),
        thousands(t.input),
        thousands(t.output),
        thousands(t.cache_read),
        thousands(t.cache_write),
        thousands(t.tokens()),
        dollars(t.cost),
    ]
}

const TOKEN_COLUMNS: [Column; 7] = [
    Column::number("responses"),
    Column::number("input"),
    Column::number("output"),
    Column::number("cache read"),
    Column::number("cache write"),
    Column::number("tokens"),
    Column::number("cost"),
];

pub fn write_text(w: &mut dyn Write, ui: &Ui, stats: &Stats) -> std::io::Result<()> {
    let by = stats.by.unwrap_or(By::Day);
    let mut columns: Vec<Column> = Vec::new();
    let mut rows: Vec<Vec<String>> = Vec::new();
    match by {
        By::Branch => {
            columns.extend([
                Column::fixed("agent"),
                Column::text("session", 60),
                Column::fixed("tip"),
                Column::number("path responses"),
                Column::number("path tokens"),
                Column::number("path cost"),
                Column::number("added responses"),
                Column::number("added tokens"),
                Column::number("added cost"),
            ]);
            for r in &stats.rows {
                let (n, added) = r.added.unwrap_or_default();
                rows.push(vec![
                    r.agent.unwrap_or_default().to_string(),
                    name(r.session.as_deref().unwrap_or_default()),
                    name(&r.key),
                    thousands(r.responses as f64),
                    thousands(r.totals.tokens()),
                    dollars(r.totals.cost),
                    thousands(n as f64),
                    thousands(added.tokens()),
                    dollars(added.cost),
                ]);
            }
        }
        By::Session => {
            columns.extend([Column::fixed("agent"), Column::text("session", 60), Column::text("title", 40)]);
            columns.extend(TOKEN_COLUMNS);
            for r in &stats.rows {
                let mut cells = vec![
                    r.agent.unwrap_or_default().to_string(),
                    name(&r.key),
                    name(r.title.as_deref().unwrap_or_default()),
                ];
                cells.extend(token_cells(r.responses, &r.totals));
                rows.push(cells);
            }
            let mut total = vec!["Total".to_string(), String::new(), String::new()];
            total.extend(token_cells(stats.responses, &stats.total));
            rows.push(total);
        }
        _ => {
            columns.push(Column::text(group_header(by), 60));
            columns.extend(TOKEN_COLUMNS);
            for r in &stats.rows {
                let mut cells = vec![name(&r.key)];
                cells.extend(token_cells(r.responses, &r.totals));
                rows.push(cells);
            }
            let mut total = vec!["Total".to_string()];
            total.extend(token_cells(stats.responses, &stats.total));
            rows.push(total);
        }
    }
    if !stats.rows.is_empty() {
        table::write_table(w, ui, &columns, &rows)?;
    }
    Ok(())
}

/// The line under the table (on stderr): what was counted, from how many sessions, and how
/// many copies were not counted again.
pub fn write_footer(w: &mut dyn Write, stats: &Stats, scope: &str) -> std::io::Result<()> {
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    if stats.kept == 0 && stats.failed.is_empty() {
        return writeln!(w, "no sessions {scope} (`pisces ls --all` lists every session found)");
    }
    write!(
        w,
        "{} in {} {scope}, each counted once",
        plural(stats.responses, "response", "responses"),
        plural(stats.kept, "session", "sessions"),
    )?;
    if stats.copies > 0 {
        write!(w, " ({} read again in forks and copies, not counted again)", plural(stats.copies, "copy", "copies"))?;
    }
    if stats.by == Some(By::Branch) && !stats.rows.is_empty() {
        write!(
            w,
            "; a branch's path shares responses with others, so paths add up to more than the total ({})",
            dollars(stats.total.cost)
        )?;
    }
    writeln!(w)?;
    for (name, e) in &stats.failed {
        writeln!(w, "{}", super::failure_line(name, e))?;
    }
    Ok(())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatsJson<'a> {
    version: u32,
    by: &'static str,
    rows: Vec<RowJson<'a>>,
    total: TotalJson,
    copies: usize,
    sessions: usize,
    cached: usize,
    extended: usize,
    failed: Vec<FailedJson<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RowJson<'a> {
    key: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    responses: usize,
    usage: UsageJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    added: Option<TotalJson>,
}

#[derive(Serialize)]
struct TotalJson {
    responses: usize,
    usage: UsageJson,
}

#[derive(Serialize)]
struct FailedJson<'a> {
    session: &'a str,
    error: &'a str,
}

pub fn write_json(w: &mut dyn Write, stats: &Stats) -> std::io::Result<()> {
    let doc = StatsJson {
        version: 1,
        by: by_name(stats.by.unwrap_or(By::Day)),
        rows: stats.rows.iter().map(row_json).collect(),
        total: TotalJson { responses: stats.responses, usage: UsageJson::of(&stats.total) },
        copies: stats.copies,
        sessions: stats.kept,
        cached: stats.cached,
        extended: stats.extended,
        failed: stats.failed.iter().map(|(s, e)| FailedJson { session: s, error: e }).collect(),
    };
    super::json::write_pretty(&mut *w, &doc)?;
    writeln!(w)
}

fn row_json(r: &Row) -> RowJson<'_> {
    RowJson {
        key: &r.key,
        agent: r.agent,
        session: r.session.as_deref(),
        session_id: r.id.as_deref(),
        title: r.title.as_deref(),
        responses: r.responses,
        usage: UsageJson::of(&r.totals),
        added: r.added.map(|(n, t)| TotalJson { responses: n, usage: UsageJson::of(&t) }),
    }
}

/// Written to a terminal, fields are made safe for it; piped, they are exact.
pub fn write_csv(w: &mut dyn Write, ui: &Ui, stats: &Stats) -> std::io::Result<()> {
    let by = stats.by.unwrap_or(By::Day);
    // Session and branch rows name their session; other groups are their key alone.
    let named = matches!(by, By::Session | By::Branch);
    let mut header = by_name(by).to_string();
    if named {
        header.push_str(",agent,session_id,title");
    }
    header.push_str(",responses,input,output,cache_read,cache_write,tokens,cost");
    if by == By::Branch {
        header.push_str(",session,added_responses,added_tokens,added_cost");
    }
    writeln!(w, "{header}")?;
    let num = js::number_string;
    let cost = |c: f64| serde_json::Value::from(c).to_string();
    for r in &stats.rows {
        let t = &r.totals;
        let mut fields = vec![r.key.clone()];
        if named {
            fields.extend([
                r.agent.unwrap_or_default().to_string(),
                r.id.clone().unwrap_or_default(),
                r.title.clone().unwrap_or_default(),
            ]);
        }
        fields.extend([
            r.responses.to_string(),
            num(t.input),
            num(t.output),
            num(t.cache_read),
            num(t.cache_write),
            num(t.tokens()),
            cost(t.cost),
        ]);
        if let Some((n, a)) = r.added {
            fields.extend([r.session.clone().unwrap_or_default(), n.to_string(), num(a.tokens()), cost(a.cost)]);
        }
        let line: Vec<String> = fields
            .iter()
            .map(|f| csv_field(&if ui.stdout_tty { sanitize(f).into_owned() } else { f.clone() }))
            .collect();
        writeln!(w, "{}", line.join(","))?;
    }
    Ok(())
}
