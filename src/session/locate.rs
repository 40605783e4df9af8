//! Finding a session from a SESSION argument: a path, `-`, or a session id / unique id
//! prefix looked up the way `pi --session <id>` does (docs/pi-format.md §1.2).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Where a session's bytes come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionArg {
    Stdin,
    Path(PathBuf),
    /// A session kept as rows of an agent's database (OpenClaw: `openclaw:<agent>/<id>`).
    Stored {
        db: PathBuf,
        agent: String,
        id: String,
    },
}

/// A database of sessions, where an id is also looked up: its agent's name in `<agent>:`
/// names, the agent's folder name (`main`), the file, and the ids it holds (or why they
/// cannot be read).
pub struct Store<'a> {
    pub scheme: &'static str,
    pub agent: String,
    pub db: PathBuf,
    pub ids: &'a dyn Fn(&Path) -> Result<Vec<String>, String>,
}

/// [`locate`], then the stores: `openclaw:<agent>/<id>` names a stored session directly
/// (a unique prefix of the id will do); an id that names no file is looked up in each
/// store.
pub fn locate_with_stores(
    arg: &str,
    dirs: impl FnOnce() -> Vec<PathBuf>,
    stores: impl Fn() -> Vec<Store<'static>>,
) -> Result<SessionArg, LocateError> {
    let named = arg.split_once(':').and_then(|(scheme, rest)| Some((scheme, rest.split_once('/')?)));
    if let Some((scheme, (agent, id))) = named.filter(|(s, _)| !s.is_empty() && !s.contains(['/', '\\'])) {
        let stores: Vec<_> = stores().into_iter().filter(|s| s.scheme == scheme).collect();
        if !stores.is_empty() {
            let candidates: Vec<_> = stores.iter().filter(|s| s.agent == agent).collect();
            if candidates.is_empty() {
                let mut agents: Vec<&str> = stores.iter().map(|s| s.agent.as_str()).collect();
                agents.dedup();
                return Err(LocateError::NotFound {
                    arg: arg.to_string(),
                    searched: format!("the databases of {scheme}'s agents"),
                    hint: Some(format!("no agent `{agent}` has a database; the agents are: {}", agents.join(", "))),
                });
            }
            return pick_stored(arg, id, &candidates);
        }
    }
    match locate(arg, dirs) {
        Err(LocateError::NotFound { arg: a, searched, hint }) => {
            let stores = stores();
            let all: Vec<_> = stores.iter().collect();
            match pick_stored(arg, arg, &all) {
                Err(LocateError::NotFound { .. }) => Err(LocateError::NotFound { arg: a, searched, hint }),
                other => other,
            }
        }
        other => other,
    }
}

