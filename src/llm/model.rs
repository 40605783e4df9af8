//! The model a provider calls, resolved the way pi resolves it: the built-in catalog, then
//! the user's `models.json` (a custom provider, a custom model, a provider-wide `baseUrl`
//! or `compat`, `modelOverrides`), then the command line (`--base-url`,
//! `--context-window`).

use serde_json::{Map, Value};

use super::catalog::{self, Api, Cost, CostTier};
use super::config::PiConfig;
use super::provider::{LlmError, ModelSpec};

/// Everything a request and its reply depend on.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelInfo {
    pub provider: String,
    pub id: String,
    pub api: Api,
    /// Without the API path: `https://api.anthropic.com`, `http://localhost:11434/v1`.
    pub base_url: String,
    /// Tokens; `None` when nobody said (a local model without a `models.json` entry).
    pub context_window: Option<u64>,
    /// The output limit (`maxTokens`); `None` when unknown.
    pub max_tokens: Option<u64>,
    /// Whether the model thinks (takes a thinking level).
    pub reasoning: bool,
    pub cost: Cost,
    /// `thinkingLevelMap`: level → provider value, `None` for `null` (level unsupported).
    pub thinking_level_map: Vec<(String, Option<String>)>,
    /// Anthropic `compat.forceAdaptiveThinking`: thinking takes an effort, not a budget.
    pub adaptive_thinking: bool,
    /// Anthropic `compat.supportsMidConvoEffort`.
    pub mid_convo_effort: bool,
    /// `compat` fields of OpenAI-compatible endpoints that pisces honours.
    pub compat: Compat,
    /// Found in the catalog or in `models.json` (else everything above is a guess).
    pub known: bool,
}

/// The `compat` overrides pisces honours (unset: detected from the provider and base URL, as
/// pi-ai's `detectCompat` does).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Compat {
    pub supports_store: Option<bool>,
    /// The leading prompt goes as a `developer` message (reasoning models only).
    pub supports_developer_role: Option<bool>,
    pub supports_reasoning_effort: Option<bool>,
    pub supports_usage_in_streaming: Option<bool>,
    /// `max_tokens` or `max_completion_tokens`.
    pub max_tokens_field: Option<String>,
    /// `openai`, `openrouter`, `deepseek` (others are not sent).
    pub thinking_format: Option<String>,
}

impl Compat {
    fn merge(&mut self, v: Option<&Value>) {
        let Some(v) = v.and_then(Value::as_object) else {
            return;
        };
        let b = |k: &str| v.get(k).and_then(Value::as_bool);
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        self.supports_store = b("supportsStore").or(self.supports_store);
        self.supports_developer_role = b("supportsDeveloperRole").or(self.supports_developer_role);
        self.supports_reasoning_effort = b("supportsReasoningEffort").or(self.supports_reasoning_effort);
        self.supports_usage_in_streaming = b("supportsUsageInStreaming").or(self.supports_usage_in_streaming);
        self.max_tokens_field = s("maxTokensField").or(self.max_tokens_field.take());
        self.thinking_format = s("thinkingFormat").or(self.thinking_format.take());
    }
}

const LEVELS: [&str; 7] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

impl ModelInfo {
    /// `model.thinkingLevelMap?.[level]`: `None` absent, `Some(None)` null.
    pub fn level_value(&self, level: &str) -> Option<Option<&str>> {
        self.thinking_level_map.iter().find(|(l, _)| l == level).map(|(_, v)| v.as_deref())
    }

    /// pi-ai's `getSupportedThinkingLevels`.
    pub fn supported_thinking_levels(&self) -> Vec<&'static str> {
        if !self.reasoning {
            return vec!["off"];
        }
        LEVELS
            .into_iter()
            .filter(|l| match self.level_value(l) {
                Some(None) => false,
                None => !matches!(*l, "xhigh" | "max"),
                Some(Some(_)) => true,
            })
            .collect()
    }

    /// pi-ai's `clampThinkingLevel`: the level itself when supported, else the nearest
    /// supported one above, else below.
    pub fn clamp_thinking_level(&self, level: &str) -> &'static str {
        let supported = self.supported_thinking_levels();
        if let Some(l) = supported.iter().find(|l| **l == level) {
            return l;
        }
        let first = supported.first().copied().unwrap_or("off");
        let Some(i) = LEVELS.iter().position(|l| *l == level) else {
            return first;
        };
        LEVELS[i..].iter().chain(LEVELS[..i].iter().rev()).find(|l| supported.contains(l)).copied().unwrap_or(first)
    }

    /// The thinking level a request gets: `None` for off (or a model that cannot think).
    pub fn effective_thinking_level(&self, requested: Option<&str>) -> Option<&'static str> {
        let level = requested.filter(|l| *l != "off")?;
        Some(self.clamp_thinking_level(level)).filter(|l| *l != "off")
    }
}

