//! bash (bash.js, output-accumulator.js, utils/shell.js, utils/child-process.js).
//!
//! `/bin/bash -c <command>` (else `bash` on PATH, else `sh`) in the cwd, in its own process
//! group, stdout and stderr merged. On timeout or abort the whole group gets SIGKILL, as
//! pi's `killProcessTree`. After the shell exits, output is read until both pipes close or
//! stay idle for 100 ms (`EXIT_STDIO_GRACE_MS`). The output is tail-truncated to 2000 lines /
//! 50KB and, when truncated, saved whole to `<temp_dir>/pi-bash-<16 hex>.log` (mode 0600).

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::common::{format_size, truncate_tail, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES};
use super::{arg_str, declaration, Tool, ToolContext, ToolOutput};

pub struct BashTool;

const MAX_TIMEOUT_MS: f64 = 2_147_483_647.0;
const EXIT_STDIO_GRACE: Duration = Duration::from_millis(100);

extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
}
const SIGKILL: i32 = 9;

/// `killProcessTree`: SIGKILL to the group, else to the process.
fn kill_process_tree(pid: u32) {
    let pid = pid as i32;
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe {
        if kill(-pid, SIGKILL) != 0 {
            kill(pid, SIGKILL);
        }
    }
}

/// The shell commands run in, as pi picks it: `/bin/bash`, else a `bash` on `path` (the
/// `$PATH` of the environment pisces runs in), else `sh`.
pub fn shell(path: Option<&std::ffi::OsStr>) -> String {
    if std::path::Path::new("/bin/bash").exists() {
        return "/bin/bash".into();
    }
    let on_path = path.is_some_and(|p| std::env::split_paths(p).any(|d| d.join("bash").is_file()));
    if on_path {
        "bash".into()
    } else {
        "sh".into()
    }
}

enum Ended {
    Exited(i32),
    TimedOut { shell_exit: Option<(i32, f64)> },
    Aborted,
}

impl Tool for BashTool {
    fn name(&self) -> &str {
        "bash"
    }

    fn declaration(&self) -> Value {
        declaration(
            "bash",
            "Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.",
            json!({"type":"object","required":["command"],"properties":{
                "command":{"type":"string","description":"Shell command to execute"},
                "timeout":{"type":"number","description":"Timeout in seconds (optional, no default timeout)"}}}),
            true,
        )
    }

