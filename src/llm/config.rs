//! The user's pi configuration, read the way pi 1.6.0 reads it, so that a pi user needs no
//! extra setup: custom providers and models from `models.json`, and the settings pisces
//! uses from `settings.json` (docs/pi-format.md §6.1).
//!
//! - The agent directory is `$PI_CODING_AGENT_DIR` (a leading `~` is expanded) or
//!   `~/.pi/agent`.
//! - `models.json` may hold `//` comments and trailing commas (pi strips them).
//! - `settings.json` is the global file merged recursively with `<cwd>/.pi/settings.json`.
//!   pi reads the project file only once the user trusted the project; pisces always reads
//!   it (it only takes token budgets and retry settings from it).
//! - A missing file is no configuration; a file that cannot be read or parsed is reported in
//!   [`PiConfig::problems`] and ignored, as pi reports and ignores it.
//!
//! Nothing here is ever written, and no key is ever read from here into a message: API key
//! values in `models.json` are resolved only when a provider is opened.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use super::provider::ModelSpec;

/// pi's settings and custom models. (`Debug` shows provider names only: `models.json`
/// may hold literal keys.)
#[derive(Clone, Default)]
pub struct PiConfig {
    /// The agent directory the files were read from (none: nothing was read).
    pub agent_dir: Option<PathBuf>,
    /// `models.json` `providers` (provider name → its configuration).
    providers: Map<String, Value>,
    /// The merged settings object.
    settings: Map<String, Value>,
    /// Files that exist but could not be used, and settings with invalid values.
    pub problems: Vec<String>,
}

impl std::fmt::Debug for PiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PiConfig")
            .field("agent_dir", &self.agent_dir)
            .field("providers", &self.provider_names())
            .field("settings", &self.settings)
            .field("problems", &self.problems)
            .finish()
    }
}

/// `compaction` settings for one model (pi's `getCompactionSettings(model)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompactionSettings {
    pub enabled: bool,
    pub reserve_tokens: u64,
    pub keep_recent_tokens: u64,
}

/// `branchSummary` settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BranchSummarySettings {
    pub reserve_tokens: u64,
    pub skip_prompt: bool,
}

/// `retry` settings (pi's agent-level retry of transient errors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetrySettings {
    pub enabled: bool,
    pub max_retries: u32,
    pub base_delay: Duration,
    /// `maxAgentDelayMs`: the longest wait between two attempts.
    pub max_delay: Duration,
}

impl Default for RetrySettings {
    fn default() -> Self {
        RetrySettings {
            enabled: true,
            max_retries: 3,
            base_delay: Duration::from_millis(2000),
            max_delay: Duration::from_millis(60_000),
        }
    }
}

/// pi's default HTTP idle timeout (`httpIdleTimeoutMs`): 5 minutes.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_millis(300_000);

impl PiConfig {
    /// Reads `models.json` and `settings.json` from pi's agent directory, merged with
    /// `<project>/.pi/settings.json` (`None`: not read).
    pub fn load_from(agent_dir: Option<&Path>, project_dir: Option<&Path>) -> PiConfig {
        let mut problems = Vec::new();
        let mut read = |path: PathBuf| -> Option<String> {
            match std::fs::read_to_string(&path) {
                Ok(text) => Some(text),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => {
                    problems.push(format!("{}: cannot read: {e}", path.display()));
                    None
                }
            }
        };
        let models = agent_dir.and_then(|d| read(d.join("models.json")).map(|t| (d.join("models.json"), t)));
        let global = agent_dir.and_then(|d| read(d.join("settings.json")).map(|t| (d.join("settings.json"), t)));
        let project = project_dir
            .and_then(|d| read(d.join(".pi").join("settings.json")).map(|t| (d.join(".pi/settings.json"), t)));
        let mut config = PiConfig::from_texts(
            models.as_ref().map(|(p, t)| (p.as_path(), t.as_str())),
            global.as_ref().map(|(p, t)| (p.as_path(), t.as_str())),
            project.as_ref().map(|(p, t)| (p.as_path(), t.as_str())),
        );
        config.agent_dir = agent_dir.map(Path::to_path_buf);
        problems.append(&mut config.problems);
        config.problems = problems;
        config
    }

