//! `pisces summarize SESSION FROM_LEAF TO_REV`: pi's `/tree` summarize, from the leaf
//! FROM_LEAF to the target TO_REV.

use std::io::{BufWriter, Write};

use anyhow::bail;

use super::TextOrJson as Format;
use super::{append_target, pi_config, read_one, Ctx, ExitStatus, ModelArgs};
use crate::llm::{PiConfig, Provider};
use crate::render::summarize::{PlanDoc, SummaryDoc};
use crate::render::{self, sanitize, Safe};
use crate::session::{rev, Session};
use crate::summarize::branch::{self, Plan};
use crate::summarize::model::{open_provider, ModelFacts};
use crate::summarize::SummaryError;

const EXAMPLES: &str = "\
Examples:
  pisces summarize session.jsonl @ fix-1 --dry-run       # what pi would send, no model call
  pisces summarize session.jsonl @ fix-1 --offline       # a summary built from the entries
  pisces summarize session.jsonl @ fix-1 --offline --append   # write it, as pi's /tree does
  pisces summarize session.jsonl @ a3f9 --model anthropic/claude-sonnet-4-5 --append
  pisces summarize session.jsonl @ a3f9 --dry-run --instructions 'focus on the failing test'
  pisces summarize session.jsonl @ root --dry-run --format json | jq -r .request.promptText

Exit status: 0 when a summary was made (or planned), 1 when there was nothing to summarize
(TO_REV is FROM_LEAF or one of its descendants), 2 on trouble.";

/// Summarize a branch as pi's /tree does when you leave it (FROM_LEAF → TO_REV).
///
/// Collects what pi 1.6.0's navigateTree collects: the entries from FROM_LEAF back to (not
/// including) its common ancestor with TO_REV, where the target itself counts (so a user
/// message on the current branch is kept, and only what follows it is summarized); context
/// edits among them applied, tool results left out, the newest messages kept within the
/// token budget (context window − branchSummary.reserveTokens). It then asks the model
/// with pi's exact system prompt and prompt (no output limit: the model's own; pi's
/// thinking level when the model reasons), and builds pi's summary: its preamble, the
/// model's text, and the `<read-files>` / `<modified-files>` lists.
///
/// `--dry-run` prints the request instead (no model); `--offline` writes a deterministic
/// summary from the entries in pi's section layout (marked `"generator":"pisces-offline"`
/// in `details`). `--append` writes the `branch_summary` entry as pi does: its parent is
/// the new leaf (TO_REV, or its parent when TO_REV is a user or custom message), `fromId`
/// = FROM_LEAF, `details {readFiles, modifiedFiles}`, `usage`, `fromHook:false`; one
/// whole line, appended under a lock. pi then resumes on the summary.
///
/// `--format json`: without --dry-run `{"version":1, "session", "fromId", "targetId",
/// "newLeafId", "entryIds", "summary", "details", "usage", "appended":{id, line, entry,
/// labelId?}|null}`; with --dry-run `{"version":1, "session", "oldLeafId", "oldLeafLine",
/// "targetId", "targetLine", "commonAncestorId", "commonAncestorLine", "newLeafId",
/// "entryIds", "contextWindow", "contextWindowSource", "reserveTokens", "tokenBudget",
/// "thinkingLevel", "prepared":{messages, messageCount, fileOps, totalTokens},
/// "fileLists":{readFiles, modifiedFiles}, "request":{systemPrompt, promptText,
/// messageCount, maxTokens, cacheRetention, reasoning}|null, "summaryTemplate"}` (the
/// names of pi-oracle's branch-entries.mjs; `summaryTemplate` has `<<LLM_OUTPUT>>` where
/// the model's text goes).
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Session file or session id (`-` only without --append).
    pub session: String,

    /// The leaf being left (pi's current leaf; `@` is the last entry of the file).
    pub from_leaf: String,

    /// Where to go: the target entry of the navigation.
    pub to_rev: String,

    /// Print what would be sent (entries, budget, prompt, token estimate); no model call.
    #[arg(long, conflicts_with_all = ["offline", "append"])]
    pub dry_run: bool,

    /// Summarize without a model: a deterministic summary from the entries.
    #[arg(long, conflicts_with = "model")]
    pub offline: bool,

    /// Write the branch_summary entry (one line, appended as pi does).
    #[arg(long)]
    pub append: bool,

    /// Custom instructions, as /tree's "Summarize with custom prompt" (added as
    /// "Additional focus: …").
    #[arg(long, value_name = "TEXT")]
    pub instructions: Option<String>,

    /// Use --instructions instead of pi's summary prompt, not in addition to it.
    #[arg(long, requires = "instructions")]
    pub replace_instructions: bool,

    /// branchSummary.reserveTokens [default: pi's settings, else 16384].
    #[arg(long, value_name = "N")]
    pub reserve_tokens: Option<u64>,

    /// With --append: also label the summary entry, as navigateTree's `label` option.
    #[arg(long, requires = "append", value_name = "NAME")]
    pub label: Option<String>,

    #[command(flatten)]
    pub model: ModelArgs,

    /// Append even if the file's last line is incomplete (ends it with a newline first).
    #[arg(long, requires = "append")]
    pub force: bool,

    /// Output format.
    #[arg(long, short, value_enum, default_value = "text")]
    pub format: Format,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    let choice = args.model.choice();
    if !args.dry_run && !args.offline && !choice.configured() {
        bail!("`summarize` needs a model (--model PROVIDER/ID), --offline (a summary without a model) or --dry-run (the request only)");
    }
    if let Some(l) = &args.label {
        if l.trim().is_empty() || l.contains(['\n', '\r']) {
            bail!("--label: a label is one non-empty line");
        }
    }
    let append_to = if args.append { Some(append_target(ctx, &args.session, "summarize --append")?) } else { None };
    let live = choice.configured() && !args.dry_run && !args.offline;
    // The configuration and the provider are made once, on the first read.
    let mut setup: Option<(PiConfig, Option<Box<dyn Provider>>)> = None;
    read_one(ctx, &args.session, |s, reading| {
        if append_to.is_some() {
            s.dialect().writer()?.check_append_of(s, crate::session::write::Appended::Summary)?;
        }
        let from = rev::resolve(s, &args.from_leaf).map_err(|e| anyhow::anyhow!("FROM_LEAF: {e}"))?;
        let target = rev::resolve(s, &args.to_rev).map_err(|e| anyhow::anyhow!("TO_REV: {e}"))?;
        let from_projection = s.dialect().project(s, Some(from))?;
        if setup.is_none() {
            let config = pi_config(ctx, s);
            let provider = if live { Some(open_provider(&choice, &config, &ctx.env)?) } else { None };
            setup = Some((config, provider));
        }
        let Some((config, provider)) = setup.as_ref() else { unreachable!("set just above") };
        let facts = ModelFacts::new(&choice, config, &from_projection, provider.as_deref());
        let reserve = args.reserve_tokens.unwrap_or_else(|| config.branch_summary().reserve_tokens);
        let plan = Plan::new(s, from, target, from_projection, facts.window, reserve)?;
        reading.start_output()?;
        write_out(&args, s, &plan, &facts, provider.as_deref(), append_to.as_deref())
    })
}

