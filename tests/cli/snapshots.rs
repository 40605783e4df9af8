//! Snapshots of the real binary's stdout, stderr and exit status, for the commands whose
//! output has no pi golden to compare with (how pisces presents things). Reviewed when
//! they change: `cargo insta review`, or `INSTA_UPDATE=always cargo test` then `git diff`.

use libtest_mimic::Trial;

use crate::common::{pisces, TestResult};

/// (snapshot name, arguments), run from the repository root with `HOME=/home/dev`.
const CASES: &[(&str, &[&str])] = &[
    ("path_text_two_fix_attempts", &["path", "testdata/pi-1.6.0/22-two-fix-attempts.jsonl", "--format", "text"]),
    ("path_markdown_labels", &["path", "testdata/pi-1.6.0/05-labels-and-name.jsonl", "--format", "markdown"]),
    ("path_bad_rev", &["path", "testdata/pi-1.6.0/05-labels-and-name.jsonl", "fix-2~1"]),
    ("tree_ids_time", &["tree", "testdata/pi-1.6.0/03-tree-branches.jsonl", "--ids", "--time"]),
    ("tree_compact", &["tree", "testdata/real/before-compaction.jsonl", "--compact", "--filter", "no-tools"]),
    ("tree_json", &["tree", "testdata/pi-1.6.0/04-branch-summary.jsonl", "--format", "json"]),
    ("tree_dot", &["tree", "testdata/pi-1.6.0/05-labels-and-name.jsonl", "--format", "dot"]),
    ("show_tool_call", &["show", "testdata/pi-1.6.0/22-two-fix-attempts.jsonl", "@~1", "@~2"]),
    ("show_compaction", &["show", "testdata/pi-1.6.0/21-compaction-checkpoints.jsonl", "#22"]),
    ("show_image", &["show", "testdata/pi-1.6.0/11-bash-and-images.jsonl", "@~2", "--format", "json"]),
    ("leaves_branches", &["leaves", "testdata/pi-1.6.0/03-tree-branches.jsonl"]),
    ("leaves_json", &["leaves", "testdata/pi-1.6.0/22-two-fix-attempts.jsonl", "--format", "json"]),
    (
        "check_broken",
        &["check", "testdata/edge/01-malformed-middle-line.jsonl", "testdata/edge/27-cycles-off-path.jsonl"],
    ),
    ("check_errors_json", &["check", "testdata/edge/errors", "--format", "json"]),
];

pub fn trials() -> Vec<Trial> {
    CASES.iter().map(|&(name, args)| Trial::test(format!("snapshots::{name}"), move || snapshot(name, args))).collect()
}

/// Runs `pisces ARGS` from the repository root with `HOME=/home/dev` and compares its
/// stdout, stderr and exit status with the snapshot `name` (the one snapshot helper).
pub fn snapshot(name: &str, args: &[&str]) -> TestResult {
    let out = pisces().current_dir(env!("CARGO_MANIFEST_DIR")).env("HOME", "/home/dev").args(args).output()?;
    let text = format!(
        "$ pisces {}\nexit: {:?}\n--- stdout\n{}--- stderr\n{}",
        args.join(" "),
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cli/snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!(name, text));
    Ok(())
}
