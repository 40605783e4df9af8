//! Opening a provider from what the command line and pi's configuration say.
//!
//! ```no_run
//! use pisces::llm::{open_provider, ModelSpec, PiConfig, ProviderOptions, Request};
//! let env = pisces::env::Env::from_process();
//! let config = PiConfig::load_from(env.pi_agent_dir.as_deref(), env.cwd.as_deref());
//! let mut opts = ProviderOptions::from_config(ModelSpec::parse("anthropic/claude-sonnet-4-5").unwrap(), config);
//! opts.context_window = None; // --context-window
//! let provider = open_provider(&opts, &env)?;
//! let reply = provider.complete(&Request::default(), &mut |_event| {})?;
//! # Ok::<(), pisces::llm::LlmError>(())
//! ```
//!
//! The key is, in this order: the variable `--api-key-env NAME` names; the provider's
//! `apiKey` in `models.json` (a literal, `$NAME` / `${NAME}` from the environment, or
//! `!command` whose output is the key, as pi resolves it); the provider's usual variable
//! (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `OPENROUTER_API_KEY`, …). Hosted providers at
//! their own endpoint need one ([`LlmError::NoKey`] names the variable to set); a local or
//! custom endpoint gets no auth header when there is none.

use std::time::Duration;

use serde_json::Value;

use super::catalog;
use super::config::{PiConfig, DEFAULT_IDLE_TIMEOUT};
use super::http::{HttpProvider, HttpSettings, RetryPolicy, Secret};
use super::model::{resolve_model, ModelInfo};
use super::provider::{LlmError, ModelSpec, Provider};

/// What the CLI decides about a model call.
#[derive(Clone, Debug)]
pub struct ProviderOptions {
    /// `--model PROVIDER/ID`.
    pub model: ModelSpec,
    /// `--base-url`: the endpoint without the API path (`http://localhost:11434/v1`).
    pub base_url: Option<String>,
    /// `--api-key-env NAME`: the environment variable holding the key.
    pub api_key_env: Option<String>,
    /// `--context-window`: overrides what the catalog or `models.json` says.
    pub context_window: Option<u64>,
    /// The longest wait for a connection or for the next bytes of a reply; `None`: no limit.
    /// Default: pi's `httpIdleTimeoutMs` (5 minutes).
    pub timeout: Option<Duration>,
    /// Retries of transient failures (pi's `retry.maxRetries`, default 3; 0 disables).
    pub max_retries: u32,
    /// The first wait between attempts, doubling each time (pi's `retry.baseDelayMs`, 2 s).
    pub retry_base_delay: Duration,
    /// The longest wait between attempts (pi's `retry.maxAgentDelayMs`, 60 s).
    pub retry_max_delay: Duration,
    /// pi's `models.json` and settings.
    pub config: PiConfig,
}

impl ProviderOptions {
    /// pi's defaults, without any configuration files.
    pub fn new(model: ModelSpec) -> ProviderOptions {
        let retry = RetryPolicy::default();
        ProviderOptions {
            model,
            base_url: None,
            api_key_env: None,
            context_window: None,
            timeout: Some(DEFAULT_IDLE_TIMEOUT),
            max_retries: retry.max_retries,
            retry_base_delay: retry.base_delay,
            retry_max_delay: retry.max_delay,
            config: PiConfig::default(),
        }
    }

    /// With the user's configuration: `models.json`, and the retry and timeout settings
    /// (`retry.enabled:false` means no retries).
    pub fn from_config(model: ModelSpec, config: PiConfig) -> ProviderOptions {
        let retry = config.retry();
        ProviderOptions {
            timeout: config.http_idle_timeout(),
            max_retries: if retry.enabled { retry.max_retries } else { 0 },
            retry_base_delay: retry.base_delay,
            retry_max_delay: retry.max_delay,
            config,
            ..ProviderOptions::new(model)
        }
    }
}

/// The provider for `opts`, keys from the environment pisces started in.
pub fn open_provider(opts: &ProviderOptions, env: &crate::env::Env) -> Result<Box<dyn Provider>, LlmError> {
    Ok(Box::new(open_http_provider(opts, &|name| env.var(name))?))
}

