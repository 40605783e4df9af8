//! Drawing a [`TreeView`] (the session layer's port of pi's `/tree` selector): the rows as
//! pi's `TreeList.render` draws them (connectors, gutters, fold markers, the `•` of the
//! active path, `[label] `, the entry text), cut to a width with pi's sideways panning;
//! plus pisces's own columns (`--ids`, `--time`), `--compact` runs, JSON and Graphviz.
//!
//! Widths are terminal columns as pi-tui's `visibleWidth` counts them: East Asian wide
//! and fullwidth characters and emoji take two, combining marks and other zero-width
//! characters none; pi cuts between grapheme clusters, never inside one.

use std::borrow::Cow;
use std::io::{self, Write};

use serde::Serialize;
use serde_json::Value;
use unicode_width::UnicodeWidthChar;

use super::{sanitize, Paint, Ui};
use crate::session::rows::{Text, Tone};
use crate::session::text::sorted_ids;
use crate::session::view::{TreeView, NO_GUTTER};
use crate::session::{EntryIdx, LineNo, Session};

/// How the text rendering looks beyond pi's rows.
#[derive(Clone, Debug, Default)]
pub struct TextOptions {
    /// Cut every line to this many columns (never wrapped); `None`: no cutting.
    pub width: Option<usize>,
    /// A column with each entry's shortest unique id prefix.
    pub ids: bool,
    /// A column with each entry's time (UTC).
    pub time: bool,
    /// Collapse long single-child runs into `… N entries …` lines.
    pub compact: bool,
    /// Draw at most this many levels of gutters whole; deeper rows show their outermost
    /// and innermost levels and one `│×N` for the N levels between (`None`: every level, as
    /// pi draws them).
    pub max_levels: Option<usize>,
}

/// The default of [`TextOptions::max_levels`]: a row stays within ~45 columns of gutters
/// however deep the session nests (a 1 GB session nests thousands of levels deep, and pi's
/// rows there are tens of thousands of columns wide).
pub const MAX_LEVELS: usize = 12;

/// Levels kept whole on the outer side of a folded gutter; the rest are the innermost.
const OUTER_LEVELS: usize = 3;

/// `--compact` folds runs of at least this many rows.
const MIN_RUN: usize = 3;

/// A piece of a line and how it is painted.
type Seg<'t> = (Option<Paint>, Cow<'t, str>);

fn tone_paint(t: Tone) -> Option<Paint> {
    match t {
        Tone::Plain => None,
        Tone::User => Some(Paint::User),
        Tone::Assistant => Some(Paint::Assistant),
        Tone::Tool => Some(Paint::Tool),
        Tone::Muted | Tone::Dim => Some(Paint::Dim),
        Tone::Error => Some(Paint::Error),
        Tone::Summary => Some(Paint::Summary),
        Tone::Custom => Some(Paint::System),
    }
}

/// Session text made safe for a terminal and kept on one line.
fn clean(s: &str) -> Cow<'_, str> {
    let s = sanitize(s);
    if s.contains(['\n', '\t']) {
        Cow::Owned(s.replace(['\n', '\t'], " "))
    } else {
        s
    }
}

/// One line to print: either a row or a `--compact` elision.
/// (Row numbers as u32: one item a row, half a million on a big session.)
enum Item {
    Row(u32),
    /// `… N entries …` for rows `first..first+count`.
    Run {
        first: u32,
        count: u32,
    },
}

/// The lines in print order, with `--compact` runs folded.
fn items(view: &TreeView, compact: bool) -> Vec<Item> {
    let mut out = Vec::with_capacity(view.rows.len());
    let mut i = 0;
    while i < view.rows.len() {
        if compact && view.in_linear_run(i) {
            let mut j = i + 1;
            while j < view.rows.len() && view.in_linear_run(j) && view.rows[j].parent == Some(view.rows[j - 1].entry) {
                j += 1;
            }
            if j - i >= MIN_RUN {
                out.push(Item::Run { first: i as u32, count: (j - i) as u32 });
                i = j;
                continue;
            }
        }
        out.push(Item::Row(i as u32));
        i += 1;
    }
    out
}

