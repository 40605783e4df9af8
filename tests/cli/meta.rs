//! The command line itself: help with examples, completions, versions.

use libtest_mimic::Trial;

use crate::common::{check, run, stdout, TestResult};

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("meta::every_command_has_examples", every_command_has_examples),
        Trial::test("meta::completions_for_every_shell", completions),
    ]
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
