//! Agreement with pi: for every session file under testdata/ with goldens computed by
//! the real pi (`expected/<stem>/<leaf>.context.json`), `pisces path FILE LEAF` must
//! give pi's leaf, model, thinking level, path and messages (`--format json`), and pi's
//! convertToLlm output (`--format llm`).

use std::fs;
use std::path::{Path, PathBuf};

use libtest_mimic::Trial;
use serde_json::Value;

use crate::common::{first_diff, run, stdout_json, testdata, TestResult};

/// Every corpus directory: one holding an `expected/` folder.
pub fn corpora() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(testdata())
        .expect("testdata/ exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("expected").is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// A session file of a corpus and the folder of its goldens.
pub struct CorpusSession {
    /// `pi-1.6.0`, `edge`, …
    pub corpus: String,
    /// The file name without `.jsonl`.
    pub stem: String,
    pub session: PathBuf,
    /// `expected/<stem>/`.
    pub goldens: PathBuf,
}

/// Every session file with goldens, in every corpus, sorted.
pub fn corpus_sessions() -> Vec<CorpusSession> {
    let mut out = Vec::new();
    for corpus in corpora() {
        let corpus_name = corpus.file_name().unwrap().to_string_lossy().into_owned();
        let mut stems: Vec<PathBuf> =
            fs::read_dir(corpus.join("expected")).unwrap().flatten().map(|e| e.path()).collect();
        stems.sort();
        for goldens in stems {
            let stem = goldens.file_name().unwrap().to_string_lossy().into_owned();
            let session = corpus.join(format!("{stem}.jsonl"));
            if session.exists() {
                out.push(CorpusSession { corpus: corpus_name.clone(), stem, session, goldens });
            }
        }
    }
    out
}

/// The `<leaf>.context.json` goldens of a session, sorted.
pub fn context_goldens(cs: &CorpusSession) -> Vec<PathBuf> {
    let mut goldens: Vec<PathBuf> = fs::read_dir(&cs.goldens)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".context.json"))
        .collect();
    goldens.sort();
    goldens
}

pub fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for cs in corpus_sessions() {
        for golden in context_goldens(&cs) {
            let leaf = golden.file_name().unwrap().to_string_lossy().trim_end_matches(".context.json").to_string();
            let name = format!("conformance::{}/{}/{leaf}", cs.corpus, cs.stem);
            let session = cs.session.clone();
            trials.push(Trial::test(name, move || compare(&session, &golden, &leaf)));
        }
    }
    trials
}

/// The REV (or flag) that names the golden's leaf, as pisces spells it.
fn leaf_args(leaf: &str, v1: bool) -> Vec<String> {
    match leaf {
        "default" => vec!["@".into()],
        "null" => vec!["--leaf-null".into()],
        // Goldens of version-1 files name entries by line (pi's own ids are random).
        l if v1 && l.starts_with('L') => vec![format!("#{}", &l[1..])],
        l => vec![l.into()],
    }
}

fn compare(session: &Path, golden_path: &Path, leaf: &str) -> TestResult {
    let golden: Value = serde_json::from_str(&fs::read_to_string(golden_path)?)?;
    let v1 = golden.get("idsRenamedToLines").and_then(Value::as_bool).unwrap_or(false);
    let file = session.to_str().unwrap();
    let mut args = vec!["path".to_string(), file.to_string()];
    args.extend(leaf_args(leaf, v1));

    let mut json_args = args.clone();
    json_args.extend(["--format".into(), "json".into()]);
    let out = stdout_json(&run(&json_args.iter().map(String::as_str).collect::<Vec<_>>()))?;
    // pi's fields of the same names; v1 ids are `L<line>` on both sides.
    for field in ["leafId", "model", "thinkingLevel", "pathIds", "messages"] {
        let got = out.get(field).cloned().unwrap_or(Value::Null);
        let want = golden.get(field).cloned().unwrap_or(Value::Null);
        if let Some(d) = first_diff(&got, &want, &format!("$.{field}")) {
            return Err(format!("--format json differs from pi: {d}").into());
        }
    }

    let mut llm_args = args;
    llm_args.extend(["--format".into(), "llm".into()]);
    let out = stdout_json(&run(&llm_args.iter().map(String::as_str).collect::<Vec<_>>()))?;
    if let Some(d) = first_diff(&out["messages"], &golden["llm"], "$.messages") {
        return Err(format!("--format llm differs from pi's convertToLlm: {d}").into());
    }
    Ok(())
}