/// Builds rows' pieces; keeps the last prefix (a single-child chain repeats it).
struct Painter<'v, 's> {
    view: &'v TreeView<'s>,
    prefix: String,
    /// The prefix's width in columns.
    width: usize,
    prefix_key: Option<(u32, u32)>,
    scratch: Vec<Option<bool>>,
    max_levels: Option<usize>,
}

impl<'v, 's> Painter<'v, 's> {
    fn new(view: &'v TreeView<'s>, max_levels: Option<usize>) -> Self {
        Painter { view, prefix: String::new(), width: 0, prefix_key: None, scratch: Vec::new(), max_levels }
    }

    /// pi's row prefix: `displayIndent` levels of three columns, each a gutter (`│  ` or
    /// blanks), the connector (`├─ `/`└─ `, `⊟`/`⊞` on foldable/folded nodes) or blanks.
    fn prefix(&mut self, index: usize, with_connector: bool) -> &str {
        let view = self.view;
        let row = &view.rows[index];
        let display_indent = view.display_indent(row);
        let connector = with_connector && row.show_connector && !row.virtual_root_child;
        if !connector && self.prefix_key == Some((row.gutters, display_indent)) {
            return &self.prefix;
        }
        self.prefix.clear();
        let levels = display_indent as usize;
        self.scratch.clear();
        self.scratch.resize(levels, None);
        // pi takes the first gutter of the list at a level (`gutters.find`): walk from the
        // newest to the oldest and let the oldest win.
        let mut g = row.gutters;
        while g != NO_GUTTER {
            let gutter = view.gutters[g as usize];
            if let Some(slot) = self.scratch.get_mut(gutter.position as usize) {
                *slot = Some(gutter.show);
            }
            g = gutter.next;
        }
        let connector_level = if connector { display_indent as i64 - 1 } else { -1 };
        // Levels drawn: all of them, or the outer and inner ones around a folded middle.
        let folded = match self.max_levels {
            Some(max) if levels > max => Some(OUTER_LEVELS..levels - (max - OUTER_LEVELS)),
            _ => None,
        };
        self.width = 0;
        for level in 0..levels {
            if let Some(middle) = &folded {
                if middle.contains(&level) {
                    if level == middle.start {
                        let lines = self.scratch[middle.clone()].contains(&Some(true));
                        let mark = format!("{}×{} ", if lines { '│' } else { ' ' }, middle.len());
                        self.width += mark.chars().count();
                        self.prefix.push_str(&mark);
                    }
                    continue;
                }
            }
            self.width += 3;
            match self.scratch[level] {
                Some(true) => self.prefix.push_str("│  "),
                Some(false) => self.prefix.push_str("   "),
                None if level as i64 == connector_level => {
                    self.prefix.push(if row.is_last { '└' } else { '├' });
                    self.prefix.push(if row.folded {
                        '⊞'
                    } else if row.foldable {
                        '⊟'
                    } else {
                        '─'
                    });
                    self.prefix.push(' ');
                }
                None => self.prefix.push_str("   "),
            }
        }
        self.prefix_key = if connector { None } else { Some((row.gutters, display_indent)) };
        &self.prefix
    }
}

/// What hangs under a row besides its children: a subagent's transcript (Claude Code's
/// `Agent` calls), folded to one line, or with its own tree drawn below the line.
pub struct Hung {
    pub kind: Option<String>,
    pub description: Option<String>,
    /// The transcript's tree as text, one line per row (`None`: folded).
    pub tree: Option<Vec<u8>>,
}

/// Writes the tree as text: one line per visible entry, drawn as pi draws it.
pub fn write_text(
    out: &mut dyn Write,
    ui: &Ui,
    session: &Session,
    view: &TreeView,
    opts: &TextOptions,
) -> io::Result<()> {
    write_text_hung(out, ui, session, view, opts, &|_| Vec::new())
}

