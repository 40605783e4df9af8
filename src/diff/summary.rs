//! What one side did: files (pi's file-operation rules), commands and how their last run
//! ended, errors, model calls, tokens and cost, wall time, models.

use rustc_hash::FxHashMap;
use serde_json::Value;

use super::calls::{first_line, outcome, results_by_call, target};
use super::facts::{CallFact, Fact, FactKind};
use super::{CommandRuns, ErrorItem, FileOps, Outcome, Run, SideSummary, TestCounts, Usage};
use crate::session::format::Unreadable;
use crate::session::usage::Totals;
use crate::session::{EntryIdx, EntryType, Role, Session};

/// The summary of a side: `path` is root..=leaf, the side is `path[shared..]`, `facts`
/// are its facts.
pub(super) fn side(s: &Session, path: &[EntryIdx], shared: usize, facts: &[Fact]) -> Result<SideSummary, Unreadable> {
    let side = &path[shared..];
    let mut sum = SideSummary { entries: side.len(), ..SideSummary::default() };
    let results = results_by_call(facts);
    let mut calls: FxHashMap<&str, &CallFact> = FxHashMap::default();
    let mut totals = Totals::default();
    let mut models: Vec<String> = Vec::new();
    let mut files = FileLists::default();
    let mut commands: Vec<CommandRuns> = Vec::new();
    let mut command_at: FxHashMap<String, usize> = FxHashMap::default();
    // The output of each command's last run (test counts are read from it at the end).
    let mut last_output: Vec<Option<&str>> = Vec::new();

    for f in facts {
        let e = &s.entries[f.entry];
        if let Some(u) = &f.usage {
            totals.add(u);
        }
        match &f.kind {
            FactKind::Assistant(a) => {
                sum.model_calls += 1;
                if let Some(m) = &a.model {
                    if !models.contains(m) {
                        models.push(m.clone());
                    }
                }
                for c in &a.calls {
                    sum.tool_calls += 1;
                    calls.insert(c.id.as_str(), c);
                    files.add(c);
                    if c.name == "bash" {
                        let command = c.command.clone().unwrap_or_default();
                        let result = results.get(c.id.as_str()).map(|&k| &facts[k]);
                        let r = result.and_then(|f| match &f.kind {
                            FactKind::ToolResult(r) => Some(r),
                            _ => None,
                        });
                        let (outcome, exit_code, _) = outcome(c, r);
                        let at = result.map_or(f.entry, |f| f.entry);
                        let run = Run {
                            command: command.clone(),
                            id: s.id_value(at),
                            line: s.entries[at].line,
                            outcome,
                            exit_code,
                            tests: None,
                        };
                        let k = add_run(&mut commands, &mut command_at, "tool", run);
                        last_output.resize(commands.len(), None);
                        last_output[k] = r.and_then(|r| r.text.as_deref());
                    }
                }
                if matches!(a.stop_reason.as_deref(), Some("error" | "aborted")) {
                    let stop = a.stop_reason.clone().unwrap_or_default();
                    sum.errors.push(ErrorItem {
                        id: s.id_value(f.entry),
                        line: e.line,
                        kind: "assistant",
                        tool: None,
                        target: None,
                        message: match &a.error_message {
                            Some(m) => format!("{stop}: {}", first_line(m)),
                            None => stop,
                        },
                    });
                }
            }
            FactKind::ToolResult(r) => {
                for c in &r.nested {
                    files.add(c);
                }
                if r.is_error {
                    let call = calls.get(r.call_id.as_str()).copied();
                    let message = match call {
                        Some(c) => match outcome(c, Some(r)) {
                            (_, Some(code), _) => format!("exit {code}"),
                            (_, None, Some(err)) => err,
                            (o, None, None) => format!("{o:?}").to_lowercase(),
                        },
                        None => first_line(r.text.as_deref().unwrap_or_default()),
                    };
                    sum.errors.push(ErrorItem {
                        id: s.id_value(f.entry),
                        line: e.line,
                        kind: "tool",
                        tool: Some(r.tool.clone()),
                        target: call.and_then(target),
                        message,
                    });
                }
            }
            FactKind::Prompt(p) if p.kind == "bash" => {
                let exit_code = p.exit_code.flatten();
                let outcome = match (p.cancelled, exit_code) {
                    (true, _) => Outcome::Aborted,
                    (false, Some(0)) => Outcome::Ok,
                    _ => Outcome::Error,
                };
                let run = Run {
                    command: p.text.clone(),
                    id: s.id_value(f.entry),
                    line: e.line,
                    outcome,
                    exit_code,
                    tests: None,
                };
                let k = add_run(&mut commands, &mut command_at, "user", run);
                last_output.resize(commands.len(), None);
                last_output[k] = p.output.as_deref();
            }
            _ => {}
        }
    }

    // pi: modified = sort(edited ∪ written); readFiles = sort(read − modified).
    let FileLists { read, written, edited, ops, .. } = files;
    let mut modified: Vec<&str> = edited.iter().chain(written.iter()).copied().collect();
    sort_utf16(&mut modified);
    modified.dedup();
    let mut files_read: Vec<&str> =
        read.iter().copied().filter(|p| modified.binary_search_by(|m| cmp_utf16(m, p)).is_err()).collect();
    sort_utf16(&mut files_read);
    files_read.dedup();
    sum.files_read = files_read.into_iter().map(str::to_string).collect();
    sum.files_modified = modified.into_iter().map(str::to_string).collect();
    sum.file_ops = ops;

    for (c, out) in commands.iter_mut().zip(&last_output) {
        if c.is_test {
            c.last.tests = out.and_then(test_counts);
        }
    }
    sum.last_test_run = commands
        .iter()
        .filter(|c| c.is_test)
        .max_by_key(|c| c.last.line)
        .map(|c| Run { command: c.command.clone(), ..clone_run(&c.last) });
    sum.commands = commands;
    sum.usage = Usage {
        input: totals.input,
        output: totals.output,
        cache_read: totals.cache_read,
        cache_write: totals.cache_write,
        total_tokens: totals.total_tokens,
        tokens: totals.tokens(),
        cost: totals.cost,
    };
    let first = side.iter().find_map(|&i| s.time(i));
    let last = side.iter().rev().find_map(|&i| s.time(i));
    sum.wall_time_ms = first.zip(last).map(|(f, l)| l - f);
    if models.is_empty() {
        if let Some(m) = model_in_effect(s, path)? {
            models.push(m);
        }
    }
    sum.models = models;
    Ok(sum)
}

