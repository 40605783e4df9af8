//! `pisces agent` interactive mode: read prompts and slash commands line by line, run each
//! prompt through [`run::run_prompt`] with its events streamed to the terminal.
//!
//! On a terminal the line editor is rustyline (editing, history with up/down); through a
//! pipe, lines are read as they come. Ctrl-C aborts the running turn (recorded as pi
//! records aborts, by the loop); a second Ctrl-C (or one at the prompt after a hint) exits.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use anyhow::bail;
use serde_json::{Map, Value};

use super::run::{self, Turn};
use super::writer::SessionWriter;
use super::{compaction, interrupt, navigate, prompt, Tool, ToolContext};
use crate::env::Env;
use crate::llm::{self, CompactionSettings, ModelSpec, Provider, ProviderOptions, RetrySettings};
use crate::render::transcript::{self, TranscriptHead};
use crate::render::tree::{self as draw, TextOptions};
use crate::render::{sanitize, Paint, Ui};
use crate::session::view::{self, Filter, Options};
use crate::session::{rev, EntryIdx, EntryType, Role, Session, Source};

/// Everything the REPL needs; the command builds it as it builds print mode's run.
pub struct Repl {
    pub writer: SessionWriter,
    /// The branch's AgentMessages at the writer's leaf.
    pub context: Vec<Value>,
    pub spec: ModelSpec,
    pub thinking: String,
    /// What the branch at the leaf records (model, thinking level, whether it has one).
    pub branch_model: Option<ModelSpec>,
    pub branch_thinking: Option<String>,
    pub has_thinking_entry: bool,
    pub provider_opts: ProviderOptions,
    pub provider: Arc<dyn Provider>,
    pub summarizer: Arc<dyn Provider>,
    /// The session's id (its header's), for bash's `PI_SESSION_ID`.
    pub session_id: String,
    pub api: String,
    pub tools: Vec<Box<dyn Tool>>,
    pub tool_ctx: ToolContext,
    pub sections: Map<String, Value>,
    pub declarations: Vec<Value>,
    pub retry: RetrySettings,
    pub compaction: CompactionSettings,
    pub max_turns: Option<u32>,
    pub cwd: PathBuf,
    pub ui: Ui,
    /// The environment pisces started in.
    pub env: Env,
    /// Show thinking as a one-line `[thinking…]` instead of streaming it.
    pub hide_thinking: bool,
}

const HELP: &str = "\
commands: /tree  /path  /branch REV [summarize]  /fork  /compact  /label REV NAME
          /model PROVIDER/ID  /name NAME  /quit
          (anything else is a prompt; Ctrl-C aborts a turn, twice exits)";

impl Repl {
    /// Reads lines from standard input until `/quit` or end of input. The exit status is 0.
    pub fn run(mut self) -> anyhow::Result<crate::exit::ExitStatus> {
        let stdin = std::io::stdin();
        let tty = stdin.is_terminal();
        let mut input = stdin.lock();
        let mut editor = if tty { rustyline::DefaultEditor::new().ok() } else { None };
        // After the editor: it takes SIGINT for itself when created (and keeps it), but at
        // its prompt the terminal is raw and Ctrl-C is a key; during a turn the signal is
        // ours, to abort the turn.
        interrupt::install(&self.tool_ctx.abort);
        println!("pisces agent — {}/{} — session {}", self.spec.provider, self.spec.id, self.writer.path().display());
        println!("{HELP}");
        let mut interrupted_at_prompt = false;
        loop {
            let mut line = String::new();
            match editor.as_mut() {
                Some(ed) => match ed.readline("> ") {
                    Ok(l) => {
                        interrupted_at_prompt = false;
                        let _ = ed.add_history_entry(l.as_str());
                        line = l;
                    }
                    // Ctrl-C at the prompt: a hint first, then exit (the editor reads the key
                    // itself, so no signal reaches the turn's handler here).
                    Err(rustyline::error::ReadlineError::Interrupted) => {
                        if interrupted_at_prompt {
                            break;
                        }
                        interrupted_at_prompt = true;
                        eprintln!("(Ctrl-C again to exit, or /quit)");
                        continue;
                    }
                    Err(_) => break,
                },
                None => {
                    if tty {
                        print!("> ");
                        std::io::stdout().flush()?;
                    }
                    if input.read_line(&mut line)? == 0 {
                        break;
                    }
                }
            }
            interrupt::reset();
            let line = line.trim_end_matches(['\n', '\r']);
            if line.trim().is_empty() {
                continue;
            }
            let result = if let Some(cmd) = line.strip_prefix('/') {
                match self.command(cmd.trim()) {
                    Ok(true) => break,
                    Ok(false) => Ok(()),
                    Err(e) => Err(e),
                }
            } else {
                self.prompt(line)
            };
            if let Err(e) = result {
                eprintln!("{}", self.ui.paint(Paint::Error, &format!("error: {e:#}")));
            }
        }
        eprintln!("session: {}", self.writer.path().display());
        Ok(crate::exit::ExitStatus::Ok)
    }