/// The stored session whose id is `id` (or the one it is a unique prefix of).
fn pick_stored(arg: &str, id: &str, stores: &[&Store]) -> Result<SessionArg, LocateError> {
    let (mut exact, mut prefix) = (Vec::new(), Vec::new());
    for s in stores {
        // A database that cannot be read holds no session to find here.
        for sid in (s.ids)(&s.db).unwrap_or_default() {
            let hit = (s.db.clone(), s.agent.clone(), sid.clone(), format!("{}:{}/{sid}", s.scheme, s.agent));
            if sid == id {
                exact.push(hit);
            } else if sid.starts_with(id) {
                prefix.push(hit);
            }
        }
    }
    let pick = if exact.is_empty() { prefix } else { exact };
    match pick.len() {
        1 => {
            let (db, agent, id, _) = pick.into_iter().next().expect("one");
            Ok(SessionArg::Stored { db, agent, id })
        }
        0 => Err(LocateError::NotFound {
            arg: arg.to_string(),
            searched: format!("{} session database{}", stores.len(), if stores.len() == 1 { "" } else { "s" }),
            hint: None,
        }),
        _ => Err(LocateError::Ambiguous { arg: arg.to_string(), candidates: pick.into_iter().map(|p| p.3).collect() }),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    #[error("an empty SESSION names no session (an unset variable in a script?)")]
    Empty,
    #[error("no session file or session id matches `{arg}`")]
    NotFound { arg: String, searched: String, hint: Option<String> },
    #[error("session id prefix `{arg}` is ambiguous; it matches:\n{}", candidates.iter().map(|c| format!("  {c}")).collect::<Vec<_>>().join("\n"))]
    Ambiguous { arg: String, candidates: Vec<String> },
}

/// Resolves a SESSION argument. `dirs` lists the folders to look up ids in (asked only
/// when the argument is not a file).
pub fn locate(arg: &str, dirs: impl FnOnce() -> Vec<PathBuf>) -> Result<SessionArg, LocateError> {
    if arg.is_empty() {
        return Err(LocateError::Empty);
    }
    if arg == "-" {
        return Ok(SessionArg::Stdin);
    }
    let looks_like_path = arg.contains('/') || arg.contains('\\') || arg.ends_with(".jsonl");
    // `symlink_metadata`: a name that exists, even as a broken link or a link loop, is a
    // file the user meant (opening it then says what is wrong with it).
    if looks_like_path || Path::new(arg).symlink_metadata().is_ok() {
        return Ok(SessionArg::Path(PathBuf::from(arg)));
    }
    let dirs = dirs();
    let mut exact = Vec::new();
    let mut prefix = Vec::new();
    for dir in &dirs {
        let Ok(read) = std::fs::read_dir(dir) else { continue };
        // Regular files only (a FIFO named `*.jsonl` would block the read).
        let mut files: Vec<PathBuf> = read
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                let name = p.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
                (name.ends_with(".jsonl") || name.ends_with(".jsonl.gz")) && p.metadata().is_ok_and(|m| m.is_file())
            })
            .collect();
        files.sort();
        for path in files {
            let Some(id) = header_id(&path) else { continue };
            if id == arg {
                exact.push((path, id));
            } else if id.starts_with(arg) {
                prefix.push((path, id));
            }
        }
    }
    let pick = if exact.is_empty() { prefix } else { exact };
    match pick.len() {
        1 => Ok(SessionArg::Path(pick.into_iter().next().map(|p| p.0).unwrap_or_default())),
        0 => Err(LocateError::NotFound {
            arg: arg.to_string(),
            searched: if dirs.is_empty() {
                "no session directory (none exists)".into()
            } else if dirs.len() == 1 {
                dirs[0].display().to_string()
            } else {
                format!("{} project folders under {}", dirs.len(), dirs[0].parent().unwrap_or(&dirs[0]).display())
            },
            hint: match dirs.as_slice() {
                [one] => project_folders_hint(one),
                _ => None,
            },
        }),
        _ => Err(LocateError::Ambiguous {
            arg: arg.to_string(),
            candidates: pick.iter().map(|(p, id)| format!("{id}  {}", p.display())).collect(),
        }),
    }
}

/// When the one folder searched holds no sessions but folders that do (pi's
/// `~/.pi/agent/sessions` itself, given as --session-dir), say so.
fn project_folders_hint(dir: &Path) -> Option<String> {
    let read = std::fs::read_dir(dir).ok()?;
    let mut has_sessions = false;
    let mut project_folders = 0;
    for e in read.flatten() {
        let p = e.path();
        if p.is_dir() {
            let holds = std::fs::read_dir(&p)
                .into_iter()
                .flatten()
                .flatten()
                .any(|f| f.path().extension().is_some_and(|x| x == "jsonl"));
            project_folders += usize::from(holds);
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            has_sessions = true;
        }
    }
    (!has_sessions && project_folders > 0).then(|| {
        format!(
            "{} holds no sessions itself but {project_folders} folder{} of them (pi keeps one per project); give one of those, or leave out --session-dir to search them all",
            dir.display(),
            if project_folders == 1 { "" } else { "s" }
        )
    })
}

