//! `pisces diff` for people: the fork point, the aligned turns (prompts with a word
//! diff, tool calls and how they ended, replies with a line diff when that helps), and
//! a summary per side that ends in one verdict line for the tests. `--stat` is the
//! summary alone. Text from the session is sanitized; color comes only from the [`Ui`].

use std::io::{self, Write};

use super::table::{dollars, thousands};
use super::{sanitize, Paint, Ui};
use crate::diff::text::{LineDiff, Tag, WordDiff};
use crate::diff::{
    CommandRuns, FileCompare, Outcome, Prompt, Reply, Report, Run, SideInfo, SideSummary, TestCounts, ToolCall, Turn,
};

/// Lines of a prompt or reply shown before `… N more lines`.
const MAX_LINES: usize = 12;
/// Commands listed per side in the summary.
const MAX_COMMANDS: usize = 8;
/// Lines of file paths per side and kind in the summary.
const MAX_LIST_LINES: usize = 4;
/// Error groups listed per side in the summary.
const MAX_ERRORS: usize = 5;

/// Insertions and deletions, in the Ui's diff colors.
fn ins<'t>(ui: &Ui, t: &'t str) -> std::borrow::Cow<'t, str> {
    ui.paint(Paint::Insert, t)
}

fn del<'t>(ui: &Ui, t: &'t str) -> std::borrow::Cow<'t, str> {
    ui.paint(Paint::Delete, t)
}

/// The whole report.
pub fn write_text(w: &mut dyn Write, ui: &Ui, r: &Report) -> io::Result<()> {
    write_head(w, ui, r)?;
    if r.identical {
        writeln!(w)?;
        writeln!(w, "{}", no_differences(r))?;
        return Ok(());
    }
    if !r.shared.context.is_empty() {
        writeln!(w)?;
        let n = r.shared.context.len();
        rule(
            w,
            ui,
            &format!("shared: the last {} before the fork", if n == 1 { "turn".into() } else { format!("{n} turns") }),
        )?;
        for t in &r.shared.context {
            write_context_turn(w, ui, t)?;
        }
    }
    for pair in r.turns.iter().flatten() {
        writeln!(w)?;
        let only = match (&pair.a, &pair.b) {
            (Some(_), None) => " (A only)",
            (None, Some(_)) => " (B only)",
            _ => "",
        };
        let cont = [&pair.a, &pair.b].iter().any(|t| t.as_ref().is_some_and(|t| t.prompt.is_none()));
        let title = if cont {
            format!("turn {}: continuing across the fork{only}", pair.index)
        } else {
            format!("turn {}{only}", pair.index)
        };
        rule(w, ui, &title)?;
        write_prompts(w, ui, pair.a.as_ref(), pair.b.as_ref(), pair.prompt_diff.as_ref())?;
        for (name, t) in [("A", &pair.a), ("B", &pair.b)] {
            if let Some(t) = t {
                write_events(w, ui, name, t)?;
                write_tools(w, ui, name, t)?;
            }
        }
        write_replies(
            w,
            ui,
            pair.a.as_ref().and_then(|t| t.reply.as_ref()),
            pair.b.as_ref().and_then(|t| t.reply.as_ref()),
            pair.a.is_some(),
            pair.b.is_some(),
            pair.reply_diff.as_ref(),
        )?;
    }
    writeln!(w)?;
    write_summary(w, ui, r, true)
}

/// `--stat`: the header and the per-side summary.
pub fn write_stat(w: &mut dyn Write, ui: &Ui, r: &Report) -> io::Result<()> {
    write_head(w, ui, r)?;
    if r.identical {
        writeln!(w, "{}", no_differences(r))?;
        return Ok(());
    }
    writeln!(w)?;
    write_summary(w, ui, r, false)
}

fn rule(w: &mut dyn Write, ui: &Ui, title: &str) -> io::Result<()> {
    let bar = format!("── {title} ");
    let pad = 72usize.saturating_sub(bar.chars().count());
    writeln!(w, "{}", ui.paint(Paint::Summary, &format!("{bar}{}", "─".repeat(pad))))
}

