//! write (write.js): creates parent directories, overwrites, `Successfully wrote to <path>`.
//! Like pi, it writes wherever the path points (relative paths resolve against the cwd;
//! a path outside it must be given explicitly: absolute, `~`, or with `..`).

use serde_json::{json, Value};

use super::common::{node_fs_error, resolve_to_cwd};
use super::{arg_str, declaration, Tool, ToolContext, ToolOutput};

pub struct WriteTool;

impl Tool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }

    fn declaration(&self) -> Value {
        declaration(
            "write",
            "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.",
            json!({"type":"object","required":["path","content"],"properties":{
                "path":{"type":"string","description":"Path to the file to write (relative or absolute)"},
                "content":{"type":"string","description":"Content to write to the file"}}}),
            true,
        )
    }

    fn run(&self, args: &Value, ctx: &ToolContext) -> ToolOutput {
        let path = arg_str(args, "path").unwrap_or("");
        let content = arg_str(args, "content").unwrap_or("");
        if ctx.aborted() {
            return ToolOutput::error("Operation aborted");
        }
        let abs = resolve_to_cwd(path, &ctx.cwd, ctx.home.as_deref());
        if let Some(dir) = abs.parent() {
            if let Err(e) = std::fs::create_dir_all(dir) {
                return ToolOutput::error(node_fs_error(&e, "mkdir", dir));
            }
        }
        if let Err(e) = std::fs::write(&abs, content) {
            return ToolOutput::error(node_fs_error(&e, "open", &abs));
        }
        // write.js: `Successfully wrote to ${path}` (the path as given), details undefined.
        ToolOutput::text(format!("Successfully wrote to {path}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_with_parents() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(dir.path());
        let out = WriteTool.run(&json!({"path":"a/b/c.txt","content":"hi\n"}), &ctx);
        assert_eq!(out, ToolOutput::text("Successfully wrote to a/b/c.txt"));
        assert_eq!(std::fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap(), "hi\n");
    }
}
