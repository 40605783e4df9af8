//! Running the binary and comparing JSON.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

pub type TestResult = Result<(), libtest_mimic::Failed>;

pub fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// The `pisces` binary, with an environment that cannot reach the user's own sessions
/// or colors.
pub fn pisces() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pisces"));
    c.env_remove("PI_CODING_AGENT_SESSION_DIR")
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("OMP_PROFILE")
        .env_remove("PI_PROFILE")
        .env_remove("XDG_DATA_HOME")
        .env_remove("OPENCLAW_STATE_DIR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("NO_COLOR")
        .env("HOME", "/nonexistent-home-for-tests")
        .stdin(Stdio::null());
    c
}

pub fn run(args: &[&str]) -> Output {
    pisces().args(args).output().expect("pisces runs")
}

pub fn stdout_json(out: &Output) -> Result<Value, libtest_mimic::Failed> {
    if !out.status.success() {
        return Err(format!("exit {:?}\nstderr:\n{}", out.status.code(), String::from_utf8_lossy(&out.stderr)).into());
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("stdout is not JSON: {e}").into())
}

/// The first difference between two JSON values (floats compared with a relative
/// tolerance, as pi's costs are sums of floats), as `$.path: got vs want`.
pub fn first_diff(got: &Value, want: &Value, path: &str) -> Option<String> {
    match (got, want) {
        (Value::Object(a), Value::Object(b)) => {
            for k in b.keys() {
                if !a.contains_key(k) {
                    return Some(format!("{path}.{k}: missing in pisces (pi: {})", short(&b[k])));
                }
            }
            for (k, v) in a {
                match b.get(k) {
                    None => return Some(format!("{path}.{k}: extra in pisces ({})", short(v))),
                    Some(w) => {
                        if let Some(d) = first_diff(v, w, &format!("{path}.{k}")) {
                            return Some(d);
                        }
                    }
                }
            }
            None
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                if let Some(d) = first_diff(x, y, &format!("{path}[{i}]")) {
                    return Some(d);
                }
            }
            (a.len() != b.len()).then(|| format!("{path}: {} items in pisces, {} in pi", a.len(), b.len()))
        }
        (Value::Number(a), Value::Number(b)) => {
            // JSON from JS has no int/float split, but integral values print without a
            // fraction, so an integer must stay an integer; floats (costs) may differ in
            // the last bits.
            let same = if a.is_f64() || b.is_f64() {
                let (x, y) = (a.as_f64().unwrap_or(f64::NAN), b.as_f64().unwrap_or(f64::NAN));
                a.is_f64() && b.is_f64() && (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0)
            } else {
                a == b
            };
            (!same).then(|| format!("{path}: {a} in pisces, {b} in pi"))
        }
        _ => (got != want).then(|| format!("{path}: {} in pisces, {} in pi", short(got), short(want))),
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 160 {
        format!("{}…", s.chars().take(160).collect::<String>())
    } else {
        s
    }
}

pub fn check(cond: bool, msg: impl FnOnce() -> String) -> TestResult {
    if cond {
        Ok(())
    } else {
        Err(msg().into())
    }
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A trial that needs something the machine may lack (`needs`: what, `present`: whether it
/// is there). Without it the trial is listed as ignored, with what it needs in its name, so
/// the run says what it did not test instead of passing silently.
pub fn needing(
    name: impl Into<String>,
    needs: &str,
    present: bool,
    f: impl FnOnce() -> TestResult + Send + 'static,
) -> libtest_mimic::Trial {
    let name = name.into();
    if present {
        libtest_mimic::Trial::test(name, f)
    } else {
        libtest_mimic::Trial::test(format!("{name} (skipped: needs {needs})"), f).with_ignored_flag(true)
    }
}

/// Whether a program runs here (`program --version` starts).
pub fn has_program(program: &str) -> bool {
    std::process::Command::new(program).arg("--version").output().is_ok()
}

/// What the live checks need (see tools/live-oracle.sh).
pub const LIVE: &str = "PISCES_LIVE_ORACLE=1 and the pi oracle (tools/live-oracle.sh)";

/// Whether the live checks against the real pi were asked for (`PISCES_LIVE_ORACLE=1`).
pub fn live_oracle() -> bool {
    std::env::var_os("PISCES_LIVE_ORACLE").is_some()
}