    /// A slash command; `Ok(true)` quits.
    fn command(&mut self, cmd: &str) -> anyhow::Result<bool> {
        let (name, rest) = cmd.split_once(char::is_whitespace).unwrap_or((cmd, ""));
        let rest = rest.trim();
        match name {
            "quit" | "exit" | "q" => return Ok(true),
            "help" => println!("{HELP}"),
            "tree" => self.tree()?,
            "path" => self.path()?,
            "branch" => {
                let (r, flag) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                let summarize = match flag.trim() {
                    "" => false,
                    "summarize" | "--summarize" => true,
                    other => bail!("/branch REV [summarize]: unexpected {other:?}"),
                };
                if r.is_empty() {
                    bail!("/branch REV [summarize]: which entry?");
                }
                self.branch(r, summarize)?
            }
            "label" => {
                let (r, l) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                if r.is_empty() || l.trim().is_empty() {
                    bail!("/label REV NAME");
                }
                self.label(r, l.trim())?
            }
            "name" => {
                let n = normalize_name(rest);
                if n.is_empty() {
                    bail!("/name NAME");
                }
                let mut p = Map::new();
                p.insert("name".into(), n.clone().into());
                self.writer.append("session_info", p)?;
                println!("session name: {n}");
            }
            "model" => self.model(rest)?,
            "compact" => self.compact()?,
            "fork" => self.fork()?,
            _ => bail!("unknown command /{name}\n{HELP}"),
        }
        Ok(false)
    }

    /// model_change / thinking_level_change when the branch implies another selection.
    fn ensure_selection(&mut self) -> anyhow::Result<()> {
        if self.branch_model.as_ref() != Some(&self.spec) {
            let mut p = Map::new();
            p.insert("provider".into(), self.spec.provider.clone().into());
            p.insert("modelId".into(), self.spec.id.clone().into());
            self.writer.append("model_change", p)?;
            self.branch_model = Some(self.spec.clone());
        }
        if !self.has_thinking_entry || self.branch_thinking.as_deref() != Some(self.thinking.as_str()) {
            let mut p = Map::new();
            p.insert("thinkingLevel".into(), self.thinking.clone().into());
            self.writer.append("thinking_level_change", p)?;
            self.branch_thinking = Some(self.thinking.clone());
            self.has_thinking_entry = true;
        }
        Ok(())
    }