/// [`write_text`], with what `hung` gives for an entry drawn below its row, indented under
/// it (the gutters of the rows around it carried on).
pub fn write_text_hung(
    out: &mut dyn Write,
    ui: &Ui,
    session: &Session,
    view: &TreeView,
    opts: &TextOptions,
    hung: &dyn Fn(EntryIdx) -> Vec<Hung>,
) -> io::Result<()> {
    let items = items(view, opts.compact);
    let ids = opts.ids.then(|| IdColumn::new(session, view));
    let mut painter = Painter::new(view, opts.max_levels);
    let mut cols = String::new();

    // Sideways panning (pi 1.6's renderHorizontalViewport) needs every line's width and the
    // selected row's anchor (where its text starts) before the first line is drawn.
    let mut scroll = 0usize;
    let mut viewport = usize::MAX;
    if let Some(width) = opts.width {
        let cols_width = columns_width(opts, ids.as_ref());
        viewport = width.saturating_sub(cols_width);
        let mut max_body = 0usize;
        let mut anchor = None;
        with_texts(view, &items, |item, text| {
            let mut segs: Vec<Seg> = Vec::with_capacity(8);
            let (prefix, cols) = item_prefix(&mut painter, item);
            let a = body(prefix, cols, view, item, text, &mut segs);
            let w: usize = segs.iter().map(|(_, s)| str_width(s)).sum();
            max_body = max_body.max(w);
            if let Item::Row(i) = item {
                if view.selected == Some(*i as usize) {
                    anchor = Some(a);
                }
            }
            Ok(())
        })?;
        let max_scroll = max_body.saturating_sub(viewport);
        if let (Some(anchor), true) = (anchor, max_scroll > 0) {
            let min_visible = (viewport / 3).clamp(4, 20);
            if anchor as i64 > viewport as i64 - min_visible as i64 {
                let context = (viewport / 4).clamp(2, 12);
                let s = (anchor as i64 - context as i64).min(max_scroll as i64);
                scroll = s.max(0) as usize;
            }
        }
    }

    with_texts(view, &items, |item, text| {
        cols.clear();
        let entry = match item {
            Item::Row(i) => Some(view.rows[*i as usize].entry),
            Item::Run { .. } => None,
        };
        if let Some(ids) = &ids {
            let id = entry.map(|e| ids.of(session, e)).unwrap_or_default();
            cols.push_str(&id);
            pad(&mut cols, ids.width.saturating_sub(str_width(&id)) + 2);
        }
        if opts.time {
            let t = entry.and_then(|e| session.time(e)).map(format_time).unwrap_or_default();
            cols.push_str(&t);
            pad(&mut cols, TIME_WIDTH.saturating_sub(t.len()) + 2);
        }
        let mut segs: Vec<Seg> = Vec::with_capacity(8);
        let (prefix, prefix_cols) = item_prefix(&mut painter, item);
        let below = match entry {
            Some(e) if matches!(item, Item::Row(_)) => hung(e),
            _ => Vec::new(),
        };
        let carry = if below.is_empty() { String::new() } else { carried(&cols, prefix) };
        body(prefix, prefix_cols, view, item, text, &mut segs);
        match opts.width {
            None => {
                if !cols.is_empty() {
                    write_segs(out, ui, &[(Some(Paint::Dim), Cow::Borrowed(cols.as_str()))])?;
                }
                write_segs(out, ui, &segs)?;
            }
            Some(width) => {
                let cols_cut = cut(&[(Some(Paint::Dim), Cow::Borrowed(cols.as_str()))], 0, width, false);
                write_segs(out, ui, &cols_cut)?;
                let room = width.saturating_sub(str_width(&cols));
                let body_cut = if scroll > 0 {
                    cut(&segs, scroll, viewport.min(room), true)
                } else {
                    cut(&segs, 0, viewport.min(room), false)
                };
                write_segs(out, ui, &body_cut)?;
            }
        }
        out.write_all(b"\n")?;
        for h in below {
            write_hung(out, ui, &carry, &h, opts.width)?;
        }
        Ok(())
    })
}

