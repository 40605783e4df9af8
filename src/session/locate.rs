//! Finding a session from a SESSION argument: a path, `-`, or a session id / unique id
//! prefix looked up the way `pi --session <id>` does (§1.1, §1.2).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Where a session's bytes come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionArg {
    Stdin,
    Path(PathBuf),
}

/// Where to look for sessions by id.
#[derive(Debug, Clone, Default)]
pub struct SearchDirs {
    /// `--session-dir`.
    pub session_dir: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    #[error("no session file or session id matches `{arg}`\n  (looked for a file of that name, then for session ids in {searched})")]
    NotFound { arg: String, searched: String },
    #[error("session id prefix `{arg}` is ambiguous; it matches:\n{}", candidates.iter().map(|c| format!("  {c}")).collect::<Vec<_>>().join("\n"))]
    Ambiguous { arg: String, candidates: Vec<String> },
}

impl SearchDirs {
    /// The directories to scan, in pi's order of precedence: `--session-dir`, then
    /// `PI_CODING_AGENT_SESSION_DIR`, then every project folder under
    /// `$PI_CODING_AGENT_DIR/sessions` (default `~/.pi/agent/sessions/*/`).
    pub fn dirs(&self) -> Vec<PathBuf> {
        if let Some(d) = &self.session_dir {
            return vec![d.clone()];
        }
        if let Some(d) = std::env::var_os("PI_CODING_AGENT_SESSION_DIR").filter(|d| !d.is_empty()) {
            return vec![PathBuf::from(d)];
        }
        let agent = match std::env::var_os("PI_CODING_AGENT_DIR").filter(|d| !d.is_empty()) {
            Some(d) => PathBuf::from(d),
            None => match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
                Some(h) => PathBuf::from(h).join(".pi").join("agent"),
                None => return vec![],
            },
        };
        let root = agent.join("sessions");
        let mut dirs: Vec<PathBuf> =
            std::fs::read_dir(&root).into_iter().flatten().flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
        dirs.sort();
        dirs
    }
}

/// Resolves a SESSION argument.
pub fn locate(arg: &str, search: &SearchDirs) -> Result<SessionArg, LocateError> {
    if arg == "-" {
        return Ok(SessionArg::Stdin);
    }
    let looks_like_path = arg.contains('/') || arg.contains('\\') || arg.ends_with(".jsonl");
    if looks_like_path || Path::new(arg).exists() {
        return Ok(SessionArg::Path(PathBuf::from(arg)));
    }
    let dirs = search.dirs();
    let mut exact = Vec::new();
    let mut prefix = Vec::new();
    for dir in &dirs {
        let Ok(read) = std::fs::read_dir(dir) else { continue };
        let mut files: Vec<PathBuf> =
            read.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "jsonl")).collect();
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
        1 => Ok(SessionArg::Path(pick.into_iter().next().expect("one").0)),
        0 => Err(LocateError::NotFound {
            arg: arg.to_string(),
            searched: if dirs.is_empty() {
                "no session directory (none exists)".into()
            } else if dirs.len() == 1 {
                dirs[0].display().to_string()
            } else {
                format!("{} project folders under {}", dirs.len(), dirs[0].parent().unwrap_or(&dirs[0]).display())
            },
        }),
        _ => Err(LocateError::Ambiguous {
            arg: arg.to_string(),
            candidates: pick.iter().map(|(p, id)| format!("{id}  {}", p.display())).collect(),
        }),
    }
}

/// The session id in a file's header: the first parsed line within the first MiB, as
/// pi's discovery reads it.
pub fn header_id(path: &Path) -> Option<String> {
    let mut buf = Vec::new();
    File::open(path).ok()?.take(1 << 20).read_to_end(&mut buf).ok()?;
    for line in buf.split(|&b| b == b'\n') {
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line) else { continue };
        if v.get("type").and_then(Value::as_str) != Some("session") {
            return None;
        }
        return v.get("id").and_then(Value::as_str).map(str::to_string);
    }
    None
}
