//! pi's verified `/tree` render, as the pi spec this project started from quotes it (its §3.2;
//! the rules are in docs/pi-format.md §3.2), reproduced line for line.
//!
//! testdata/verified/verified-tree.jsonl is the session that section describes; the
//! `tree.*.txt` files beside it are the real pi's renders of it (testdata/verified/make.sh).

use std::fs;

use libtest_mimic::Trial;

use crate::common::{check, pisces, stdout, testdata, TestResult};

/// The pi spec's §3.2, "Verified render [V] (1.6.0, default filter, width 100, leaf "That
/// worked")", as printed there.
const REFERENCE: &str = "  • [system]
  • user: Hello, can you help me?
  • assistant: Of course! I can...
  ├⊟ • [checkpoint] user: Let's try approach A
  │     • [bash: ls -la]
  │     • assistant: For approach A...
  │     • [compaction: 12k tokens]
› │     • user: That worked
  └⊟ [system]
        user: Actually, approach B
        assistant: For approach B...
  (8/11)
";

pub fn trials() -> Vec<Trial> {
    let mut t = vec![Trial::test("verified::pi_render_is_the_reference", pi_render_is_the_reference)];
    for (golden, args) in [
        ("tree.default.w100.txt", vec!["--width", "98"]),
        ("tree.all.w100.txt", vec!["--width", "98", "--filter", "all"]),
        ("tree.user-only.w100.txt", vec!["--width", "98", "--filter", "user"]),
        ("tree.default.w30.txt", vec!["--width", "28"]),
    ] {
        t.push(Trial::test(format!("verified::{golden}"), move || same_as_pi(golden, &args)));
    }
    t
}

fn pi_render_is_the_reference() -> TestResult {
    let pi = fs::read_to_string(testdata().join("verified/tree.default.w100.txt"))?;
    check(pi == REFERENCE, || format!("pi's render of the session is not the reference's:\n{pi}"))
}

/// pisces prints pi's rows without the 2-column cursor gutter and the status line.
fn same_as_pi(golden: &str, args: &[&str]) -> TestResult {
    let pi = fs::read_to_string(testdata().join("verified").join(golden))?;
    let lines: Vec<&str> = pi.lines().collect();
    let want: String =
        lines[..lines.len() - 1].iter().map(|l| format!("{}\n", l.chars().skip(2).collect::<String>())).collect();
    let file = testdata().join("verified/verified-tree.jsonl");
    let out =
        pisces().args(["tree", file.to_str().unwrap(), "--leaf", "a0000013", "--pi-exact"]).args(args).output()?;
    let got = stdout(&out);
    check(got == want, || format!("pisces:\n{got}\npi:\n{want}"))
}