    /// A configuration from file contents (for tests, and callers that read files
    /// themselves). Each text comes with the path it is named by in problems.
    pub fn from_texts(
        models_json: Option<(&Path, &str)>,
        global_settings: Option<(&Path, &str)>,
        project_settings: Option<(&Path, &str)>,
    ) -> PiConfig {
        let mut config = PiConfig::default();
        if let Some((path, text)) = models_json {
            match serde_json::from_str::<Value>(&strip_json_comments(strip_bom(text))) {
                Ok(Value::Object(mut root)) => match root.remove("providers") {
                    Some(Value::Object(providers)) => config.providers = providers,
                    _ => config.problems.push(format!("{}: no \"providers\" object", path.display())),
                },
                Ok(_) => config.problems.push(format!("{}: not a JSON object", path.display())),
                Err(e) => config.problems.push(format!("{}: invalid JSON: {e}", path.display())),
            }
        }
        for (path, text) in [global_settings, project_settings].into_iter().flatten() {
            match serde_json::from_str::<Value>(strip_bom(text)) {
                Ok(Value::Object(settings)) => deep_merge(&mut config.settings, settings),
                Ok(_) => config.problems.push(format!("{}: not a JSON object", path.display())),
                Err(e) => config.problems.push(format!("{}: invalid JSON: {e}", path.display())),
            }
        }
        config.validate();
        config
    }

    /// A configuration from JSON values (tests): `models` is the whole `models.json`.
    pub fn from_values(models: Option<Value>, settings: Option<Value>) -> PiConfig {
        let mut config = PiConfig::default();
        if let Some(Value::Object(providers)) = models.and_then(|mut m| m.get_mut("providers").map(Value::take)) {
            config.providers = providers;
        }
        if let Some(Value::Object(settings)) = settings {
            config.settings = settings;
        }
        config.validate();
        config
    }

    /// The `models.json` entry of a provider.
    pub fn provider(&self, name: &str) -> Option<&Map<String, Value>> {
        self.providers.get(name).and_then(Value::as_object)
    }

    /// Provider names `models.json` defines.
    pub fn provider_names(&self) -> Vec<&str> {
        self.providers.keys().map(String::as_str).collect()
    }

    /// The merged settings object (read-only).
    pub fn settings(&self) -> &Map<String, Value> {
        &self.settings
    }

    /// `compaction.{enabled, reserveTokens, keepRecentTokens}`, each token budget taken from
    /// `compaction.modelOverrides["provider/id"]` first when a model is given, then the
    /// ordinary setting, then pi's default (16384, 20000).
    pub fn compaction(&self, model: Option<&ModelSpec>) -> CompactionSettings {
        let compaction = self.settings.get("compaction");
        let over = model.and_then(|m| {
            compaction?.get("modelOverrides")?.get(format!("{}/{}", m.provider, m.id)).filter(|v| v.is_object())
        });
        let token = |field: &str, default: u64| {
            over.and_then(|o| token_value(o.get(field)))
                .or_else(|| token_value(compaction.and_then(|c| c.get(field))))
                .unwrap_or(default)
        };
        CompactionSettings {
            enabled: compaction.and_then(|c| c.get("enabled")).and_then(Value::as_bool).unwrap_or(true),
            reserve_tokens: token("reserveTokens", 16384),
            keep_recent_tokens: token("keepRecentTokens", 20000),
        }
    }