fn side_tag<'t>(ui: &Ui, name: &'t str) -> std::borrow::Cow<'t, str> {
    ui.paint(Paint::Label, name)
}

fn id_text(v: &serde_json::Value, line: crate::session::LineNo) -> String {
    match v.as_str() {
        Some(s) => format!("{} (line {line})", sanitize(s)),
        None => format!("#{line}"),
    }
}

fn write_head(w: &mut dyn Write, ui: &Ui, r: &Report) -> io::Result<()> {
    let same_file = r.a.file == r.b.file && r.a.session_id == r.b.session_id;
    if same_file {
        writeln!(w, "{} {}", ui.paint(Paint::Dim, "session"), sanitize(&r.a.file))?;
    }
    for (name, s) in [("A", &r.a), ("B", &r.b)] {
        write_side_line(w, ui, name, s, !same_file)?;
    }
    match &r.common_ancestor {
        Some(c) => {
            let how = match c.matched_by {
                "id" => ", matched by id",
                "content" => ", matched by content",
                _ => "",
            };
            let b_line =
                if c.line_b != c.line_a || !same_file { format!(", line {} in B", c.line_b) } else { String::new() };
            writeln!(
                w,
                "{} {} shared entr{} up to {}{b_line}{how}: {}",
                ui.paint(Paint::Dim, "fork   "),
                r.shared.entries,
                if r.shared.entries == 1 { "y" } else { "ies" },
                id_text(&c.id, c.line_a),
                sanitize(&c.preview)
            )?;
        }
        None => writeln!(w, "{} the paths share no entry", ui.paint(Paint::Dim, "fork   "))?,
    }
    let prompt = match &r.shared.last_user_prompt {
        Some(p) => {
            format!("{}  {}", one_line(&p.text, 90), ui.paint(Paint::Dim, &format!("— {}", id_text(&p.id, p.line))))
        }
        None => "(none: the sides split before the first prompt)".into(),
    };
    writeln!(w, "{} {}", ui.paint(Paint::Dim, "prompt "), prompt)
}

fn write_side_line(w: &mut dyn Write, ui: &Ui, name: &str, s: &SideInfo, show_file: bool) -> io::Result<()> {
    let mut parts = vec![id_text(&s.leaf_id, s.leaf_line), s.leaf_kind.trim_start_matches("message/").to_string()];
    if let Some(l) = &s.label {
        parts.push(format!("label {}", ui.paint(Paint::Label, &sanitize(l))));
    }
    if s.is_default_leaf {
        parts.push("@ (the current leaf)".into());
    }
    if s.rev != "@" && s.leaf_id.as_str() != Some(s.rev.as_str()) {
        parts.push(format!("REV {}", sanitize(&s.rev)));
    }
    let file = if show_file { format!("{}  ", sanitize(&s.file)) } else { String::new() };
    writeln!(
        w,
        "{}      {file}{}  {}",
        side_tag(ui, name),
        parts.join(", "),
        ui.paint(
            Paint::Dim,
            &format!(
                "{} entr{} after the fork",
                s.divergent_entries,
                if s.divergent_entries == 1 { "y" } else { "ies" }
            )
        )
    )
}

fn write_context_turn(w: &mut dyn Write, ui: &Ui, t: &Turn) -> io::Result<()> {
    if let Some(p) = &t.prompt {
        writeln!(w, "{} {}", ui.paint(Paint::User, prompt_label(p)), one_line(&p.shown_text(), 100))?;
    }
    if !t.tool_calls.is_empty() {
        let calls: Vec<String> = t.tool_calls.iter().map(|c| c.name.clone()).collect();
        writeln!(
            w,
            "  {}",
            ui.paint(
                Paint::Dim,
                &format!("{} tool call{}: {}", calls.len(), plural(calls.len()), one_line(&calls.join(", "), 80))
            )
        )?;
    }
    if let Some(r) = &t.reply {
        writeln!(w, "  {} {}", ui.paint(Paint::Assistant, "reply"), one_line(&r.shown_text(), 90))?;
    }
    Ok(())
}

