//! Where an agent run writes and what it starts from: a new session (pi's file in the
//! project's session folder) or an existing one at a leaf, forked first when asked (pi's
//! Fork choice), with the branch's model and thinking level; and pi's choice of thinking
//! level for the run.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde_json::Value;

use super::navigate;
use super::writer::SessionWriter;
use crate::env::Env;
use crate::formats::pi::fork;
use crate::llm::{ModelInfo, ModelSpec, PiConfig, Provider};
use crate::session::format::Format;
use crate::session::system::user_text;
use crate::session::{rev, write, EntryType, Role, Session, Source};

/// What the run is set up from: the environment and the command's choices.
pub struct Setup<'a> {
    pub env: &'a Env,
    /// `--session-dir`.
    pub session_dir: Option<&'a Path>,
    pub formats: &'static [&'static dyn Format],
    /// Said as the target is set up (`continuing from …`), for the caller to show.
    pub notes: Vec<String>,
}

/// Where the run writes and what the branch holds so far.
pub struct Target {
    pub writer: SessionWriter,
    pub cwd: PathBuf,
    pub header: Value,
    /// The branch's AgentMessages (the projection at the leaf).
    pub context: Vec<Value>,
    pub model: Option<ModelSpec>,
    /// The branch's thinking level, and whether the branch sets one.
    pub thinking: Option<String>,
    pub has_thinking_entry: bool,
    pub new: bool,
}

/// Where pi keeps the sessions of `cwd`: `--session-dir`, `$PI_CODING_AGENT_SESSION_DIR`,
/// else `~/.pi/agent/sessions/--<cwd>--/`.
pub fn session_dir(setup: &Setup, cwd: &str) -> anyhow::Result<PathBuf> {
    if let Some(d) = setup.session_dir {
        return Ok(d.to_path_buf());
    }
    if let Some(d) = &setup.env.pi_session_dir {
        return Ok(d.clone());
    }
    let Some(agent) = &setup.env.pi_agent_dir else {
        bail!("HOME is not set, so pi's session folder is unknown; give --session FILE or --session-dir DIR")
    };
    Ok(fork::default_session_dir(agent, cwd))
}

/// A new session in the current directory (at `path`, else in pi's session folder).
pub fn new_target(path: Option<PathBuf>, setup: &Setup) -> anyhow::Result<Target> {
    let cwd = setup.env.cwd.clone().context("the current directory is unknown")?;
    let cwd_s = cwd.to_string_lossy().into_owned();
    let id = fork::new_session_id();
    let ts = write::now_iso();
    let path = match path {
        Some(p) => p,
        None => session_dir(setup, &cwd_s)?.join(fork::file_name(&ts, &id)),
    };
    let header = fork::header_line(&id, &ts, &cwd_s, None);
    Ok(Target {
        header: serde_json::from_str(&header)?,
        writer: SessionWriter::new_file(path, header),
        cwd,
        context: Vec::new(),
        model: None,
        thinking: None,
        has_thinking_entry: false,
        new: true,
    })
}