/// Resolves `spec` against the catalog and `config`; `base_url` and `context_window` are
/// the command line's overrides.
pub fn resolve_model(
    spec: &ModelSpec,
    config: &PiConfig,
    base_url: Option<&str>,
    context_window: Option<u64>,
) -> Result<ModelInfo, LlmError> {
    let known = catalog::known_provider(&spec.provider);
    let builtin = catalog::builtin(&spec.provider, &spec.id);
    let pconf = config.provider(&spec.provider);
    let pget = |k: &str| pconf.and_then(|p| p.get(k));
    let def = pget("models")
        .and_then(Value::as_array)
        .and_then(|models| models.iter().find(|m| m.get("id").and_then(Value::as_str) == Some(spec.id.as_str())))
        .and_then(Value::as_object);

    let api_name = def.and_then(|d| d.get("api")).or_else(|| pget("api")).and_then(Value::as_str).map(str::to_string);
    let api = match api_name {
        Some(name) => Api::parse(&name).ok_or_else(|| {
            LlmError::Other(format!(
                "models.json: provider {:?} uses api {name:?}, which pisces does not speak \
                 (it speaks anthropic-messages and openai-completions)",
                spec.provider
            ))
        })?,
        None => builtin.map(|b| b.api).or(known.map(|k| k.api)).unwrap_or(Api::OpenAiCompletions),
    };

    let mut info = ModelInfo {
        provider: spec.provider.clone(),
        id: spec.id.clone(),
        api,
        base_url: String::new(),
        context_window: None,
        max_tokens: None,
        reasoning: false,
        cost: Cost::default(),
        thinking_level_map: Vec::new(),
        adaptive_thinking: false,
        mid_convo_effort: false,
        compat: Compat::default(),
        known: false,
    };
    if let Some(b) = builtin {
        info.context_window = Some(b.context_window);
        info.max_tokens = Some(b.max_tokens);
        info.reasoning = b.reasoning;
        info.cost = b.cost();
        info.thinking_level_map = b.levels.iter().map(|(l, v)| (l.to_string(), v.map(str::to_string))).collect();
        info.adaptive_thinking = b.adaptive;
        info.mid_convo_effort = b.mid_convo_effort;
        info.known = true;
    }
    info.compat.merge(pget("compat"));
    if let Some(def) = def {
        // A models.json model replaces the built-in one, with pi's defaults for what it
        // leaves out (`modelFromJson`).
        info.known = true;
        info.context_window = Some(num(def.get("contextWindow")).unwrap_or(128_000));
        info.max_tokens = Some(num(def.get("maxTokens")).unwrap_or(16_384));
        info.reasoning = def.get("reasoning").and_then(Value::as_bool).unwrap_or(false);
        info.cost = def.get("cost").map_or_else(Cost::default, |c| cost_from(c, &Cost::default()));
        info.thinking_level_map = def.get("thinkingLevelMap").map(level_map).unwrap_or_default();
        info.adaptive_thinking = false;
        info.mid_convo_effort = false;
        adaptive_flags(&mut info, pget("compat"));
        info.compat.merge(def.get("compat"));
        adaptive_flags(&mut info, def.get("compat"));
    }
    if let Some(o) = pget("modelOverrides").and_then(|o| o.get(&spec.id)).and_then(Value::as_object) {
        apply_override(&mut info, o);
    }

    let base = base_url
        .map(str::to_string)
        .or_else(|| def.and_then(|d| d.get("baseUrl")).and_then(Value::as_str).map(str::to_string))
        .or_else(|| pget("baseUrl").and_then(Value::as_str).map(str::to_string))
        .or_else(|| known.filter(|k| k.api == api).map(|k| k.base_url.to_string()));
    info.base_url = match base {
        Some(b) => b.trim_end_matches('/').to_string(),
        None => {
            return Err(LlmError::Other(format!(
                "unknown provider {:?}: pass --base-url URL (an OpenAI-compatible server, e.g. \
                 http://localhost:11434/v1), or define the provider in ~/.pi/agent/models.json; \
                 known providers: {}",
                spec.provider,
                catalog::known_provider_names().join(", ")
            )))
        }
    };
    if context_window.is_some() {
        info.context_window = context_window;
    }
    Ok(info)
}