fn prompt_label(p: &Prompt) -> &'static str {
    match p.kind {
        "bash" => "user !",
        "custom" => "custom",
        _ => "user",
    }
}

/// The prompts of two aligned turns: one when they are the same, else their word diff
/// (`diff`) or both whole.
fn write_prompts(
    w: &mut dyn Write,
    ui: &Ui,
    a: Option<&Turn>,
    b: Option<&Turn>,
    diff: Option<&WordDiff>,
) -> io::Result<()> {
    let pa = a.and_then(|t| t.prompt.as_ref());
    let pb = b.and_then(|t| t.prompt.as_ref());
    let head = |p: &Prompt| {
        format!("{} {}", ui.paint(Paint::User, prompt_label(p)), ui.paint(Paint::Dim, &id_text(&p.id, p.line)))
    };
    match (pa, pb) {
        (Some(x), Some(y)) if x.text == y.text && x.kind == y.kind => {
            writeln!(
                w,
                "{} {}",
                head(x),
                ui.paint(Paint::Dim, &format!("(same prompt on both sides; B {})", id_text(&y.id, y.line)))
            )?;
            write_block(w, ui, &x.shown_text(), "  ")?;
        }
        (Some(x), Some(y)) => {
            if let Some(diff) = diff {
                writeln!(
                    w,
                    "{} A {} → B {}",
                    ui.paint(Paint::User, prompt_label(x)),
                    ui.paint(Paint::Dim, &id_text(&x.id, x.line)),
                    ui.paint(Paint::Dim, &id_text(&y.id, y.line))
                )?;
                write_word_diff(w, ui, diff)?;
            } else {
                writeln!(w, "{} {}", side_tag(ui, "A"), head(x))?;
                write_block(w, ui, &x.shown_text(), "  ")?;
                writeln!(w, "{} {}", side_tag(ui, "B"), head(y))?;
                write_block(w, ui, &y.shown_text(), "  ")?;
            }
        }
        (x, y) => {
            for (name, p) in [("A", x), ("B", y)] {
                if let Some(p) = p {
                    writeln!(w, "{} {}", side_tag(ui, name), head(p))?;
                    write_block(w, ui, &p.shown_text(), "  ")?;
                }
            }
        }
    }
    // The user's `!command` carries its exit code.
    for (name, p) in [("A", pa), ("B", pb)] {
        if let Some(p) = p.filter(|p| p.kind == "bash") {
            let code = p.exit_code.flatten();
            writeln!(w, "  {} {}", side_tag(ui, name), exit_text(ui, Outcome::Ok, code))?;
        }
    }
    Ok(())
}

/// A word diff: `[-removed-]{+added+}` (colored on a terminal).
fn write_word_diff(w: &mut dyn Write, ui: &Ui, diff: &WordDiff) -> io::Result<()> {
    let mut out = String::from("  ");
    for run in &diff.runs {
        let v = sanitize(&run.text).replace('\n', "\n  ");
        match run.tag {
            Tag::Equal => out.push_str(&v),
            Tag::Delete => out.push_str(&del(ui, &format!("[-{v}-]"))),
            Tag::Insert => out.push_str(&ins(ui, &format!("{{+{v}+}}"))),
        }
    }
    writeln!(w, "{}", out.trim_end())
}

/// Text, indented, cut to [`MAX_LINES`].
fn write_block(w: &mut dyn Write, ui: &Ui, text: &str, indent: &str) -> io::Result<()> {
    let clean = sanitize(text);
    let lines: Vec<&str> = clean.trim_end().lines().collect();
    if lines.is_empty() {
        return writeln!(w, "{indent}{}", ui.paint(Paint::Dim, "(empty)"));
    }
    for l in lines.iter().take(MAX_LINES) {
        writeln!(w, "{indent}{l}")?;
    }
    if lines.len() > MAX_LINES {
        writeln!(w, "{indent}{}", ui.paint(Paint::Dim, &format!("… {} more lines", lines.len() - MAX_LINES)))?;
    }
    Ok(())
}