/// The start of a line below a row: its columns blank, its gutters carried on (a branch
/// connector becomes the line that continues to the next sibling, or nothing).
fn carried(cols: &str, prefix: &str) -> String {
    let mut s: String = " ".repeat(str_width(cols));
    s.extend(prefix.chars().map(|c| match c {
        '├' | '│' => '│',
        _ => ' ',
    }));
    s.push_str("   ");
    s
}

fn write_hung(out: &mut dyn Write, ui: &Ui, carry: &str, h: &Hung, width: Option<usize>) -> io::Result<()> {
    let what = match (&h.kind, &h.description) {
        (Some(k), Some(d)) => format!("subagent {}: {}", sanitize(k), sanitize(d)),
        (Some(k), None) => format!("subagent {}", sanitize(k)),
        (None, Some(d)) => format!("subagent: {}", sanitize(d)),
        (None, None) => "subagent".to_string(),
    };
    let header = match h.tree {
        None => format!("⊞ [{what}] (--subagents to show)"),
        Some(_) => format!("⊟ [{what}]"),
    };
    let mut line = |text: &str, paint: Option<Paint>| -> io::Result<()> {
        let segs: Vec<Seg> = vec![(None, Cow::Borrowed(carry)), (paint, Cow::Borrowed(text))];
        match width {
            Some(w) => write_segs(out, ui, &cut(&segs, 0, w, false))?,
            None => write_segs(out, ui, &segs)?,
        }
        out.write_all(b"\n")
    };
    line(&header, Some(Paint::Dim))?;
    if let Some(tree) = &h.tree {
        // Already drawn (and made safe) by the subagent's own tree; indented under the header.
        for l in String::from_utf8_lossy(tree).lines() {
            line(&format!("   {l}"), None)?;
        }
    }
    Ok(())
}

/// How many rows' texts are made at a time: enough to split over two threads, few enough
/// that they take little memory.
const TEXT_CHUNK: usize = 16 * 1024;

/// Calls `f` for each item with its row's text (`None` for a `--compact` run), the texts
/// made a chunk at a time. The next chunk's texts are made while this one's lines are
/// written, so the two threads that make them are not left idle while one thread writes.
fn with_texts(
    view: &TreeView,
    items: &[Item],
    mut f: impl FnMut(&Item, Option<&Text>) -> io::Result<()>,
) -> io::Result<()> {
    let rows_of = |chunk: &[Item]| -> Vec<usize> {
        chunk
            .iter()
            .filter_map(|item| match item {
                Item::Row(i) => Some(*i as usize),
                Item::Run { .. } => None,
            })
            .collect()
    };
    std::thread::scope(|t| {
        // One chunk made ahead at most: the texts in hand stay a few chunks.
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Text>>(0);
        t.spawn(move || {
            for chunk in items.chunks(TEXT_CHUNK) {
                // The writer stopped (a closed pipe): nothing more to make.
                if tx.send(view.texts(&rows_of(chunk))).is_err() {
                    break;
                }
            }
        });
        for chunk in items.chunks(TEXT_CHUNK) {
            // The maker sends one vector a chunk; it ends only once all are sent (or by a
            // panic, which the scope passes on).
            let Ok(texts) = rx.recv() else { break };
            let mut texts = texts.iter();
            for item in chunk {
                let text = match item {
                    Item::Row(_) => texts.next(),
                    Item::Run { .. } => None,
                };
                f(item, text)?;
            }
        }
        Ok(())
    })
}

fn pad(s: &mut String, n: usize) {
    s.extend(std::iter::repeat_n(' ', n));
}

fn columns_width(opts: &TextOptions, ids: Option<&IdColumn<'_>>) -> usize {
    let mut w = 0;
    if let Some(ids) = ids {
        w += ids.width + 2;
    }
    if opts.time {
        w += TIME_WIDTH + 2;
    }
    w
}