    /// `branchSummary.{reserveTokens, skipPrompt}` (defaults 16384, false).
    pub fn branch_summary(&self) -> BranchSummarySettings {
        let b = self.settings.get("branchSummary");
        BranchSummarySettings {
            reserve_tokens: token_value(b.and_then(|b| b.get("reserveTokens"))).unwrap_or(16384),
            skip_prompt: b.and_then(|b| b.get("skipPrompt")).and_then(Value::as_bool).unwrap_or(false),
        }
    }

    /// `retry.{enabled, maxRetries, baseDelayMs, maxAgentDelayMs}` (defaults true, 3, 2000, 60000).
    pub fn retry(&self) -> RetrySettings {
        let r = self.settings.get("retry");
        let get = |k: &str| token_value(r.and_then(|r| r.get(k)));
        let d = RetrySettings::default();
        RetrySettings {
            enabled: r.and_then(|r| r.get("enabled")).and_then(Value::as_bool).unwrap_or(d.enabled),
            max_retries: get("maxRetries").map_or(d.max_retries, |n| n.min(u64::from(u32::MAX)) as u32),
            base_delay: get("baseDelayMs").map_or(d.base_delay, Duration::from_millis),
            max_delay: get("maxAgentDelayMs").map_or(d.max_delay, Duration::from_millis),
        }
    }

    /// `httpIdleTimeoutMs` (default 5 minutes); `None` when set to 0 or `"disabled"`.
    pub fn http_idle_timeout(&self) -> Option<Duration> {
        match self.settings.get("httpIdleTimeoutMs") {
            Some(Value::String(s)) if s.trim().eq_ignore_ascii_case("disabled") => None,
            Some(Value::String(s)) => match s.trim().parse::<f64>() {
                Ok(0.0) => None,
                Ok(n) if n > 0.0 && n.is_finite() => Some(Duration::from_millis(n as u64)),
                _ => Some(DEFAULT_IDLE_TIMEOUT),
            },
            Some(Value::Number(n)) => match n.as_f64() {
                Some(0.0) => None,
                Some(f) if f > 0.0 && f.is_finite() => Some(Duration::from_millis(f as u64)),
                _ => Some(DEFAULT_IDLE_TIMEOUT),
            },
            _ => Some(DEFAULT_IDLE_TIMEOUT),
        }
    }

    /// `defaultProvider` + `defaultModel`, the model pi starts with.
    pub fn default_model(&self) -> Option<ModelSpec> {
        let provider = self.settings.get("defaultProvider")?.as_str()?;
        let id = self.settings.get("defaultModel")?.as_str()?;
        (!provider.is_empty() && !id.is_empty()).then(|| ModelSpec { provider: provider.into(), id: id.into() })
    }

    /// `defaultThinkingLevel`.
    pub fn default_thinking_level(&self) -> Option<&str> {
        self.settings.get("defaultThinkingLevel")?.as_str()
    }

    /// `modelThinkingLevels["provider/id"]`: a thinking level for one model.
    pub fn model_thinking_level(&self, model: &ModelSpec) -> Option<&str> {
        self.settings.get("modelThinkingLevels")?.get(format!("{}/{}", model.provider, model.id))?.as_str()
    }

    /// Records the settings pi would reject (it throws on them; pisces uses the default).
    fn validate(&mut self) {
        let mut bad = Vec::new();
        let mut check = |name: String, v: Option<&Value>| {
            if let Some(v) = v {
                if token_value(Some(v)).is_none() {
                    bad.push(format!(
                        "settings: invalid {name}: {v} (expected a non-negative integer; using the default)"
                    ));
                }
            }
        };
        if let Some(c) = self.settings.get("compaction") {
            check("compaction.reserveTokens".into(), c.get("reserveTokens"));
            check("compaction.keepRecentTokens".into(), c.get("keepRecentTokens"));
            if let Some(Value::Object(overrides)) = c.get("modelOverrides") {
                for (key, o) in overrides {
                    check(format!("compaction.modelOverrides[\"{key}\"].reserveTokens"), o.get("reserveTokens"));
                    check(format!("compaction.modelOverrides[\"{key}\"].keepRecentTokens"), o.get("keepRecentTokens"));
                }
            }
        }
        if let Some(b) = self.settings.get("branchSummary") {
            check("branchSummary.reserveTokens".into(), b.get("reserveTokens"));
        }
        self.problems.extend(bad);
    }
}