fn write_events(w: &mut dyn Write, ui: &Ui, name: &str, t: &Turn) -> io::Result<()> {
    for e in &t.events {
        writeln!(w, "{} {} {}", side_tag(ui, name), ui.paint(Paint::Summary, &e.kind), one_line(&e.text, 100))?;
    }
    Ok(())
}

fn write_tools(w: &mut dyn Write, ui: &Ui, name: &str, t: &Turn) -> io::Result<()> {
    if t.tool_calls.is_empty() {
        if t.model_calls > 0 {
            writeln!(w, "{} {}", side_tag(ui, name), ui.paint(Paint::Dim, "no tool calls"))?;
        }
        return Ok(());
    }
    writeln!(
        w,
        "{} {}",
        side_tag(ui, name),
        ui.paint(
            Paint::Dim,
            &format!(
                "{} tool call{}, {} model call{}",
                t.tool_calls.len(),
                plural(t.tool_calls.len()),
                t.model_calls,
                plural(t.model_calls)
            )
        )
    )?;
    let width = t.tool_calls.iter().map(|c| c.name.chars().count()).max().unwrap_or(0).min(12);
    let targets: Vec<String> = t
        .tool_calls
        .iter()
        .map(|c| c.target.as_deref().map(|s| one_line(&short_command(s), 72)).unwrap_or_default())
        .collect();
    let twidth = targets.iter().map(|t| t.chars().count()).max().unwrap_or(0);
    for (c, target) in t.tool_calls.iter().zip(&targets) {
        let name = sanitize(&c.name);
        let pad = twidth - target.chars().count();
        writeln!(
            w,
            "  {} {target}{}  {}",
            ui.paint(Paint::Tool, &format!("{name:<width$}")),
            " ".repeat(pad),
            call_outcome(ui, c)
        )?;
    }
    Ok(())
}

fn call_outcome(ui: &Ui, c: &ToolCall) -> String {
    match (c.outcome, c.exit_code) {
        (_, Some(_)) | (Outcome::Timeout | Outcome::Aborted, _) => exit_text(ui, c.outcome, c.exit_code),
        (Outcome::Ok, None) => ui.paint(Paint::Dim, "ok").into_owned(),
        (Outcome::NoResult, _) => ui.paint(Paint::Dim, "no result").into_owned(),
        (_, None) => {
            let e = c.error.as_deref().map(|e| one_line(e, 70)).unwrap_or_default();
            del(ui, &format!("error: {e}")).into_owned()
        }
    }
}

/// `exit 0` (green), `exit 1` (red), `timed out`, `aborted`, `no result`.
fn exit_text(ui: &Ui, outcome: Outcome, code: Option<i64>) -> String {
    match (outcome, code) {
        (Outcome::Timeout, _) => del(ui, "timed out").into_owned(),
        (Outcome::Aborted, _) => del(ui, "aborted").into_owned(),
        (Outcome::NoResult, _) => ui.paint(Paint::Dim, "no result").into_owned(),
        (_, Some(0)) => ins(ui, "exit 0").into_owned(),
        (_, Some(n)) => del(ui, &format!("exit {n}")).into_owned(),
        (_, None) => del(ui, "no exit code").into_owned(),
    }
}

