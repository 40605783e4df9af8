//! read (read.js): text with offset/limit and head truncation, images by content sniffing.
//!
//! Images go through pi's image processing (`super::image`): converted to PNG when the
//! format is not one the providers take, resized when too large.

use std::io::Read;

use serde_json::{json, Value};

use super::common::{
    format_size, node_fs_error, resolve_read_path, truncate_head, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES,
};
use super::image::Processed;
use super::{arg_f64, arg_str, declaration, text_block, Tool, ToolContext, ToolOutput};
use crate::session::js::number_string as js_num;

pub struct ReadTool;

impl Tool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }

    fn declaration(&self) -> Value {
        declaration(
            "read",
            "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent as attachments. For text files, output is truncated to 2000 lines or 50KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete.",
            json!({"type":"object","required":["path"],"properties":{
                "path":{"type":"string","description":"Path to the file to read (relative or absolute)"},
                "offset":{"type":"number","description":"Line number to start reading from (1-indexed)"},
                "limit":{"type":"number","description":"Maximum number of lines to read"}}}),
            true,
        )
    }

    fn run(&self, args: &Value, ctx: &ToolContext) -> ToolOutput {
        if ctx.aborted() {
            return ToolOutput::error("Operation aborted");
        }
        let path = arg_str(args, "path").unwrap_or("");
        let offset = arg_f64(args, "offset");
        let limit = arg_f64(args, "limit");
        let abs = resolve_read_path(path, &ctx.cwd, ctx.home.as_deref());
        let bytes = match std::fs::File::open(&abs).and_then(|mut f| {
            let mut b = Vec::new();
            f.read_to_end(&mut b).map(|_| b)
        }) {
            Ok(b) => b,
            Err(e) => {
                let syscall = if abs.is_dir() { "read" } else { "access" };
                return ToolOutput::error(node_fs_error(&e, syscall, &abs));
            }
        };
        if ctx.aborted() {
            return ToolOutput::error("Operation aborted");
        }
        if let Some(mime) = detect_image_mime(&bytes[..bytes.len().min(4100)]) {
            let mut details = None;
            let content = match super::image::process(&bytes, mime) {
                Processed::Image { data, mime, hints } => {
                    let mut note = format!("Read image file [{mime}]");
                    for h in hints {
                        note.push('\n');
                        note.push_str(&h);
                    }
                    if let Some(model) = &ctx.model_without_images {
                        details = Some(json!({"imageUnsupportedByModel": model}));
                    }
                    vec![text_block(note), json!({"type":"image","data": data,"mimeType": mime})]
                }
                Processed::Omitted(why) => vec![text_block(format!("Read image file [{mime}]\n{why}"))],
            };
            return ToolOutput { content, is_error: false, details };
        }
        read_text(&String::from_utf8_lossy(&bytes), path, offset, limit)
    }
}