/// A non-negative safe integer (pi's `Number.isSafeInteger(x) && x >= 0`).
fn token_value(v: Option<&Value>) -> Option<u64> {
    let n = v?.as_f64()?;
    (n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0).then_some(n as u64)
}

/// pi's `deepMergeObjects`: objects merge key by key, anything else replaces.
fn deep_merge(base: &mut Map<String, Value>, over: Map<String, Value>) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(Value::Object(b)), Value::Object(o)) => deep_merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

fn strip_bom(s: &str) -> &str {
    s.strip_prefix('\u{feff}').unwrap_or(s)
}

/// pi's `stripJsonComments`: removes `//` line comments and trailing commas before `}` or
/// `]`, leaving string literals untouched.
pub(crate) fn strip_json_comments(input: &str) -> String {
    // Pass 1: comments.
    let mut out = String::with_capacity(input.len());
    let mut chars = input.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        match c {
            '"' => {
                out.push(c);
                let mut escaped = false;
                for (_, c) in chars.by_ref() {
                    out.push(c);
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        break;
                    }
                }
            }
            '/' if chars.peek().map(|(_, c)| *c) == Some('/') => {
                while let Some((_, c)) = chars.peek() {
                    if *c == '\n' {
                        break;
                    }
                    chars.next();
                }
            }
            _ => out.push(c),
        }
    }
    // Pass 2: trailing commas.
    let text = out;
    let mut out = String::with_capacity(text.len());
    let bytes: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == '"' {
            out.push(c);
            i += 1;
            let mut escaped = false;
            while i < bytes.len() {
                let c = bytes[i];
                out.push(c);
                i += 1;
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == '"' {
                    break;
                }
            }
            continue;
        }
        if c == ',' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j].is_whitespace() {
                j += 1;
            }
            if j < bytes.len() && (bytes[j] == '}' || bytes[j] == ']') {
                i += 1;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(s: &str) -> ModelSpec {
        ModelSpec::parse(s).unwrap()
    }

    #[test]
    fn defaults_without_files() {
        let c = PiConfig::default();
        assert_eq!(
            c.compaction(None),
            CompactionSettings { enabled: true, reserve_tokens: 16384, keep_recent_tokens: 20000 }
        );
        assert_eq!(c.branch_summary(), BranchSummarySettings { reserve_tokens: 16384, skip_prompt: false });
        assert_eq!(c.retry(), RetrySettings::default());
        assert_eq!(c.http_idle_timeout(), Some(DEFAULT_IDLE_TIMEOUT));
        assert!(c.default_model().is_none());
    }

    #[test]
    fn global_and_project_settings_merge_and_model_overrides_win() {
        let global = r#"{"compaction":{"reserveTokens":10000,"keepRecentTokens":5000,
            "modelOverrides":{"ollama/qwen3:8b":{"keepRecentTokens":2000}}},
            "defaultProvider":"anthropic","defaultModel":"claude-sonnet-4-5","retry":{"maxRetries":5}}"#;
        let project = "\u{feff}{\"compaction\":{\"reserveTokens\":8000},\"branchSummary\":{\"reserveTokens\":4000}}";
        let c = PiConfig::from_texts(None, Some((Path::new("g"), global)), Some((Path::new("p"), project)));
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert_eq!(
            c.compaction(None),
            CompactionSettings { enabled: true, reserve_tokens: 8000, keep_recent_tokens: 5000 }
        );
        assert_eq!(
            c.compaction(Some(&spec("ollama/qwen3:8b"))),
            CompactionSettings { enabled: true, reserve_tokens: 8000, keep_recent_tokens: 2000 }
        );
        assert_eq!(c.branch_summary().reserve_tokens, 4000);
        assert_eq!(c.retry().max_retries, 5);
        assert_eq!(c.retry().base_delay, Duration::from_millis(2000));
        assert_eq!(c.default_model(), Some(spec("anthropic/claude-sonnet-4-5")));
    }

    #[test]
    fn invalid_values_are_reported_and_defaulted() {
        let settings = r#"{"compaction":{"reserveTokens":-1,"keepRecentTokens":"lots"}}"#;
        let c = PiConfig::from_texts(None, Some((Path::new("s.json"), settings)), None);
        assert_eq!(c.problems.len(), 2, "{:?}", c.problems);
        assert_eq!(c.compaction(None).reserve_tokens, 16384);
        let broken = PiConfig::from_texts(Some((Path::new("models.json"), "{")), None, None);
        assert!(broken.problems[0].starts_with("models.json: invalid JSON"), "{:?}", broken.problems);
    }

    #[test]
    fn models_json_with_comments_and_trailing_commas() {
        let text = r#"{
            // local models
            "providers": {
                "ollama": {
                    "baseUrl": "http://localhost:11434/v1", // the default
                    "api": "openai-completions",
                    "apiKey": "ollama",
                    "models": [{"id": "qwen3:8b", "contextWindow": 40960,},],
                },
                "url": {"baseUrl": "http://a//b", "models": []}
            }
        }"#;
        let c = PiConfig::from_texts(Some((Path::new("models.json"), text)), None, None);
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert_eq!(c.provider("ollama").unwrap()["models"][0]["contextWindow"], json!(40960));
        assert_eq!(c.provider("url").unwrap()["baseUrl"], json!("http://a//b"));
        assert_eq!(c.provider_names(), vec!["ollama", "url"]);
    }

    #[test]
    fn debug_hides_models_json() {
        let c = PiConfig::from_values(Some(json!({"providers": {"x": {"apiKey": "sk-literal-secret"}}})), None);
        let debug = format!("{c:?}");
        assert!(debug.contains("\"x\"") && !debug.contains("sk-literal-secret"), "{debug}");
    }

    #[test]
    fn idle_timeout_setting() {
        let c = PiConfig::from_values(None, Some(json!({"httpIdleTimeoutMs": 0})));
        assert_eq!(c.http_idle_timeout(), None);
        let c = PiConfig::from_values(None, Some(json!({"httpIdleTimeoutMs": "disabled"})));
        assert_eq!(c.http_idle_timeout(), None);
        let c = PiConfig::from_values(None, Some(json!({"httpIdleTimeoutMs": 30000})));
        assert_eq!(c.http_idle_timeout(), Some(Duration::from_secs(30)));
    }

    #[test]
    fn load_from_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent");
        let project = dir.path().join("proj");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(project.join(".pi")).unwrap();
        std::fs::write(agent.join("settings.json"), r#"{"compaction":{"keepRecentTokens":1}}"#).unwrap();
        std::fs::write(project.join(".pi/settings.json"), r#"{"compaction":{"keepRecentTokens":2}}"#).unwrap();
        std::fs::write(agent.join("models.json"), r#"{"providers":{"x":{"baseUrl":"http://x"}}}"#).unwrap();
        let c = PiConfig::load_from(Some(&agent), Some(&project));
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert_eq!(c.compaction(None).keep_recent_tokens, 2);
        assert!(c.provider("x").is_some());
        assert_eq!(c.agent_dir.as_deref(), Some(agent.as_path()));
        let missing = PiConfig::load_from(Some(&dir.path().join("none")), None);
        assert!(missing.problems.is_empty());
    }

    #[test]
    fn tilde() {
        assert_eq!(crate::env::expand_tilde("~/x", Some(Path::new("/h"))), PathBuf::from("/h/x"));
        assert_eq!(crate::env::expand_tilde("/abs", Some(Path::new("/h"))), PathBuf::from("/abs"));
    }
}