/// The replies of two aligned turns: one when they are the same, else their line diff
/// (`diff`) or both whole.
fn write_replies(
    w: &mut dyn Write,
    ui: &Ui,
    a: Option<&Reply>,
    b: Option<&Reply>,
    has_a: bool,
    has_b: bool,
    diff: Option<&LineDiff>,
) -> io::Result<()> {
    let head = |r: &Reply| ui.paint(Paint::Dim, &id_text(&r.id, r.line)).into_owned();
    match (a, b) {
        (Some(x), Some(y)) if x.shown_text() == y.shown_text() => {
            writeln!(
                w,
                "{} {} {}",
                ui.paint(Paint::Assistant, "reply"),
                head(x),
                ui.paint(Paint::Dim, "(the same on both sides)")
            )?;
            write_block(w, ui, &x.shown_text(), "  ")
        }
        (Some(x), Some(y)) => {
            if let Some(lines) = diff {
                writeln!(w, "{} A {} → B {}", ui.paint(Paint::Assistant, "reply"), head(x), head(y))?;
                write_line_diff(w, ui, lines)
            } else {
                writeln!(w, "{} {} {}", side_tag(ui, "A"), ui.paint(Paint::Assistant, "reply"), head(x))?;
                write_block(w, ui, &x.shown_text(), "  ")?;
                writeln!(w, "{} {} {}", side_tag(ui, "B"), ui.paint(Paint::Assistant, "reply"), head(y))?;
                write_block(w, ui, &y.shown_text(), "  ")
            }
        }
        (x, y) => {
            for (name, r, has) in [("A", x, has_a), ("B", y, has_b)] {
                match r {
                    Some(r) => {
                        writeln!(w, "{} {} {}", side_tag(ui, name), ui.paint(Paint::Assistant, "reply"), head(r))?;
                        write_block(w, ui, &r.shown_text(), "  ")?;
                    }
                    None if has && x.is_some() != y.is_some() => {
                        writeln!(w, "{} {}", side_tag(ui, name), ui.paint(Paint::Dim, "no reply"))?;
                    }
                    None => {}
                }
            }
            Ok(())
        }
    }
}

/// A line diff with two lines of context around each change.
fn write_line_diff(w: &mut dyn Write, ui: &Ui, diff: &LineDiff) -> io::Result<()> {
    for (k, hunk) in diff.hunks.iter().enumerate() {
        if k > 0 {
            writeln!(w, "  {}", ui.paint(Paint::Dim, "…"))?;
        }
        for line in hunk {
            let text = sanitize(&line.text);
            let text = text.trim_end_matches('\n');
            match line.tag {
                Tag::Equal => writeln!(w, "   {text}")?,
                Tag::Delete => writeln!(w, "  {}", del(ui, &format!("-{text}")))?,
                Tag::Insert => writeln!(w, "  {}", ins(ui, &format!("+{text}")))?,
            }
        }
    }
    Ok(())
}

fn write_summary(w: &mut dyn Write, ui: &Ui, r: &Report, detail: bool) -> io::Result<()> {
    rule(w, ui, "summary")?;
    for (name, info, s) in [("A", &r.a, &r.summary.a), ("B", &r.b, &r.summary.b)] {
        write_side_summary(w, ui, name, info, s)?;
    }
    if !r.summary.modified_on_both.is_empty() {
        writeln!(w)?;
        writeln!(w, "{}", ui.paint(Paint::Summary, "modified on both sides"))?;
        for f in &r.summary.modified_on_both {
            write_file_compare(w, ui, f, detail)?;
        }
    }
    writeln!(w)?;
    writeln!(w, "{}", verdict(ui, r.summary.a.last_test_run.as_ref(), r.summary.b.last_test_run.as_ref()))
}

fn no_differences(r: &Report) -> &'static str {
    if r.a.file == r.b.file && r.a.leaf_line == r.b.leaf_line {
        "no differences: both REVs name the same entry"
    } else {
        "no differences: the two paths hold the same entries"
    }
}

