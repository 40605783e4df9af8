//! `pisces summarize SESSION FROM_LEAF TO_REV`: pi's `/tree` summarize, from the leaf
//! FROM_LEAF to the target TO_REV. Also the model options `compact` shares.

use std::collections::BTreeSet;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::bail;
use serde_json::{json, Value};

use super::{open_source, report_diagnostics, session_json, Ctx, ExitStatus};
use crate::llm::{self, LlmError, ModelInfo, ModelSpec, PiConfig, Provider, ProviderOptions, Request, StreamEvent};
use crate::render::sanitize;
use crate::session::context::{self, Damaged, Projection};
use crate::session::locate::{locate, SessionArg};
use crate::session::{js, rev, Session};
use crate::summarize::branch::{self, Collected, NewLeaf, Prepared};
use crate::summarize::{models, offline, prompts, SummaryError};

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

/// The model options of `summarize` and `compact`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ModelArgs {
    /// The model to summarize with, as pi names it (`anthropic/claude-sonnet-4-5`).
    #[arg(long, value_name = "PROVIDER/ID")]
    pub model: Option<String>,

    /// The provider's API base URL (an OpenAI-compatible server, a proxy).
    #[arg(long, value_name = "URL", requires = "model")]
    pub base_url: Option<String>,

    /// The environment variable holding the API key [default: the provider's usual one].
    #[arg(long, value_name = "VAR", requires = "model")]
    pub api_key_env: Option<String>,

    /// The model's context window in tokens [default: pi's catalog, else 128000].
    #[arg(long, value_name = "N")]
    pub context_window: Option<u64>,

    /// Testing: a scripted model that answers every request with TEXT (`{kind}` becomes
    /// `history`, `turnPrefix` or `branch`), with zero usage.
    #[arg(long, hide = true, value_name = "TEXT", conflicts_with = "model")]
    pub scripted_reply: Option<String>,
}

impl ModelArgs {
    /// Whether a model (or the scripted one) is configured.
    pub fn configured(&self) -> bool {
        self.model.is_some() || self.scripted_reply.is_some()
    }
}

/// Opens the model given by `--model` (or the scripted one), with pi's configuration
/// (`models.json`, keys, retry and timeout settings).
pub fn open_provider(args: &ModelArgs, config: &PiConfig) -> anyhow::Result<Box<dyn Provider>> {
    if let Some(reply) = &args.scripted_reply {
        return Ok(Box::new(Scripted {
            spec: ModelSpec { provider: "pisces".into(), id: "scripted".into() },
            reply: reply.clone(),
            window: args.context_window,
        }));
    }
    let opts =
        provider_options(args, config).ok_or_else(|| anyhow::anyhow!("no model given (--model PROVIDER/ID)"))??;
    Ok(llm::open_provider(&opts)?)
}

/// `--model` and the options that go with it, as the providers take them.
fn provider_options(args: &ModelArgs, config: &PiConfig) -> Option<anyhow::Result<ProviderOptions>> {
    let name = args.model.as_deref()?;
    let Some(spec) = ModelSpec::parse(name) else {
        return Some(Err(anyhow::anyhow!(
            "--model {name}: expected PROVIDER/ID, for example anthropic/claude-sonnet-4-5"
        )));
    };
    Some(Ok(ProviderOptions {
        base_url: args.base_url.clone(),
        api_key_env: args.api_key_env.clone(),
        context_window: args.context_window,
        ..ProviderOptions::from_config(spec, config.clone())
    }))
}

/// A model that answers every request with a fixed text (for tests and demonstrations).
struct Scripted {
    spec: ModelSpec,
    reply: String,
    window: Option<u64>,
}

impl Provider for Scripted {
    fn model(&self) -> &ModelSpec {
        &self.spec
    }

    fn context_window(&self) -> Option<u64> {
        self.window
    }

    fn complete(&self, request: &Request, _events: &mut dyn FnMut(&StreamEvent)) -> Result<Value, LlmError> {
        let prompt = request
            .messages
            .last()
            .map(|m| crate::summarize::text::content_text(m.get("content"), ""))
            .unwrap_or_default();
        let kind = if prompt
            .contains("\n# Instructions\nThe messages above are earlier context from an ongoing conversation")
        {
            "turnPrefix"
        } else if prompt.ends_with(prompts::BRANCH_SUMMARY_PROMPT)
            || prompt.contains("\n\nCreate a structured summary of this conversation branch")
        {
            "branch"
        } else {
            "history"
        };
        let now =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        Ok(json!({
            "role": "assistant",
            "content": [{"type": "text", "text": self.reply.replace("{kind}", kind)}],
            "api": "pisces-scripted", "provider": self.spec.provider, "model": self.spec.id,
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": "stop", "timestamp": now,
        }))
    }
}

