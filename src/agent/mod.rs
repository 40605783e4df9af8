//! The agent loop and its tools (see DESIGN.md). For now: the built-in tools of pi 1.6.0
//! (`tools`), with the dispatcher the loop calls for each tool call.

pub mod tools;

pub use tools::{builtin_tools, execute_tool_call, Tool, ToolContext, ToolOutput, ALL_TOOLS, DEFAULT_TOOLS};
pub mod repl;
pub mod run;