fn write_side_summary(w: &mut dyn Write, ui: &Ui, name: &str, info: &SideInfo, s: &SideSummary) -> io::Result<()> {
    let key = |k: &str| ui.paint(Paint::Dim, &format!("{k:<9}")).into_owned();
    if s.entries == 0 {
        return writeln!(
            w,
            "{} {}  {}",
            side_tag(ui, name),
            id_text(&info.leaf_id, info.leaf_line),
            ui.paint(Paint::Dim, "nothing after the fork (its leaf is the common ancestor)")
        );
    }
    let errors = if s.errors.is_empty() {
        "no errors".to_string()
    } else {
        format!("{} error{}", s.errors.len(), plural(s.errors.len()))
    };
    writeln!(
        w,
        "{} {}  {} entr{}, {} turn{}, {} model call{}, {} tool call{}, {}",
        side_tag(ui, name),
        id_text(&info.leaf_id, info.leaf_line),
        s.entries,
        if s.entries == 1 { "y" } else { "ies" },
        s.turns,
        plural(s.turns),
        s.model_calls,
        plural(s.model_calls),
        s.tool_calls,
        plural(s.tool_calls),
        if s.errors.is_empty() { errors } else { del(ui, &errors).into_owned() },
    )?;
    let u = &s.usage;
    writeln!(
        w,
        "  {} {} in, {} out, {} cache read, {} cache write; {}",
        key("tokens"),
        thousands(u.input),
        thousands(u.output),
        thousands(u.cache_read),
        thousands(u.cache_write),
        dollars(u.cost)
    )?;
    let time = s.wall_time_ms.map_or("?".to_string(), duration);
    let models =
        if s.models.is_empty() { "(no model)".to_string() } else { sanitize(&s.models.join(", ")).into_owned() };
    writeln!(w, "  {} {time}; {models}", key("time"))?;
    // Every path read (also those modified later), then every path modified, in the
    // order first used.
    let read: Vec<String> = s.file_ops.iter().filter(|o| o.read > 0).map(|o| sanitize(&o.path).into_owned()).collect();
    write_list(w, ui, &key("read"), &key(""), &read)?;
    let modified: Vec<String> = s
        .file_ops
        .iter()
        .filter(|o| o.write + o.edit > 0)
        .map(|o| {
            let mut what = Vec::new();
            if o.write > 0 {
                what.push(times("write", o.write));
            }
            if o.edit > 0 {
                what.push(times("edit", o.edit));
            }
            format!("{} ({})", sanitize(&o.path), what.join(", "))
        })
        .collect();
    write_list(w, ui, &key("modified"), &key(""), &modified)?;
    // Test runs first: they are what tells the attempts apart.
    let commands: Vec<&CommandRuns> =
        s.commands.iter().filter(|c| c.is_test).chain(s.commands.iter().filter(|c| !c.is_test)).collect();
    for (k, c) in commands.iter().enumerate() {
        if k == MAX_COMMANDS {
            writeln!(
                w,
                "  {} {}",
                key(""),
                ui.paint(Paint::Dim, &format!("… {} more commands", commands.len() - MAX_COMMANDS))
            )?;
            break;
        }
        writeln!(w, "  {} {}", key(if k == 0 { "commands" } else { "" }), command_line(ui, c))?;
    }
    if !s.errors.is_empty() {
        // Group equal errors: `bash npm test: exit 1 (×3)`.
        let mut groups: Vec<(String, usize)> = Vec::new();
        for e in &s.errors {
            let what = match (&e.tool, &e.target) {
                (Some(t), Some(x)) => format!("{t} {}: {}", one_line(&short_command(x), 60), e.message),
                (Some(t), None) => format!("{t}: {}", e.message),
                _ => format!("assistant: {}", e.message),
            };
            match groups.iter_mut().find(|(g, _)| *g == what) {
                Some(g) => g.1 += 1,
                None => groups.push((what, 1)),
            }
        }
        for (k, (what, n)) in groups.iter().enumerate() {
            if k == MAX_ERRORS {
                writeln!(
                    w,
                    "  {} {}",
                    key(""),
                    ui.paint(Paint::Dim, &format!("… {} more", groups.len() - MAX_ERRORS))
                )?;
                break;
            }
            let count = if *n > 1 { format!(" (×{n})") } else { String::new() };
            writeln!(w, "  {} {}{count}", key(if k == 0 { "errors" } else { "" }), one_line(what, 90))?;
        }
    }
    Ok(())
}

/// Paths, a few to a line (up to 100 characters), at most [`MAX_LIST_LINES`] lines.
fn write_list(w: &mut dyn Write, ui: &Ui, first: &str, rest: &str, items: &[String]) -> io::Result<()> {
    let mut lines: Vec<String> = Vec::new();
    let mut shown = 0;
    for item in items {
        let fits = lines.last().is_some_and(|l| l.chars().count() + item.chars().count() + 2 <= 88);
        if fits {
            let l = lines.last_mut().expect("a last line");
            l.push_str(", ");
            l.push_str(item);
        } else if lines.len() == MAX_LIST_LINES {
            break;
        } else {
            lines.push(item.clone());
        }
        shown += 1;
    }
    for (k, l) in lines.iter().enumerate() {
        let more = if k + 1 == lines.len() && shown < items.len() {
            format!(" {}", ui.paint(Paint::Dim, &format!("… {} more", items.len() - shown)))
        } else {
            String::new()
        };
        writeln!(w, "  {} {l}{more}", if k == 0 { first } else { rest })?;
    }
    Ok(())
}

