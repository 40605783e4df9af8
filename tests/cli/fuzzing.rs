//! Every input the fuzzer saved (`fuzz/regressions/TARGET/`: crashes and hangs it found,
//! fixed since) and every hand-written seed (`fuzz/seeds/TARGET/`), run through the same
//! code as the fuzz targets (`pisces::fuzzing`), in this process. A panic fails the trial;
//! so does an input still running after two minutes (a hang: nothing here takes a second).

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use libtest_mimic::Trial;

use crate::common::{check, pisces, TestResult};

pub fn trials() -> Vec<Trial> {
    let mut trials: Vec<Trial> = pisces::fuzzing::TARGETS
        .iter()
        .map(|&(name, run)| Trial::test(format!("fuzzing::replay::{name}"), move || replay(name, run)))
        .collect();
    trials.push(Trial::test("fuzzing::stacked_duplicate_ids_draw_in_linear_time", stacked_duplicates));
    trials
}

fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut files = Vec::new();
    for dir in ["regressions", "seeds"] {
        if let Ok(rd) = std::fs::read_dir(root.join(dir).join(target)) {
            files.extend(rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file()));
        }
    }
    files.sort();
    files
}

fn replay(target: &'static str, run: fn(&[u8])) -> TestResult {
    for file in inputs(target) {
        let data = std::fs::read(&file)?;
        let (tx, rx) = mpsc::channel();
        let name = file.display().to_string();
        std::thread::spawn(move || {
            let outcome = std::panic::catch_unwind(|| run(&data));
            let _ = tx.send(outcome.is_ok());
        });
        match rx.recv_timeout(Duration::from_secs(120)) {
            Ok(true) => {}
            Ok(false) => return Err(format!("{target}: panicked on {name}").into()),
            Err(_) => return Err(format!("{target}: still running after 120 s on {name}").into()),
        }
    }
    Ok(())
}

/// The shape of the hang the fuzzer found first: each id on two lines, each pair the child
/// of the one before. pi's tree maps both lines to one node and lists it twice under its
/// parent, so there are 2^levels ways down (pi runs out of memory drawing it). pisces draws
/// repeats as pi does within a budget, then each node once: 60 levels finish, with rows
/// bounded by a few times the entries.
fn stacked_duplicates() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("dups.jsonl");
    let mut text = String::from(
        r#"{"type":"session","version":3,"id":"0000aaaa-0000-4000-8000-000000000000","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}"#,
    );
    text.push('\n');
    let levels = 60;
    for k in 0..levels {
        let parent = if k == 0 { "null".to_string() } else { format!("\"{:08x}\"", k - 1) };
        for copy in 0..2 {
            text.push_str(&format!(
                r#"{{"type":"message","id":"{k:08x}","parentId":{parent},"timestamp":"2026-01-01T00:00:{:02}.000Z","message":{{"role":"user","content":"level {k} copy {copy}","timestamp":1}}}}"#,
                k % 60
            ));
            text.push('\n');
        }
    }
    std::fs::write(&file, text)?;
    let (tx, rx) = mpsc::channel();
    let f = file.clone();
    std::thread::spawn(move || {
        let _ = tx.send(pisces().args(["tree", "--pi-exact"]).arg(&f).output());
    });
    let out = rx.recv_timeout(Duration::from_secs(120)).map_err(|_| "pisces tree still running after 120 s")??;
    check(out.status.success(), || format!("tree failed: {}", String::from_utf8_lossy(&out.stderr)))?;
    let rows = out.stdout.iter().filter(|&&b| b == b'\n').count();
    let bound = 3 * 2 * levels + 4096;
    check(rows > levels && rows <= bound, || format!("{rows} rows for {} entries (bound {bound})", 2 * levels))
}
