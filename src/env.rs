//! Everything pisces takes from the process environment, read once at start-up
//! ([`Env::from_process`]) and passed down. Nothing else in the crate reads environment
//! variables or the working directory, so a test can build any environment it likes
//! ([`Env::from_vars`]) and the model layer never depends on where it runs.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The environment, resolved.
#[derive(Clone, Debug, Default)]
pub struct Env {
    vars: BTreeMap<String, OsString>,
    /// `$HOME`, when set and not empty.
    pub home: Option<PathBuf>,
    /// The working directory (`None` if it no longer exists).
    pub cwd: Option<PathBuf>,
    /// pi's agent directory: `$PI_CODING_AGENT_DIR` (a leading `~` expanded, as pi does),
    /// else `~/.pi/agent`.
    pub pi_agent_dir: Option<PathBuf>,
    /// `$PI_CODING_AGENT_SESSION_DIR`: where pi keeps sessions instead of its per-project
    /// folders.
    pub pi_session_dir: Option<PathBuf>,
    /// Where temporary files go: `$TMPDIR`, else `/tmp` (as `std::env::temp_dir` decides
    /// on Unix, but from this environment).
    pub temp_dir: PathBuf,
    /// Claude Code's `projects` folders: `<dir>/projects` for each of the comma-separated
    /// `$CLAUDE_CONFIG_DIR`, else `~/.claude/projects` and `~/.config/claude/projects`.
    pub claude_projects: Vec<PathBuf>,
    /// `$CODEX_HOME`, else `~/.codex`: Codex CLI's store (`sessions/YYYY/MM/DD/`,
    /// `archived_sessions/`).
    pub codex_home: Option<PathBuf>,
    /// oh-my-pi's folders that hold `sessions/`, `archive/sessions/` and `blobs/`: the
    /// agent folder (`~/.omp/agent`; `~/.omp/profiles/$OMP_PROFILE/agent` for a profile,
    /// `$PI_PROFILE` when `OMP_PROFILE` is unset; `$PI_CODING_AGENT_DIR` overrides the
    /// default profile's), and `$XDG_DATA_HOME/omp` (`…/omp/profiles/<name>`) when it
    /// exists, which omp uses once its data was moved there.
    pub omp_dirs: Vec<PathBuf>,
    /// OpenClaw's state folders (`$OPENCLAW_STATE_DIR`, else `~/.openclaw`), whose
    /// `agents/<agent>/agent/openclaw-agent.sqlite` hold its transcripts.
    pub openclaw_states: Vec<PathBuf>,
    /// pisces's own cache folder: `$XDG_CACHE_HOME/pisces`, else `~/.cache/pisces`.
    pub cache_dir: Option<PathBuf>,
}

