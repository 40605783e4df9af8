//! `pisces compact SESSION [REV]`: pi's compaction of the path ending at REV.

use std::io::{BufWriter, Write};

use anyhow::bail;

use super::TextOrJson as Format;
use super::{append_target, pi_config, read_one, Ctx, ExitStatus, ModelArgs};
use crate::render::compact::{CompactDoc, PlanDoc};
use crate::render::{self, Safe};
use crate::session::{rev, Session};
use crate::summarize::compaction::{self, Plan, Settings};
use crate::summarize::model::{open_provider, ModelFacts};
use crate::summarize::SummaryError;

const EXAMPLES: &str = "\
Examples:
  pisces compact session.jsonl                      # the plan at pi's current leaf (no model)
  pisces compact session.jsonl --keep-recent 5000   # keep less of the recent context
  pisces compact session.jsonl --offline            # a compaction summary without a model
  pisces compact session.jsonl --offline --append   # write it; pi resumes from the summary
  pisces compact session.jsonl fix-1 --model anthropic/claude-sonnet-4-5 --append
  pisces compact session.jsonl --format json | jq .requests[].promptText

Exit status: 0 when a compaction was made (or planned), 1 when pi would not compact
(\"Already compacted\", \"Nothing to compact (session too small)\"), 2 on trouble.";

/// Compact the path ending at REV as pi's /compact does (or plan it: the default
/// without a model).
///
/// Runs pi 1.6.0's prepareCompaction on the path's projection: from the previous
/// compaction's kept entries (or the start), it keeps the newest keepRecentTokens
/// (estimated as pi does: characters / 4) and cuts at a valid cut point (never a tool
/// result), taking in the metadata just before it; a cut inside a turn splits it, and the
/// turn's start is summarized apart. tokensBefore is pi's estimate of the context. The
/// history prompt (pi's update prompt and `<previous-summary>` when there is a previous
/// compaction) and the turn-prefix prompt are pi's, byte for byte; file operations carry
/// over from the previous compaction.
///
/// Without a model (and without --offline), or with `--dry-run`, it prints that plan:
/// the first kept entry, whether the turn is split, tokensBefore, the messages summarized,
/// the prompts. With a model or `--offline` it makes the summary (offline: a deterministic
/// one in pi's layout, `"generator":"pisces-offline"` in `details`), and `--append` writes
/// pi's `compaction` entry as a child of REV: `summary`, `firstKeptEntryId`,
/// `tokensBefore`, `details {readFiles, modifiedFiles}`, `usage`, `fromHook:false` and the
/// `systemMessage` checkpoint (the replay of the path's system messages). `pisces path`
/// and pi then show the compacted context.
///
/// Settings: `--keep-recent` and `--reserve`, else pi's settings file
/// ($PI_CODING_AGENT_DIR/settings.json or ~/.pi/agent/settings.json: `compaction`, with
/// `modelOverrides` for the model), else 20000 and 16384.
///
/// `--format json` (plan): `{"version":1, "session", "leafId", "leafLine", "settings",
/// "pathLength", "projectionLength", "prevCompactionIndex", "boundaryStart",
/// "firstKeptProjectedIndex", "contextEstimate", "estimateTokens":[{index, id, line, type,
/// role?, roles, tokens, edit}], "preparation":{firstKeptEntryId, firstKeptEntryLine,
/// isSplitTurn, tokensBefore, messagesToSummarizeCount, turnPrefixMessagesCount,
/// previousSummary, fileOps, readFiles, modifiedFiles, messagesToSummarize,
/// turnPrefixMessages}|null, "preparationNote"?, "requests":[{kind, systemPrompt,
/// promptText, messageCount, maxTokens, cacheRetention, reasoning}], "summaryTemplate"}`
/// (pi-oracle compaction.mjs's names); with a summary: `{"version":1, "session",
/// "leafId", "firstKeptEntryId", "tokensBefore", "isSplitTurn", "summary", "details",
/// "usage", "appended":{id, line, entry}|null}`.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Session file or session id (`-` only without --append).
    pub session: String,

    /// The leaf whose path is compacted [default: @, pi's current leaf].
    pub rev: Option<String>,

    /// compaction.keepRecentTokens: how much recent context stays as it is.
    #[arg(long, value_name = "N")]
    pub keep_recent: Option<u64>,

    /// compaction.reserveTokens (reported; pi uses it to decide when to compact by itself).
    #[arg(long, value_name = "N")]
    pub reserve: Option<u64>,

    /// Print the plan and the prompts; no model call (the default without a model).
    #[arg(long, conflicts_with_all = ["offline", "append"])]
    pub dry_run: bool,

    /// Summarize without a model: a deterministic summary from the entries.
    #[arg(long, conflicts_with = "model")]
    pub offline: bool,

    /// Write the compaction entry (one line, appended as pi does).
    #[arg(long)]
    pub append: bool,

    /// Custom instructions, as `/compact TEXT` (added as "Additional focus: …").
    #[arg(long, value_name = "TEXT")]
    pub instructions: Option<String>,

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
    let dry_run = args.dry_run || (!args.offline && !choice.configured());
    if args.append && dry_run {
        bail!("`compact --append` needs a summary: give --model PROVIDER/ID or --offline");
    }
    let append_to = if args.append { Some(append_target(ctx, &args.session, "compact --append")?) } else { None };
    let live = !dry_run && !args.offline;
    let rev_text = args.rev.clone().unwrap_or_else(|| "@".into());
    // The configuration and the provider are made once, on the first read.
    let mut setup: Option<(crate::llm::PiConfig, Option<Box<dyn crate::llm::Provider>>)> = None;
    read_one(ctx, &args.session, |s, reading| {
        if append_to.is_some() {
            s.dialect().writer()?.check_append_of(s, crate::session::write::Appended::Summary)?;
        }
        let leaf = rev::resolve(s, &rev_text)?;
        let projection = s.dialect().project(s, Some(leaf))?;
        if setup.is_none() {
            let config = pi_config(ctx, s);
            let provider = if live { Some(open_provider(&choice, &config, &ctx.env)?) } else { None };
            setup = Some((config, provider));
        }
        let Some((config, provider)) = setup.as_ref() else { unreachable!("set just above") };
        let facts = ModelFacts::new(&choice, config, &projection, provider.as_deref());
        // pi's getCompactionSettings(model): the model's overrides, then the settings.
        let from_config = config.compaction(facts.spec.as_ref());
        let settings = Settings {
            reserve_tokens: args.reserve.unwrap_or(from_config.reserve_tokens),
            keep_recent_tokens: args.keep_recent.unwrap_or(from_config.keep_recent_tokens),
        };
        let plan = compaction::plan(s, leaf, projection, settings)?;
        reading.start_output()?;
        if dry_run {
            return write_dry_run(&args, s, &plan, &facts);
        }
        write_out(&args, s, &plan, &facts, provider.as_deref(), append_to.as_deref())
    })
}