/// pi's file operations: paths of read / write / edit calls, and calls per path.
#[derive(Default)]
struct FileLists<'f> {
    read: Vec<&'f str>,
    written: Vec<&'f str>,
    edited: Vec<&'f str>,
    ops: Vec<FileOps>,
    ops_at: FxHashMap<&'f str, usize>,
}

impl<'f> FileLists<'f> {
    /// pi counts calls whose `arguments.path` is a non-empty string.
    fn add(&mut self, c: &'f CallFact) {
        let Some(p) = c.path.as_deref() else { return };
        let list = match c.name.as_str() {
            "read" => &mut self.read,
            "write" => &mut self.written,
            "edit" => &mut self.edited,
            _ => return,
        };
        list.push(p);
        let ops = &mut self.ops;
        let k = *self.ops_at.entry(p).or_insert_with(|| {
            ops.push(FileOps { path: p.to_string(), read: 0, write: 0, edit: 0 });
            ops.len() - 1
        });
        match c.name.as_str() {
            "read" => ops[k].read += 1,
            "write" => ops[k].write += 1,
            _ => ops[k].edit += 1,
        }
    }
}

fn clone_run(r: &Run) -> Run {
    Run {
        command: r.command.clone(),
        id: r.id.clone(),
        line: r.line,
        outcome: r.outcome,
        exit_code: r.exit_code,
        tests: r.tests,
    }
}

/// Counts a run of its command; returns the command's index.
fn add_run(
    commands: &mut Vec<CommandRuns>,
    at: &mut FxHashMap<String, usize>,
    source: &'static str,
    run: Run,
) -> usize {
    let key = run.command.trim();
    match at.get(key) {
        Some(&k) => {
            commands[k].runs += 1;
            commands[k].source = source;
            commands[k].last = run;
            k
        }
        None => {
            let key = key.to_string();
            at.insert(key.clone(), commands.len());
            commands.push(CommandRuns { is_test: is_test_command(&key), command: key, source, runs: 1, last: run });
            commands.len() - 1
        }
    }
}

