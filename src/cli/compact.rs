//! `pisces compact SESSION [REV]`: pi's compaction of the path ending at REV.

use std::collections::BTreeSet;
use std::io::{BufWriter, Write};

use anyhow::{bail, Context};
use serde_json::{json, Value};

use super::summarize::{
    append_path, id_json, id_string, kind_name, open_provider, out_text, pi_config, refuse_old_format, ModelArgs,
    ModelFacts,
};
use super::{open_source, report_diagnostics, session_json, Ctx, ExitStatus};
use crate::llm::StreamEvent;
use crate::session::context::{self, Damaged, EditKind};
use crate::session::{rev, system, write, Session, Source};
use crate::summarize::compaction::{self, Plan, Preparation, Settings};
use crate::summarize::{entry, offline, prompts, SummaryError};

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
    pub format: super::summarize::Format,
}

use super::summarize::Format;

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    let dry_run = args.dry_run || (!args.offline && !args.model.configured());
    if args.append && dry_run {
        bail!("`compact --append` needs a summary: give --model PROVIDER/ID or --offline");
    }
    let append_to = if args.append { Some(append_path(ctx, &args.session, "compact")?) } else { None };
    let live = !dry_run && !args.offline;
    let source = open_source(ctx, &args.session)?;
    let rev_text = args.rev.clone().unwrap_or_else(|| "@".into());

    // A line that looked whole to the index may fail to parse whole: pi would have skipped
    // it, so read the file again treating it as malformed.
    let mut damaged = BTreeSet::new();
    let mut setup: Option<(crate::llm::PiConfig, Option<Box<dyn crate::llm::Provider>>)> = None;
    let (session, plan, facts) = loop {
        let session = Session::load_excluding(&source, &damaged)?;
        let leaf = rev::resolve(&session, &rev_text)?;
        let projection = match context::project(&session, Some(leaf)) {
            Ok(p) => p,
            Err(Damaged(lines)) => {
                damaged.extend(lines);
                continue;
            }
        };
        if setup.is_none() {
            let config = pi_config(&session);
            let provider = if live { Some(open_provider(&args.model, &config)?) } else { None };
            setup = Some((config, provider));
        }
        let (config, provider) = setup.as_ref().expect("set above");
        let facts = ModelFacts::new(&args.model, config, &projection, provider.as_deref());
        // pi's getCompactionSettings(model): the model's overrides, then the settings.
        let from_config = config.compaction(facts.spec.as_ref());
        let settings = Settings {
            reserve_tokens: args.reserve.unwrap_or(from_config.reserve_tokens),
            keep_recent_tokens: args.keep_recent.unwrap_or(from_config.keep_recent_tokens),
        };
        match compaction::plan(&session, leaf, projection, settings) {
            Ok(plan) => break (session, plan, facts),
            Err(Damaged(lines)) => damaged.extend(lines),
        }
    };
    let provider = setup.and_then(|(_, p)| p);
    report_diagnostics(ctx, &session)?;
    let s = &session;
    let thinking = facts.reasoning(&plan.projection);
    let custom = args.instructions.as_deref();
    let mut out = BufWriter::new(std::io::stdout().lock());

    if dry_run {
        let (window, window_source) = (facts.window, facts.window_source.as_str());
        match args.format {
            Format::Json => {
                let doc = plan_json(s, &plan, custom, thinking.as_deref());
                serde_json::to_writer_pretty(&mut out, &doc)?;
                writeln!(out)?;
            }
            Format::Text => write_plan(ctx, &mut out, s, &plan, custom, thinking.as_deref(), (window, window_source))?,
        }
        out.flush()?;
        return Ok(if plan.preparation.is_ok() { 0 } else { 1 });
    }

    let prep = match &plan.preparation {
        Ok(p) => p,
        Err(refusal) => {
            eprintln!("nothing to compact: {} (pi would not compact here); nothing written", refusal.message());
            return Ok(1);
        }
    };
    let mut generator = None;
    let (summary, usage) = match &provider {
        Some(provider) => {
            let mut on_event = |e: &StreamEvent| {
                if let StreamEvent::Retry { attempt, wait_ms, reason } = e {
                    eprintln!("retrying (attempt {attempt}) in {wait_ms} ms: {reason}");
                }
            };
            match compaction::compact(prep, provider.as_ref(), custom, thinking.as_deref(), &mut on_event) {
                Ok(c) => (c.summary, c.usage),
                Err(SummaryError::Aborted) => bail!("the summary request was aborted; nothing written"),
                Err(e) => return Err(e.into()),
            }
        }
        None => {
            generator = Some(offline::GENERATOR);
            (offline_summary(prep), None)
        }
    };
    let mut details = prep.details();
    if let Some(g) = generator {
        details["generator"] = g.into();
    }
    let first_kept = id_json(s, prep.first_kept_entry);

    let mut appended = Value::Null;
    if let Some(path) = &append_to {
        let leaf_id = id_string(s, plan.leaf)?;
        let was_last = s.default_leaf() == Some(plan.leaf);
        let system_message = system::current_system_message(&plan.projection.messages);
        let mut written = None;
        let result = write::append_locked(path, args.force, |bytes| {
            let source = Source::from_bytes(&path.display().to_string(), bytes.to_vec());
            let now = Session::load(&source)?;
            refuse_old_format(&now, path)?;
            if now.get(&leaf_id).is_none() {
                bail!("Entry {leaf_id} not found");
            }
            if was_last && now.default_leaf().and_then(|l| now.id(l)) != Some(leaf_id.as_str()) {
                bail!("the session grew while the summary was made (its last entry is no longer {leaf_id}); run compact again");
            }
            let id = write::new_entry_id(|id| now.get(id).is_some());
            let e = entry::compaction(
                &id,
                Some(&leaf_id),
                &write::now_iso(),
                &summary,
                first_kept.clone(),
                prep.tokens_before,
                details.clone(),
                usage.as_ref(),
                system_message.clone(),
            );
            let line = entry::line(&e);
            written = Some((id, e));
            Ok(vec![line])
        });
        let at = result.with_context(|| format!("could not append the compaction to {}", path.display()))?;
        let (id, e) = written.expect("set before writing");
        appended = json!({"id": id, "line": at.first_line, "entry": e});
    }

    match args.format {
        Format::Json => {
            let doc = json!({
                "version": 1,
                "session": session_json(s),
                "leafId": id_json(s, plan.leaf),
                "firstKeptEntryId": first_kept,
                "tokensBefore": crate::session::js::number(prep.tokens_before),
                "isSplitTurn": prep.is_split_turn,
                "summary": summary,
                "details": details,
                "usage": usage,
                "appended": appended,
            });
            serde_json::to_writer_pretty(&mut out, &doc)?;
            writeln!(out)?;
        }
        Format::Text => {
            writeln!(out, "{}", out_text(ctx, &summary))?;
            if let Some(id) = appended.get("id").and_then(Value::as_str) {
                out.flush()?;
                eprintln!(
                    "appended compaction {id} (line {}); the context now starts at {}",
                    appended["line"],
                    s.display_id(prep.first_kept_entry)
                );
            }
        }
    }
    out.flush()?;
    Ok(0)
}

