//! What pisces knows about models and providers without asking anyone: pi-ai 1.6.0's
//! catalog rows for Anthropic's models and OpenAI's common ones (context window, output
//! limit, prices per million tokens, thinking levels), the providers' endpoints and key
//! variables, and pi-ai's `calculateCost`.
//!
//! Everything else comes from the user's `~/.pi/agent/models.json` (see [`super::config`])
//! or the command line. A model in neither has no known context window and costs 0, as a
//! local model does in pi.

use serde_json::{json, Value};

/// The wire protocol a model is called with, named as pi names it in `api`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// `anthropic-messages`: Anthropic's Messages API (`POST {base}/v1/messages`).
    AnthropicMessages,
    /// `openai-completions`: OpenAI-compatible Chat Completions (`POST {base}/chat/completions`).
    OpenAiCompletions,
}

impl Api {
    pub fn as_str(self) -> &'static str {
        match self {
            Api::AnthropicMessages => "anthropic-messages",
            Api::OpenAiCompletions => "openai-completions",
        }
    }

    /// The api named in `models.json` (`None` for the ones pisces cannot speak).
    pub fn parse(s: &str) -> Option<Api> {
        match s {
            "anthropic-messages" => Some(Api::AnthropicMessages),
            "openai-completions" => Some(Api::OpenAiCompletions),
            _ => None,
        }
    }
}

/// Prices in dollars per million tokens (pi's `model.cost`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cost {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    /// Prices that apply once the prompt (input + cache read + cache write) is larger than
    /// `input_tokens_above`.
    pub tiers: Vec<CostTier>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct CostTier {
    pub input_tokens_above: f64,
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

/// Token counts as pi keeps them in `usage`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TokenCounts {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    /// Anthropic's one-hour cache writes (part of `cache_write`), charged at twice the input price.
    pub cache_write_1h: u64,
}

impl Cost {
    /// pi-ai's `calculateCost(model, usage)`: `{input, output, cacheRead, cacheWrite, total,
    /// totalFromProvider:false}` in dollars, with the same float operations (so the numbers
    /// are bit-identical to pi's).
    pub fn calculate(&self, u: &TokenCounts) -> Value {
        let input_tokens = (u.input + u.cache_read + u.cache_write) as f64;
        let (mut ri, mut ro, mut rr, mut rw) = (self.input, self.output, self.cache_read, self.cache_write);
        let mut matched = -1.0;
        for tier in &self.tiers {
            if input_tokens > tier.input_tokens_above && tier.input_tokens_above > matched {
                (ri, ro, rr, rw) = (tier.input, tier.output, tier.cache_read, tier.cache_write);
                matched = tier.input_tokens_above;
            }
        }
        let long_write = u.cache_write_1h as f64;
        let short_write = u.cache_write as f64 - long_write;
        let input = (ri / 1_000_000.0) * u.input as f64;
        let output = (ro / 1_000_000.0) * u.output as f64;
        let cache_read = (rr / 1_000_000.0) * u.cache_read as f64;
        let cache_write = (rw * short_write + ri * 2.0 * long_write) / 1_000_000.0;
        let total = input + output + cache_read + cache_write;
        json!({
            "input": js_number(input),
            "output": js_number(output),
            "cacheRead": js_number(cache_read),
            "cacheWrite": js_number(cache_write),
            "total": js_number(total),
            "totalFromProvider": false,
        })
    }
}

fn js_number(f: f64) -> Value {
    crate::session::js::number(f)
}

/// One row of the built-in catalog (copied from pi-ai 1.6.0 `providers/data/*.json`).
pub(crate) struct Builtin {
    pub provider: &'static str,
    pub id: &'static str,
    pub api: Api,
    pub reasoning: bool,
    pub context_window: u64,
    pub max_tokens: u64,
    pub cost: Rates,
    pub tiers: &'static [Tier],
    /// `thinkingLevelMap`: level → provider value, `None` for a JSON `null` (unsupported).
    pub levels: &'static [(&'static str, Option<&'static str>)],
    /// `compat.forceAdaptiveThinking`: thinking is an effort, not a token budget.
    pub adaptive: bool,
    /// `compat.supportsMidConvoEffort`: effort markers between messages.
    pub mid_convo_effort: bool,
}