/// [`open_provider`] with an explicit environment (tests), returning the concrete type
/// (which also tells the resolved model and the request body it would send).
pub fn open_http_provider(
    opts: &ProviderOptions,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<HttpProvider, LlmError> {
    let info = resolve_model(&opts.model, &opts.config, opts.base_url.as_deref(), opts.context_window)?;
    let pconf = opts.config.provider(&opts.model.provider);
    let env_nonempty = |name: &str| env(name).filter(|v| !v.is_empty());

    let (key, key_source) = if let Some(name) = &opts.api_key_env {
        match env_nonempty(name) {
            Some(k) => (Some(Secret::new(k)), Some(name.clone())),
            None => return Err(LlmError::NoKey(format!("--api-key-env {name}: the variable {name} is not set"))),
        }
    } else if let Some(raw) = pconf.and_then(|p| p.get("apiKey")).and_then(Value::as_str) {
        match resolve_config_value(raw, &env_nonempty) {
            Ok(k) => {
                (Some(Secret::new(k)), Some(format!("the apiKey of provider {:?} in models.json", opts.model.provider)))
            }
            Err(why) => {
                return Err(LlmError::NoKey(format!(
                    "no API key for {}: models.json's apiKey {why}",
                    opts.model.provider
                )))
            }
        }
    } else {
        let known = catalog::known_provider(&opts.model.provider);
        match known.and_then(|k| env_nonempty(k.key_env).map(|v| (v, k.key_env))) {
            Some((k, name)) => (Some(Secret::new(k)), Some(name.to_string())),
            None => {
                let at_home =
                    known.is_some_and(|k| k.key_required && info.base_url == k.base_url.trim_end_matches('/'));
                if let (true, Some(k)) = (at_home, known) {
                    return Err(LlmError::NoKey(format!(
                        "no API key for {}: set {} (or name another variable with --api-key-env NAME)",
                        opts.model.provider, k.key_env
                    )));
                }
                (None, None)
            }
        }
    };

    let mut headers = Vec::new();
    let model_def = pconf
        .and_then(|p| p.get("models"))
        .and_then(Value::as_array)
        .and_then(|m| m.iter().find(|m| m.get("id").and_then(Value::as_str) == Some(opts.model.id.as_str())));
    for source in [pconf.and_then(|p| p.get("headers")), model_def.and_then(|m| m.get("headers"))] {
        for (name, value) in source.and_then(Value::as_object).into_iter().flatten() {
            if let Some(v) = value.as_str().and_then(|raw| resolve_config_value(raw, &env_nonempty).ok()) {
                headers.retain(|(n, _): &(String, Secret)| !n.eq_ignore_ascii_case(name));
                headers.push((name.clone(), Secret::new(v)));
            }
        }
    }
    let bearer_too = pconf.and_then(|p| p.get("authHeader")).and_then(Value::as_bool).unwrap_or(false);

    Ok(HttpProvider::new(
        info,
        HttpSettings {
            key,
            key_source,
            bearer_too,
            headers,
            timeout: opts.timeout,
            retry: RetryPolicy {
                max_retries: opts.max_retries,
                base_delay: opts.retry_base_delay,
                max_delay: opts.retry_max_delay,
            },
        },
    ))
}

/// The model `opts` would call, without opening anything (for `--dry-run` and help output).
pub fn describe_model(opts: &ProviderOptions) -> Result<ModelInfo, LlmError> {
    resolve_model(&opts.model, &opts.config, opts.base_url.as_deref(), opts.context_window)
}

/// pi's `resolveConfigValue`: `!command` runs the command and takes its output; anything
/// else is a template where `$NAME` and `${NAME}` are environment variables, `$$` is `$` and
/// `$!` is `!`. `Err` says why there is no value (never the value itself).
fn resolve_config_value(raw: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    if let Some(command) = raw.strip_prefix('!') {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(command)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .map_err(|e| format!("command could not run: {e}"))?;
        let value = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() || value.is_empty() {
            return Err(format!("command failed ({}) or printed nothing", out.status));
        }
        return Ok(value);
    }
    let is_name_start = |c: char| c.is_ascii_alphabetic() || c == '_';
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::new();
    let mut rest = raw;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        match after.chars().next() {
            Some(c @ ('$' | '!')) => {
                out.push(c);
                rest = &after[1..];
            }
            Some('{') => match after[1..].find('}') {
                Some(end)
                    if after[1..1 + end].chars().next().is_some_and(is_name_start)
                        && after[1..1 + end].chars().all(is_name) =>
                {
                    let name = &after[1..1 + end];
                    out.push_str(&env(name).ok_or_else(|| format!("needs the variable {name}, which is not set"))?);
                    rest = &after[2 + end..];
                }
                Some(end) => {
                    out.push_str(&rest[i..i + 3 + end]);
                    rest = &after[2 + end..];
                }
                None => {
                    out.push('$');
                    rest = after;
                }
            },
            Some(c) if is_name_start(c) => {
                let len = after.find(|c: char| !is_name(c)).unwrap_or(after.len());
                let name = &after[..len];
                out.push_str(&env(name).ok_or_else(|| format!("needs the variable {name}, which is not set"))?);
                rest = &after[len..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    fn opts(model: &str) -> ProviderOptions {
        ProviderOptions::new(ModelSpec::parse(model).unwrap())
    }

    #[test]
    fn config_values() {
        let env = env_of(&[("A", "x"), ("B_2", "y")]);
        assert_eq!(resolve_config_value("lit", &env).unwrap(), "lit");
        assert_eq!(resolve_config_value("$A", &env).unwrap(), "x");
        assert_eq!(resolve_config_value("k-${B_2}-$A.", &env).unwrap(), "k-y-x.");
        assert_eq!(resolve_config_value("$$A $!b $ ${not-a-name}", &env).unwrap(), "$A !b $ ${not-a-name}");
        assert!(resolve_config_value("$MISSING", &env).unwrap_err().contains("MISSING"));
        assert_eq!(resolve_config_value("!printf ' secret\\n'", &env).unwrap(), "secret");
        let err = resolve_config_value("!exit 3", &env).unwrap_err();
        assert!(err.contains("failed"), "{err}");
    }

    #[test]
    fn keys_in_order() {
        let env = env_of(&[("ANTHROPIC_API_KEY", "sk-ant-env"), ("MINE", "sk-mine")]);
        let p = open_http_provider(&opts("anthropic/claude-sonnet-4-5"), &env).unwrap();
        assert_eq!(p.key_for_tests(), Some("sk-ant-env"));
        let mut o = opts("anthropic/claude-sonnet-4-5");
        o.api_key_env = Some("MINE".into());
        assert_eq!(open_http_provider(&o, &env).unwrap().key_for_tests(), Some("sk-mine"));
        o.api_key_env = Some("NOPE".into());
        let err = open_http_provider(&o, &env).unwrap_err();
        assert!(matches!(err, LlmError::NoKey(_)) && err.to_string().contains("NOPE"), "{err}");
        // models.json apiKey beats the usual variable
        let mut o = opts("anthropic/claude-sonnet-4-5");
        o.config = PiConfig::from_values(Some(json!({"providers": {"anthropic": {"apiKey": "$MINE"}}})), None);
        assert_eq!(open_http_provider(&o, &env).unwrap().key_for_tests(), Some("sk-mine"));
    }

    #[test]
    fn missing_keys() {
        let none = env_of(&[]);
        let err = open_http_provider(&opts("openai/gpt-4.1"), &none).unwrap_err();
        assert!(matches!(err, LlmError::NoKey(_)));
        assert!(err.to_string().contains("OPENAI_API_KEY"), "{err}");
        // local servers and custom endpoints go without
        assert!(open_http_provider(&opts("ollama/qwen3:8b"), &none).unwrap().key_for_tests().is_none());
        let mut o = opts("openai/gpt-4.1");
        o.base_url = Some("http://127.0.0.1:1/v1".into());
        assert!(open_http_provider(&o, &none).is_ok());
    }

    #[test]
    fn headers_from_models_json_and_debug_hides_secrets() {
        let env = env_of(&[("OPENROUTER_API_KEY", "sk-or-123456"), ("TOKEN", "tok-abcdef")]);
        let mut o = opts("openrouter/anthropic/claude-sonnet-4.5");
        o.config = PiConfig::from_values(
            Some(
                json!({"providers": {"openrouter": {"headers": {"X-Title": "pisces", "X-Token": "$TOKEN", "X-Gone": "$GONE"}}}}),
            ),
            None,
        );
        let p = open_http_provider(&o, &env).unwrap();
        let debug = format!("{p:?}");
        assert!(!debug.contains("sk-or-123456") && !debug.contains("tok-abcdef"), "{debug}");
        assert!(debug.contains("[redacted]"));
        assert_eq!(p.header_names_for_tests(), vec!["X-Title", "X-Token"]);
    }
}