/// A line's body pieces (prefix, markers, label, text) after its prefix; returns the anchor
/// column (the width of prefix + fold marker + path marker, where pi anchors its panning).
/// The prefix is all one-column characters.
fn body<'t>(
    prefix: &'t str,
    prefix_cols: usize,
    view: &'t TreeView<'t>,
    item: &Item,
    text: Option<&'t Text>,
    segs: &mut Vec<Seg<'t>>,
) -> usize {
    let mut anchor = prefix_cols;
    segs.push((Some(Paint::Dim), Cow::Borrowed(prefix)));
    match *item {
        Item::Row(i) => {
            let row = &view.rows[i as usize];
            let connector = row.show_connector && !row.virtual_root_child;
            if row.folded && !connector {
                segs.push((Some(Paint::System), Cow::Borrowed("⊞ ")));
                anchor += 2;
            }
            if row.active {
                segs.push((Some(Paint::Active), Cow::Borrowed("• ")));
                anchor += 2;
            }
            if let Some(label) = row.label {
                segs.push((Some(Paint::Label), Cow::Owned(format!("[{}] ", clean(label)))));
            }
            if let Some(text) = text {
                segs.push((tone_paint(text.head_tone), clean(&text.head)));
                if !text.body.is_empty() {
                    segs.push((tone_paint(text.body_tone), clean(&text.body)));
                }
            }
        }
        Item::Run { first, count } => {
            if view.rows[first as usize].active {
                segs.push((Some(Paint::Active), Cow::Borrowed("• ")));
            }
            segs.push((Some(Paint::Dim), Cow::Owned(format!("… {count} entries …"))));
        }
    }
    anchor
}

/// The prefix of an item's line, and its width.
fn item_prefix<'p>(painter: &'p mut Painter, item: &Item) -> (&'p str, usize) {
    let (i, connector) = match *item {
        Item::Row(i) => (i as usize, true),
        Item::Run { first, .. } => (first as usize, false),
    };
    painter.prefix(i, connector);
    (&painter.prefix, painter.width)
}

fn write_segs(out: &mut dyn Write, ui: &Ui, segs: &[Seg]) -> io::Result<()> {
    for (paint, s) in segs {
        if s.is_empty() {
            continue;
        }
        match paint {
            Some(p) if ui.color => out.write_all(ui.paint(*p, s).as_bytes())?,
            _ => out.write_all(s.as_bytes())?,
        }
    }
    Ok(())
}

/// Columns `start..start+len` of the pieces, as pi-tui's `sliceByColumn` (`strict`: a wide
/// character that does not fit whole is left out) and `truncateToWidth(…, "")` (from 0).
fn cut<'t>(segs: &[Seg<'t>], start: usize, len: usize, strict: bool) -> Vec<Seg<'t>> {
    let end = start + len;
    let mut col = 0usize;
    let mut out = Vec::with_capacity(segs.len());
    'segs: for (paint, s) in segs {
        let mut kept = String::new();
        for (g, w) in clusters(s) {
            let in_range = col >= start && col < end;
            let fits = !strict || col + w <= end;
            // From column 0 pi stops at the first cluster that does not fit.
            if start == 0 && col + w > end {
                if !kept.is_empty() {
                    out.push((*paint, Cow::Owned(kept)));
                }
                break 'segs;
            }
            if in_range && fits {
                kept.push_str(g);
            }
            col += w;
            if col >= end {
                if !kept.is_empty() {
                    out.push((*paint, Cow::Owned(kept)));
                }
                break 'segs;
            }
        }
        if !kept.is_empty() {
            out.push((*paint, Cow::Owned(kept)));
        }
    }
    out
}

/// Terminal columns of a string, as pi-tui's `visibleWidth`.
pub fn str_width(s: &str) -> usize {
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return s.len();
    }
    clusters(s).map(|(_, w)| w).sum()
}

fn could_be_emoji(c: char) -> bool {
    matches!(c as u32, 0x1f000..=0x1fbff | 0x2300..=0x23ff | 0x2600..=0x27bf | 0x2b50..=0x2b55)
}

fn is_regional(c: char) -> bool {
    ('\u{1f1e6}'..='\u{1f1ff}').contains(&c)
}

fn is_skin_tone(c: char) -> bool {
    ('\u{1f3fb}'..='\u{1f3ff}').contains(&c)
}