pub(crate) struct Rates(f64, f64, f64, f64);
pub(crate) struct Tier(f64, f64, f64, f64, f64);

const fn rates(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Rates {
    Rates(input, output, cache_read, cache_write)
}

const fn tier(above: f64, input: f64, output: f64, cache_read: f64, cache_write: f64) -> Tier {
    Tier(above, input, output, cache_read, cache_write)
}

impl Builtin {
    pub fn cost(&self) -> Cost {
        let Rates(input, output, cache_read, cache_write) = self.cost;
        Cost {
            input,
            output,
            cache_read,
            cache_write,
            tiers: self
                .tiers
                .iter()
                .map(|&Tier(above, input, output, cache_read, cache_write)| CostTier {
                    input_tokens_above: above,
                    input,
                    output,
                    cache_read,
                    cache_write,
                })
                .collect(),
        }
    }
}

/// pi-ai 1.6.0's `anthropic` provider, and the OpenAI models most people call (pi-ai lists
/// them under `openai-responses`; pisces calls them through Chat Completions).
#[rustfmt::skip]
const BUILTINS: &[Builtin] = &[
    Builtin { provider: "anthropic", id: "claude-fable-5", api: Api::AnthropicMessages, reasoning: true, context_window: 1000000, max_tokens: 128000, cost: rates(10.0, 50.0, 1.0, 12.5), tiers: &[], levels: &[("off", None), ("xhigh", Some("xhigh")), ("max", Some("max"))], adaptive: true, mid_convo_effort: false },
    Builtin { provider: "anthropic", id: "claude-fable-5-1", api: Api::AnthropicMessages, reasoning: true, context_window: 1000000, max_tokens: 128000, cost: rates(10.0, 50.0, 0.25, 12.5), tiers: &[], levels: &[("off", None), ("xhigh", Some("xhigh")), ("max", Some("max"))], adaptive: true, mid_convo_effort: true },
    Builtin { provider: "anthropic", id: "claude-fable-5-2", api: Api::AnthropicMessages, reasoning: true, context_window: 1000000, max_tokens: 128000, cost: rates(8.0, 40.0, 0.2, 10.0), tiers: &[], levels: &[("off", None), ("xhigh", Some("xhigh")), ("max", Some("max"))], adaptive: true, mid_convo_effort: true },
    Builtin { provider: "anthropic", id: "claude-haiku-4-5", api: Api::AnthropicMessages, reasoning: true, context_window: 200000, max_tokens: 64000, cost: rates(1.0, 5.0, 0.1, 1.25), tiers: &[], levels: &[], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "anthropic", id: "claude-haiku-4-5-20251001", api: Api::AnthropicMessages, reasoning: true, context_window: 200000, max_tokens: 64000, cost: rates(1.0, 5.0, 0.1, 1.25), tiers: &[], levels: &[], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "anthropic", id: "claude-haiku-5-5", api: Api::AnthropicMessages, reasoning: true, context_window: 1000000, max_tokens: 128000, cost: rates(0.1, 0.5, 0.01, 0.125), tiers: &[tier(100000.0, 0.5, 2.5, 0.05, 0.625)], levels: &[("minimal", None), ("low", Some("low")), ("medium", Some("medium")), ("high", Some("high")), ("xhigh", Some("xhigh")), ("max", Some("max"))], adaptive: true, mid_convo_effort: true },
    Builtin { provider: "anthropic", id: "claude-opus-4-5", api: Api::AnthropicMessages, reasoning: true, context_window: 200000, max_tokens: 64000, cost: rates(5.0, 25.0, 0.5, 6.25), tiers: &[], levels: &[], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "anthropic", id: "claude-opus-4-5-20251101", api: Api::AnthropicMessages, reasoning: true, context_window: 200000, max_tokens: 64000, cost: rates(5.0, 25.0, 0.5, 6.25), tiers: &[], levels: &[], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "anthropic", id: "claude-opus-4-6", api: Api::AnthropicMessages, reasoning: true, context_window: 1000000, max_tokens: 128000, cost: rates(5.0, 25.0, 0.5, 6.25), tiers: &[], levels: &[("max", Some("max"))], adaptive: true, mid_convo_effort: false },
    Builtin { provider: "anthropic", id: "claude-opus-4-7", api: Api::AnthropicMessages, reasoning: true, context_window: 1000000, max_tokens: 128000, cost: rates(5.0, 25.0, 0.5, 6.25), tiers: &[], levels: &[("xhigh", Some("xhigh")), ("max", Some("max"))], adaptive: true, mid_convo_effort: false },
    Builtin { provider: "anthropic", id: "claude-opus-4-8", api: Api::AnthropicMessages, reasoning: true, context_window: 1000000, max_tokens: 128000, cost: rates(5.0, 25.0, 0.5, 6.25), tiers: &[], levels: &[("xhigh", Some("xhigh")), ("max", Some("max"))], adaptive: true, mid_convo_effort: false },
    Builtin { provider: "anthropic", id: "claude-opus-5", api: Api::AnthropicMessages, reasoning: true, context_window: 1000000, max_tokens: 128000, cost: rates(5.0, 25.0, 0.5, 6.25), tiers: &[], levels: &[("xhigh", Some("xhigh")), ("max", Some("max"))], adaptive: true, mid_convo_effort: true },
    Builtin { provider: "anthropic", id: "claude-opus-5-5", api: Api::AnthropicMessages, reasoning: true, context_window: 1000000, max_tokens: 128000, cost: rates(4.0, 20.0, 0.2, 5.0), tiers: &[], levels: &[("off", None), ("minimal", None), ("low", Some("low")), ("medium", Some("medium")), ("high", Some("high")), ("xhigh", Some("xhigh")), ("max", Some("max"))], adaptive: true, mid_convo_effort: true },
    Builtin { provider: "anthropic", id: "claude-sonnet-4-5", api: Api::AnthropicMessages, reasoning: true, context_window: 200000, max_tokens: 64000, cost: rates(3.0, 15.0, 0.3, 3.75), tiers: &[], levels: &[], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "anthropic", id: "claude-sonnet-4-5-20250929", api: Api::AnthropicMessages, reasoning: true, context_window: 200000, max_tokens: 64000, cost: rates(3.0, 15.0, 0.3, 3.75), tiers: &[], levels: &[], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "anthropic", id: "claude-sonnet-4-6", api: Api::AnthropicMessages, reasoning: true, context_window: 1000000, max_tokens: 128000, cost: rates(3.0, 15.0, 0.3, 3.75), tiers: &[], levels: &[("max", Some("max"))], adaptive: true, mid_convo_effort: false },
    Builtin { provider: "anthropic", id: "claude-sonnet-5", api: Api::AnthropicMessages, reasoning: true, context_window: 1000000, max_tokens: 128000, cost: rates(2.0, 10.0, 0.2, 2.5), tiers: &[], levels: &[("xhigh", Some("xhigh")), ("max", Some("max"))], adaptive: true, mid_convo_effort: false },
    Builtin { provider: "anthropic", id: "claude-sonnet-5-5", api: Api::AnthropicMessages, reasoning: true, context_window: 1000000, max_tokens: 128000, cost: rates(2.0, 10.0, 0.1, 2.5), tiers: &[], levels: &[("off", None), ("minimal", None), ("low", Some("low")), ("medium", Some("medium")), ("high", Some("high")), ("xhigh", Some("xhigh")), ("max", Some("max"))], adaptive: true, mid_convo_effort: true },
    Builtin { provider: "openai", id: "gpt-4.1", api: Api::OpenAiCompletions, reasoning: false, context_window: 1047576, max_tokens: 32768, cost: rates(2.0, 8.0, 0.5, 0.0), tiers: &[], levels: &[], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "openai", id: "gpt-4.1-mini", api: Api::OpenAiCompletions, reasoning: false, context_window: 1047576, max_tokens: 32768, cost: rates(0.4, 1.6, 0.1, 0.0), tiers: &[], levels: &[], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "openai", id: "gpt-4.1-nano", api: Api::OpenAiCompletions, reasoning: false, context_window: 1047576, max_tokens: 32768, cost: rates(0.1, 0.4, 0.025, 0.0), tiers: &[], levels: &[], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "openai", id: "gpt-4o", api: Api::OpenAiCompletions, reasoning: false, context_window: 128000, max_tokens: 16384, cost: rates(2.5, 10.0, 1.25, 0.0), tiers: &[], levels: &[], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "openai", id: "gpt-4o-mini", api: Api::OpenAiCompletions, reasoning: false, context_window: 128000, max_tokens: 16384, cost: rates(0.15, 0.6, 0.075, 0.0), tiers: &[], levels: &[], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "openai", id: "gpt-5", api: Api::OpenAiCompletions, reasoning: true, context_window: 400000, max_tokens: 128000, cost: rates(1.25, 10.0, 0.125, 0.0), tiers: &[], levels: &[("off", None), ("minimal", Some("minimal")), ("low", Some("low")), ("medium", Some("medium")), ("high", Some("high")), ("xhigh", None), ("max", None)], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "openai", id: "gpt-5-mini", api: Api::OpenAiCompletions, reasoning: true, context_window: 400000, max_tokens: 128000, cost: rates(0.25, 2.0, 0.025, 0.0), tiers: &[], levels: &[("off", None), ("minimal", Some("minimal")), ("low", Some("low")), ("medium", Some("medium")), ("high", Some("high")), ("xhigh", None), ("max", None)], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "openai", id: "gpt-5-nano", api: Api::OpenAiCompletions, reasoning: true, context_window: 400000, max_tokens: 128000, cost: rates(0.05, 0.4, 0.005, 0.0), tiers: &[], levels: &[("off", None), ("minimal", Some("minimal")), ("low", Some("low")), ("medium", Some("medium")), ("high", Some("high")), ("xhigh", None), ("max", None)], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "openai", id: "gpt-5.1", api: Api::OpenAiCompletions, reasoning: true, context_window: 400000, max_tokens: 128000, cost: rates(1.25, 10.0, 0.125, 0.0), tiers: &[], levels: &[("off", Some("none")), ("minimal", None), ("low", Some("low")), ("medium", Some("medium")), ("high", Some("high")), ("xhigh", None), ("max", None)], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "openai", id: "gpt-5.2", api: Api::OpenAiCompletions, reasoning: true, context_window: 400000, max_tokens: 128000, cost: rates(1.75, 14.0, 0.175, 0.0), tiers: &[], levels: &[("off", Some("none")), ("minimal", None), ("low", Some("low")), ("medium", Some("medium")), ("high", Some("high")), ("xhigh", Some("xhigh")), ("max", None)], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "openai", id: "gpt-5.4", api: Api::OpenAiCompletions, reasoning: true, context_window: 272000, max_tokens: 128000, cost: rates(2.5, 15.0, 0.25, 0.0), tiers: &[tier(272000.0, 5.0, 22.5, 0.5, 0.0)], levels: &[("off", Some("none")), ("minimal", None), ("low", Some("low")), ("medium", Some("medium")), ("high", Some("high")), ("xhigh", Some("xhigh")), ("max", None)], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "openai", id: "gpt-5.4-mini", api: Api::OpenAiCompletions, reasoning: true, context_window: 400000, max_tokens: 128000, cost: rates(0.75, 4.5, 0.075, 0.0), tiers: &[], levels: &[("off", Some("none")), ("minimal", None), ("low", Some("low")), ("medium", Some("medium")), ("high", Some("high")), ("xhigh", Some("xhigh")), ("max", None)], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "openai", id: "gpt-5.4-nano", api: Api::OpenAiCompletions, reasoning: true, context_window: 400000, max_tokens: 128000, cost: rates(0.2, 1.25, 0.02, 0.0), tiers: &[], levels: &[("off", Some("none")), ("minimal", None), ("low", Some("low")), ("medium", Some("medium")), ("high", Some("high")), ("xhigh", Some("xhigh")), ("max", None)], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "openai", id: "gpt-5.5", api: Api::OpenAiCompletions, reasoning: true, context_window: 272000, max_tokens: 128000, cost: rates(5.0, 30.0, 0.5, 0.0), tiers: &[tier(272000.0, 10.0, 45.0, 1.0, 0.0)], levels: &[("off", Some("none")), ("minimal", None), ("low", Some("low")), ("medium", Some("medium")), ("high", Some("high")), ("xhigh", Some("xhigh")), ("max", None)], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "openai", id: "o3", api: Api::OpenAiCompletions, reasoning: true, context_window: 200000, max_tokens: 100000, cost: rates(2.0, 8.0, 0.5, 0.0), tiers: &[], levels: &[("off", None), ("minimal", None), ("low", Some("low")), ("medium", Some("medium")), ("high", Some("high")), ("xhigh", None), ("max", None)], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "openai", id: "o3-mini", api: Api::OpenAiCompletions, reasoning: true, context_window: 200000, max_tokens: 100000, cost: rates(1.1, 4.4, 0.55, 0.0), tiers: &[], levels: &[("off", None), ("minimal", None), ("low", Some("low")), ("medium", Some("medium")), ("high", Some("high")), ("xhigh", None), ("max", None)], adaptive: false, mid_convo_effort: false },
    Builtin { provider: "openai", id: "o4-mini", api: Api::OpenAiCompletions, reasoning: true, context_window: 200000, max_tokens: 100000, cost: rates(1.1, 4.4, 0.275, 0.0), tiers: &[], levels: &[("off", None), ("minimal", None), ("low", Some("low")), ("medium", Some("medium")), ("high", Some("high")), ("xhigh", None), ("max", None)], adaptive: false, mid_convo_effort: false },
];

/// The built-in row for `provider/id`.
pub(crate) fn builtin(provider: &str, id: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.provider == provider && b.id == id)
}