fn num(v: Option<&Value>) -> Option<u64> {
    v.and_then(Value::as_f64).filter(|n| *n > 0.0 && n.is_finite()).map(|n| n as u64)
}

fn adaptive_flags(info: &mut ModelInfo, compat: Option<&Value>) {
    if let Some(c) = compat.and_then(Value::as_object) {
        if let Some(b) = c.get("forceAdaptiveThinking").and_then(Value::as_bool) {
            info.adaptive_thinking = b;
        }
        if let Some(b) = c.get("supportsMidConvoEffort").and_then(Value::as_bool) {
            info.mid_convo_effort = b;
        }
    }
}

fn level_map(v: &Value) -> Vec<(String, Option<String>)> {
    v.as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().map(str::to_string))).collect())
        .unwrap_or_default()
}

/// A `cost` object over `base` (each missing price falls back, as pi's override merge does).
fn cost_from(v: &Value, base: &Cost) -> Cost {
    let f = |k: &str, d: f64| v.get(k).and_then(Value::as_f64).unwrap_or(d);
    let tiers = match v.get("tiers").and_then(Value::as_array) {
        Some(tiers) => tiers
            .iter()
            .map(|t| CostTier {
                input_tokens_above: t.get("inputTokensAbove").and_then(Value::as_f64).unwrap_or(0.0),
                input: t.get("input").and_then(Value::as_f64).unwrap_or(0.0),
                output: t.get("output").and_then(Value::as_f64).unwrap_or(0.0),
                cache_read: t.get("cacheRead").and_then(Value::as_f64).unwrap_or(0.0),
                cache_write: t.get("cacheWrite").and_then(Value::as_f64).unwrap_or(0.0),
            })
            .collect(),
        None => base.tiers.clone(),
    };
    Cost {
        input: f("input", base.input),
        output: f("output", base.output),
        cache_read: f("cacheRead", base.cache_read),
        cache_write: f("cacheWrite", base.cache_write),
        tiers,
    }
}

