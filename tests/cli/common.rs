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
        .env_remove("XDG_CACHE_HOME")
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

/// `src` made about 4 MB by repeating its lines after the first (duplicated ids: the later
/// win, as in pi), so that a read takes long enough for a [`Rewriter`] to cut into it.
pub fn big_copy(src: &[u8]) -> Vec<u8> {
    let body_start = src.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut big = src.to_vec();
    while big.len() < 4 << 20 {
        big.extend_from_slice(&src[body_start..]);
    }
    big
}

/// A thread that cuts `file` at random points and writes the rest of `bytes` back, in
/// place (the same inode, which a mapped read has to survive), in a loop until stopped.
pub struct Rewriter {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<u32>,
}

impl Rewriter {
    pub fn start(file: &Path, bytes: Vec<u8>, seed: u64) -> Rewriter {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (flag, file) = (stop.clone(), file.to_path_buf());
        let thread = std::thread::spawn(move || {
            let mut x = seed;
            let mut rewrites = 0u32;
            while !flag.load(Ordering::Relaxed) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let cut = (x as usize) % bytes.len();
                if let Ok(mut h) = std::fs::OpenOptions::new().write(true).open(&file) {
                    use std::io::{Seek, SeekFrom, Write};
                    let _ = h.set_len(cut as u64);
                    std::thread::sleep(std::time::Duration::from_millis(2));
                    let _ = h.seek(SeekFrom::Start(cut as u64));
                    let _ = h.write_all(&bytes[cut..]);
                }
                rewrites += 1;
                std::thread::sleep(std::time::Duration::from_millis(3));
            }
            rewrites
        });
        Rewriter { stop, thread }
    }

    /// Stops the loop; how many rewrites it made.
    pub fn stop(self) -> Result<u32, libtest_mimic::Failed> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().map_err(|_| "the writer thread panicked".into())
    }
}