    fn run(&self, args: &Value, ctx: &ToolContext) -> ToolOutput {
        let command = arg_str(args, "command").unwrap_or("");
        // The call's timeout, else the session's default (`--bash-timeout`; pi has none).
        let timeout_secs = args.get("timeout").and_then(Value::as_f64).or(ctx.bash_timeout.map(|d| d.as_secs_f64()));
        let timeout = match timeout_secs {
            None => None,
            Some(t) if !t.is_finite() || t <= 0.0 => {
                return ToolOutput::error("Invalid timeout: must be a finite number of seconds")
            }
            Some(t) if t * 1000.0 > MAX_TIMEOUT_MS => {
                return ToolOutput::error(format!("Invalid timeout: maximum is {} seconds", MAX_TIMEOUT_MS / 1000.0))
            }
            Some(t) => Some(t),
        };
        if ctx.aborted() {
            return ToolOutput::error("Command aborted");
        }
        if !ctx.cwd.exists() {
            return ToolOutput::error(format!(
                "Working directory does not exist: {}\nCannot execute bash commands.",
                ctx.cwd.display()
            ));
        }
        let mut cmd = Command::new(&ctx.shell);
        cmd.arg("-c").arg(command).current_dir(&ctx.cwd);
        for name in super::SESSION_ENV_VARS {
            cmd.env_remove(name);
        }
        cmd.envs(ctx.session_env.iter().map(|(k, v)| (k, v)));
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => return ToolOutput::error(e.to_string()),
        };
        let pid = child.id();
        let (tx, rx) = mpsc::channel::<Option<Vec<u8>>>();
        for mut pipe in [
            Box::new(child.stdout.take().expect("piped")) as Box<dyn Read + Send>,
            Box::new(child.stderr.take().expect("piped")),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                loop {
                    match pipe.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            if tx.send(Some(buf[..n].to_vec())).is_err() {
                                break;
                            }
                        }
                    }
                }
                let _ = tx.send(None);
            });
        }
        drop(tx);

        let started = Instant::now();
        let deadline = timeout.map(|t| started + Duration::from_secs_f64(t));
        let mut raw: Vec<u8> = Vec::new();
        let mut open_pipes = 2;
        let mut exit: Option<(i32, Instant)> = None;
        let mut last_data = Instant::now();
        let ended = loop {
            if ctx.aborted() {
                kill_process_tree(pid);
                let _ = child.wait();
                break Ended::Aborted;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                let shell_exit = exit.map(|(c, at)| (c, ((at - started).as_millis() as f64 / 100.0).round() / 10.0));
                kill_process_tree(pid);
                let _ = child.wait();
                break Ended::TimedOut { shell_exit };
            }
            if exit.is_none() {
                if let Ok(Some(status)) = child.try_wait() {
                    let code = status
                        .code()
                        .unwrap_or_else(|| 128 + std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0));
                    exit = Some((code, Instant::now()));
                    last_data = Instant::now();
                }
            }
            if let Some((code, _)) = exit {
                if open_pipes == 0 || last_data.elapsed() >= EXIT_STDIO_GRACE {
                    break Ended::Exited(code);
                }
            }
            match rx.recv_timeout(Duration::from_millis(10)) {
                Ok(Some(chunk)) => {
                    raw.extend_from_slice(&chunk);
                    last_data = Instant::now();
                }
                Ok(None) => open_pipes -= 1,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => open_pipes = 0,
            }
        };
        // Output still buffered in the channel belongs to the result.
        while let Ok(Some(chunk)) = rx.try_recv() {
            raw.extend_from_slice(&chunk);
        }
        let (text, details) = format_output(&raw, ctx);
        let append = |status: &str| if text.is_empty() { status.to_string() } else { format!("{text}\n\n{status}") };
        match ended {
            Ended::Aborted => ToolOutput::error(append("Command aborted")),
            Ended::TimedOut { shell_exit } => {
                let t = timeout.unwrap_or_default();
                let secs = if t.fract() == 0.0 { format!("{}", t as i64) } else { format!("{t}") };
                let mut status = format!("Command timed out after {secs} seconds");
                if let Some((code, after)) = shell_exit {
                    status += &format!(". The shell exited with code {code} after {after} seconds, but background processes it started kept writing output until the timeout.");
                }
                ToolOutput::error(append(&status))
            }
            Ended::Exited(code) => {
                let text = if text.is_empty() { "(no output)".to_string() } else { text };
                if code != 0 {
                    ToolOutput {
                        is_error: true,
                        ..ToolOutput::text(format!("{text}\n\nCommand exited with code {code}"))
                    }
                    .with_details(details)
                } else {
                    ToolOutput::text(text).with_details(details)
                }
            }
        }
    }
}

