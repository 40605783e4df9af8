//! The command line itself: help with examples, completions, versions.

use libtest_mimic::Trial;

use crate::common::{check, run, stdout, TestResult};

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("meta::every_command_has_examples", every_command_has_examples),
        Trial::test("meta::completions_for_every_shell", completions),
        Trial::test("meta::every_test_file_is_registered", every_test_file_is_registered),
    ]
}

/// A file in tests/cli/ that main.rs does not declare (or whose trials it never adds)
/// would compile nowhere and test nothing.
fn every_test_file_is_registered() -> TestResult {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli");
    let main = std::fs::read_to_string(dir.join("main.rs"))?;
    let mut missing = Vec::new();
    for e in std::fs::read_dir(&dir)? {
        let name = e?.file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".rs") else { continue };
        if stem == "main" {
            continue;
        }
        if !main.contains(&format!("mod {stem};")) {
            missing.push(format!("{name}: no `mod {stem};` in main.rs"));
        } else if stem != "common" && !main.contains(&format!("{stem}::")) {
            missing.push(format!("{name}: main.rs never adds its trials"));
        }
    }
    check(missing.is_empty(), || missing.join("\n"))
}

fn commands() -> Vec<String> {
    // The command list as `pisces --help` prints it.
    let help = stdout(&run(&["--help"]));
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect()
}

fn every_command_has_examples() -> TestResult {
    let cmds = commands();
    check(cmds.len() >= 4, || format!("commands: {cmds:?}"))?;
    for c in cmds {
        let help = stdout(&run(&[c.as_str(), "--help"]));
        check(help.contains("Examples:") && help.contains(&format!("pisces {c}")), || {
            format!("`pisces {c} --help` has no examples")
        })?;
    }
    Ok(())
}

fn completions() -> TestResult {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = run(&["completions", shell]);
        let script = stdout(&out);
        check(
            out.status.success() && script.contains("path") && script.contains("check") && script.contains("label"),
            || format!("{shell}: {} bytes", script.len()),
        )?;
    }
    Ok(())
}
