//! What pi knows about a model that changes a summary: its context window (the branch
//! summary's token budget is `contextWindow − reserveTokens`, 128000 when unknown) and
//! whether it reasons (pi passes the thinking level only then).
//!
//! `models.tsv` is pi-ai 1.6.0's built-in catalog (`models.generated.js` `MODELS`), one
//! model a line: provider, id, contextWindow, reasoning (1/0). Regenerate with
//! `node -e 'import("<pi-ai>/dist/models.generated.js").then(m => { for (const [p, ms] of
//! Object.entries(m.MODELS)) for (const [id, x] of Object.entries(ms))
//! console.log([p, id, x.contextWindow, x.reasoning ? 1 : 0].join("\t")) })'`.

/// pi's context window when the model's is unknown.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

const CATALOG: &str = include_str!("models.tsv");

/// A built-in model's facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known {
    pub context_window: u64,
    pub reasoning: bool,
}

/// The built-in model `provider/id` (`getModel(provider, id)`), if pi-ai has it.
pub fn lookup(provider: &str, id: &str) -> Option<Known> {
    CATALOG.lines().find_map(|line| {
        let mut f = line.split('\t');
        if f.next()? != provider || f.next()? != id {
            return None;
        }
        let context_window = f.next()?.parse().ok()?;
        Some(Known { context_window, reasoning: f.next()? == "1" })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_has_the_corpus_model() {
        assert_eq!(lookup("anthropic", "claude-sonnet-4-5"), Some(Known { context_window: 200_000, reasoning: true }));
        assert_eq!(lookup("ollama", "qwen3:8b"), None);
        assert!(CATALOG.lines().count() > 1000);
    }
}