/// The session at `path`, continued at `from` (a REV; `None`: its last entry), or forked
/// into a new session first (`fork`). `report` shows the session's diagnostics.
pub fn existing_target(
    setup: &mut Setup,
    path: &Path,
    from: Option<&str>,
    fork: bool,
    report: &mut dyn FnMut(&Session) -> anyhow::Result<()>,
) -> anyhow::Result<Target> {
    enum Found {
        Continue(Box<Target>),
        Forked(PathBuf),
    }
    let open = || Ok(vec![Source::open(path)?]);
    let formats = setup.formats;
    let found = crate::session::open::read(&open, formats, report, |sessions, reading| {
        let session = &sessions[0];
        // pi's navigateTree: a user or custom message target continues from its parent.
        let (leaf, note) = match from {
            None => (session.default_leaf(), None),
            Some(r) => {
                let target = rev::resolve(session, r)?;
                let e = &session.entries[target];
                let is_prompt =
                    (e.kind == EntryType::Message && e.role == Role::User) || e.kind == EntryType::CustomMessage;
                if is_prompt {
                    let v = session.parse(target)?;
                    let text = user_text(v.get("message").unwrap_or(&v));
                    let note = format!(
                        "continuing from the parent of {}; its prompt was:\n{text}",
                        session.display_id(target)
                    );
                    (session.parent(target), Some(note))
                } else {
                    (Some(target), None)
                }
            }
        };
        reading.start_output()?;
        setup.notes.extend(note);
        if fork {
            // pi's Fork choice for a missing cwd: the branch copied into a new session of the
            // current directory, which the run continues in; the source is only read.
            let cwd = setup.env.cwd_string();
            if cwd.is_empty() {
                bail!("the current directory is unknown");
            }
            let dir = session_dir(setup, &cwd)?;
            let forked = navigate::fork_branch(session, path, leaf, &cwd, &dir)?;
            setup.notes.push(format!("continuing in a new session: {}", forked.path.display()));
            return Ok(Found::Forked(forked.path));
        }
        let writer = session.dialect().writer()?;
        writer
            .check_append_of(session, crate::session::write::Appended::Turns)
            .map_err(|e| anyhow::anyhow!("{e} (give --fork to continue in a new session in the current format)"))?;
        let cwd = session.header.cwd_str().map(PathBuf::from);
        let Some(cwd) = cwd.filter(|c| c.is_dir()) else {
            bail!(
                "{}: the session's cwd {} does not exist here (pi asks whether to fork it; give --fork to continue in a new session of the current directory)",
                path.display(),
                session.header.cwd.as_ref().map(Value::to_string).unwrap_or_else(|| "(none)".into())
            );
        };
        let projection = session.dialect().project(session, leaf)?;
        let model = projection.model.as_ref().and_then(|m| {
            Some(ModelSpec {
                provider: m.get("provider")?.as_str()?.to_string(),
                id: m.get("modelId")?.as_str()?.to_string(),
            })
        });
        let has_thinking_entry =
            projection.path.iter().any(|&i| session.entries[i].kind == EntryType::ThinkingLevelChange);
        let leaf_id = leaf.and_then(|l| session.id_str(l)).map(str::to_string);
        Ok(Found::Continue(Box::new(Target {
            writer: SessionWriter::existing(path.to_path_buf(), leaf_id),
            cwd,
            header: Value::Object(session.header.raw.clone()),
            context: projection.messages,
            model,
            thinking: projection.thinking_level.as_ref().and_then(Value::as_str).map(str::to_string),
            has_thinking_entry,
            new: false,
        })))
    })?;
    match found {
        Found::Continue(target) => Ok(*target),
        Found::Forked(forked) => existing_target(setup, &forked, None, false, report),
    }
}

/// The thinking level as pi's `createAgentSession` picks it: `asked` (`--thinking`); else
/// a branch with messages keeps its own level (pi's `defaultThinkingLevel`, else `medium`,
/// when it never set one); else `modelThinkingLevels` for the model, else
/// `defaultThinkingLevel`, else `medium`. Then clamped to what the model supports (`off`
/// for a model that does not reason).
pub fn thinking_level(
    asked: Option<&str>,
    target: &Target,
    config: &PiConfig,
    spec: &ModelSpec,
    info: &ModelInfo,
) -> String {
    let default = || config.default_thinking_level().unwrap_or("medium").to_string();
    let level = asked.map(str::to_string).or_else(|| {
        (!target.context.is_empty()).then(|| {
            if target.has_thinking_entry {
                target.thinking.clone().unwrap_or_else(default)
            } else {
                default()
            }
        })
    });
    let level = level.or_else(|| config.model_thinking_level(spec).map(str::to_string)).unwrap_or_else(default);
    info.clamp_thinking_level(&level).to_string()
}

/// `--summarize`: the branch from the session's last entry (pi's leaf) to `to` is
/// summarized and the summary appended under the navigation's new leaf; the run then
/// continues after the summary. `None`: nothing was left behind.
pub fn summarize_left_branch(
    to: &str,
    target: &mut Target,
    provider: &dyn Provider,
    config: &PiConfig,
    info: &ModelInfo,
    thinking: &str,
) -> anyhow::Result<Option<navigate::Summarized>> {
    let path = target.writer.path().to_path_buf();
    let budget = navigate::token_budget(provider, info, config);
    let level = (thinking != "off").then_some(thinking);
    let Some(done) = navigate::summarize_left_branch(&path, "@", to, provider, level, budget)? else {
        return Ok(None);
    };
    target.context = crate::formats::pi::read_path(&path, |session| {
        Ok(session.dialect().project(session, session.get(&done.id))?.messages)
    })?;
    target.writer = SessionWriter::existing(path, Some(done.id.clone()));
    Ok(Some(done))
}
