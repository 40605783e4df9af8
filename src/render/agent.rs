//! `pisces agent` on a terminal: the [`Output`] that shows what the agent says (print mode's
//! text or JSON, the REPL's streamed replies and messages) and the REPL's [`Input`] (a
//! line editor on a terminal, lines as they come through a pipe).
//!
//! Text from sessions and models goes through [`sanitize`] before it is painted, so that
//! the colors survive and escapes in the data do not.

use std::io::{self, BufRead, Write};

use serde_json::Value;

use super::transcript::{self, TranscriptHead};
use super::tree::{self as draw, TextOptions};
use super::{sanitize, Paint, Ui};
use crate::agent::interrupt::Interrupt;
use crate::agent::output::{Notice, Output};
use crate::agent::repl::{Input, Line, HELP};
use crate::agent::start::Ending;
use crate::session::projection::Projection;
use crate::session::view::TreeView;
use crate::session::Session;

/// What kind of run is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Print mode: what the setup says on stderr, the final text on stdout.
    Text,
    /// Print mode with `--mode json`: the session header and pi's events on stdout, one
    /// per line, for programs (kept byte for byte).
    Json,
    /// The REPL: replies and tool calls drawn as they stream.
    Interactive,
}

/// The agent's output on a terminal: `out` is standard output, `err` standard error.
pub struct Terminal<O: Write, E: Write> {
    ui: Ui,
    style: Style,
    /// Show thinking as a one-line `[thinking…]` instead of streaming it.
    hide_thinking: bool,
    /// The kind of block being streamed ("text" / "thinking"), if a line is open.
    open: Option<String>,
    out: O,
    err: E,
}

impl<O: Write, E: Write> Terminal<O, E> {
    pub fn new(ui: Ui, style: Style, hide_thinking: bool, out: O, err: E) -> Terminal<O, E> {
        Terminal { ui, style, hide_thinking, open: None, out, err }
    }

    /// Ends the line a streamed block left open.
    fn close(&mut self) -> io::Result<()> {
        if self.open.take().is_some() {
            writeln!(self.out)?;
        }
        Ok(())
    }

