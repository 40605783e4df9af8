//! `pisces agent` interactive mode: read prompts and slash commands line by line, run each
//! prompt through [`run::run_prompt`] with its events streamed to an [`Output`].
//!
//! Lines come from an [`Input`] (on a terminal, `render::agent`'s line editor; through a
//! pipe, lines as they come). Ctrl-C aborts the running turn (recorded as pi records
//! aborts, by the loop); a second Ctrl-C (or one at the prompt after a hint) exits.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use anyhow::bail;
use serde_json::{Map, Value};

use super::output::{Notice, Output};
use super::run::{self, Turn};
use super::writer::SessionWriter;
use super::{compaction, interrupt, navigate, prompt, Tool, ToolContext};
use crate::env::Env;
use crate::formats::pi;
use crate::llm::{self, CompactionSettings, ModelSpec, Provider, ProviderOptions, RetrySettings};
use crate::session::view::{self, Filter, Options};
use crate::session::{rev, EntryIdx, EntryType, Role, Session};

/// A line the REPL reads.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A prompt or a slash command (a trailing newline is trimmed by the REPL).
    Text(String),
    /// Ctrl-C at the prompt.
    Interrupted,
    /// The end of the input.
    End,
}

/// Where the REPL's lines come from.
pub trait Input {
    fn read_line(&mut self) -> io::Result<Line>;
}

/// Everything the REPL needs; [`super::start::Agent::into_repl`] builds it from a run set up
/// as print mode's is.
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
    /// The environment pisces started in.
    pub env: Env,
}

/// The slash commands, as `/help` shows them.
pub const HELP: &str = "\
commands: /tree  /path  /branch REV [summarize]  /fork  /compact  /label REV NAME
          /model PROVIDER/ID  /name NAME  /quit
          (anything else is a prompt; Ctrl-C aborts a turn, twice exits)";

impl Repl {
    /// Reads lines from `input` until `/quit` or its end. The exit status is 0.
    ///
    /// `input` is made before this is called, and the Ctrl-C handler installed here after
    /// it: a line editor takes SIGINT for itself when it is made (and keeps it), but at its
    /// prompt the terminal is raw and Ctrl-C is a key; during a turn the signal is ours, to
    /// abort the turn.
    pub fn run(mut self, input: &mut dyn Input, out: &mut dyn Output) -> anyhow::Result<crate::exit::ExitStatus> {
        interrupt::install(&self.tool_ctx.abort, out.on_interrupt());
        out.notice(Notice::Welcome { model: &self.spec, session: self.writer.path() })?;
        out.notice(Notice::Help)?;
        let mut interrupted_at_prompt = false;
        loop {
            let line = match input.read_line()? {
                Line::Text(l) => {
                    interrupted_at_prompt = false;
                    l
                }
                // Ctrl-C at the prompt: a hint first, then exit (the editor reads the key
                // itself, so no signal reaches the turn's handler here).
                Line::Interrupted => {
                    if interrupted_at_prompt {
                        break;
                    }
                    interrupted_at_prompt = true;
                    out.notice(Notice::ExitHint)?;
                    continue;
                }
                Line::End => break,
            };
            interrupt::reset();
            let line = line.trim_end_matches(['\n', '\r']);
            if line.trim().is_empty() {
                continue;
            }
            let result = if let Some(cmd) = line.strip_prefix('/') {
                match self.command(cmd.trim(), out) {
                    Ok(true) => break,
                    Ok(false) => Ok(()),
                    Err(e) => Err(e),
                }
            } else {
                self.prompt(line, out)
            };
            if let Err(e) = result {
                out.notice(Notice::Failed(&e))?;
            }
        }
        out.notice(Notice::Bye { session: self.writer.path() })?;
        Ok(crate::exit::ExitStatus::Ok)
    }