fn char_width(c: char) -> usize {
    match c {
        ' '..='~' => 1,
        '\t' => 3,
        c if is_regional(c) => 2,
        c => c.width().unwrap_or(0),
    }
}

/// Grapheme clusters (closely enough for widths: a base character with its combining
/// marks, variation selectors, emoji modifiers and ZWJ sequences; flag pairs) and their
/// widths as pi-tui counts them.
fn clusters(s: &str) -> impl Iterator<Item = (&str, usize)> {
    let mut it = s.char_indices().peekable();
    std::iter::from_fn(move || {
        let (start, c) = it.next()?;
        let mut end = start + c.len_utf8();
        let mut width = char_width(c);
        let emoji = could_be_emoji(c);
        let mut pictographic_seq = false;
        let mut paired = false;
        while let Some(&(i, d)) = it.peek() {
            if d == '\u{200d}' {
                it.next();
                end = i + d.len_utf8();
                if let Some(&(j, e)) = it.peek() {
                    it.next();
                    end = j + e.len_utf8();
                }
                pictographic_seq = true;
            } else if d == '\u{fe0f}' {
                it.next();
                end = i + d.len_utf8();
                if emoji {
                    width = 2;
                }
            } else if is_skin_tone(d) && emoji {
                it.next();
                end = i + d.len_utf8();
                pictographic_seq = true;
            } else if is_regional(c) && is_regional(d) && !paired {
                it.next();
                end = i + d.len_utf8();
                paired = true;
            } else if char_width(d) == 0 && !d.is_control() {
                it.next();
                end = i + d.len_utf8();
            } else {
                break;
            }
        }
        if pictographic_seq && emoji {
            width = 2;
        }
        Some((&s[start..end], width))
    })
}

// ---------------------------------------------------------------------------------------
// Columns
// ---------------------------------------------------------------------------------------

const TIME_WIDTH: usize = 16;

/// `YYYY-MM-DD HH:MM` (UTC) of epoch milliseconds.
fn format_time(ms: f64) -> String {
    let secs = (ms / 1000.0).floor() as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}", rem / 3600, rem % 3600 / 60)
}

/// Shortest unique id prefixes (at least 4 characters), as `pisces path`/`diff`/`fork`
/// resolve them: a prefix that is also a label (labels are tried first) is lengthened.
struct IdColumn<'s> {
    sorted: Vec<&'s str>,
    labels: rustc_hash::FxHashSet<String>,
    width: usize,
}

impl<'s> IdColumn<'s> {
    const MIN: usize = 4;

    fn new(session: &'s Session, view: &TreeView) -> IdColumn<'s> {
        let sorted = sorted_ids(session.ids().map(|(id, _)| id));
        let labels = session.labels().map(|(_, l)| l.text.clone()).collect();
        let mut col = IdColumn { sorted, labels, width: 0 };
        col.width = view.rows.iter().map(|r| str_width(&col.of(session, r.entry))).max().unwrap_or(0);
        col
    }

    fn of(&self, session: &Session, entry: EntryIdx) -> String {
        let Some(id) = session.id_str(entry) else {
            return session.display_id(entry).into_owned();
        };
        let pos = self.sorted.binary_search(&id).unwrap_or_else(|p| p);
        let lcp =
            |other: Option<&&str>| other.map_or(0, |o| o.chars().zip(id.chars()).take_while(|(a, b)| a == b).count());
        let before = if pos > 0 { lcp(self.sorted.get(pos - 1)) } else { 0 };
        let after = lcp(self.sorted.get(pos + 1));
        let chars = id.chars().count();
        let mut n = (before.max(after) + 1).max(Self::MIN).min(chars);
        loop {
            let prefix: String = id.chars().take(n).collect();
            if n >= chars || !self.labels.contains(&prefix) {
                return clean(&prefix).into_owned();
            }
            n += 1;
        }
    }
}

// ---------------------------------------------------------------------------------------
// JSON and Graphviz
// ---------------------------------------------------------------------------------------

/// `--format json` (versioned; fields are only ever added).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TreeDocument<'a> {
    version: u32,
    file: &'a str,
    leaf_id: Value,
    filter: &'a str,
    roots: Vec<Value>,
    nodes: Nodes<'a>,
}