/// The model in effect at the end of `path`: the last `model_change` or assistant
/// message, as `provider/model`.
fn model_in_effect(s: &Session, path: &[EntryIdx]) -> Result<Option<String>, Unreadable> {
    for &i in path.iter().rev() {
        let e = &s.entries[i];
        let (p, m) = match (e.kind, e.role) {
            (EntryType::ModelChange, _) => ("provider", "modelId"),
            (EntryType::Message, Role::Assistant) => ("provider", "model"),
            _ => continue,
        };
        let v = s.parse(i)?;
        let src = if e.kind == EntryType::ModelChange { Some(&v) } else { v.get("message") };
        let get = |k: &str| src.and_then(|o| o.get(k)).and_then(Value::as_str);
        // An entry that names no model leaves the one before in effect.
        if let Some(name) = super::facts::model_name(get(p), get(m)) {
            return Ok(Some(name));
        }
    }
    Ok(None)
}

/// Passed / failed counts in a test run's output: node's TAP `# pass N` / `# fail N` (and
/// its spec reporter's `ℹ pass N`), `N passed` / `N failed` (pytest, cargo, jest, vitest),
/// `N passing` / `N failing` (mocha). The last count of each kind wins, except that
/// cargo's `test result:` lines (one per test binary) are added up.
pub(super) fn test_counts(text: &str) -> Option<TestCounts> {
    let (mut passed, mut failed) = (None, None);
    let (mut cargo_p, mut cargo_f, mut cargo) = (0u64, 0u64, false);
    for line in text.lines() {
        let t = line.trim_start_matches(|c: char| !c.is_ascii_alphanumeric()).trim_end();
        let words: Vec<&str> =
            t.split(|c: char| c.is_whitespace() || c == ',' || c == ';').filter(|w| !w.is_empty()).collect();
        if words.len() == 2 {
            if let Ok(n) = words[1].parse::<u64>() {
                match words[0] {
                    "pass" => passed = Some(n),
                    "fail" => failed = Some(n),
                    _ => {}
                }
            }
        }
        let is_cargo = t.starts_with("test result:");
        for w in words.windows(2) {
            let Ok(n) = w[0].parse::<u64>() else { continue };
            let word = w[1].trim_end_matches(|c: char| !c.is_alphanumeric());
            match word {
                "passed" | "passing" => {
                    passed = Some(n);
                    if is_cargo {
                        cargo_p += n;
                    }
                }
                "failed" | "failing" => {
                    failed = Some(n);
                    if is_cargo {
                        cargo_f += n;
                    }
                }
                _ => {}
            }
        }
        cargo |= is_cargo;
    }
    if cargo {
        return Some(TestCounts { passed: Some(cargo_p), failed: Some(cargo_f) });
    }
    (passed.is_some() || failed.is_some()).then_some(TestCounts { passed, failed })
}

/// A command that runs tests: `npm test`, `cargo test`, `pytest`, `go test ./...`,
/// `node --test`, `make test`, `npx jest`, … Each `&&`/`;`-separated part is looked at,
/// up to its first `|`; parts that only read or search (`grep … test`) do not count.
pub fn is_test_command(cmd: &str) -> bool {
    const TEST_WORDS: [&str; 13] = [
        "test", "tests", "pytest", "jest", "vitest", "mocha", "rspec", "phpunit", "ctest", "nextest", "unittest",
        "tox", "spec",
    ];
    const NOT_RUNNERS: [&str; 24] = [
        "grep", "rg", "ls", "cat", "find", "fd", "sed", "awk", "head", "tail", "echo", "printf", "git", "cd", "mkdir",
        "rm", "cp", "mv", "touch", "wc", "less", "diff", "jq", "chmod",
    ];
    for part in cmd.split(['\n', ';', '&']).map(|p| p.split('|').next().unwrap_or_default()) {
        let mut words = part.split_whitespace().skip_while(|w| w.contains('=') && !w.starts_with('-'));
        let Some(program) = words.next() else { continue };
        let base = program.rsplit('/').next().unwrap_or(program);
        if NOT_RUNNERS.contains(&base) || base == "[" {
            continue;
        }
        if base.contains("test")
            || ["pytest", "jest", "vitest", "mocha", "rspec", "phpunit", "ctest", "tox"].contains(&base)
        {
            return true;
        }
        let rest: Vec<&str> = words.collect();
        // `make check` runs tests; `cargo check` does not.
        let is_test_word = |w: &str| {
            w.split(|c: char| !c.is_alphanumeric()).any(|t| TEST_WORDS.contains(&t) || (t == "check" && base == "make"))
        };
        if rest.iter().filter(|w| !w.starts_with('-') || w.starts_with("--test")).any(|w| is_test_word(w)) {
            return true;
        }
    }
    false
}