    /// A slash command; `Ok(true)` quits.
    fn command(&mut self, cmd: &str, out: &mut dyn Output) -> anyhow::Result<bool> {
        let (name, rest) = cmd.split_once(char::is_whitespace).unwrap_or((cmd, ""));
        let rest = rest.trim();
        match name {
            "quit" | "exit" | "q" => return Ok(true),
            "help" => out.notice(Notice::Help)?,
            "tree" => self.tree(out)?,
            "path" => self.path(out)?,
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
                self.branch(r, summarize, out)?
            }
            "label" => {
                let (r, l) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                if r.is_empty() || l.trim().is_empty() {
                    bail!("/label REV NAME");
                }
                self.label(r, l.trim(), out)?
            }
            "name" => {
                let n = normalize_name(rest);
                if n.is_empty() {
                    bail!("/name NAME");
                }
                let mut p = Map::new();
                p.insert("name".into(), n.clone().into());
                self.writer.append("session_info", p)?;
                out.notice(Notice::Named(&n))?;
            }
            "model" => self.model(rest, out)?,
            "compact" => self.compact(out)?,
            "fork" => self.fork(out)?,
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

    fn prompt(&mut self, text: &str, out: &mut dyn Output) -> anyhow::Result<()> {
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
        let outcome = run::run_prompt(&turn, &mut self.writer, &mut self.context, starting, &mut |e| out.event(&e));
        interrupt::running(false);
        out.end_events()?;
        let outcome = outcome?;
        if let Some(f) = &outcome.failure {
            out.notice(Notice::RunFailed(f))?;
        }
        self.tool_ctx.abort.store(false, Ordering::SeqCst);
        Ok(())
    }

    /// The session file, once it has entries.
    fn on_disk(&self) -> anyhow::Result<PathBuf> {
        if !self.writer.on_disk() {
            bail!("the session has no entries on disk yet (send a prompt first)");
        }
        Ok(self.writer.path().to_path_buf())
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

    fn tree(&self, out: &mut dyn Output) -> anyhow::Result<()> {
        pi::read_path(&self.on_disk()?, |session| {
            let opts = Options {
                filter: Filter::Default,
                search: None,
                folds: Vec::new(),
                leaf: self.leaf_of(session),
                home: self.env.pi_home(),
                cwd: self.env.cwd_string(),
                cycle_roots: true,
            };
            let rows = view::read_rows(session, &opts)?;
            let view = view::build(session, rows.as_ref(), &opts);
            Ok(out.tree(session, &view)?)
        })
    }

    fn path(&self, out: &mut dyn Output) -> anyhow::Result<()> {
        pi::read_path(&self.on_disk()?, |session| {
            let projection = session.dialect().project(session, self.leaf_of(session))?;
            Ok(out.path(session, &projection)?)
        })
    }

    /// Reads the session at `path` again and moves the leaf to the entry `leaf` names
    /// (`None`: the null leaf).
    fn move_to_id(&mut self, path: &Path, leaf: Option<&str>) -> anyhow::Result<()> {
        pi::read_path(path, |session| {
            let at = match leaf {
                Some(id) => Some(
                    session.get(id).ok_or_else(|| anyhow::anyhow!("entry {id} is no longer in {}", path.display()))?,
                ),
                None => None,
            };
            self.move_to(session, path, at)
        })
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
    fn branch(&mut self, r: &str, summarize: bool, out: &mut dyn Output) -> anyhow::Result<()> {
        let path = self.on_disk()?;
        // Where the navigation lands, as ids: indices belong to one read of the file.
        struct Nav {
            target: String,
            /// The target's prompt, when it is a user or custom message.
            prompt: Option<String>,
            to: String,
            leaf: Option<String>,
        }
        let nav = pi::read_path(&path, |session| {
            let target = self.resolve(session, r)?;
            let e = &session.entries[target];
            let is_prompt =
                (e.kind == EntryType::Message && e.role == Role::User) || e.kind == EntryType::CustomMessage;
            let (prompt, leaf) = if is_prompt {
                let v = session.parse(target)?;
                (Some(crate::session::system::user_text(v.get("message").unwrap_or(&v))), session.parent(target))
            } else {
                (None, Some(target))
            };
            Ok(Nav {
                target: session.display_id(target).into_owned(),
                prompt,
                to: session.id_str(target).map(str::to_string).unwrap_or_else(|| r.to_string()),
                leaf: leaf.map(|l| session.named_id(l).map(str::to_string)).transpose()?,
            })
        })?;
        match &nav.prompt {
            Some(text) => out.notice(Notice::ContinuingFrom { id: &nav.target, prompt: text })?,
            None => out.notice(Notice::ContinuingAfter { id: &nav.target })?,
        }
        if !summarize {
            return self.move_to_id(&path, nav.leaf.as_deref());
        }
        let from = self.writer.leaf().map(str::to_string).unwrap_or_else(|| "@".into());
        let to = nav.to;
        let info = llm::describe_model(&self.provider_opts)?;
        let budget = navigate::token_budget(self.provider.as_ref(), &info, &self.provider_opts.config);
        let level = (self.thinking != "off").then_some(self.thinking.as_str());
        out.notice(Notice::Summarizing)?;
        let summarizer = self.summarizer.as_ref();
        let Some(done) = navigate::summarize_left_branch(&path, &from, &to, summarizer, level, budget)? else {
            out.notice(Notice::NothingLeftBehind)?;
            return self.move_to_id(&path, nav.leaf.as_deref());
        };
        out.notice(Notice::BranchSummary(&done.summary))?;
        self.move_to_id(&path, Some(&done.id))
    }

    fn label(&mut self, r: &str, name: &str, out: &mut dyn Output) -> anyhow::Result<()> {
        let target_id = pi::read_path(&self.on_disk()?, |session| {
            let target = self.resolve(session, r)?;
            Ok(session.named_id(session.label_target(target))?.to_string())
        })?;
        let mut p = Map::new();
        p.insert("targetId".into(), target_id.clone().into());
        p.insert("label".into(), name.into());
        self.writer.append("label", p)?;
        out.notice(Notice::Labelled { target: &target_id, name })?;
        Ok(())
    }

    fn model(&mut self, arg: &str, out: &mut dyn Output) -> anyhow::Result<()> {
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
        out.notice(Notice::ModelChanged { model: &self.spec, thinking: &self.thinking })?;
        Ok(())
    }

    /// Compacts the branch now, with the loop's own compaction step.
    fn compact(&mut self, out: &mut dyn Output) -> anyhow::Result<()> {
        out.notice(Notice::Compacting)?;
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
            let at_compaction = pi::read_path(&self.on_disk()?, |session| {
                Ok(self.leaf_of(session).is_some_and(|l| session.entries[l].kind == EntryType::Compaction))
            })?;
            bail!(if at_compaction { "Already compacted" } else { "Nothing to compact (session too small)" });
        }
        let result = &end["result"];
        let summary = result["summary"].as_str().unwrap_or_default();
        out.notice(Notice::Compacted { tokens_before: &result["tokensBefore"], summary })?;
        Ok(())
    }

    /// pi's /fork: a new session file holding this branch, continued from here on.
    fn fork(&mut self, out: &mut dyn Output) -> anyhow::Result<()> {
        let path = self.on_disk()?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let navigate::Forked { path: new_path, id } = pi::read_path(&path, |session| {
            let leaf = self.leaf_of(session);
            let cwd = session.header.cwd_str().map(str::to_string);
            let cwd = cwd.unwrap_or_else(|| self.cwd.to_string_lossy().into_owned());
            navigate::fork_branch(session, &path, leaf, &cwd, &dir)
        })?;
        pi::read_path(&new_path, |forked| self.move_to(forked, &new_path, forked.default_leaf()))?;
        self.session_id = id;
        out.notice(Notice::Forked { path: &new_path })?;
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