/// pi's configuration as pi would read it for this session: `models.json` and
/// `settings.json` from pi's agent directory, merged with the project's
/// `.pi/settings.json` (the session's `cwd` when it exists here, else the current
/// directory). Problems with the files are reported on stderr.
pub fn pi_config(session: &Session) -> PiConfig {
    let cwd = session.header.get("cwd").and_then(Value::as_str).map(PathBuf::from).filter(|p| p.is_dir());
    let config = match cwd.or_else(|| std::env::current_dir().ok()) {
        Some(dir) => PiConfig::load(&dir),
        None => PiConfig::load_from(PiConfig::default_agent_dir().as_deref(), None),
    };
    for p in &config.problems {
        eprintln!("warning: {p}");
    }
    config
}

/// What the summarizing model is, as far as a summary depends on it.
pub struct ModelFacts {
    /// `--model`, else the session's model at the leaf (what pi would summarize with).
    pub spec: Option<ModelSpec>,
    /// The context window (for the branch budget) and where it came from.
    pub window: u64,
    pub window_source: String,
    /// The model as pisces' providers resolve it (catalog, `models.json`), when known.
    info: Option<ModelInfo>,
    /// Whether it reasons, from pi-ai's full catalog, when the providers do not know it.
    reasons: Option<bool>,
}

impl ModelFacts {
    /// pi's precedence: `--context-window`, the opened model, `models.json` and the
    /// catalog, pi-ai's built-in models, else 128000.
    pub fn new(
        args: &ModelArgs,
        config: &PiConfig,
        projection: &Projection,
        provider: Option<&dyn Provider>,
    ) -> ModelFacts {
        let spec = args.model.as_deref().and_then(ModelSpec::parse).or_else(|| {
            let m = projection.model.as_ref()?;
            let s = |k| m.get(k).and_then(Value::as_str).map(str::to_string);
            Some(ModelSpec { provider: s("provider")?, id: s("modelId")? })
        });
        let info = spec.as_ref().and_then(|spec| {
            let opts = ProviderOptions {
                base_url: args.base_url.clone(),
                context_window: args.context_window,
                ..ProviderOptions::from_config(spec.clone(), config.clone())
            };
            llm::describe_model(&opts).ok().filter(|i| i.known)
        });
        let builtin = spec.as_ref().and_then(|s| models::lookup(&s.provider, &s.id));
        let name = spec.as_ref().map(|s| format!("{}/{}", s.provider, s.id));
        let (window, window_source) = if let Some(w) = args.context_window {
            (w, "--context-window".to_string())
        } else if let Some(w) = provider.and_then(|p| p.context_window()) {
            (w, format!("the model {}", name.clone().unwrap_or_default()))
        } else if let Some(w) = info.as_ref().and_then(|i| i.context_window) {
            (w, format!("{} (catalog or models.json)", name.clone().unwrap_or_default()))
        } else if let Some(k) = builtin {
            (k.context_window, format!("pi-ai builtin {}", name.clone().unwrap_or_default()))
        } else {
            let why = name.map(|n| format!(": {n} is not a pi-ai builtin model")).unwrap_or_default();
            (models::DEFAULT_CONTEXT_WINDOW, format!("default(128000){why}"))
        };
        ModelFacts { spec, window, window_source, info, reasons: builtin.map(|k| k.reasoning) }
    }

    /// The thinking level pi passes (`reasoning`): the session's level when it is not `off`
    /// and the model reasons (clamped to what it supports, when pisces knows the model;
    /// an unknown model gets the level, and its provider decides).
    pub fn reasoning(&self, projection: &Projection) -> Option<String> {
        let level = projection.thinking_level.as_ref().and_then(Value::as_str).filter(|l| *l != "off")?;
        match (&self.info, self.reasons) {
            (Some(info), _) => info.effective_thinking_level(Some(level)).map(str::to_string),
            (None, Some(false)) => None,
            _ => Some(level.to_string()),
        }
    }
}

/// An entry's id as pi prints it in JSON.
pub fn id_json(s: &Session, i: u32) -> Value {
    s.id_value(i)
}

/// Entry `i`'s id, as a string pi can name it by (refusing entries without one).
pub fn id_string(s: &Session, i: u32) -> anyhow::Result<String> {
    match s.id(i) {
        Some(id) if !id.starts_with('\0') => Ok(id.to_string()),
        _ => bail!("line {} has no id pi could name", s.entries[i as usize].line),
    }
}