/// pi sorts file lists with JS's default sort: by UTF-16 code units. UTF-8 bytes sort
/// the same way except where a character above U+FFFF meets one in U+E000..U+FFFF, so
/// only the first differing characters are compared as UTF-16.
fn cmp_utf16(a: &str, b: &str) -> std::cmp::Ordering {
    let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    // Back up to the start of the character the difference is in.
    let mut at = common;
    while !a.is_char_boundary(at) || !b.is_char_boundary(at) {
        at -= 1;
    }
    let (ca, cb) = (a[at..].chars().next(), b[at..].chars().next());
    match (ca, cb) {
        (Some(x), Some(y)) => {
            let mut bx = [0u16; 2];
            let mut by = [0u16; 2];
            x.encode_utf16(&mut bx).iter().cmp(y.encode_utf16(&mut by).iter())
        }
        _ => a.len().cmp(&b.len()),
    }
}

fn sort_utf16(v: &mut [&str]) {
    v.sort_by(|a, b| cmp_utf16(a, b));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_commands() {
        for yes in [
            "npm test",
            "npm test 2>&1 | tail -9",
            "cargo test --locked",
            "pytest -q tests/",
            "python -m pytest",
            "go test ./...",
            "node --test test/",
            "make test",
            "make check",
            "npx jest",
            "cd app && npm run test:unit",
            "CI=1 npm test",
            "./run-tests.sh",
            "cargo nextest run",
        ] {
            assert!(is_test_command(yes), "{yes}");
        }
        for no in [
            "grep -rn isOverdue src test",
            "ls test",
            "cat test/a.js",
            "cargo check",
            "node src/cli.js list",
            "echo test",
        ] {
            assert!(!is_test_command(no), "{no}");
        }
    }

    #[test]
    fn counts() {
        let tap = "# tests 4\n# suites 0\n# pass 3\n# fail 1\n# cancelled 0\n";
        assert_eq!(test_counts(tap), Some(TestCounts { passed: Some(3), failed: Some(1) }));
        assert_eq!(
            test_counts("==== 5 passed, 1 failed in 0.12s ===="),
            Some(TestCounts { passed: Some(5), failed: Some(1) })
        );
        let cargo = "test result: ok. 5 passed; 0 failed; 0 ignored\n\ntest result: FAILED. 2 passed; 1 failed;";
        assert_eq!(test_counts(cargo), Some(TestCounts { passed: Some(7), failed: Some(1) }));
        assert_eq!(
            test_counts("  12 passing (30ms)\n  1 failing"),
            Some(TestCounts { passed: Some(12), failed: Some(1) })
        );
        assert_eq!(test_counts("ℹ pass 5\nℹ fail 0"), Some(TestCounts { passed: Some(5), failed: Some(0) }));
        assert_eq!(test_counts("nothing here"), None);
    }

    #[test]
    fn utf16_order() {
        let mut v = vec!["b", "a", "\u{ff61}", "\u{1f600}"];
        sort_utf16(&mut v);
        // U+1F600 is a surrogate pair (0xD83D…), which sorts before U+FF61 in UTF-16.
        assert_eq!(v, vec!["a", "b", "\u{1f600}", "\u{ff61}"]);
        for (x, y) in [("ab", "abc"), ("a\u{e9}", "a\u{1f600}"), ("x\u{ff61}1", "x\u{1f600}0"), ("same", "same")] {
            assert_eq!(cmp_utf16(x, y), x.encode_utf16().cmp(y.encode_utf16()), "{x} {y}");
            assert_eq!(cmp_utf16(y, x), y.encode_utf16().cmp(x.encode_utf16()), "{y} {x}");
        }
    }
}
