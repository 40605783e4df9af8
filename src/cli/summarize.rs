//! `pisces summarize SESSION FROM_LEAF TO_REV`: pi's `/tree` summarize, from the leaf
//! FROM_LEAF to the target TO_REV.

use std::io::{BufWriter, Write};

use anyhow::bail;
use serde_json::{json, Value};

use super::{append_target, pi_config, read_one, session_json, Ctx, ExitStatus, ModelArgs};
use crate::llm::{PiConfig, Provider, StreamEvent};
use crate::render::{sanitize, Safe};
use crate::session::projection::Projection;
use crate::session::{js, rev, EntryIdx, Session};
use crate::summarize::branch::{self, Collected, NewLeaf, Prepared};
use crate::summarize::model::{open_provider, ModelFacts};
use crate::summarize::{offline, prompts, SummaryError};

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For people (the summary, or the plan and prompt).
    Text,
    /// One versioned JSON object.
    Json,
}

/// What the entries give after loading: the whole plan.
struct Plan {
    from: EntryIdx,
    target: EntryIdx,
    from_projection: Projection,
    collected: Collected,
    prepared: Prepared,
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
            s.dialect().writer()?.check_append(s)?;
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
        let budget = facts.window as i64 - reserve as i64;
        let collected = branch::collect(s, from, target);
        let entries = if collected.same_entry() { &[][..] } else { &collected.entries[..] };
        let prepared = branch::prepare(s, entries, budget)?;
        let plan = Plan { from, target, from_projection, collected, prepared };
        reading.start_output()?;
        write_out(&args, s, &plan, &facts, reserve, budget, provider.as_deref(), append_to.as_deref())
    })
}