/// `formatOutput` with an empty `emptyText`: the tail and its notice, and `details`
/// `{truncation, fullOutputPath}` when truncated.
fn format_output(raw: &[u8], ctx: &ToolContext) -> (String, Option<Value>) {
    let decoded = String::from_utf8_lossy(raw);
    let t = truncate_tail(&decoded, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
    if !t.truncated {
        return (t.content, None);
    }
    let path = save_full_output(raw, ctx);
    let mut text = t.content.clone();
    let start = t.total_lines - t.output_lines + 1;
    let end = t.total_lines;
    if t.last_line_partial {
        let last_line = decoded.rsplit('\n').next().unwrap_or("").len();
        text += &format!(
            "\n\n[Showing last {} of line {end} (line is {}). Full output: {path}]",
            format_size(t.output_bytes),
            format_size(last_line)
        );
    } else if t.truncated_by == Some("lines") {
        text += &format!("\n\n[Showing lines {start}-{end} of {}. Full output: {path}]", t.total_lines);
    } else {
        text += &format!(
            "\n\n[Showing lines {start}-{end} of {} ({} limit). Full output: {path}]",
            t.total_lines,
            format_size(DEFAULT_MAX_BYTES)
        );
    }
    (text, Some(json!({"truncation": t.to_json(), "fullOutputPath": path})))
}

fn save_full_output(raw: &[u8], ctx: &ToolContext) -> String {
    let hex: String = uuid::Uuid::now_v7().as_bytes()[8..].iter().map(|b| format!("{b:02x}")).collect();
    let path = ctx.temp_dir.join(format!("pi-bash-{hex}.log"));
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    if let Ok(mut f) = opts.open(&path) {
        let _ = f.write_all(raw);
    }
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    fn run(ctx: &ToolContext, args: Value) -> ToolOutput {
        BashTool.run(&args, ctx)
    }

    #[test]
    fn output_exit_codes_and_empty() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(dir.path());
        assert_eq!(run(&ctx, json!({"command":"pwd"})).first_text(), format!("{}\n", dir.path().display()));
        assert_eq!(run(&ctx, json!({"command":"true"})), ToolOutput::text("(no output)"));
        // §7.3 [V]: "out\nerr\n\n\nCommand exited with code 3"; no details.
        let out = run(&ctx, json!({"command":"echo out; sleep 0.1; echo err >&2; exit 3"}));
        assert_eq!(out.first_text(), "out\nerr\n\n\nCommand exited with code 3");
        assert!(out.is_error);
        assert_eq!(out.details, None);
        assert_eq!(
            run(&ctx, json!({"command":"x","timeout":0})),
            ToolOutput::error("Invalid timeout: must be a finite number of seconds")
        );
    }

    #[test]
    fn timeout_kills_the_process_group() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(dir.path());
        let marker = dir.path().join("survived");
        let cmd = format!("(sleep 2; touch {}) & echo started; sleep 30", marker.display());
        let t0 = Instant::now();
        let out = run(&ctx, json!({"command": cmd, "timeout": 1}));
        assert!(t0.elapsed() < Duration::from_secs(5));
        assert_eq!(out, ToolOutput::error("started\n\n\nCommand timed out after 1 seconds"));
        std::thread::sleep(Duration::from_millis(2500));
        assert!(!marker.exists(), "a process of the group outlived the timeout");
        // §7.3 [V]: just `Command timed out after 1 seconds` with no output.
        assert_eq!(
            run(&ctx, json!({"command":"sleep 5","timeout":1})),
            ToolOutput::error("Command timed out after 1 seconds")
        );
    }

    #[test]
    fn abort_and_default_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = ToolContext::new(dir.path());
        ctx.bash_timeout = Some(Duration::from_millis(300));
        let out = run(&ctx, json!({"command":"sleep 5"}));
        assert_eq!(out.first_text(), "Command timed out after 0.3 seconds");
        ctx.bash_timeout = None;
        let abort = ctx.abort.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            abort.store(true, Ordering::SeqCst);
        });
        let out = run(&ctx, json!({"command":"echo hi; sleep 5"}));
        assert_eq!(out, ToolOutput::error("hi\n\n\nCommand aborted"));
    }

    #[test]
    fn tail_truncation_saves_full_output() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = ToolContext::new(dir.path());
        ctx.temp_dir = dir.path().to_path_buf();
        let out = run(&ctx, json!({"command":"seq 1 3000"}));
        let text = out.first_text();
        let path = out.details.as_ref().unwrap()["fullOutputPath"].as_str().unwrap().to_string();
        assert!(text.starts_with("1001\n"));
        assert!(text.ends_with(&format!("3000\n\n[Showing lines 1001-3000 of 3000. Full output: {path}]")));
        assert!(path.contains("pi-bash-") && path.ends_with(".log"));
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 3000);
        let out = run(&ctx, json!({"command":"head -c 60000 /dev/zero | tr '\\0' x"}));
        assert!(out.first_text().contains("[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: "));
    }
}
