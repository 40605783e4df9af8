//! OpenClaw transcripts (`testdata/openclaw-2026.9.6/`).

use libtest_mimic::Trial;

pub fn trials() -> Vec<Trial> {
    Vec::new()
}
