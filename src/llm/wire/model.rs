//! What pi-ai knows about the model a request is for, reduced to the facts that change
//! `system`, `messages` and `tools`.
//!
//! pi-ai looks the model up in its catalog (`providers/data/*.json`, ~1,800 models) or in the
//! user's `models.json`, and each API then resolves a `compat` record from it
//! (`getAnthropicCompat` in `api/anthropic-messages.js`, `detectCompat` + `getCompat` in
//! `api/openai-completions.js`). We carry only Anthropic's own catalog (the `anthropic`
//! provider, copied from pi-ai 1.6.0 `providers/data/anthropic.json`) and the local models the
//! pi-oracle corpus uses; every other model gets the defaults pi-ai gives a model without a
//! `compat` record, except that it is assumed to accept images (pi's default for a custom
//! model is text-only; we would rather keep images than silently drop them).

use super::ModelRef;

/// The model pi-ai would send the request to, as far as the wire format depends on it.
#[derive(Clone, Debug)]
pub(super) struct Target {
    pub provider: String,
    pub id: String,
    /// `model.api`: `anthropic-messages` or `openai-completions`. Compared with each
    /// assistant message's `api` to decide whether it is replayed to the same model.
    pub api: &'static str,
    /// `model.reasoning`.
    pub reasoning: bool,
    /// `model.input.includes("image")`.
    pub images: bool,
    /// `compat.supportsMidConvoSystemMessages`: later system messages stay in place instead
    /// of being folded into one leading prompt.
    pub mid_convo_system: bool,
    /// Anthropic `compat.supportsMidConvoToolChanges`: tool changes as inline blocks.
    pub mid_convo_tools: bool,
    /// Anthropic `compat.supportsMidConvoEffort`: effort markers between messages.
    pub mid_convo_effort: bool,
    /// Anthropic `compat.supportsStrictTools`.
    pub strict_tools: bool,
    /// `model.thinkingLevelMap`, as (level, value) pairs; `None` is a JSON `null` (level
    /// unsupported). Only Anthropic's adaptive models have one.
    pub thinking_level_map: &'static [(&'static str, Option<&'static str>)],
}

/// One row of pi-ai's Anthropic catalog: id, then the compat flags we use.
struct AnthropicRow {
    id: &'static str,
    mid_convo_system: bool,
    mid_convo_tools: bool,
    mid_convo_effort: bool,
    thinking_level_map: &'static [(&'static str, Option<&'static str>)],
}

const fn row(
    id: &'static str,
    system_tools: bool,
    effort: bool,
    map: &'static [(&'static str, Option<&'static str>)],
) -> AnthropicRow {
    AnthropicRow {
        id,
        mid_convo_system: system_tools,
        mid_convo_tools: system_tools,
        mid_convo_effort: effort,
        thinking_level_map: map,
    }
}

const XHIGH_MAX: &[(&str, Option<&str>)] = &[("xhigh", Some("xhigh")), ("max", Some("max"))];
const OFF_XHIGH_MAX: &[(&str, Option<&str>)] = &[("off", None), ("xhigh", Some("xhigh")), ("max", Some("max"))];
const MAX: &[(&str, Option<&str>)] = &[("max", Some("max"))];
const FULL_NO_MINIMAL: &[(&str, Option<&str>)] = &[
    ("minimal", None),
    ("low", Some("low")),
    ("medium", Some("medium")),
    ("high", Some("high")),
    ("xhigh", Some("xhigh")),
    ("max", Some("max")),
];
const FULL_NO_OFF: &[(&str, Option<&str>)] = &[
    ("off", None),
    ("minimal", None),
    ("low", Some("low")),
    ("medium", Some("medium")),
    ("high", Some("high")),
    ("xhigh", Some("xhigh")),
    ("max", Some("max")),
];

/// pi-ai 1.6.0's `anthropic` provider. Every model there is a reasoning model, takes images
/// and has `supportsStrictTools`; mid-conversation system messages and tool changes always
/// come together.
const ANTHROPIC: &[AnthropicRow] = &[
    row("claude-fable-5", true, false, OFF_XHIGH_MAX),
    row("claude-fable-5-1", true, true, OFF_XHIGH_MAX),
    row("claude-fable-5-2", true, true, OFF_XHIGH_MAX),
    row("claude-haiku-4-5", false, false, &[]),
    row("claude-haiku-4-5-20251001", false, false, &[]),
    row("claude-haiku-5-5", true, true, FULL_NO_MINIMAL),
    row("claude-opus-4-5", false, false, &[]),
    row("claude-opus-4-5-20251101", false, false, &[]),
    row("claude-opus-4-6", false, false, MAX),
    row("claude-opus-4-7", false, false, XHIGH_MAX),
    row("claude-opus-4-8", true, false, XHIGH_MAX),
    row("claude-opus-5", true, true, XHIGH_MAX),
    row("claude-opus-5-5", true, true, FULL_NO_OFF),
    row("claude-sonnet-4-5", false, false, &[]),
    row("claude-sonnet-4-5-20250929", false, false, &[]),
    row("claude-sonnet-4-6", false, false, MAX),
    row("claude-sonnet-5", false, false, XHIGH_MAX),
    row("claude-sonnet-5-5", true, true, FULL_NO_OFF),
];

/// The pi-oracle corpus' local models (`ollama` provider in its `models.json`): text only.
/// `gpt-oss:20b` is a reasoning model.
const LOCAL_TEXT_ONLY: &[(&str, bool)] =
    &[("qwen2.5-coder:14b", false), ("qwen2.5-coder:7b", false), ("gpt-oss:20b", true)];

impl Target {
    /// The model as pi-ai would resolve it for `api`.
    pub fn resolve(model: &ModelRef, api: &'static str) -> Target {
        let mut t = Target {
            provider: model.provider.clone(),
            id: model.id.clone(),
            api,
            reasoning: false,
            images: true,
            mid_convo_system: false,
            mid_convo_tools: false,
            mid_convo_effort: false,
            strict_tools: false,
            thinking_level_map: &[],
        };
        if model.provider == "anthropic" {
            if let Some(r) = ANTHROPIC.iter().find(|r| r.id == model.id) {
                t.reasoning = true;
                t.strict_tools = true;
                t.mid_convo_system = r.mid_convo_system;
                t.mid_convo_tools = r.mid_convo_tools;
                t.mid_convo_effort = r.mid_convo_effort;
                t.thinking_level_map = r.thinking_level_map;
            }
        } else if model.provider == "ollama" {
            if let Some((_, reasoning)) = LOCAL_TEXT_ONLY.iter().find(|(id, _)| *id == model.id) {
                t.images = false;
                t.reasoning = *reasoning;
            }
        }
        // The Anthropic-only flags mean nothing to an OpenAI-compatible endpoint, and pi-ai's
        // OpenAI compat detection never turns mid-conversation system messages on by itself.
        if api != "anthropic-messages" {
            t.mid_convo_system = false;
            t.mid_convo_tools = false;
            t.mid_convo_effort = false;
            t.strict_tools = false;
        }
        t
    }

    /// `model.thinkingLevelMap?.[level]`: `None` when the level is not in the map,
    /// `Some(None)` when it maps to `null`.
    pub fn thinking_level(&self, level: &str) -> Option<Option<&'static str>> {
        self.thinking_level_map.iter().find(|(l, _)| *l == level).map(|(_, v)| *v)
    }
}