    fn prompt(&mut self, text: &str) -> anyhow::Result<()> {
        self.ensure_selection()?;
        let mut starting = Vec::new();
        if let Some(sys) = prompt::system_patch(&self.context, &self.sections, &self.declarations) {
            starting.push(sys);
        }
        starting.push(prompt::user_message(text));
        self.tool_ctx.abort.store(false, Ordering::SeqCst);
        self.tool_ctx.session_env =
            prompt::session_env(&self.session_id, self.writer.path(), &self.spec, &self.thinking);
        self.tool_ctx.model_without_images = prompt::model_without_images(&self.spec);
        let mut printer = Printer { ui: self.ui.clone(), hide_thinking: self.hide_thinking, open: None };
        interrupt::running(true);
        let turn = Turn {
            provider: Arc::clone(&self.provider),
            summarizer: Arc::clone(&self.summarizer),
            api: self.api.clone(),
            tools: &self.tools,
            tool_ctx: &self.tool_ctx,
            thinking_level: self.thinking.clone(),
            max_turns: self.max_turns,
            retry: self.retry,
            compaction: self.compaction,
        };
        let outcome = run::run_prompt(&turn, &mut self.writer, &mut self.context, starting, &mut |e| printer.event(&e));
        interrupt::running(false);
        printer.close();
        let outcome = outcome?;
        if let Some(f) = &outcome.failure {
            eprintln!("{}", self.ui.paint(Paint::Error, f));
        }
        self.tool_ctx.abort.store(false, Ordering::SeqCst);
        Ok(())
    }

    fn load(&self) -> anyhow::Result<(Source, PathBuf)> {
        if !self.writer.on_disk() {
            bail!("the session has no entries on disk yet (send a prompt first)");
        }
        Ok((Source::open(self.writer.path())?, self.writer.path().to_path_buf()))
    }

    /// The writer's leaf as an entry index.
    fn leaf_of(&self, session: &Session) -> Option<EntryIdx> {
        self.writer.leaf().and_then(|id| session.get(id))
    }

    fn resolve(&self, session: &Session, r: &str) -> anyhow::Result<EntryIdx> {
        // `@` is this REPL's leaf, which is not the file's last entry after /branch.
        if r == "@" {
            if let Some(l) = self.leaf_of(session) {
                return Ok(l);
            }
        }
        Ok(rev::resolve(session, r)?)
    }

    fn tree(&self) -> anyhow::Result<()> {
        let (source, _) = self.load()?;
        let session = crate::formats::pi::read(&source)?;
        let opts = Options {
            filter: Filter::Default,
            search: None,
            folds: Vec::new(),
            leaf: self.leaf_of(&session),
            home: self.env.pi_home(),
            cwd: self.env.cwd_string(),
            cycle_roots: true,
        };
        let rows = view::read_rows(&session, &opts)?;
        let view = view::build(&session, rows.as_ref(), &opts);
        let mut out = std::io::stdout().lock();
        let topts = TextOptions {
            width: self.ui.width,
            ids: true,
            time: false,
            compact: false,
            max_levels: Some(crate::render::tree::MAX_LEVELS),
        };
        draw::write_text(&mut out, &self.ui, &session, &view, &topts)?;
        out.flush()?;
        Ok(())
    }

    fn path(&self) -> anyhow::Result<()> {
        let (source, _) = self.load()?;
        let session = crate::formats::pi::read(&source)?;
        let projection = session.dialect().project(&session, self.leaf_of(&session))?;
        let leaf_id = projection.leaf.map(|l| session.display_id(l).into_owned());
        let model = projection.model.as_ref().map(|m| {
            format!(
                "{}/{}",
                m.get("provider").and_then(Value::as_str).unwrap_or("?"),
                m.get("modelId").and_then(Value::as_str).unwrap_or("?")
            )
        });
        let head = TranscriptHead {
            file: &session.file,
            session_name: session.title.as_deref(),
            leaf: leaf_id.as_deref(),
            model,
            thinking_level: projection.thinking_level.as_ref().and_then(Value::as_str).map(str::to_string),
            system: None,
        };
        let mut out = std::io::stdout().lock();
        transcript::write_text(&mut out, &self.ui, &head, &projection.messages)?;
        out.flush()?;
        Ok(())
    }