/// What a directory holds for commands that read every session in it.
#[derive(Debug, Default)]
pub struct Walk {
    /// `*.jsonl` regular files (or links to them), sorted.
    pub files: Vec<PathBuf>,
    /// `*.jsonl` names that are not regular files (a FIFO would block a read, a device
    /// never ends), with what they are.
    pub skipped: Vec<(PathBuf, &'static str)>,
    /// Files a format recognises as not sessions (event logs that start like one), with
    /// what they are.
    pub not_sessions: Vec<(PathBuf, &'static str)>,
}

/// Every `*.jsonl` below `dir`. Links to directories are not followed (a link back to an
/// ancestor would never end).
pub fn walk_sessions(dir: &Path, formats: &[&'static dyn super::format::Format]) -> Walk {
    let mut walk = Walk::default();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(read) = std::fs::read_dir(&d) else { continue };
        for e in read.flatten() {
            let p = e.path();
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(p);
                continue;
            }
            let name = p.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
            // `.jsonl.gz`: oh-my-pi's archived sessions.
            if !(name.ends_with(".jsonl") || name.ends_with(".jsonl.gz")) {
                continue;
            }
            match p.metadata() {
                Ok(m) if m.is_file() => walk.files.push(p),
                Ok(m) if m.is_dir() => walk.skipped.push((p, "a directory")),
                Ok(m) => walk.skipped.push((p, special_kind(&m))),
                Err(_) => walk.skipped.push((p, "a broken link")),
            }
        }
    }
    walk.files.retain(|p| match not_a_session(p, formats) {
        Some(what) => {
            walk.not_sessions.push((p.clone(), what));
            false
        }
        None => true,
    });
    walk.files.sort();
    walk.skipped.sort();
    walk.not_sessions.sort();
    walk
}

/// What `p` (a `*.jsonl` name in a session folder) is: a session file, with the format its
/// head shows (`None`: none, or compressed), or why it is not a session to read (`Err`):
/// not a regular file (a FIFO would block a read), or a file a format recognises as not a
/// session (an event log that starts like one).
pub fn walk_kind(
    p: &Path,
    formats: &[&'static dyn super::format::Format],
) -> Result<Option<&'static super::format::FormatInfo>, String> {
    match p.metadata() {
        Ok(m) if m.is_file() => match format_of_head(p, formats) {
            Some(f) if !f.is_session() => Err(f.info().agent.to_string()),
            f => Ok(f.map(|f| f.info())),
        },
        Ok(m) if m.is_dir() => Err("a directory".into()),
        Ok(m) => Err(special_kind(&m).into()),
        Err(_) => Err("a broken link".into()),
    }
}

/// What the file at `p` is when a format recognises it as not a session (from its head;
/// a compressed file is not looked into here).
fn not_a_session(p: &Path, formats: &[&'static dyn super::format::Format]) -> Option<&'static str> {
    let f = format_of_head(p, formats)?;
    (!f.is_session()).then(|| f.info().agent)
}

/// The format the first bytes of the file at `p` show (`None`: none, a compressed file,
/// which is not looked into here, or the file cannot be read).
pub fn format_of_head(
    p: &Path,
    formats: &[&'static dyn super::format::Format],
) -> Option<&'static dyn super::format::Format> {
    use std::io::Read;
    let mut head = Vec::with_capacity(super::format::SNIFF_BYTES);
    std::fs::File::open(p).ok()?.take(super::format::SNIFF_BYTES as u64).read_to_end(&mut head).ok()?;
    // (gzip, zstd: what `Source::open` decompresses.)
    if head.starts_with(&[0x1f, 0x8b]) || head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        return None;
    }
    super::format::detect_bytes(&head, formats)
}

#[cfg(unix)]
fn special_kind(m: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &std::fs::Metadata) -> &'static str {
    "not a regular file"
}

/// The session id of a file: a pi header's `id` (the first parsed line within the first
/// MiB, as pi's discovery reads it), or the name of a Claude Code file.
pub fn header_id(path: &Path) -> Option<String> {
    // Codex: `rollout-<time>-<thread id>.jsonl`, named by the id its first line holds.
    if let Some(id) = path.file_stem().and_then(|s| s.to_str()).and_then(|s| s.strip_prefix("rollout-")) {
        if let Some(tail) =
            id.get(id.len().saturating_sub(36)..).filter(|t| t.len() == 36 && t.matches('-').count() == 4)
        {
            return Some(tail.to_string());
        }
    }
    // oh-my-pi's archive: `<time>_<session id>.jsonl.gz`, gzipped (named by its header's id).
    if let Some(stem) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".jsonl.gz")) {
        return stem.rsplit_once('_').map(|(_, id)| id.to_string());
    }
    let mut buf = Vec::new();
    File::open(path).ok()?.take(1 << 20).read_to_end(&mut buf).ok()?;
    for line in buf.split(|&b| b == b'\n') {
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line) else { continue };
        if v.get("type").and_then(Value::as_str) == Some("session") {
            return v.get("id").and_then(Value::as_str).map(str::to_string);
        }
        // Claude Code: no header; the file is named by its session id, which its lines
        // carry (a `--fork-session` copy is named by its own).
        if v.get("sessionId").is_some_and(Value::is_string) {
            return path.file_stem().and_then(|s| s.to_str()).map(str::to_string);
        }
        // oh-my-pi's title slot comes before its header.
        if matches!(v.get("type").and_then(Value::as_str), Some("summary" | "title")) {
            continue;
        }
        // An older Codex rollout named otherwise: its `session_meta`'s id.
        if v.get("type").and_then(Value::as_str) == Some("session_meta") {
            return v.pointer("/payload/id").and_then(Value::as_str).map(str::to_string);
        }
        return None;
    }
    None
}

impl crate::exit::Hint for LocateError {
    fn hint(&self) -> Option<String> {
        match self {
            LocateError::Empty => Some("give a session file, `-` for standard input, or a session id".into()),
            LocateError::NotFound { searched, hint, .. } => Some(match hint {
                Some(h) => h.clone(),
                None => format!("looked for a file of that name, then for session ids in {searched}"),
            }),
            LocateError::Ambiguous { .. } => Some("give more of the id".into()),
        }
    }
}