/// Everything after the plan: the dry run, or the summary (and its append).
fn write_out(
    args: &Args,
    s: &Session,
    plan: &Plan,
    facts: &ModelFacts,
    provider: Option<&dyn Provider>,
    append_to: Option<&std::path::Path>,
) -> anyhow::Result<ExitStatus> {
    let thinking = facts.reasoning(&plan.from_projection);
    let prompt = branch::prompt(&plan.prepared, args.instructions.as_deref(), args.replace_instructions);
    let window = (facts.window, facts.window_source.as_str());
    let mut out = BufWriter::new(std::io::stdout().lock());
    if args.dry_run {
        match args.format {
            Format::Json => {
                let doc = PlanDoc::of(s, plan, window, prompt.as_deref(), thinking.as_deref());
                serde_json::to_writer_pretty(&mut out, &doc)?;
                writeln!(out)?;
            }
            // Text is for people: all of it through the terminal filter.
            Format::Text => render::summarize::write_plan(
                &mut Safe::new(&mut out),
                s,
                plan,
                window,
                &args.to_rev,
                prompt.as_deref(),
                thinking.as_deref(),
            )?,
        }
        out.flush()?;
        return Ok(if plan.nothing() { ExitStatus::Finding } else { ExitStatus::Ok });
    }

    if plan.nothing() {
        let why = if plan.collected.same_entry() {
            "TO_REV is FROM_LEAF (pi: \"Already at this point\")".to_string()
        } else {
            format!("{} is on the path to {}", args.from_leaf, args.to_rev)
        };
        eprintln!("nothing to summarize: {}; nothing written", sanitize(&why));
        if args.format == Format::Json {
            serde_json::to_writer_pretty(&mut out, &SummaryDoc::of(s, plan, None, None))?;
            writeln!(out)?;
        }
        out.flush()?;
        return Ok(ExitStatus::Finding);
    }

    let made = branch::summarize(
        s,
        plan,
        prompt.as_deref().unwrap_or_default(),
        provider,
        thinking.as_deref(),
        &mut super::report_retry,
    )
    .map_err(SummaryError::nothing_written)?;
    let appended = match append_to {
        Some(path) => Some(branch::append_made(path, args.force, s, plan, &made, args.label.as_deref())?),
        None => None,
    };
    let doc = SummaryDoc::of(s, plan, Some(&made), appended.as_ref());
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &doc)?;
            writeln!(out)?;
        }
        Format::Text => render::summarize::write_summary(&mut out, &mut std::io::stderr().lock(), &doc)?,
    }
    out.flush()?;
    Ok(ExitStatus::Ok)
}
