//! The agent loop (`run`, with the prompt it sends in `prompt`, the session file it writes
//! in `writer`, its error classes in `errors`, its compaction in `compaction` and its model
//! call in `stream`), its built-in tools (`tools`, pi 1.6.0's, with the dispatcher the
//! loop calls for each tool call), the interactive mode (`repl`) and pi's `/tree`
//! navigation with a summary of the branch left behind (`navigate`). `start` sets a run
//! up from `pisces agent`'s options (the session in `target`); what the agent has to say
//! goes to an `output::Output`, which the caller gives. See ARCHITECTURE.md.

pub mod compaction;
pub mod errors;
pub mod interrupt;
pub mod navigate;
pub mod output;
pub mod prompt;
pub mod repl;
pub mod run;
pub mod start;
pub mod stream;
pub mod target;
pub mod tools;
pub mod writer;

pub use tools::{builtin_tools, execute_tool_call, Tool, ToolContext, ToolOutput, ALL_TOOLS, DEFAULT_TOOLS};
