//! The model a summary is made with: which one, with which context window, and whether
//! it reasons, by pi's precedence; and a scripted model for tests and demonstrations.

use std::path::PathBuf;

use serde_json::{json, Value};

use super::{models, prompts};
use crate::env::Env;
use crate::llm::{self, LlmError, ModelInfo, ModelSpec, PiConfig, Provider, ProviderOptions, Request, StreamEvent};
use crate::session::projection::Projection;
use crate::session::Session;

/// The model options of `summarize`, `compact` and `agent --summarize`, as given.
#[derive(Debug, Clone, Default)]
pub struct ModelChoice {
    /// `--model PROVIDER/ID`.
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
    pub context_window: Option<u64>,
    /// A scripted model that answers every request with this text (`{kind}` becomes
    /// `history`, `turnPrefix` or `branch`), with zero usage.
    pub scripted_reply: Option<String>,
}

impl ModelChoice {
    /// Whether a model (or the scripted one) is configured.
    pub fn configured(&self) -> bool {
        self.model.is_some() || self.scripted_reply.is_some()
    }
}

/// Opens the model given by `--model` (or the scripted one), with pi's configuration
/// (`models.json`, keys, retry and timeout settings).
pub fn open_provider(args: &ModelChoice, config: &PiConfig, env: &Env) -> anyhow::Result<Box<dyn Provider>> {
    if let Some(reply) = &args.scripted_reply {
        return Ok(Box::new(Scripted {
            spec: ModelSpec { provider: "pisces".into(), id: "scripted".into() },
            reply: reply.clone(),
            window: args.context_window,
        }));
    }
    let opts =
        provider_options(args, config).ok_or_else(|| anyhow::anyhow!("no model given (--model PROVIDER/ID)"))??;
    Ok(llm::open_provider(&opts, env)?)
}

/// `--model` and the options that go with it, as the providers take them.
fn provider_options(args: &ModelChoice, config: &PiConfig) -> Option<anyhow::Result<ProviderOptions>> {
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
/// directory). Problems with the files are in its `problems`, for the caller to report.
pub fn pi_config(session: &Session, env: &Env) -> PiConfig {
    let cwd = session.header.cwd_str().map(PathBuf::from).filter(|p| p.is_dir());
    PiConfig::load_from(env.pi_agent_dir.as_deref(), cwd.or_else(|| env.cwd.clone()).as_deref())
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
        args: &ModelChoice,
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