/// The nodes, serialized as they are made (a chunk of texts at a time), so that the whole
/// list never exists at once.
struct Nodes<'a> {
    session: &'a Session<'a>,
    view: &'a TreeView<'a>,
}

impl Serialize for Nodes<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let (session, view) = (self.session, self.view);
        let mut seq = ser.serialize_seq(Some(view.rows.len()))?;
        let all: Vec<usize> = (0..view.rows.len()).collect();
        for chunk in all.chunks(TEXT_CHUNK) {
            for (&i, text) in chunk.iter().zip(view.texts(chunk)) {
                let r = &view.rows[i];
                let (file, line) = session.place(r.entry);
                seq.serialize_element(&Node {
                    id: session.id_value(r.entry),
                    parent_id: r.parent.map_or(Value::Null, |p| session.id_value(p)),
                    kind: kind_value(session, r.entry),
                    role: role_value(session, r.entry),
                    text: text.to_plain(),
                    label: r.label.map(String::as_str),
                    depth: r.depth,
                    on_active_path: r.active,
                    folded: r.folded,
                    file,
                    line,
                    children: view.children_of(r.entry).iter().map(|&c| session.id_value(c)).collect(),
                    subagents: session
                        .dialect()
                        .subagents(session, r.entry)
                        .into_iter()
                        .map(|a| {
                            serde_json::json!({
                                "file": a.path.to_string_lossy(),
                                "agentType": a.kind,
                                "description": a.description,
                            })
                        })
                        .collect(),
                })?;
            }
        }
        seq.end()
    }
}

/// The entry's `type` as written (`null` for a line that is no object).
fn kind_value(session: &Session, e: EntryIdx) -> Value {
    use crate::session::EntryType;
    match session.entries[e].kind {
        EntryType::Other | EntryType::Missing => {
            session.parse(e).ok().and_then(|v| v.get("type").cloned()).unwrap_or(Value::Null)
        }
        EntryType::NotObject => Value::Null,
        k => Value::from(k.name()),
    }
}

/// A message's `role` as pi holds it; the index knows the usual ones, so only an unusual
/// role costs a parse of the entry.
fn role_value(session: &Session, e: EntryIdx) -> Value {
    use crate::session::{EntryType, Role};
    let meta = &session.entries[e];
    if meta.kind != EntryType::Message {
        return Value::Null;
    }
    let known = match meta.role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::ToolResult => "toolResult",
        Role::System => "system",
        Role::BashExecution => "bashExecution",
        Role::Custom => "custom",
        // A version-2 `hookMessage` is migrated when read; other roles are kept as written.
        Role::HookMessage | Role::Other | Role::None => {
            return session
                .parse(e)
                .ok()
                .and_then(|v| v.get("message").and_then(|m| m.get("role")).cloned())
                .unwrap_or(Value::Null)
        }
    };
    Value::from(known)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Node<'a> {
    id: Value,
    parent_id: Value,
    #[serde(rename = "type")]
    kind: Value,
    role: Value,
    text: String,
    label: Option<&'a str>,
    depth: u32,
    on_active_path: bool,
    folded: bool,
    /// The file the line is in, when not the one read (a Codex fork's inherited lines).
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    line: LineNo,
    children: Vec<Value>,
    /// Transcripts of subagents the entry started (files beside the session), when any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    subagents: Vec<Value>,
}

/// Writes the visible tree as one JSON document.
pub fn write_json(
    out: &mut dyn Write,
    session: &Session,
    view: &TreeView,
    leaf: Option<EntryIdx>,
    filter: &str,
) -> io::Result<()> {
    let nodes = Nodes { session, view };
    let doc = TreeDocument {
        version: 1,
        file: &session.file,
        leaf_id: leaf.map_or(Value::Null, |l| session.id_value(l)),
        filter,
        roots: view.roots.iter().map(|&r| session.id_value(r)).collect(),
        nodes,
    };
    super::json::write_pretty(&mut *out, &doc)?;
    out.write_all(b"\n")
}