impl Env {
    /// Reads this process's environment and working directory.
    pub fn from_process() -> Env {
        let vars = std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v))).collect();
        Env::from_vars(vars, std::env::current_dir().ok())
    }

    /// An environment from given variables (tests, and embedding).
    pub fn from_vars(vars: BTreeMap<String, OsString>, cwd: Option<PathBuf>) -> Env {
        let mut env = Env { vars, cwd, ..Env::default() };
        env.home = env.var_os("HOME").map(PathBuf::from);
        env.pi_agent_dir = match env.var("PI_CODING_AGENT_DIR") {
            Some(d) => Some(expand_tilde(&d, env.home.as_deref())),
            None => env.home.as_ref().map(|h| h.join(".pi").join("agent")),
        };
        env.pi_session_dir = env.var_os("PI_CODING_AGENT_SESSION_DIR").map(PathBuf::from);
        env.temp_dir =
            env.var_os("TMPDIR").filter(|d| !d.is_empty()).map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
        env.claude_projects = match env.var("CLAUDE_CONFIG_DIR") {
            Some(dirs) => dirs
                .split(',')
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(|d| expand_tilde(d, env.home.as_deref()).join("projects"))
                .collect(),
            None => env
                .home
                .iter()
                .flat_map(|h| [h.join(".claude").join("projects"), h.join(".config").join("claude").join("projects")])
                .collect(),
        };
        env.codex_home = match env.var("CODEX_HOME") {
            Some(d) => Some(expand_tilde(&d, env.home.as_deref())),
            None => env.home.as_ref().map(|h| h.join(".codex")),
        };
        env.omp_dirs = env.omp_roots();
        env.cache_dir = match env.var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
            Some(d) => Some(PathBuf::from(d).join("pisces")),
            None => env.home.as_ref().map(|h| h.join(".cache").join("pisces")),
        };
        env.openclaw_states = match env.var("OPENCLAW_STATE_DIR") {
            Some(d) => vec![expand_tilde(&d, env.home.as_deref())],
            None => env.home.iter().map(|h| h.join(".openclaw")).collect(),
        };
        env
    }

    /// See [`Env::omp_dirs`] (omp's `DirResolver`, pi-utils/src/dirs.ts).
    fn omp_roots(&self) -> Vec<PathBuf> {
        // An OMP_PROFILE that is set, even empty, decides; PI_PROFILE is the fallback.
        let profile = match self.vars.get("OMP_PROFILE") {
            Some(p) => p.to_str().map(str::trim).unwrap_or_default().to_string(),
            None => self.var("PI_PROFILE").map(|p| p.trim().to_string()).unwrap_or_default(),
        };
        let profile = Some(profile).filter(|p| !p.is_empty());
        let mut dirs = Vec::new();
        let Some(home) = &self.home else { return dirs };
        let root = home.join(".omp");
        match &profile {
            Some(p) => dirs.push(root.join("profiles").join(p).join("agent")),
            None => dirs.push(match self.var("PI_CODING_AGENT_DIR") {
                Some(d) => expand_tilde(&d, Some(home)),
                None => root.join("agent"),
            }),
        }
        if let Some(xdg) = self.var("XDG_DATA_HOME") {
            let app = PathBuf::from(xdg).join("omp");
            let app = match &profile {
                Some(p) => app.join("profiles").join(p),
                None => app,
            };
            if app.is_dir() {
                dirs.push(app);
            }
        }
        dirs
    }

    /// oh-my-pi's session buckets (`sessions/<bucket>/`) and archive buckets
    /// (`archive/sessions/<bucket>/`, where `omp gc` puts gzipped sessions), sorted.
    pub fn omp_session_dirs(&self) -> Vec<PathBuf> {
        let roots: Vec<PathBuf> = self.omp_dirs.iter().map(|d| d.join("sessions")).collect();
        let archives: Vec<PathBuf> = self.omp_dirs.iter().map(|d| d.join("archive").join("sessions")).collect();
        let mut dirs = subfolders(&roots);
        dirs.extend(subfolders(&archives));
        dirs
    }

    /// Codex CLI's folders of rollouts: each day's folder under `sessions/`, and
    /// `archived_sessions/` (and any day folders inside it), sorted.
    pub fn codex_session_dirs(&self) -> Vec<PathBuf> {
        let Some(home) = &self.codex_home else { return Vec::new() };
        let days = subfolders(&subfolders(&subfolders(&[home.join("sessions")])));
        let archived = home.join("archived_sessions");
        let mut dirs = days;
        if archived.is_dir() {
            dirs.extend(subfolders(&subfolders(&subfolders(std::slice::from_ref(&archived)))));
            dirs.push(archived);
        }
        dirs
    }

    /// Claude Code's project folders (one per working directory), sorted.
    pub fn claude_session_dirs(&self) -> Vec<PathBuf> {
        subfolders(&self.claude_projects)
    }

    /// Every agent's folders of sessions, where a session id is looked up: `--session-dir`
    /// alone when given, else pi's (see [`Env::pi_session_dirs`]), oh-my-pi's, Claude Code's
    /// and Codex's.
    pub fn session_dirs(&self, session_dir: Option<&Path>) -> Vec<PathBuf> {
        let mut dirs = self.pi_session_dirs(session_dir);
        if session_dir.is_none() {
            dirs.extend(self.omp_session_dirs());
            dirs.extend(self.claude_session_dirs());
            dirs.extend(self.codex_session_dirs());
        }
        dirs
    }

    /// A variable, when set and not empty.
    pub fn var_os(&self, name: &str) -> Option<&OsString> {
        self.vars.get(name).filter(|v| !v.is_empty())
    }

    /// A variable as UTF-8, when set and not empty.
    pub fn var(&self, name: &str) -> Option<String> {
        self.var_os(name).and_then(|v| v.to_str()).map(str::to_string)
    }

    /// The home directory as pi shows it in tool paths: `$HOME || $USERPROFILE`.
    pub fn pi_home(&self) -> String {
        self.var("HOME").or_else(|| self.var("USERPROFILE")).unwrap_or_default()
    }

    /// The working directory as text (empty when unknown).
    pub fn cwd_string(&self) -> String {
        self.cwd.as_ref().map(|c| c.to_string_lossy().into_owned()).unwrap_or_default()
    }

    /// pi's folders of sessions, in the order `pi --session <id>` looks: `--session-dir`
    /// (given), else `$PI_CODING_AGENT_SESSION_DIR`, else every project folder under
    /// `<agent dir>/sessions`.
    pub fn pi_session_dirs(&self, session_dir: Option<&Path>) -> Vec<PathBuf> {
        if let Some(d) = session_dir {
            return vec![d.to_path_buf()];
        }
        if let Some(d) = &self.pi_session_dir {
            return vec![d.clone()];
        }
        let Some(agent) = &self.pi_agent_dir else { return vec![] };
        subfolders(&[agent.join("sessions")])
    }
}

/// The folders directly inside each of `roots`, sorted.
fn subfolders(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = roots
        .iter()
        .flat_map(|r| std::fs::read_dir(r).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// pi's `~` expansion of a configured directory: `~` and `~/…` are under the home
/// directory; anything else is taken as it is.
pub fn expand_tilde(dir: &str, home: Option<&Path>) -> PathBuf {
    match (dir.strip_prefix('~'), home) {
        (Some(rest), Some(h)) if rest.is_empty() || rest.starts_with('/') => h.join(rest.trim_start_matches('/')),
        _ => PathBuf::from(dir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        let vars = pairs.iter().map(|(k, v)| (k.to_string(), OsString::from(v))).collect();
        Env::from_vars(vars, Some(PathBuf::from("/work")))
    }

    #[test]
    fn the_agent_dir_is_resolved_once_with_tilde_expanded() {
        assert_eq!(env(&[("HOME", "/home/dev")]).pi_agent_dir, Some(PathBuf::from("/home/dev/.pi/agent")));
        let e = env(&[("HOME", "/home/dev"), ("PI_CODING_AGENT_DIR", "~/pi")]);
        assert_eq!(e.pi_agent_dir, Some(PathBuf::from("/home/dev/pi")));
        let e = env(&[("HOME", "/home/dev"), ("PI_CODING_AGENT_DIR", "~other/pi")]);
        assert_eq!(e.pi_agent_dir, Some(PathBuf::from("~other/pi")));
        assert_eq!(env(&[("HOME", "")]).pi_agent_dir, None);
        assert_eq!(env(&[("USERPROFILE", "C:\\Users\\dev")]).pi_home(), "C:\\Users\\dev");
    }
}