/// A provider pisces can reach without configuration.
pub(crate) struct KnownProvider {
    pub name: &'static str,
    pub api: Api,
    pub base_url: &'static str,
    /// Environment variable holding the key.
    pub key_env: &'static str,
    /// A hosted service that always wants a key (a local server usually does not).
    pub key_required: bool,
}

const fn known(
    name: &'static str,
    api: Api,
    base_url: &'static str,
    key_env: &'static str,
    key_required: bool,
) -> KnownProvider {
    KnownProvider { name, api, base_url, key_env, key_required }
}

#[rustfmt::skip]
const PROVIDERS: &[KnownProvider] = &[
    known("anthropic", Api::AnthropicMessages, "https://api.anthropic.com", "ANTHROPIC_API_KEY", true),
    known("openai", Api::OpenAiCompletions, "https://api.openai.com/v1", "OPENAI_API_KEY", true),
    known("openrouter", Api::OpenAiCompletions, "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", true),
    known("groq", Api::OpenAiCompletions, "https://api.groq.com/openai/v1", "GROQ_API_KEY", true),
    known("deepseek", Api::OpenAiCompletions, "https://api.deepseek.com", "DEEPSEEK_API_KEY", true),
    known("cerebras", Api::OpenAiCompletions, "https://api.cerebras.ai/v1", "CEREBRAS_API_KEY", true),
    known("xai", Api::OpenAiCompletions, "https://api.x.ai/v1", "XAI_API_KEY", true),
    known("mistral", Api::OpenAiCompletions, "https://api.mistral.ai/v1", "MISTRAL_API_KEY", true),
    known("together", Api::OpenAiCompletions, "https://api.together.ai/v1", "TOGETHER_API_KEY", true),
    known("fireworks", Api::OpenAiCompletions, "https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY", true),
    known("ollama", Api::OpenAiCompletions, "http://localhost:11434/v1", "OLLAMA_API_KEY", false),
    known("lmstudio", Api::OpenAiCompletions, "http://localhost:1234/v1", "LMSTUDIO_API_KEY", false),
    known("llamacpp", Api::OpenAiCompletions, "http://localhost:8080/v1", "LLAMACPP_API_KEY", false),
    known("llama.cpp", Api::OpenAiCompletions, "http://localhost:8080/v1", "LLAMACPP_API_KEY", false),
    known("vllm", Api::OpenAiCompletions, "http://localhost:8000/v1", "VLLM_API_KEY", false),
];