/// The file a session argument names, for appending.
pub fn append_path(ctx: &Ctx, arg: &str, what: &str) -> anyhow::Result<PathBuf> {
    match locate(arg, &ctx.search)? {
        SessionArg::Stdin => bail!("`{what} --append` appends to a session file; it cannot write to standard input"),
        SessionArg::Path(p) => Ok(p),
    }
}

/// Refuses files pi would rewrite before appending (version 1 and 2).
pub fn refuse_old_format(session: &Session, path: &std::path::Path) -> anyhow::Result<()> {
    if session.migrate_v1 || session.migrate_v2 {
        bail!(
            "{}: a version-{} session; pi rewrites such a file in the current format when it opens it, and pisces does not append to it unmigrated",
            path.display(),
            session.version
        );
    }
    Ok(())
}

/// Text for a terminal (sanitized) or a pipe (as is).
pub fn out_text<'t>(ctx: &Ctx, text: &'t str) -> std::borrow::Cow<'t, str> {
    if ctx.ui.stdout_tty {
        sanitize(text)
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// What the entries give after loading: the whole plan.
struct Plan<'a> {
    session: Session<'a>,
    from: u32,
    target: u32,
    from_projection: Projection,
    collected: Collected,
    prepared: Prepared,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitStatus> {
    if !args.dry_run && !args.offline && !args.model.configured() {
        bail!("`summarize` needs a model (--model PROVIDER/ID), --offline (a summary without a model) or --dry-run (the request only)");
    }
    if let Some(l) = &args.label {
        if l.trim().is_empty() || l.contains(['\n', '\r']) {
            bail!("--label: a label is one non-empty line");
        }
    }
    let append_to = if args.append { Some(append_path(ctx, &args.session, "summarize")?) } else { None };
    let live = args.model.configured() && !args.dry_run && !args.offline;
    let source = open_source(ctx, &args.session)?;

    // A line that looked whole to the index may fail to parse whole: pi would have skipped
    // it, so read the file again treating it as malformed.
    let mut damaged = BTreeSet::new();
    let mut setup: Option<(PiConfig, Option<Box<dyn Provider>>)> = None;
    let (plan, facts, reserve, budget) = loop {
        let session = Session::load_excluding(&source, &damaged)?;
        let from = rev::resolve(&session, &args.from_leaf).map_err(|e| anyhow::anyhow!("FROM_LEAF: {e}"))?;
        let target = rev::resolve(&session, &args.to_rev).map_err(|e| anyhow::anyhow!("TO_REV: {e}"))?;
        let from_projection = match context::project(&session, Some(from)) {
            Ok(p) => p,
            Err(Damaged(lines)) => {
                damaged.extend(lines);
                continue;
            }
        };
        // A damaged line on the target's path changes that path too.
        if target != from {
            if let Err(Damaged(lines)) = context::project(&session, Some(target)) {
                damaged.extend(lines);
                continue;
            }
        }
        if setup.is_none() {
            let config = pi_config(&session);
            let provider = if live { Some(open_provider(&args.model, &config)?) } else { None };
            setup = Some((config, provider));
        }
        let (config, provider) = setup.as_ref().expect("set above");
        let facts = ModelFacts::new(&args.model, config, &from_projection, provider.as_deref());
        let reserve = args.reserve_tokens.unwrap_or_else(|| config.branch_summary().reserve_tokens);
        let budget = facts.window as i64 - reserve as i64;
        let collected = branch::collect(&session, from, target);
        let entries = if collected.same_entry() { &[][..] } else { &collected.entries[..] };
        let prepared = match branch::prepare(&session, entries, budget) {
            Ok(p) => p,
            Err(Damaged(lines)) => {
                damaged.extend(lines);
                continue;
            }
        };
        break (Plan { session, from, target, from_projection, collected, prepared }, facts, reserve, budget);
    };
    let provider = setup.and_then(|(_, p)| p);
    let (window, window_source) = (facts.window, facts.window_source.clone());
    report_diagnostics(ctx, &plan.session)?;
    let s = &plan.session;
    let thinking = facts.reasoning(&plan.from_projection);
    let prompt = branch::prompt(&plan.prepared, args.instructions.as_deref(), args.replace_instructions);
    let nothing = plan.collected.same_entry() || plan.collected.entries.is_empty();
    let new_leaf_json = match &plan.collected.new_leaf {
        NewLeaf::Entry(i) => id_json(s, *i),
        NewLeaf::Root => Value::Null,
        NewLeaf::Missing(id) => Value::from(id.as_str()),
    };
    let entry_ids: Vec<Value> = if plan.collected.same_entry() {
        vec![]
    } else {
        plan.collected.entries.iter().map(|&i| id_json(s, i)).collect()
    };
    let mut out = BufWriter::new(std::io::stdout().lock());

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
                let line = |i: Option<u32>| i.map(|i| s.entries[i as usize].line);
                let doc = json!({
                    "version": 1,
                    "session": session_json(s),
                    "oldLeafId": id_json(s, plan.from),
                    "oldLeafLine": line(Some(plan.from)),
                    "targetId": id_json(s, plan.target),
                    "targetLine": line(Some(plan.target)),
                    "commonAncestorId": plan.collected.common_ancestor.map_or(Value::Null, |i| id_json(s, i)),
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
                let short = |i: u32| s.display_id(i).into_owned();
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
                    let ancestor = plan.collected.common_ancestor.map_or("the root".to_string(), |a| {
                        format!("{} (line {})", short(a), s.entries[a as usize].line)
                    });
                    writeln!(
                        out,
                        "Summarize {} entries, from {from} back to the common ancestor {ancestor}:",
                        plan.collected.entries.len()
                    )?;
                    for &i in &plan.collected.entries {
                        let e = &s.entries[i as usize];
                        writeln!(out, "  {:>6}  line {:<6} {}", short(i), e.line, kind_name(e))?;
                    }
                    let leaf = match &plan.collected.new_leaf {
                        NewLeaf::Entry(i) => format!("{} (line {})", short(*i), s.entries[*i as usize].line),
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
                                out_text(ctx, p)
                            )?;
                        }
                    }
                }
            }
        }
        out.flush()?;
        return Ok(if nothing { 1 } else { 0 });
    }

    if nothing {
        let why = if plan.collected.same_entry() {
            "TO_REV is FROM_LEAF (pi: \"Already at this point\")".to_string()
        } else {
            format!("{} is on the path to {}", args.from_leaf, args.to_rev)
        };
        eprintln!("nothing to summarize: {why}; nothing written");
        if args.format == Format::Json {
            let doc = json!({"version": 1, "session": session_json(s), "fromId": id_json(s, plan.from),
                "targetId": id_json(s, plan.target), "newLeafId": new_leaf_json, "entryIds": entry_ids,
                "summary": null, "details": null, "usage": null, "appended": null});
            serde_json::to_writer_pretty(&mut out, &doc)?;
            writeln!(out)?;
        }
        out.flush()?;
        return Ok(1);
    }

    // The summary.
    let mut generator = None;
    let summary = if plan.prepared.messages.is_empty() {
        branch::empty_summary()
    } else if let Some(provider) = &provider {
        let mut on_event = |e: &StreamEvent| {
            if let StreamEvent::Retry { attempt, wait_ms, reason } = e {
                eprintln!("retrying (attempt {attempt}) in {wait_ms} ms: {reason}");
            }
        };
        let reply = crate::summarize::complete(
            provider.as_ref(),
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
        let messages = branch::context_messages(s, &plan.collected.entries)
            .map_err(|d| anyhow::anyhow!("lines {:?} could not be read whole", d.0))?;
        let text = offline::summarize(&messages, None);
        branch::summary_from_text(&plan.prepared, &text, None)
    };
    let mut details = json!({"readFiles": summary.read_files, "modifiedFiles": summary.modified_files});
    if let Some(g) = generator {
        details["generator"] = g.into();
    }

    let mut appended = Value::Null;
    if let Some(path) = &append_to {
        let from_id = id_string(s, plan.from)?;
        let parent = match &plan.collected.new_leaf {
            NewLeaf::Entry(i) => Some(id_string(s, *i)?),
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
                "fromId": id_json(s, plan.from),
                "targetId": id_json(s, plan.target),
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
            writeln!(out, "{}", out_text(ctx, &summary.summary))?;
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
    Ok(0)
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "(none)".into()
    } else {
        v.join(", ")
    }
}

/// An entry's type (and role), for listings.
pub fn kind_name(e: &crate::session::EntryMeta) -> String {
    use crate::session::{EntryType, Role};
    match (e.kind, e.role) {
        (EntryType::Message, Role::User) => "user".into(),
        (EntryType::Message, Role::Assistant) => "assistant".into(),
        (EntryType::Message, Role::ToolResult) => "toolResult".into(),
        (EntryType::Message, Role::System) => "system".into(),
        (EntryType::Message, Role::BashExecution) => "bashExecution".into(),
        (EntryType::Message, Role::Custom | Role::HookMessage) => "custom".into(),
        (EntryType::Message, _) => "message".into(),
        (k, _) => k.name().into(),
    }
}
