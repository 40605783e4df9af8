//! `pisces export SESSION --html`: the session as one self-contained page.

use std::io::Write;
use std::path::PathBuf;

use super::{read_one, Ctx, ExitStatus};
use crate::render::{self, sanitize};
use crate::session::view::{self, Filter, Options};
use crate::session::write;

const EXAMPLES: &str = "\
Examples:
  pisces export session.jsonl --html                 # writes session.html here
  pisces export 4f1c --html -o /tmp/fix.html         # a session found by id prefix
  pisces export session.jsonl --html -o - | gzip > s.html.gz
  xdg-open session.html#a3f9c1d2                     # open at an entry (a deep link)";

/// Write a session as one HTML page to read in a browser.
///
/// The page is one file that loads nothing: its style and script are inline, and its
/// Content-Security-Policy forbids every network load. On the left, the tree as `pisces
/// tree` draws it (fold branches with ⊟/⊞; search every message as `pisces grep` would, by
/// role, literally or by regex). On the right, the context the model saw at the selected
/// leaf, exactly the messages `pisces path LEAF` gives: thinking folded, each tool call
/// with its result under it, long outputs cut with a \"show all\", images inline, compaction
/// and branch summaries marked. Above it, the branch's facts: tokens, cost, model, time,
/// the files it changed, and how its last test command ended. \"Compare\" sets two leaves
/// side by side from their fork point, with the side whose tests pass marked.
///
/// Clicking an entry shows the newest leaf below it (or the one shown, when the entry is on
/// its path) and scrolls to the entry's message. `page.html#ID` opens at entry ID. Session
/// text is shown as text, never run or rendered as markup. Light or dark follows the system
/// (◐ switches).
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Session file, `-` for stdin, or a session id / unique id prefix.
    pub session: String,

    /// Write the HTML page (the only export so far).
    #[arg(long, required = true)]
    pub html: bool,

    /// Where to write the page (`-`: standard output). Default: the session file's name
    /// with `.html`, in the current directory.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Replace FILE if it exists (atomically: a reader sees the old page or the new one).
    #[arg(long)]
    pub force: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    read_one(ctx, &args.session, |session, reading| {
        let page = crate::export::page(session)?;
        let opts = Options {
            filter: Filter::Default,
            search: None,
            folds: Vec::new(),
            leaf: session.default_leaf(),
            home: ctx.env.pi_home(),
            cwd: ctx.env.cwd_string(),
            cycle_roots: true,
        };
        let rows = view::read_rows(session, &opts)?;
        let tree = view::build(session, rows.as_ref(), &opts);
        let generator = format!("pisces {}", env!("CARGO_PKG_VERSION"));
        let fill = |w: &mut dyn Write| render::html::write(w, session, &tree, &page, &generator);
        reading.start_output()?;
        let path = match &args.output {
            Some(p) if p.as_os_str() == "-" => {
                let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
                fill(&mut out)?;
                out.flush()?;
                return Ok(ExitStatus::Ok);
            }
            Some(p) => p.clone(),
            None => crate::export::default_file(&session.file),
        };
        if args.force {
            write::replace_file(&path, fill)?;
        } else {
            write::write_new_file(&path, fill)?;
        }
        println!("{}", sanitize(&path.display().to_string()));
        Ok(ExitStatus::Ok)
    })
}