/// The offline summary, assembled as `compact()` assembles a model's.
fn offline_summary(prep: &Preparation) -> String {
    let previous = prep.previous_summary.as_ref().and_then(Value::as_str);
    let requests = prep.requests(None);
    let history = requests
        .iter()
        .any(|r| r.kind == compaction::RequestKind::History)
        .then(|| offline::summarize(&prep.messages_to_summarize, previous));
    let prefix = prep.summarizes_prefix().then(|| offline::summarize_turn_prefix(&prep.turn_prefix_messages));
    prep.assemble(history.as_deref(), prefix.as_deref())
}

/// The plan as JSON, with pi-oracle compaction.mjs's field names.
fn plan_json(s: &Session, plan: &Plan, custom: Option<&str>, thinking: Option<&str>) -> Value {
    let line = |i: u32| s.entries[i as usize].line;
    let per_entry: Vec<Value> = plan
        .projection
        .entries
        .iter()
        .enumerate()
        .map(|(index, pe)| {
            let e = &s.entries[pe.entry as usize];
            let mut m = serde_json::Map::new();
            m.insert("index".into(), index.into());
            m.insert("id".into(), id_json(s, pe.entry));
            m.insert("line".into(), line(pe.entry).into());
            m.insert("type".into(), e.kind.name().into());
            if e.kind == crate::session::EntryType::Message {
                let msg = plan.projection.messages[pe.messages.clone()].first();
                let role = msg.and_then(|m| m.get("role")).cloned();
                m.insert("role".into(), role.unwrap_or_else(|| kind_name(e).into()));
            }
            let roles: Vec<Value> = plan.projection.messages[pe.messages.clone()]
                .iter()
                .map(|m| m.get("role").cloned().unwrap_or(Value::Null))
                .collect();
            m.insert("roles".into(), roles.into());
            m.insert("tokens".into(), plan.entry_tokens[index].into());
            m.insert(
                "edit".into(),
                match pe.edit {
                    Some((_, EditKind::Omit)) => "omit".into(),
                    Some((_, EditKind::Replace)) => "replace".into(),
                    None => Value::Null,
                },
            );
            Value::Object(m)
        })
        .collect();
    let mut doc = json!({
        "version": 1,
        "session": session_json(s),
        "leafId": id_json(s, plan.leaf),
        "leafLine": line(plan.leaf),
        "settings": {"enabled": true, "reserveTokens": plan.settings.reserve_tokens, "keepRecentTokens": plan.settings.keep_recent_tokens},
        "pathLength": plan.projection.path.len(),
        "projectionLength": plan.projection.entries.len(),
        "prevCompactionIndex": plan.prev_compaction_index.map_or(-1, |i| i as i64),
        "boundaryStart": plan.boundary_start,
        "firstKeptProjectedIndex": plan.preparation.as_ref().ok().map(|p| p.first_kept_index),
        "contextEstimate": plan.context_estimate.to_json(),
        "estimateTokens": per_entry,
        "preparation": null,
    });
    match &plan.preparation {
        Err(refusal) => {
            doc["preparationNote"] =
                format!("prepareCompaction returned undefined (pi: '{}')", refusal.message()).into();
        }
        Ok(p) => {
            let (read, modified) = p.file_lists();
            doc["preparation"] = json!({
                "firstKeptEntryId": id_json(s, p.first_kept_entry),
                "firstKeptEntryLine": line(p.first_kept_entry),
                "isSplitTurn": p.is_split_turn,
                "tokensBefore": crate::session::js::number(p.tokens_before),
                "messagesToSummarizeCount": p.messages_to_summarize.len(),
                "turnPrefixMessagesCount": p.turn_prefix_messages.len(),
                "previousSummary": p.previous_summary,
                "fileOps": p.file_ops.to_json(),
                "readFiles": read,
                "modifiedFiles": modified,
                "messagesToSummarize": p.messages_to_summarize,
                "turnPrefixMessages": p.turn_prefix_messages,
            });
            doc["requests"] = p
                .requests(custom)
                .into_iter()
                .map(|r| {
                    json!({
                        "kind": r.kind.name(),
                        "systemPrompt": prompts::SUMMARIZATION_SYSTEM_PROMPT,
                        "promptText": r.prompt,
                        "messageCount": 1,
                        "maxTokens": null,
                        "cacheRetention": "none",
                        "reasoning": thinking,
                    })
                })
                .collect::<Vec<_>>()
                .into();
            doc["summaryTemplate"] = p.summary_template().into();
        }
    }
    doc
}