    /// Moves the leaf to `leaf` (an entry index or the null leaf) and re-projects.
    fn move_to(&mut self, session: &Session, path: &Path, leaf: Option<EntryIdx>) -> anyhow::Result<()> {
        let projection = session.dialect().project(session, leaf)?;
        self.branch_model = projection.model.as_ref().and_then(|m| {
            Some(ModelSpec {
                provider: m.get("provider")?.as_str()?.to_string(),
                id: m.get("modelId")?.as_str()?.to_string(),
            })
        });
        self.branch_thinking = projection.thinking_level.as_ref().and_then(Value::as_str).map(str::to_string);
        self.has_thinking_entry =
            projection.path.iter().any(|&i| session.entries[i].kind == EntryType::ThinkingLevelChange);
        self.context = projection.messages;
        let leaf_id = leaf.and_then(|l| session.id_str(l)).map(str::to_string);
        self.writer = SessionWriter::existing(path.to_path_buf(), leaf_id);
        Ok(())
    }

    /// pi's navigateTree: a user (or custom) message → its parent, and its text is shown;
    /// with `summarize`, the branch left behind is summarized first and the summary,
    /// appended there, is the new leaf (pi's "Summarize").
    fn branch(&mut self, r: &str, summarize: bool) -> anyhow::Result<()> {
        let (source, path) = self.load()?;
        let session = crate::formats::pi::read(&source)?;
        let target = self.resolve(&session, r)?;
        let e = &session.entries[target];
        let is_prompt = (e.kind == EntryType::Message && e.role == Role::User) || e.kind == EntryType::CustomMessage;
        let leaf = if is_prompt {
            let v = session.parse(target)?;
            let text = crate::formats::pi::fork::user_text(v.get("message").unwrap_or(&v));
            println!(
                "continuing from the parent of {}; its prompt was:\n{}",
                session.display_id(target),
                sanitize(&text)
            );
            session.parent(target)
        } else {
            println!("continuing after {}", session.display_id(target));
            Some(target)
        };
        if !summarize {
            return self.move_to(&session, &path, leaf);
        }
        let from = self.writer.leaf().map(str::to_string).unwrap_or_else(|| "@".into());
        let to = session.id_str(target).map(str::to_string).unwrap_or_else(|| r.to_string());
        let info = llm::describe_model(&self.provider_opts)?;
        let budget = navigate::token_budget(self.provider.as_ref(), &info, &self.provider_opts.config);
        let level = (self.thinking != "off").then_some(self.thinking.as_str());
        println!("{}", self.ui.paint(Paint::Dim, "summarizing the branch left behind…"));
        let summarizer = self.summarizer.as_ref();
        let Some(done) = navigate::summarize_left_branch(&path, &from, &to, summarizer, level, budget)? else {
            println!("nothing to summarize: it is on this branch");
            return self.move_to(&session, &path, leaf);
        };
        println!("{}", self.ui.paint(Paint::Summary, &sanitize(&done.summary)));
        drop(session);
        let source = Source::open(&path)?;
        let session = crate::formats::pi::read(&source)?;
        let leaf = session.get(&done.id);
        self.move_to(&session, &path, leaf)
    }

    fn label(&mut self, r: &str, name: &str) -> anyhow::Result<()> {
        let (source, _) = self.load()?;
        let session = crate::formats::pi::read(&source)?;
        let target = self.resolve(&session, r)?;
        let target_id = session.named_id(session.label_target(target))?.to_string();
        drop(session);
        let mut p = Map::new();
        p.insert("targetId".into(), target_id.clone().into());
        p.insert("label".into(), name.into());
        self.writer.append("label", p)?;
        println!("labelled {target_id} \"{name}\"");
        Ok(())
    }

