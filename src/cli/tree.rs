//! `pisces tree SESSION`: the session tree, drawn the way pi's `/tree` selector draws it.

use std::io::{BufWriter, Write};

use clap::ValueEnum;

use super::{read_one, Ctx, ExitStatus};
use crate::render::tree::{self as draw, TextOptions};
use crate::render::Ui;
use crate::session::view::{self, Filter, Options};
use crate::session::{open, rev, EntryIdx, Session};

const EXAMPLES: &str = "\
Examples:
  pisces tree session.jsonl                       # the tree as pi's /tree shows it
  pisces tree session.jsonl --filter user --ids   # only the prompts, with ids to copy
  pisces tree session.jsonl --search 'fix test'   # entries whose text has both words
  pisces tree session.jsonl --leaf fix-1          # mark the path to the entry labelled fix-1
  pisces tree session.jsonl --compact --time      # long runs folded, with entry times
  pisces tree session.jsonl --around a3f9 --depth 1   # only the branch through a3f9
  pisces tree session.jsonl --format dot | dot -Tsvg > tree.svg";

/// Print the session tree as pi's /tree selector draws it.
///
/// One line per entry: pi's branch connectors and gutters, `•` on every entry of the active
/// path (the path to `@`, pi's current leaf, or to --leaf), `[label]` before the text, and
/// pi's one-line text for each entry type, with pi's visibility rules (an assistant that
/// only called tools is hidden unless it is the leaf; `usage` entries never show; filters
/// hide entries and the drawing is recomputed over what stays visible).
///
/// Lines are cut to the terminal's width (never wrapped; pi's sideways panning keeps the
/// leaf's text in view), and not cut when piped unless --width is given. Session text is
/// made safe for the terminal (escape sequences, control characters and bidi overrides
/// removed). Tool paths under $HOME show as `~/…`, as in pi.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Session file, `-` for stdin, or a session id / unique id prefix.
    pub session: String,

    /// The leaf whose path is marked active (default `@`, pi's current leaf: the last entry).
    #[arg(long, value_name = "REV")]
    pub leaf: Option<String>,

    /// Which entries to show, as pi's filters: default (no settings/bookkeeping entries),
    /// no-tools (also no tool results), user (user messages only), labeled (labelled
    /// entries only), all (everything but usage entries).
    #[arg(long, value_enum, default_value_t = FilterArg::Default, value_name = "FILTER")]
    pub filter: FilterArg,

    /// Only entries whose text contains every word (case-insensitive), as pi's search.
    #[arg(long, value_name = "WORDS")]
    pub search: Option<String>,

    /// Fold the subtree below this entry, as pi's ⊞ (repeatable).
    #[arg(long, value_name = "REV")]
    pub fold: Vec<String>,

    /// Show each entry's shortest unique id prefix in a column (for `pisces path`, `diff`, `fork`).
    #[arg(long)]
    pub ids: bool,

    /// Show each entry's time (UTC) in a column.
    #[arg(long)]
    pub time: bool,

    /// Open only N levels of branches: deeper branches are folded to their first entry (⊞).
    #[arg(long, value_name = "N")]
    pub depth: Option<u32>,

    /// Open only the branch through REV: the other branches off its ancestors are folded to
    /// their first entry (⊞); REV's subtree stays open.
    #[arg(long, value_name = "REV")]
    pub around: Option<String>,

    /// Collapse long single-child runs into `… N entries …` lines (branch points, first
    /// entries of branches, leaves, labelled entries and the leaf stay visible).
    #[arg(long)]
    pub compact: bool,

    /// Cut lines to N columns [default: the terminal's width ($COLUMNS or the tty); no
    /// cutting when piped].
    #[arg(long, value_name = "N")]
    pub width: Option<usize>,

    /// Draw exactly what pi's /tree draws: every gutter level however deep (rows of a deep
    /// session get tens of thousands of columns wide; by default levels past 12 fold into
    /// one `│×N`), and pi's quirks (a parent cycle without a root is not shown at all).
    #[arg(long)]
    pub pi_exact: bool,

    /// Draw the transcripts of subagents (Claude Code's `Agent` calls) under the calls that
    /// started them; without it each is one folded `⊞ [subagent …]` line.
    #[arg(long)]
    pub subagents: bool,

    /// Output format: text (pi's drawing), json (the visible tree as data), dot (Graphviz).
    #[arg(long, short, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FilterArg {
    Default,
    NoTools,
    #[value(alias = "user-only")]
    User,
    #[value(alias = "labeled-only", alias = "labelled")]
    Labeled,
    All,
}