pub(crate) fn known_provider(name: &str) -> Option<&'static KnownProvider> {
    PROVIDERS.iter().find(|p| p.name == name)
}

/// The names `--model` accepts without configuration (for help texts).
pub fn known_provider_names() -> Vec<&'static str> {
    PROVIDERS.iter().map(|p| p.name).collect()
}

/// The built-in models as `provider/id` (for help texts and completion).
pub fn builtin_model_names() -> Vec<String> {
    BUILTINS.iter().map(|b| format!("{}/{}", b.provider, b.id)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(input: u64, output: u64, cache_read: u64, cache_write: u64) -> TokenCounts {
        TokenCounts { input, output, cache_read, cache_write, cache_write_1h: 0 }
    }

    #[test]
    fn cost_matches_pi_to_the_bit() {
        // From testdata/pi-1.6.0: claude-sonnet-4-5, usage {input 4, output 88, cacheRead 2465, cacheWrite 456}.
        let sonnet = builtin("anthropic", "claude-sonnet-4-5").unwrap().cost();
        let cost = sonnet.calculate(&counts(4, 88, 2465, 456));
        assert_eq!(
            serde_json::to_string(&cost).unwrap(),
            r#"{"input":0.000012,"output":0.00132,"cacheRead":0.0007394999999999999,"cacheWrite":0.00171,"total":0.0037815,"totalFromProvider":false}"#
        );
    }

    #[test]
    fn cost_tiers_and_long_cache_writes() {
        let haiku = builtin("anthropic", "claude-haiku-5-5").unwrap().cost();
        let small = haiku.calculate(&counts(1000, 0, 0, 0));
        assert_eq!(small["input"].as_f64(), Some((0.1 / 1_000_000.0) * 1000.0));
        let large = haiku.calculate(&counts(100_001, 0, 0, 0));
        assert_eq!(large["input"].as_f64(), Some((0.5 / 1_000_000.0) * 100_001.0));
        let sonnet = builtin("anthropic", "claude-sonnet-4-5").unwrap().cost();
        let mut u = counts(0, 0, 0, 1000);
        u.cache_write_1h = 400;
        let c = sonnet.calculate(&u);
        assert_eq!(c["cacheWrite"].as_f64(), Some((3.75 * 600.0 + 3.0 * 2.0 * 400.0) / 1_000_000.0));
    }

    #[test]
    fn unknown_models_cost_nothing() {
        let c = Cost::default().calculate(&counts(10, 10, 10, 10));
        assert_eq!(c["total"], json!(0));
    }

    #[test]
    fn known_providers() {
        assert_eq!(known_provider("anthropic").unwrap().api, Api::AnthropicMessages);
        assert_eq!(known_provider("ollama").unwrap().base_url, "http://localhost:11434/v1");
        assert!(!known_provider("ollama").unwrap().key_required);
        assert!(known_provider("nope").is_none());
        assert_eq!(builtin("openai", "gpt-4.1").unwrap().context_window, 1047576);
    }
}