    fn model(&mut self, arg: &str) -> anyhow::Result<()> {
        let Some(spec) = ModelSpec::parse(arg) else {
            bail!("/model PROVIDER/ID, for example anthropic/claude-sonnet-4-5")
        };
        let opts = ProviderOptions { model: spec.clone(), ..self.provider_opts.clone() };
        let info = llm::describe_model(&opts)?;
        let api = info.api.as_str().to_string();
        let run::Providers { calls: provider, summarizer } = run::open_providers(&opts, &self.env)?;
        // pi's model switch: the model's own level setting, else the default setting, else
        // the level in use; clamped to what the new model supports.
        let config = &opts.config;
        let level = config.model_thinking_level(&spec).or(config.default_thinking_level()).unwrap_or(&self.thinking);
        self.thinking = info.clamp_thinking_level(level).to_string();
        self.compaction = opts.config.compaction(Some(&spec));
        self.provider = provider;
        self.summarizer = summarizer;
        self.api = api;
        self.provider_opts = opts;
        self.spec = spec;
        self.ensure_selection()?;
        println!("model: {}/{} (thinking: {})", self.spec.provider, self.spec.id, self.thinking);
        Ok(())
    }

    /// Compacts the branch now, with the loop's own compaction step.
    fn compact(&mut self) -> anyhow::Result<()> {
        println!("{}", self.ui.paint(Paint::Dim, "compacting…"));
        let turn = Turn {
            provider: Arc::clone(&self.provider),
            summarizer: Arc::clone(&self.summarizer),
            api: self.api.clone(),
            tools: &self.tools,
            tool_ctx: &self.tool_ctx,
            thinking_level: self.thinking.clone(),
            max_turns: self.max_turns,
            retry: self.retry,
            compaction: self.compaction,
        };
        let mut end = None;
        let done = compaction::compact_now(&turn, &mut self.writer, &mut self.context, "manual", false, &mut |e| {
            if e["type"] == "compaction_end" {
                end = Some(e);
            }
        })?;
        let end = end.unwrap_or(Value::Null);
        if !done {
            if let Some(e) = end["errorMessage"].as_str() {
                bail!("{e}");
            }
            // pi's reasons when there is nothing to summarize.
            let (source, _) = self.load()?;
            let session = crate::formats::pi::read(&source)?;
            let at_compaction =
                self.leaf_of(&session).is_some_and(|l| session.entries[l].kind == EntryType::Compaction);
            bail!(if at_compaction { "Already compacted" } else { "Nothing to compact (session too small)" });
        }
        let result = &end["result"];
        let summary = result["summary"].as_str().unwrap_or_default();
        println!("compacted ({} tokens before):\n{}", result["tokensBefore"], self.ui.paint(Paint::Summary, summary));
        Ok(())
    }

    /// pi's /fork: a new session file holding this branch, continued from here on.
    fn fork(&mut self) -> anyhow::Result<()> {
        let (source, path) = self.load()?;
        let session = crate::formats::pi::read(&source)?;
        let leaf = self.leaf_of(&session);
        let cwd = session.header.cwd_str().map(str::to_string);
        let cwd = cwd.unwrap_or_else(|| self.cwd.to_string_lossy().into_owned());
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let navigate::Forked { path: new_path, id } = navigate::fork_branch(&session, &path, leaf, &cwd, &dir)?;
        drop(session);
        let source = Source::open(&new_path)?;
        let forked = crate::formats::pi::read(&source)?;
        let leaf = forked.default_leaf();
        self.move_to(&forked, &new_path, leaf)?;
        self.session_id = id;
        println!("forked to {}", new_path.display());
        Ok(())
    }
}

/// pi's session name: runs of CR/LF become one space, then trimmed.
fn normalize_name(s: &str) -> String {
    let mut out = String::new();
    let mut in_break = false;
    for c in s.chars() {
        if c == '\r' || c == '\n' {
            if !in_break {
                out.push(' ');
            }
            in_break = true;
        } else {
            in_break = false;
            out.push(c);
        }
    }
    out.trim().to_string()
}

/// Streams loop events to standard output.
struct Printer {
    ui: Ui,
    hide_thinking: bool,
    /// The kind of block being streamed ("text" / "thinking"), if a line is open.
    open: Option<String>,
}