/// A Graphviz string literal.
fn dot_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in clean(s).chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Writes the visible tree as a Graphviz digraph, the active path highlighted.
pub fn write_dot(out: &mut dyn Write, session: &Session, view: &TreeView) -> io::Result<()> {
    writeln!(out, "digraph session {{")?;
    writeln!(out, "  rankdir=TB;")?;
    writeln!(
        out,
        "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\", fontsize=10];"
    )?;
    writeln!(out, "  edge [color=gray50];")?;
    // Nodes are named by row (an entry pi attaches twice has two rows); an edge comes from
    // the latest row of the visible parent.
    let mut last_row: rustc_hash::FxHashMap<EntryIdx, usize> = rustc_hash::FxHashMap::default();
    let all: Vec<usize> = (0..view.rows.len()).collect();
    for chunk in all.chunks(TEXT_CHUNK) {
        for (&i, t) in chunk.iter().zip(view.texts(chunk)) {
            dot_row(out, session, view, i, &t, &mut last_row)?;
        }
    }
    writeln!(out, "}}")
}

/// One row's node, and the edge from its visible parent's latest row.
fn dot_row(
    out: &mut dyn Write,
    session: &Session,
    view: &TreeView,
    i: usize,
    t: &Text,
    last_row: &mut rustc_hash::FxHashMap<EntryIdx, usize>,
) -> io::Result<()> {
    let r = &view.rows[i];
    let mut text: String = t.to_plain();
    if text.chars().count() > 60 {
        text = format!("{}…", text.chars().take(59).collect::<String>());
    }
    let label = match r.label {
        Some(l) => format!("{}\n[{l}] {text}", session.display_id(r.entry)),
        None => format!("{}\n{text}", session.display_id(r.entry)),
    };
    let fill = match t.head_tone {
        Tone::User => "#e3f2fd",
        Tone::Assistant => "#e8f5e9",
        Tone::Tool => "#fff8e1",
        Tone::Summary => "#f3e5f5",
        _ => "white",
    };
    let active = if r.active { ", color=\"#1565c0\", penwidth=2.5" } else { "" };
    writeln!(out, "  r{i} [label={}, fillcolor=\"{fill}\"{active}];", dot_str(&label))?;
    if let Some(p) = r.parent.and_then(|p| last_row.get(&p)) {
        let edge = if r.active && view.rows[*p].active { " [color=\"#1565c0\", penwidth=2.5]" } else { "" };
        writeln!(out, "  r{p} -> r{i}{edge};")?;
    }
    last_row.insert(r.entry, i);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_like_pi_tui() {
        assert_eq!(str_width("abc"), 3);
        assert_eq!(str_width("│  ├⊟ • "), 8);
        assert_eq!(str_width("日本"), 4);
        assert_eq!(str_width("e\u{301}"), 1);
        assert_eq!(str_width("❤\u{fe0f}"), 2);
        assert_eq!(str_width("👍🏽"), 2);
        assert_eq!(str_width("👨\u{200d}👩\u{200d}👧"), 2);
        assert_eq!(str_width("🇫🇷"), 2);
    }

    #[test]
    fn cuts_without_ellipsis() {
        let segs: Vec<Seg> = vec![(None, Cow::Borrowed("ab")), (None, Cow::Borrowed("日本x"))];
        let text = |v: Vec<Seg>| v.iter().map(|(_, s)| s.to_string()).collect::<String>();
        assert_eq!(text(cut(&segs, 0, 3, false)), "ab");
        assert_eq!(text(cut(&segs, 0, 4, false)), "ab日");
        assert_eq!(text(cut(&segs, 3, 3, true)), "本");
        assert_eq!(text(cut(&segs, 4, 3, true)), "本x");
        assert_eq!(text(cut(&segs, 1, 2, true)), "b");
    }

    #[test]
    fn times_in_utc() {
        assert_eq!(format_time(0.0), "1970-01-01 00:00");
        assert_eq!(format_time(1_795_979_908_239.0), "2026-11-29 19:18");
    }
}