fn times(what: &str, n: usize) -> String {
    if n == 1 {
        what.to_string()
    } else {
        format!("{what} ×{n}")
    }
}

fn command_line(ui: &Ui, c: &CommandRuns) -> String {
    let who = if c.source == "user" { "!" } else { "" };
    let runs = if c.runs > 1 { format!(" ×{}", c.runs) } else { String::new() };
    let last = if c.runs > 1 { "last " } else { "" };
    format!(
        "{who}{}{runs}: {last}{}{}",
        one_line(&short_command(&c.command), 72),
        exit_text(ui, c.last.outcome, c.last.exit_code),
        counts(c.last.tests)
    )
}

fn counts(t: Option<TestCounts>) -> String {
    t.map_or(String::new(), |t| format!(" ({})", count_list(t)))
}

fn write_file_compare(w: &mut dyn Write, ui: &Ui, f: &FileCompare, detail: bool) -> io::Result<()> {
    let side = |s: &Option<crate::diff::FileSide>| match s {
        Some(x) if x.reconstructed => format!("{} lines", x.lines.unwrap_or(0)),
        Some(_) => "not rebuilt".to_string(),
        None => String::new(),
    };
    if !detail || f.a.is_none() {
        return writeln!(w, "  {}", sanitize(&f.path));
    }
    let state = match f.same {
        Some(true) => "the same final content".to_string(),
        Some(false) => "final contents differ".to_string(),
        None => "final contents not both known".to_string(),
    };
    writeln!(w, "  {}  A: {}, B: {}: {state}", sanitize(&f.path), side(&f.a), side(&f.b))?;
    for (name, s) in [("A", &f.a), ("B", &f.b)] {
        if let Some(note) = s.as_ref().and_then(|s| s.note.as_deref()) {
            writeln!(w, "    {} {}", side_tag(ui, name), ui.paint(Paint::Dim, &sanitize(note)))?;
        }
    }
    if let Some(d) = &f.diff {
        for line in sanitize(d).lines() {
            let painted = if line.starts_with("+++") || line.starts_with("---") {
                ui.paint(Paint::Dim, line)
            } else if line.starts_with('+') {
                ins(ui, line)
            } else if line.starts_with('-') {
                del(ui, line)
            } else if line.starts_with("@@") {
                ui.paint(Paint::Tool, line)
            } else {
                line.into()
            };
            writeln!(w, "    {painted}")?;
        }
    }
    Ok(())
}