    /// A loop event as the REPL draws it.
    fn draw(&mut self, e: &Value) -> io::Result<()> {
        let kind = e.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "message_update" => {
                let a = &e["assistantMessageEvent"];
                match a.get("type").and_then(Value::as_str).unwrap_or("") {
                    "text_start" => {
                        self.close()?;
                        self.open = Some("text".into());
                        return Ok(());
                    }
                    "thinking_start" => {
                        self.close()?;
                        self.open = Some("thinking".into());
                        if self.hide_thinking {
                            write!(self.out, "{}", self.ui.paint(Paint::Dim, "[thinking…]"))?;
                        }
                        return Ok(());
                    }
                    "text_delta" => {
                        let d = a.get("delta").and_then(Value::as_str).unwrap_or("");
                        write!(self.out, "{}", sanitize(d))?;
                    }
                    "thinking_delta" if !self.hide_thinking => {
                        let d = a.get("delta").and_then(Value::as_str).unwrap_or("");
                        write!(self.out, "{}", self.ui.paint(Paint::Dim, &sanitize(d)))?;
                    }
                    _ => {}
                }
                self.out.flush()?;
            }
            "tool_execution_start" => {
                self.close()?;
                let name = e.get("toolName").and_then(Value::as_str).unwrap_or("?");
                let args = &e["args"];
                let brief = ["command", "path", "pattern"]
                    .iter()
                    .find_map(|k| args.get(*k).and_then(Value::as_str))
                    .map(str::to_string)
                    .unwrap_or_else(|| args.to_string());
                let brief: String = brief.chars().take(200).collect();
                writeln!(self.out, "{}", self.ui.paint(Paint::Tool, &format!("→ {name} {}", sanitize(&brief))))?;
            }
            "tool_execution_end" => {
                let error = e.get("isError").and_then(Value::as_bool).unwrap_or(false);
                let text: String = e["result"]["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n");
                let lines: Vec<&str> = text.lines().collect();
                let paint = if error { Paint::Error } else { Paint::Dim };
                for l in lines.iter().take(4) {
                    writeln!(self.out, "  {}", self.ui.paint(paint, &sanitize(l)))?;
                }
                if lines.len() > 4 {
                    writeln!(
                        self.out,
                        "  {}",
                        self.ui.paint(Paint::Dim, &format!("… {} more lines", lines.len() - 4))
                    )?;
                }
            }
            "message_end" => {
                let m = &e["message"];
                if m.get("role").and_then(Value::as_str) != Some("assistant") {
                    return Ok(());
                }
                self.close()?;
                match m.get("stopReason").and_then(Value::as_str) {
                    Some("aborted") => writeln!(self.out, "{}", self.ui.paint(Paint::Error, "[aborted]"))?,
                    Some("error") => {
                        let err = m.get("errorMessage").and_then(Value::as_str).unwrap_or("error");
                        writeln!(self.out, "{}", self.ui.paint(Paint::Error, &format!("error: {}", sanitize(err))))?;
                    }
                    _ => {}
                }
            }
            "auto_retry_start" => {
                self.close()?;
                let msg = format!(
                    "retrying (attempt {}): {}",
                    e["attempt"],
                    sanitize(e.get("errorMessage").and_then(Value::as_str).unwrap_or(""))
                );
                writeln!(self.out, "{}", self.ui.paint(Paint::Dim, &msg))?;
            }
            "compaction_start" => {
                self.close()?;
                writeln!(self.out, "{}", self.ui.paint(Paint::Dim, "compacting…"))?;
            }
            "compaction_end" => {
                if let Some(err) = e.get("errorMessage").and_then(Value::as_str) {
                    writeln!(self.out, "{}", self.ui.paint(Paint::Error, &sanitize(err)))?;
                } else {
                    writeln!(self.out, "{}", self.ui.paint(Paint::Dim, "compacted"))?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

impl<O: Write, E: Write> Output for Terminal<O, E> {
    fn notice(&mut self, notice: Notice<'_>) -> io::Result<()> {
        // What the setup says is for people: JSON mode's output is for programs.
        let text = self.style != Style::Json;
        let ui = &self.ui;
        match notice {
            Notice::Note(n) if text => writeln!(self.err, "{}", sanitize(n)),
            Notice::ConfigProblem(p) => writeln!(self.err, "warning: {}", sanitize(p)),
            Notice::NothingToSummarize { to } if text => {
                writeln!(self.err, "nothing to summarize: {} is on the path to the session's last entry", sanitize(to))
            }
            Notice::Summarized { entries, id } if text => {
                writeln!(self.err, "summarized the branch left behind ({entries} entries) as {id}")
            }
            Notice::Note(_) | Notice::NothingToSummarize { .. } | Notice::Summarized { .. } => Ok(()),
            Notice::Header(h) if !text => writeln!(self.out, "{h}"),
            Notice::Header(_) => Ok(()),
            Notice::Finished { text: answer, session, ending } => {
                if text {
                    // The answer is the program's output: exact bytes into a pipe, made
                    // safe on a terminal.
                    if !answer.is_empty() {
                        let answer = if self.ui.stdout_tty { sanitize(answer) } else { answer.into() };
                        writeln!(self.out, "{answer}")?;
                    }
                    writeln!(self.err, "session: {}", sanitize(&session.display().to_string()))?;
                }
                match ending {
                    Ending::Stopped => Ok(()),
                    Ending::Failed { failure, error } => {
                        if let Some(f) = failure {
                            writeln!(self.err, "{}", sanitize(&f.to_string()))?;
                        }
                        writeln!(self.err, "{}", sanitize(error))
                    }
                    Ending::CutOff => writeln!(
                        self.err,
                        "warning: the response hit the output token limit (stopReason length); the text may be cut off"
                    ),
                }
            }
            Notice::Welcome { model, session } => {
                writeln!(
                    self.out,
                    "{}",
                    sanitize(&format!(
                        "pisces agent — {}/{} — session {}",
                        model.provider,
                        model.id,
                        session.display()
                    ))
                )
            }
            Notice::Help => writeln!(self.out, "{HELP}"),
            Notice::ExitHint => writeln!(self.err, "(Ctrl-C again to exit, or /quit)"),
            Notice::Failed(e) => writeln!(self.err, "{}", ui.paint(Paint::Error, &sanitize(&format!("error: {e:#}")))),
            Notice::RunFailed(f) => writeln!(self.err, "{}", ui.paint(Paint::Error, &sanitize(f))),
            Notice::Bye { session } => writeln!(self.err, "session: {}", sanitize(&session.display().to_string())),
            Notice::Named(n) => writeln!(self.out, "session name: {}", sanitize(n)),
            Notice::ContinuingFrom { id, prompt } => {
                writeln!(
                    self.out,
                    "continuing from the parent of {}; its prompt was:\n{}",
                    sanitize(id),
                    sanitize(prompt)
                )
            }
            Notice::ContinuingAfter { id } => writeln!(self.out, "continuing after {}", sanitize(id)),
            Notice::Summarizing => {
                writeln!(self.out, "{}", ui.paint(Paint::Dim, "summarizing the branch left behind…"))
            }
            Notice::NothingLeftBehind => writeln!(self.out, "nothing to summarize: it is on this branch"),
            Notice::BranchSummary(s) => writeln!(self.out, "{}", ui.paint(Paint::Summary, &sanitize(s))),
            Notice::Labelled { target, name } => {
                writeln!(self.out, "labelled {} \"{}\"", sanitize(target), sanitize(name))
            }
            Notice::ModelChanged { model, thinking } => {
                writeln!(
                    self.out,
                    "{}",
                    sanitize(&format!("model: {}/{} (thinking: {thinking})", model.provider, model.id))
                )
            }
            Notice::Compacting => writeln!(self.out, "{}", ui.paint(Paint::Dim, "compacting…")),
            Notice::Compacted { tokens_before, summary } => {
                writeln!(
                    self.out,
                    "compacted ({tokens_before} tokens before):\n{}",
                    ui.paint(Paint::Summary, &sanitize(summary))
                )
            }
            Notice::Forked { path } => writeln!(self.out, "forked to {}", sanitize(&path.display().to_string())),
        }
    }

    fn event(&mut self, event: &Value) {
        // A failed write is the terminal's trouble, not the run's: the run goes on.
        let _ = match self.style {
            Style::Text => Ok(()),
            Style::Json => writeln!(self.out, "{event}").and_then(|()| self.out.flush()),
            Style::Interactive => self.draw(event),
        };
    }

    fn end_events(&mut self) -> io::Result<()> {
        self.close()
    }

    fn tree(&mut self, session: &Session, view: &TreeView) -> io::Result<()> {
        let opts = TextOptions {
            width: self.ui.width,
            ids: true,
            time: false,
            compact: false,
            max_levels: Some(draw::MAX_LEVELS),
        };
        draw::write_text(&mut self.out, &self.ui, session, view, &opts)?;
        self.out.flush()
    }

    fn path(&mut self, session: &Session, projection: &Projection) -> io::Result<()> {
        let leaf_id = projection.leaf.map(|l| session.display_id(l).into_owned());
        let model = projection.model.as_ref().map(|m| {
            format!(
                "{}/{}",
                m.get("provider").and_then(Value::as_str).unwrap_or("?"),
                m.get("modelId").and_then(Value::as_str).unwrap_or("?")
            )
        });
        let head = TranscriptHead {
            file: &session.file,
            session_name: session.title.as_deref(),
            leaf: leaf_id.as_deref(),
            model,
            thinking_level: projection.thinking_level.as_ref().and_then(Value::as_str).map(str::to_string),
            system: None,
        };
        transcript::write_text(&mut self.out, &self.ui, &head, &projection.messages)?;
        self.out.flush()
    }

    fn on_interrupt(&self) -> fn(Interrupt) {
        show_interrupt
    }
}

/// What a Ctrl-C did, on standard error. It runs on the signal handler's thread, where no
/// writer can be handed in.
fn show_interrupt(what: Interrupt) {
    let text = match what {
        Interrupt::Aborting => "\naborting… (Ctrl-C again to exit at once)",
        Interrupt::Idle => "\n(Ctrl-C again to exit)",
    };
    let _ = writeln!(io::stderr(), "{text}");
}

/// The REPL's lines: through rustyline's editor on a terminal (editing, history with
/// up/down; it reads the terminal itself), else from `input` as they come.
pub struct Lines<R: BufRead, W: Write> {
    editor: Option<rustyline::DefaultEditor>,
    terminal: bool,
    input: R,
    /// Where the `> ` prompt goes when there is a terminal but no editor.
    prompt_out: W,
}

impl<R: BufRead, W: Write> Lines<R, W> {
    /// `terminal`: whether standard input is one. The editor takes SIGINT for itself when
    /// it is made, so this is made before the REPL installs its Ctrl-C handler (see
    /// `agent::repl::Repl::run`).
    pub fn new(input: R, terminal: bool, prompt_out: W) -> Lines<R, W> {
        let editor = if terminal { rustyline::DefaultEditor::new().ok() } else { None };
        Lines { editor, terminal, input, prompt_out }
    }
}

impl<R: BufRead, W: Write> Input for Lines<R, W> {
    fn read_line(&mut self) -> io::Result<Line> {
        if let Some(ed) = self.editor.as_mut() {
            return Ok(match ed.readline("> ") {
                Ok(l) => {
                    let _ = ed.add_history_entry(l.as_str());
                    Line::Text(l)
                }
                Err(rustyline::error::ReadlineError::Interrupted) => Line::Interrupted,
                Err(_) => Line::End,
            });
        }
        if self.terminal {
            write!(self.prompt_out, "> ")?;
            self.prompt_out.flush()?;
        }
        let mut line = String::new();
        if self.input.read_line(&mut line)? == 0 {
            return Ok(Line::End);
        }
        Ok(Line::Text(line))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;

    fn terminal(style: Style) -> Terminal<Vec<u8>, Vec<u8>> {
        Terminal::new(Ui::plain(), style, false, Vec::new(), Vec::new())
    }

    fn text(bytes: &[u8]) -> &str {
        std::str::from_utf8(bytes).unwrap()
    }

    fn update(event: Value) -> Value {
        json!({"type": "message_update", "assistantMessageEvent": event})
    }

    #[test]
    fn the_repl_streams_replies_made_safe() {
        let mut t = terminal(Style::Interactive);
        t.event(&update(json!({"type": "text_start"})));
        t.event(&update(json!({"type": "text_delta", "delta": "hel\u{1b}[2Jlo"})));
        t.event(&json!({"type": "tool_execution_start", "toolName": "bash", "args": {"command": "ls\u{1b}]0;x\u{7}"}}));
        t.event(&json!({"type": "tool_execution_end", "result": {"content": [{"type": "text", "text": "a\nb"}]}}));
        t.end_events().unwrap();
        assert_eq!(text(&t.out), "hello\n→ bash ls\n  a\n  b\n");
        assert!(t.err.is_empty());
    }

    #[test]
    fn print_modes_split_what_is_for_people_from_what_is_for_programs() {
        let session = Path::new("s.jsonl");
        let failed = Ending::Failed { failure: None, error: "bad\u{1b}[31m key".into() };
        let mut t = terminal(Style::Text);
        t.notice(Notice::Note("continuing")).unwrap();
        t.event(&json!({"type": "agent_start"}));
        t.notice(Notice::Finished { text: "Done.", session, ending: &failed }).unwrap();
        assert_eq!(text(&t.out), "Done.\n");
        assert_eq!(text(&t.err), "continuing\nsession: s.jsonl\nbad key\n");

        let mut j = terminal(Style::Json);
        j.notice(Notice::Note("continuing")).unwrap();
        j.notice(Notice::Header(&json!({"type": "session"}))).unwrap();
        j.event(&json!({"type": "agent_start"}));
        j.notice(Notice::Finished { text: "Done.", session, ending: &Ending::Stopped }).unwrap();
        assert_eq!(text(&j.out), "{\"type\":\"session\"}\n{\"type\":\"agent_start\"}\n");
        assert!(j.err.is_empty());
    }

    #[test]
    fn what_reaches_a_terminal_is_made_safe_and_a_pipe_gets_the_answer_exactly() {
        let session = Path::new("s\u{1b}]0;t\u{7}.jsonl");
        let answer = "Done\u{1b}[2J.";
        let mut tty = Terminal::new(Ui { stdout_tty: true, ..Ui::plain() }, Style::Text, false, Vec::new(), Vec::new());
        tty.notice(Notice::Finished { text: answer, session, ending: &Ending::Stopped }).unwrap();
        tty.notice(Notice::Named("n\u{1b}[31mame")).unwrap();
        tty.notice(Notice::Labelled { target: "a1", name: "x\u{202e}y" }).unwrap();
        tty.notice(Notice::Compacted { tokens_before: &json!(9), summary: "s\u{1b}[1Au" }).unwrap();
        tty.event(&json!({"type": "compaction_end", "errorMessage": "e\u{1b}[Kr"}));
        assert_eq!(text(&tty.out), "Done.\nsession name: name\nlabelled a1 \"xy\"\ncompacted (9 tokens before):\nsu\n");
        assert_eq!(text(&tty.err), "session: s.jsonl\n");

        let mut pipe = terminal(Style::Text);
        pipe.notice(Notice::Finished { text: answer, session, ending: &Ending::Stopped }).unwrap();
        assert_eq!(text(&pipe.out), format!("{answer}\n"));
        assert_eq!(text(&pipe.err), "session: s.jsonl\n");
    }

    #[test]
    fn piped_lines_come_as_they_are_until_the_end() {
        let mut lines = Lines::new("first\n/quit\r\n".as_bytes(), false, Vec::new());
        assert_eq!(lines.read_line().unwrap(), Line::Text("first\n".into()));
        assert_eq!(lines.read_line().unwrap(), Line::Text("/quit\r\n".into()));
        assert_eq!(lines.read_line().unwrap(), Line::End);
        assert!(lines.prompt_out.is_empty());
    }
}