/// `--dry-run`: the plan, and what would be sent.
fn write_dry_run(args: &Args, s: &Session, plan: &Plan, facts: &ModelFacts) -> anyhow::Result<ExitStatus> {
    let thinking = facts.reasoning(&plan.projection);
    let custom = args.instructions.as_deref();
    let mut out = BufWriter::new(std::io::stdout().lock());
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &PlanDoc::of(s, plan, custom, thinking.as_deref()))?;
            writeln!(out)?;
        }
        Format::Text => {
            // Plain text for people: all of it through the terminal filter.
            let window = (facts.window, facts.window_source.as_str());
            render::compact::write_plan(&mut Safe::new(&mut out), s, plan, custom, thinking.as_deref(), window)?;
        }
    }
    out.flush()?;
    Ok(if plan.preparation.is_ok() { ExitStatus::Ok } else { ExitStatus::Finding })
}

/// The summary, appended as a compaction entry with `--append`.
fn write_out(
    args: &Args,
    s: &Session,
    plan: &Plan,
    facts: &ModelFacts,
    provider: Option<&dyn crate::llm::Provider>,
    append_to: Option<&std::path::Path>,
) -> anyhow::Result<ExitStatus> {
    let prep = match &plan.preparation {
        Ok(p) => p,
        Err(refusal) => {
            eprintln!(
                "nothing to compact: {} (pi would not compact here); nothing written",
                render::sanitize(refusal.message())
            );
            return Ok(ExitStatus::Finding);
        }
    };
    let thinking = facts.reasoning(&plan.projection);
    let made = compaction::summarize(prep, provider, args.instructions.as_deref(), thinking.as_deref(), &mut |e| {
        super::report_retry(e)
    })
    .map_err(SummaryError::nothing_written)?;
    let appended = match append_to {
        Some(path) => Some(compaction::append(path, args.force, s, plan, prep, &made)?),
        None => None,
    };
    let doc = CompactDoc::of(s, plan, prep, &made, appended.as_ref());
    let mut out = BufWriter::new(std::io::stdout().lock());
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &doc)?;
            writeln!(out)?;
        }
        Format::Text => render::compact::write_summary(
            &mut out,
            &mut std::io::stderr().lock(),
            &doc,
            &s.display_id(prep.first_kept_entry),
        )?,
    }
    out.flush()?;
    Ok(ExitStatus::Ok)
}
