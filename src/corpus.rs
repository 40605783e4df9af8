//! The committed corpora, for tests that read every file of one.

use std::path::PathBuf;

/// Every `.jsonl` file under each of `dirs` (folders of `testdata/`, searched to any depth),
/// sorted.
pub fn jsonl_files(dirs: &[&str]) -> Vec<PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut stack: Vec<PathBuf> = dirs.iter().map(|d| root.join(d)).collect();
    let mut files = Vec::new();
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let p = e.expect("a readable folder entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}