fn write_plan(
    ctx: &Ctx,
    out: &mut impl Write,
    s: &Session,
    plan: &Plan,
    custom: Option<&str>,
    thinking: Option<&str>,
    (window, window_source): (u64, &str),
) -> anyhow::Result<()> {
    let short = |i: u32| s.display_id(i).into_owned();
    let est = &plan.context_estimate;
    writeln!(
        out,
        "Compaction of the path to {} (line {}), {} entries",
        short(plan.leaf),
        s.entries[plan.leaf as usize].line,
        plan.projection.path.len()
    )?;
    writeln!(
        out,
        "Settings: keepRecentTokens {}, reserveTokens {}; context window {window} [{window_source}]",
        plan.settings.keep_recent_tokens, plan.settings.reserve_tokens
    )?;
    let how = if est.last_usage_index.is_some() {
        format!("the last reply's usage {} + {} estimated after it", est.usage_tokens, est.trailing_tokens)
    } else {
        "estimated, characters / 4".to_string()
    };
    writeln!(out, "tokensBefore: {} ({how})", est.tokens)?;
    if let Some(p) = plan.prev_compaction_index {
        let e = plan.projection.entries[p].entry;
        writeln!(
            out,
            "Previous compaction: {} (line {}); its summary is updated",
            short(e),
            s.entries[e as usize].line
        )?;
    }
    let prep = match &plan.preparation {
        Err(refusal) => {
            writeln!(out, "pi would not compact: {}", refusal.message())?;
            return Ok(());
        }
        Ok(p) => p,
    };
    let fk = prep.first_kept_entry;
    writeln!(
        out,
        "First kept entry: {} (line {}, {})",
        short(fk),
        s.entries[fk as usize].line,
        kind_name(&s.entries[fk as usize])
    )?;
    match prep.turn_start_index {
        Some(t) if prep.is_split_turn => {
            let e = plan.projection.entries[t].entry;
            writeln!(
                out,
                "Split turn: yes; the turn starts at {} (line {}), its start is summarized apart",
                short(e),
                s.entries[e as usize].line
            )?;
        }
        _ => writeln!(out, "Split turn: no")?,
    }
    writeln!(
        out,
        "Summarized: {} messages of history, {} of the turn prefix",
        prep.messages_to_summarize.len(),
        prep.turn_prefix_messages.len()
    )?;
    let (read, modified) = prep.file_lists();
    if !read.is_empty() || !modified.is_empty() {
        writeln!(out, "Files: read {}; modified {}", join(&read), join(&modified))?;
    }
    writeln!(out, "Thinking level: {}", thinking.unwrap_or("off (none sent)"))?;
    writeln!(out, "\n── system prompt ──\n{}", prompts::SUMMARIZATION_SYSTEM_PROMPT)?;
    for (n, r) in prep.requests(custom).iter().enumerate() {
        let tokens = r.prompt.chars().map(char::len_utf16).sum::<usize>().div_ceil(4);
        writeln!(out, "\n── request {}: {} (~{tokens} tokens) ──\n{}", n + 1, r.kind.name(), out_text(ctx, &r.prompt))?;
    }
    Ok(())
}

fn join(v: &[String]) -> String {
    if v.is_empty() {
        "(none)".into()
    } else {
        v.join(", ")
    }
}