impl From<FilterArg> for Filter {
    fn from(f: FilterArg) -> Filter {
        match f {
            FilterArg::Default => Filter::Default,
            FilterArg::NoTools => Filter::NoTools,
            FilterArg::User => Filter::UserOnly,
            FilterArg::Labeled => Filter::LabeledOnly,
            FilterArg::All => Filter::All,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// pi's /tree drawing.
    Text,
    /// `{"version":1, roots, nodes:[{id, parentId, type, role, text, label, depth, onActivePath, children, …}]}`.
    Json,
    /// A Graphviz digraph with the active path highlighted.
    Dot,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    read_one(ctx, &args.session, |session, reading| {
        let leaf = match &args.leaf {
            Some(r) => Some(rev::resolve(session, r)?),
            None => session.default_leaf(),
        };
        let folds = args.fold.iter().map(|r| rev::resolve(session, r)).collect::<Result<Vec<_>, _>>()?;
        let around = args.around.as_deref().map(|r| rev::resolve(session, r)).transpose()?;
        let opts = Options {
            filter: args.filter.into(),
            search: args.search.clone(),
            folds,
            leaf,
            home: ctx.env.pi_home(),
            cwd: ctx.env.cwd_string(),
            cycle_roots: !args.pi_exact,
        };
        let rows = view::read_rows(session, &opts)?;
        let view = view::build_focused(session, rows.as_ref(), opts, around, args.depth);
        reading.start_output()?;
        let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        match args.format {
            Format::Text => {
                let width = args.width.or(ctx.ui.width);
                let opts = TextOptions {
                    width,
                    ids: args.ids,
                    time: args.time,
                    compact: args.compact,
                    max_levels: (!args.pi_exact).then_some(draw::MAX_LEVELS),
                };
                let hung = |e| hung(ctx, &args, session, e, 0);
                draw::write_text_hung(&mut out, &ctx.ui, session, &view, &opts, &hung)?;
            }
            Format::Json => {
                let filter = Filter::from(args.filter).pi_name();
                draw::write_json(&mut out, session, &view, leaf, filter)?;
            }
            Format::Dot => draw::write_dot(&mut out, session, &view)?,
        }
        out.flush()?;
        Ok(ExitStatus::Ok)
    })
}

/// Subagents nest (an agent may start agents); deeper ones stay folded.
const MAX_NESTING: usize = 4;

/// The subagents entry `e` started, each folded, or with `--subagents` its transcript's
/// tree (drawn with the same filter and columns; an unreadable one says why).
fn hung(ctx: &Ctx, args: &Args, session: &Session, e: EntryIdx, depth: usize) -> Vec<draw::Hung> {
    let subs = session.dialect().subagents(session, e);
    subs.into_iter()
        .map(|sub| {
            let tree = (args.subagents && depth < MAX_NESTING).then(|| {
                let drawn = open::read_path(&sub.path, ctx.formats, |s| {
                    let opts = Options {
                        filter: args.filter.into(),
                        search: None,
                        folds: Vec::new(),
                        leaf: s.default_leaf(),
                        home: ctx.env.pi_home(),
                        cwd: ctx.env.cwd_string(),
                        cycle_roots: true,
                    };
                    let rows = view::read_rows(s, &opts)?;
                    let v = view::build(s, rows.as_ref(), &opts);
                    let text = TextOptions {
                        width: None,
                        ids: args.ids,
                        time: args.time,
                        compact: args.compact,
                        max_levels: Some(draw::MAX_LEVELS),
                    };
                    let mut buf = Vec::new();
                    let inner = |i| hung(ctx, args, s, i, depth + 1);
                    draw::write_text_hung(&mut buf, &Ui::plain(), s, &v, &text, &inner)?;
                    Ok(buf)
                });
                drawn.unwrap_or_else(|err| format!("(cannot read {}: {err:#})", sub.path.display()).into_bytes())
            });
            draw::Hung { kind: sub.kind, description: sub.description, tree }
        })
        .collect()
}