impl Printer {
    fn close(&mut self) {
        if self.open.take().is_some() {
            println!();
        }
    }

    fn event(&mut self, e: &Value) {
        let kind = e.get("type").and_then(Value::as_str).unwrap_or("");
        let mut out = std::io::stdout().lock();
        match kind {
            "message_update" => {
                let a = &e["assistantMessageEvent"];
                match a.get("type").and_then(Value::as_str).unwrap_or("") {
                    "text_start" => {
                        drop(out);
                        self.close();
                        self.open = Some("text".into());
                        return;
                    }
                    "thinking_start" => {
                        drop(out);
                        self.close();
                        self.open = Some("thinking".into());
                        if self.hide_thinking {
                            let mut out = std::io::stdout().lock();
                            let _ = write!(out, "{}", self.ui.paint(Paint::Dim, "[thinking…]"));
                        }
                        return;
                    }
                    "text_delta" => {
                        let d = a.get("delta").and_then(Value::as_str).unwrap_or("");
                        let _ = write!(out, "{}", sanitize(d));
                    }
                    "thinking_delta" if !self.hide_thinking => {
                        let d = a.get("delta").and_then(Value::as_str).unwrap_or("");
                        let _ = write!(out, "{}", self.ui.paint(Paint::Dim, &sanitize(d)));
                    }
                    _ => {}
                }
                let _ = out.flush();
            }
            "tool_execution_start" => {
                drop(out);
                self.close();
                let name = e.get("toolName").and_then(Value::as_str).unwrap_or("?");
                let args = &e["args"];
                let brief = ["command", "path", "pattern"]
                    .iter()
                    .find_map(|k| args.get(*k).and_then(Value::as_str))
                    .map(str::to_string)
                    .unwrap_or_else(|| args.to_string());
                let brief: String = brief.chars().take(200).collect();
                println!("{}", self.ui.paint(Paint::Tool, &format!("→ {name} {}", sanitize(&brief))));
            }
            "tool_execution_end" => {
                drop(out);
                let error = e.get("isError").and_then(Value::as_bool).unwrap_or(false);
                let text: String = e["result"]["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n");
                let lines: Vec<&str> = text.lines().collect();
                let paint = if error { Paint::Error } else { Paint::Dim };
                for l in lines.iter().take(4) {
                    println!("  {}", self.ui.paint(paint, &sanitize(l)));
                }
                if lines.len() > 4 {
                    println!("  {}", self.ui.paint(Paint::Dim, &format!("… {} more lines", lines.len() - 4)));
                }
            }
            "message_end" => {
                drop(out);
                let m = &e["message"];
                if m.get("role").and_then(Value::as_str) != Some("assistant") {
                    return;
                }
                self.close();
                match m.get("stopReason").and_then(Value::as_str) {
                    Some("aborted") => println!("{}", self.ui.paint(Paint::Error, "[aborted]")),
                    Some("error") => {
                        let err = m.get("errorMessage").and_then(Value::as_str).unwrap_or("error");
                        println!("{}", self.ui.paint(Paint::Error, &format!("error: {}", sanitize(err))));
                    }
                    _ => {}
                }
            }
            "auto_retry_start" => {
                drop(out);
                self.close();
                let msg = format!(
                    "retrying (attempt {}): {}",
                    e["attempt"],
                    e.get("errorMessage").and_then(Value::as_str).unwrap_or("")
                );
                println!("{}", self.ui.paint(Paint::Dim, &msg));
            }
            "compaction_start" => {
                drop(out);
                self.close();
                println!("{}", self.ui.paint(Paint::Dim, "compacting…"));
            }
            "compaction_end" => {
                drop(out);
                if let Some(err) = e.get("errorMessage").and_then(Value::as_str) {
                    println!("{}", self.ui.paint(Paint::Error, err));
                } else {
                    println!("{}", self.ui.paint(Paint::Dim, "compacted"));
                }
            }
            _ => {}
        }
    }
}