/// pi's `applyModelOverride` for the fields pisces uses.
fn apply_override(info: &mut ModelInfo, o: &Map<String, Value>) {
    if let Some(b) = o.get("reasoning").and_then(Value::as_bool) {
        info.reasoning = b;
    }
    if let Some(m) = o.get("thinkingLevelMap") {
        for (level, value) in level_map(m) {
            match info.thinking_level_map.iter_mut().find(|(l, _)| *l == level) {
                Some(slot) => slot.1 = value,
                None => info.thinking_level_map.push((level, value)),
            }
        }
    }
    if let Some(c) = o.get("cost") {
        info.cost = cost_from(c, &info.cost);
    }
    if let Some(n) = num(o.get("contextWindow")) {
        info.context_window = Some(n);
    }
    if let Some(n) = num(o.get("maxTokens")) {
        info.max_tokens = Some(n);
    }
    info.compat.merge(o.get("compat"));
    adaptive_flags(info, o.get("compat"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(s: &str) -> ModelSpec {
        ModelSpec::parse(s).unwrap()
    }

    fn corpus_config() -> PiConfig {
        // The pi-oracle corpus' models.json (shared/pi-oracle/gen-corpus.mjs).
        PiConfig::from_values(
            Some(json!({"providers": {
                "anthropic": {"baseUrl": "http://127.0.0.1:9999"},
                "ollama": {
                    "baseUrl": "http://127.0.0.1:9999/v1",
                    "api": "openai-completions",
                    "apiKey": "ollama",
                    "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
                    "models": [
                        {"id": "qwen2.5-coder:14b", "contextWindow": 32768, "maxTokens": 8192},
                        {"id": "gpt-oss:20b", "reasoning": true, "contextWindow": 131072, "maxTokens": 16384}
                    ],
                    "modelOverrides": {"gpt-oss:20b": {"contextWindow": 65536, "cost": {"output": 1}}}
                }
            }})),
            None,
        )
    }

    #[test]
    fn builtin_models() {
        let m = resolve_model(&spec("anthropic/claude-sonnet-4-5"), &PiConfig::default(), None, None).unwrap();
        assert_eq!(m.api, Api::AnthropicMessages);
        assert_eq!(m.base_url, "https://api.anthropic.com");
        assert_eq!((m.context_window, m.max_tokens), (Some(200_000), Some(64_000)));
        assert!(m.reasoning && m.known && !m.adaptive_thinking);
        assert_eq!(m.cost.input, 3.0);
        let m = resolve_model(&spec("openai/gpt-5.1"), &PiConfig::default(), None, Some(1000)).unwrap();
        assert_eq!((m.api, m.context_window), (Api::OpenAiCompletions, Some(1000)));
        assert_eq!(m.base_url, "https://api.openai.com/v1");
    }

    #[test]
    fn unknown_models_of_known_providers() {
        let m = resolve_model(&spec("ollama/qwen3:8b"), &PiConfig::default(), None, None).unwrap();
        assert_eq!(
            (m.api, m.base_url.as_str(), m.context_window, m.known),
            (Api::OpenAiCompletions, "http://localhost:11434/v1", None, false)
        );
        let m = resolve_model(&spec("anthropic/claude-next"), &PiConfig::default(), None, None).unwrap();
        assert_eq!((m.api, m.max_tokens, m.reasoning), (Api::AnthropicMessages, None, false));
        let err = resolve_model(&spec("acme/m"), &PiConfig::default(), None, None).unwrap_err();
        assert!(err.to_string().contains("--base-url"), "{err}");
        let m = resolve_model(&spec("acme/m"), &PiConfig::default(), Some("http://h:1/v1/"), None).unwrap();
        assert_eq!(m.base_url, "http://h:1/v1");
    }

    #[test]
    fn models_json_providers_models_and_overrides() {
        let c = corpus_config();
        let m = resolve_model(&spec("anthropic/claude-opus-4-5"), &c, None, None).unwrap();
        assert_eq!(m.base_url, "http://127.0.0.1:9999");
        assert_eq!(m.max_tokens, Some(64_000));
        let m = resolve_model(&spec("ollama/qwen2.5-coder:14b"), &c, None, None).unwrap();
        assert_eq!((m.context_window, m.max_tokens, m.reasoning), (Some(32768), Some(8192), false));
        assert_eq!(m.compat.supports_reasoning_effort, Some(false));
        assert_eq!(m.base_url, "http://127.0.0.1:9999/v1");
        let m = resolve_model(&spec("ollama/gpt-oss:20b"), &c, None, None).unwrap();
        assert_eq!((m.context_window, m.reasoning, m.cost.output), (Some(65536), true, 1.0));
        // a model the provider does not list: the provider's endpoint, nothing known
        let m = resolve_model(&spec("ollama/other"), &c, None, None).unwrap();
        assert_eq!((m.base_url.as_str(), m.known), ("http://127.0.0.1:9999/v1", false));
        let bad = PiConfig::from_values(
            Some(json!({"providers": {"g": {"api": "google-generative-ai", "baseUrl": "x"}}})),
            None,
        );
        assert!(resolve_model(&spec("g/m"), &bad, None, None).unwrap_err().to_string().contains("does not speak"));
    }

    #[test]
    fn thinking_levels_clamp_like_pi() {
        let c = PiConfig::default();
        let sonnet = resolve_model(&spec("anthropic/claude-sonnet-4-5"), &c, None, None).unwrap();
        assert_eq!(sonnet.supported_thinking_levels(), vec!["off", "minimal", "low", "medium", "high"]);
        assert_eq!(sonnet.clamp_thinking_level("xhigh"), "high");
        let gpt = resolve_model(&spec("openai/gpt-5.1"), &c, None, None).unwrap();
        assert_eq!(gpt.clamp_thinking_level("minimal"), "low");
        assert_eq!(gpt.effective_thinking_level(Some("off")), None);
        let fable = resolve_model(&spec("anthropic/claude-fable-5-1"), &c, None, None).unwrap();
        assert_eq!(fable.clamp_thinking_level("off"), "minimal");
        let local = resolve_model(&spec("ollama/x"), &c, None, None).unwrap();
        assert_eq!(local.effective_thinking_level(Some("high")), None);
    }
}