/// Everything after the plan: the dry run, or the summary (and its append).
#[allow(clippy::too_many_arguments)]
fn write_out(
    args: &Args,
    s: &Session,
    plan: &Plan,
    facts: &ModelFacts,
    reserve: u64,
    budget: i64,
    provider: Option<&dyn Provider>,
    append_to: Option<&std::path::Path>,
) -> anyhow::Result<ExitStatus> {
    let (window, window_source) = (facts.window, facts.window_source.clone());
    let thinking = facts.reasoning(&plan.from_projection);
    let prompt = branch::prompt(&plan.prepared, args.instructions.as_deref(), args.replace_instructions);
    let nothing = plan.collected.same_entry() || plan.collected.entries.is_empty();
    let new_leaf_json = match &plan.collected.new_leaf {
        NewLeaf::Entry(i) => s.id_value(*i),
        NewLeaf::Root => Value::Null,
        NewLeaf::Missing(id) => Value::from(id.as_str()),
    };
    let entry_ids: Vec<Value> = if plan.collected.same_entry() {
        vec![]
    } else {
        plan.collected.entries.iter().map(|&i| s.id_value(i)).collect()
    };
    // Text is for people: all of it through the terminal filter; JSON keeps its bytes.
    let mut out: Box<dyn Write> = match args.format {
        Format::Text => Box::new(Safe::new(BufWriter::new(std::io::stdout().lock()))),
        Format::Json => Box::new(BufWriter::new(std::io::stdout().lock())),
    };

    if args.dry_run {
        let (read, modified) = plan.prepared.file_ops.file_lists();
        // What generateBranchSummary returns for these entries (pi does not call it when
        // there are none: navigateTree then writes nothing).
        let template = if plan.prepared.messages.is_empty() {
            Some(branch::NO_CONTENT.to_string())
        } else {
            Some(branch::summary_from_text(&plan.prepared, "<<LLM_OUTPUT>>", None).summary)
        };
        match args.format {
            Format::Json => {
                let line = |i: Option<EntryIdx>| i.map(|i| s.entries[i].line);
                let doc = json!({
                    "version": 1,
                    "session": session_json(s),
                    "oldLeafId": s.id_value(plan.from),
                    "oldLeafLine": line(Some(plan.from)),
                    "targetId": s.id_value(plan.target),
                    "targetLine": line(Some(plan.target)),
                    "commonAncestorId": plan.collected.common_ancestor.map_or(Value::Null, |i| s.id_value(i)),
                    "commonAncestorLine": line(plan.collected.common_ancestor),
                    "newLeafId": new_leaf_json,
                    "entryIds": entry_ids,
                    "contextWindow": window,
                    "contextWindowSource": window_source,
                    "reserveTokens": reserve,
                    "tokenBudget": budget,
                    "thinkingLevel": plan.from_projection.thinking_level,
                    "prepared": {
                        "messages": plan.prepared.messages,
                        "messageCount": plan.prepared.messages.len(),
                        "fileOps": plan.prepared.file_ops.to_json(),
                        "totalTokens": plan.prepared.total_tokens,
                    },
                    "fileLists": {"readFiles": read, "modifiedFiles": modified},
                    "request": prompt.as_ref().filter(|_| !nothing).map(|p| json!({
                        "systemPrompt": prompts::SUMMARIZATION_SYSTEM_PROMPT,
                        "promptText": p,
                        "messageCount": 1,
                        "maxTokens": null,
                        "cacheRetention": "none",
                        "reasoning": thinking,
                    })),
                    "summaryTemplate": template,
                });
                serde_json::to_writer_pretty(&mut out, &doc)?;
                writeln!(out)?;
            }
            Format::Text => {
                let short = |i: EntryIdx| s.display_id(i).into_owned();
                let from = short(plan.from);
                if plan.collected.same_entry() {
                    writeln!(
                        out,
                        "Nothing to summarize: {} is FROM_LEAF itself (pi: \"Already at this point\").",
                        args.to_rev
                    )?;
                } else if plan.collected.entries.is_empty() {
                    writeln!(
                        out,
                        "Nothing to summarize: {from} is on the path to {} (pi moves the leaf and writes nothing).",
                        short(plan.target)
                    )?;
                } else {
                    let ancestor = plan
                        .collected
                        .common_ancestor
                        .map_or("the root".to_string(), |a| format!("{} (line {})", short(a), s.entries[a].line));
                    writeln!(
                        out,
                        "Summarize {} entries, from {from} back to the common ancestor {ancestor}:",
                        plan.collected.entries.len()
                    )?;
                    for &i in &plan.collected.entries {
                        let e = &s.entries[i];
                        writeln!(out, "  {:>6}  line {:<6} {}", short(i), e.line, e.kind_label())?;
                    }
                    let leaf = match &plan.collected.new_leaf {
                        NewLeaf::Entry(i) => format!("{} (line {})", short(*i), s.entries[*i].line),
                        NewLeaf::Root => "none (a new root)".into(),
                        NewLeaf::Missing(id) => format!("{id} (missing: pi would refuse)"),
                    };
                    writeln!(out, "The summary's parent (pi's new leaf): {leaf}")?;
                    writeln!(
                        out,
                        "Budget: {budget} tokens (context window {window} [{window_source}] − reserve {reserve}); {} of the messages fit, ~{} tokens",
                        plan.prepared.messages.len(),
                        plan.prepared.total_tokens
                    )?;
                    if !read.is_empty() || !modified.is_empty() {
                        writeln!(out, "Files: read {}; modified {}", list_or_none(&read), list_or_none(&modified))?;
                    }
                    match &prompt {
                        None => writeln!(
                            out,
                            "No message to summarize: pi stores \"{}\" without calling a model.",
                            branch::NO_CONTENT
                        )?,
                        Some(p) => {
                            writeln!(out, "Thinking level: {}", thinking.as_deref().unwrap_or("off (none sent)"))?;
                            writeln!(out, "\n── system prompt ──\n{}", prompts::SUMMARIZATION_SYSTEM_PROMPT)?;
                            writeln!(
                                out,
                                "\n── prompt (~{} tokens) ──\n{}",
                                p.chars().map(char::len_utf16).sum::<usize>().div_ceil(4),
                                sanitize(p)
                            )?;
                        }
                    }
                }
            }
        }
        out.flush()?;
        return Ok(if nothing { ExitStatus::Finding } else { ExitStatus::Ok });
    }

    if nothing {
        let why = if plan.collected.same_entry() {
            "TO_REV is FROM_LEAF (pi: \"Already at this point\")".to_string()
        } else {
            format!("{} is on the path to {}", args.from_leaf, args.to_rev)
        };
        eprintln!("nothing to summarize: {why}; nothing written");
        if args.format == Format::Json {
            let doc = json!({"version": 1, "session": session_json(s), "fromId": s.id_value(plan.from),
                "targetId": s.id_value(plan.target), "newLeafId": new_leaf_json, "entryIds": entry_ids,
                "summary": null, "details": null, "usage": null, "appended": null});
            serde_json::to_writer_pretty(&mut out, &doc)?;
            writeln!(out)?;
        }
        out.flush()?;
        return Ok(ExitStatus::Finding);
    }

    // The summary.
    let mut generator = None;
    let summary = if plan.prepared.messages.is_empty() {
        branch::empty_summary()
    } else if let Some(provider) = provider {
        let mut on_event = |e: &StreamEvent| {
            if let StreamEvent::Retry { attempt, wait_ms, reason } = e {
                eprintln!("retrying (attempt {attempt}) in {wait_ms} ms: {reason}");
            }
        };
        let reply = crate::summarize::complete(
            provider,
            prompt.as_deref().unwrap_or_default(),
            thinking.as_deref(),
            &mut on_event,
        )
        .map_err(SummaryError::from)?;
        match branch::summary_from_reply(&plan.prepared, &reply) {
            Ok(summary) => summary,
            Err(SummaryError::Aborted) => bail!("the summary request was aborted; nothing written"),
            Err(e) => return Err(e.into()),
        }
    } else {
        generator = Some(offline::GENERATOR);
        let messages = branch::context_messages(s, &plan.collected.entries)?;
        let text = offline::summarize(&messages, None);
        branch::summary_from_text(&plan.prepared, &text, None)
    };
    let mut details = json!({"readFiles": summary.read_files, "modifiedFiles": summary.modified_files});
    if let Some(g) = generator {
        details["generator"] = g.into();
    }

    let mut appended = Value::Null;
    if let Some(path) = append_to {
        let from_id = s.named_id(plan.from)?.to_string();
        let parent = match &plan.collected.new_leaf {
            NewLeaf::Entry(i) => Some(s.named_id(*i)?.to_string()),
            NewLeaf::Root => None,
            NewLeaf::Missing(id) => {
                bail!("Entry {id} not found (the parent of {}); pi would refuse to write the summary", args.to_rev)
            }
        };
        let done = branch::append(
            path,
            args.force,
            parent.as_deref(),
            &from_id,
            &summary,
            details.clone(),
            args.label.as_deref(),
        )?;
        let (id, e, label_id) = (done.id, done.entry, done.label_id);
        appended = json!({"id": id, "line": done.line, "entry": e});
        if let Some(l) = label_id {
            appended["labelId"] = l.into();
        }
    }

    match args.format {
        Format::Json => {
            let doc = json!({
                "version": 1,
                "session": session_json(s),
                "fromId": s.id_value(plan.from),
                "targetId": s.id_value(plan.target),
                "newLeafId": new_leaf_json,
                "entryIds": entry_ids,
                "summary": summary.summary,
                "details": details,
                "usage": summary.usage,
                "appended": appended,
            });
            serde_json::to_writer_pretty(&mut out, &doc)?;
            writeln!(out)?;
        }
        Format::Text => {
            writeln!(out, "{}", sanitize(&summary.summary))?;
            if let Some(id) = appended.get("id").and_then(Value::as_str) {
                out.flush()?;
                eprintln!(
                    "appended branch_summary {id} (line {}) under {}; pi resumes there",
                    appended["line"],
                    js::to_js_string(Some(&new_leaf_json))
                );
            }
        }
    }
    out.flush()?;
    Ok(ExitStatus::Ok)
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "(none)".into()
    } else {
        v.join(", ")
    }
}
