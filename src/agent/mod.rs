//! The agent loop (`run`), its built-in tools (`tools`, pi 1.6.0's, with the dispatcher the
//! loop calls for each tool call), the interactive mode (`repl`) and pi's `/tree`
//! navigation with a summary of the branch left behind (`navigate`). See DESIGN.md.

pub mod interrupt;
pub mod navigate;
pub mod repl;
pub mod run;
pub mod target;
pub mod tools;

pub use tools::{builtin_tools, execute_tool_call, Tool, ToolContext, ToolOutput, ALL_TOOLS, DEFAULT_TOOLS};