/// `tests: npm test exit 1 (A) vs exit 0 (B): pass on B only (A: 3 passed, 1 failed;
/// B: 5 passed, 0 failed)`. A run passes when it exits 0 and its output counts no failed
/// test (a pipeline such as `npm test | tail` exits with its last command's status).
fn verdict(ui: &Ui, a: Option<&Run>, b: Option<&Run>) -> String {
    let head = ui.paint(Paint::Summary, "tests:").into_owned();
    let passed = |r: &Run| {
        r.outcome == Outcome::Ok && r.exit_code == Some(0) && r.tests.is_none_or(|t| t.failed.unwrap_or(0) == 0)
    };
    let ended = |r: &Run| exit_text(ui, r.outcome, r.exit_code);
    let count = |name: &str, r: Option<&Run>| r.and_then(|r| r.tests).map(|t| format!("{name}: {}", count_list(t)));
    let counts: Vec<String> = [count("A", a), count("B", b)].into_iter().flatten().collect();
    let counts = if counts.is_empty() { String::new() } else { format!(" ({})", counts.join("; ")) };
    let word = |ok: bool| if ok { ins(ui, "passes").into_owned() } else { del(ui, "fails").into_owned() };
    match (a, b) {
        (Some(x), Some(y)) => {
            let conclusion = match (passed(x), passed(y)) {
                (true, true) => ins(ui, "pass on both").into_owned(),
                (false, true) => format!("{} on B only", ins(ui, "pass")),
                (true, false) => format!("{} on A only", ins(ui, "pass")),
                (false, false) => del(ui, "fail on both").into_owned(),
            };
            let cmd_b = if x.command == y.command {
                String::new()
            } else {
                format!("{} ", one_line(&short_command(&y.command), 72))
            };
            format!(
                "{head} {} {} (A) vs {cmd_b}{} (B): {conclusion}{counts}",
                one_line(&short_command(&x.command), 72),
                ended(x),
                ended(y)
            )
        }
        (Some(x), None) => {
            format!(
                "{head} {} {} (A): {}{counts}; none run on B",
                one_line(&short_command(&x.command), 72),
                ended(x),
                word(passed(x))
            )
        }
        (None, Some(y)) => {
            format!(
                "{head} {} {} (B): {}{counts}; none run on A",
                one_line(&short_command(&y.command), 72),
                ended(y),
                word(passed(y))
            )
        }
        (None, None) => format!("{head} none run on either side"),
    }
}

fn count_list(t: TestCounts) -> String {
    let mut parts = Vec::new();
    if let Some(p) = t.passed {
        parts.push(format!("{p} passed"));
    }
    if let Some(f) = t.failed {
        parts.push(format!("{f} failed"));
    }
    parts.join(", ")
}

/// `850 ms`, `12.3 s`, `4 min 05 s`, `2 h 03 min`.
fn duration(ms: f64) -> String {
    if !ms.is_finite() || ms < 0.0 {
        return "?".into();
    }
    if ms < 1000.0 {
        return format!("{ms:.0} ms");
    }
    let s = ms / 1000.0;
    if s < 60.0 {
        return format!("{s:.1} s");
    }
    let total = s.round() as u64;
    if total < 3600 {
        return format!("{} min {:02} s", total / 60, total % 60);
    }
    format!("{} h {:02} min", total / 3600, (total % 3600) / 60)
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A command as shown: a leading `cd DIR && ` (agents prefix most commands with it) is
/// shortened to `cd … && `, so that what runs fits on the line.
fn short_command(cmd: &str) -> std::borrow::Cow<'_, str> {
    let t = cmd.trim_start();
    if let Some(rest) = t.strip_prefix("cd ") {
        if let Some((dir, run)) = rest.split_once(" && ") {
            if !dir.trim().is_empty() && !dir.contains(['\n', ';', '|']) {
                return format!("cd … && {run}").into();
            }
        }
    }
    cmd.into()
}

/// Whitespace collapsed, sanitized, cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    crate::session::text::one_line(&sanitize(text), max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_diffs_merge_runs() {
        use crate::diff::text::{words, Budget};
        let ui = Ui::plain();
        let mut out = Vec::new();
        let d = words(&mut Budget::new(), "fix the test please", "fix the code now please").unwrap();
        write_word_diff(&mut out, &ui, &d).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "  fix the [-test-]{+code now+} please\n");
        let mut out = Vec::new();
        let d = words(&mut Budget::new(), "Can you fix it?", "Can you fix it? Fix the implementation.").unwrap();
        write_word_diff(&mut out, &ui, &d).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "  Can you fix it?{+ Fix the implementation.+}\n");
    }

    #[test]
    fn cd_prefixes_are_shortened() {
        assert_eq!(short_command("cd /a/b && npm test"), "cd … && npm test");
        assert_eq!(short_command("npm test"), "npm test");
        assert_eq!(short_command("cd /a; rm x && y"), "cd /a; rm x && y");
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(duration(850.0), "850 ms");
        assert_eq!(duration(12_300.0), "12.3 s");
        assert_eq!(duration(245_000.0), "4 min 05 s");
        assert_eq!(duration(7_380_000.0), "2 h 03 min");
    }
}