/// The text path of read.js (selectLinesFromBuffer and the notices).
fn read_text(text: &str, path: &str, offset: Option<f64>, limit: Option<f64>) -> ToolOutput {
    // The arithmetic is JavaScript's, in doubles: a fractional offset or limit shows up in
    // the notices as pi prints it (`Use offset=5.5`), and slicing truncates as
    // `Array.prototype.slice` does.
    let all: Vec<&str> = text.split('\n').collect();
    let total = all.len() as f64;
    // `offset ? Math.max(0, offset - 1) : 0` (0 and NaN are falsy).
    let start = match offset {
        Some(o) if o != 0.0 && !o.is_nan() => (o - 1.0).max(0.0),
        _ => 0.0,
    };
    if start >= total {
        let shown = offset.map(js_num).unwrap_or_default();
        return ToolOutput::error(format!("Offset {shown} is beyond end of file ({} lines total)", js_num(total)));
    }
    let end = limit.map(|l| (start + l).min(total));
    let (from, to) = (js_slice_index(start, all.len()), end.map_or(all.len(), |e| js_slice_index(e, all.len())));
    let selected = all[from..to.max(from)].join("\n");
    let t = truncate_head(&selected, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
    let start_display = start + 1.0;
    let user_limited = end.map(|e| e - start);
    let mut details = None;
    let output = if t.first_line_exceeds_limit {
        let first = all[from].len();
        details = Some(json!({"truncation": t.to_json()}));
        let line = js_num(start_display);
        format!(
            "[Line {line} is {}, exceeds {} limit. Use bash: sed -n '{line}p' {path} | head -c {DEFAULT_MAX_BYTES}]",
            format_size(first),
            format_size(DEFAULT_MAX_BYTES)
        )
    } else if t.truncated {
        let end_display = start_display + t.output_lines as f64 - 1.0;
        let (first, last, next) = (js_num(start_display), js_num(end_display), js_num(end_display + 1.0));
        details = Some(json!({"truncation": t.to_json()}));
        let of = js_num(total);
        if t.truncated_by == Some("lines") {
            format!("{}\n\n[Showing lines {first}-{last} of {of}. Use offset={next} to continue.]", t.content)
        } else {
            format!(
                "{}\n\n[Showing lines {first}-{last} of {of} ({} limit). Use offset={next} to continue.]",
                t.content,
                format_size(DEFAULT_MAX_BYTES)
            )
        }
    } else if let Some(n) = user_limited.filter(|n| start + n < total) {
        let remaining = js_num(total - (start + n));
        format!(
            "{}\n\n[{remaining} more lines in file. Use offset={} to continue.]",
            t.content,
            js_num(start + n + 1.0)
        )
    } else {
        t.content
    };
    ToolOutput::text(output).with_details(details)
}

/// An index as `Array.prototype.slice` takes it: truncated toward zero, negative from the
/// end, clamped to the array.
fn js_slice_index(i: f64, len: usize) -> usize {
    let i = if i.is_nan() { 0.0 } else { i.trunc() };
    if i < 0.0 {
        (len as f64 + i).max(0.0) as usize
    } else {
        i.min(len as f64) as usize
    }
}

/// `detectSupportedImageMimeType` (utils/mime.js).
pub fn detect_image_mime(b: &[u8]) -> Option<&'static str> {
    let u32be = |o: usize| b.get(o..o + 4).map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]));
    let u32le = |o: usize| b.get(o..o + 4).map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]));
    if b.starts_with(&[0xff, 0xd8, 0xff]) {
        return (b.get(3) != Some(&0xf7)).then_some("image/jpeg");
    }
    if b.starts_with(&[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) {
        let is_png = b.len() >= 16 && u32be(8) == Some(13) && &b[12..16] == b"IHDR";
        if !is_png {
            return None;
        }
        // Animated PNG (an acTL chunk before IDAT) is not supported.
        let mut off = 8usize;
        while off + 8 <= b.len() {
            let len = u32be(off).unwrap_or(0) as usize;
            match &b[off + 4..off + 8] {
                b"acTL" => return None,
                b"IDAT" => break,
                _ => {}
            }
            let next = off + 8 + len + 4;
            if next <= off || next > b.len() {
                break;
            }
            off = next;
        }
        return Some("image/png");
    }
    if b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a") {
        return Some("image/gif");
    }
    if b.starts_with(b"RIFF") && b.get(8..12) == Some(b"WEBP") {
        return Some("image/webp");
    }
    if b.starts_with(b"BM") && b.len() >= 26 {
        let size = u32le(2)?;
        let pixel = u32le(10)?;
        let dib = u32le(14)?;
        if (size == 0 || size >= 26) && pixel >= 14 + dib && [12, 40, 52, 56, 64, 108, 124].contains(&dib) {
            return Some("image/bmp");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dir: &std::path::Path, args: Value) -> ToolOutput {
        ReadTool.run(&args, &ToolContext::new(dir))
    }

    #[test]
    fn text_offset_limit_and_notices() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(p.join("h.txt"), "hello world\n").unwrap();
        // docs/pi-format.md §7.3: `hello world\n` reads back as `hello world\n`.
        assert_eq!(run(p, json!({"path":"h.txt"})), ToolOutput::text("hello world\n"));
        let ten: String = (1..=10).map(|i| format!("l{i}\n")).collect();
        std::fs::write(p.join("ten.txt"), &ten).unwrap();
        // `[${remaining} more lines in file. Use offset=${nextOffset} to continue.]`
        assert_eq!(
            run(p, json!({"path":"ten.txt","offset":2,"limit":3})).first_text(),
            "l2\nl3\nl4\n\n[7 more lines in file. Use offset=5 to continue.]"
        );
        // `Offset ${offset} is beyond end of file (${totalFileLines} lines total)`
        let out = run(p, json!({"path":"ten.txt","offset":20}));
        assert!(out.is_error);
        assert_eq!(out.first_text(), "Offset 20 is beyond end of file (11 lines total)");
        let big: String = (1..=2500).map(|i| format!("{i}\n")).collect();
        std::fs::write(p.join("big.txt"), big).unwrap();
        // `[Showing lines ${start}-${end} of ${total}. Use offset=${next} to continue.]`
        let out = run(p, json!({"path":"big.txt"}));
        assert!(out.first_text().ends_with("2000\n\n[Showing lines 1-2000 of 2501. Use offset=2001 to continue.]"));
        assert_eq!(out.details.as_ref().unwrap()["truncation"]["truncatedBy"], "lines");
        let wide: String = (0..100).map(|_| format!("{}\n", "x".repeat(1000))).collect();
        std::fs::write(p.join("wide.txt"), wide).unwrap();
        let out = run(p, json!({"path":"wide.txt"}));
        assert!(out
            .first_text()
            .ends_with("\n\n[Showing lines 1-51 of 101 (50.0KB limit). Use offset=52 to continue.]"));
        std::fs::write(p.join("long.txt"), "y".repeat(60000)).unwrap();
        assert_eq!(
            run(p, json!({"path":"long.txt"})).first_text(),
            "[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' long.txt | head -c 51200]"
        );
        let out = run(p, json!({"path":"missing.txt"}));
        assert!(out.is_error);
        assert!(out.first_text().starts_with("ENOENT: no such file or directory"));
    }

    #[test]
    fn images_by_content() {
        use crate::agent::tools::common::base64_encode;
        let dir = tempfile::tempdir().unwrap();
        let mut png = Vec::new();
        let img = image::DynamicImage::ImageRgb8(image::RgbImage::new(4, 3));
        img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png).unwrap();
        std::fs::write(dir.path().join("pic.dat"), &png).unwrap();
        let out = run(dir.path(), json!({"path":"pic.dat"}));
        assert_eq!(out.first_text(), "Read image file [image/png]");
        assert_eq!(out.content[1]["mimeType"], "image/png");
        assert_eq!(out.content[1]["data"], base64_encode(&png));
        // For a model that takes no images, pi notes it in details.
        let mut ctx = ToolContext::new(dir.path());
        ctx.model_without_images = Some("qwen2.5-coder:7b".into());
        let out = ReadTool.run(&json!({"path":"pic.dat"}), &ctx);
        assert_eq!(out.details, Some(json!({"imageUnsupportedByModel": "qwen2.5-coder:7b"})));
        // A PNG signature on bytes that do not decode: pi's note, no image.
        let mut broken = png[..16].to_vec();
        broken.extend_from_slice(&[0; 17]);
        std::fs::write(dir.path().join("broken.png"), &broken).unwrap();
        let out = run(dir.path(), json!({"path":"broken.png"}));
        assert_eq!(
            out.first_text(),
            "Read image file [image/png]\n[Image omitted: could not be resized below the inline image size limit.]"
        );
        assert_eq!(out.content.len(), 1);
    }
}
