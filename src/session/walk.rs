//! Finding where JSON values end in a line already known to be JSON, without parsing
//! them: for readers that want a few fields of a line whose bulk is strings (pi's fork
//! splicing parents into lines as written, Claude Code's index reading keys, Codex's tree
//! rows). [`string_chars`] decodes a string a character at a time, for a reader that wants
//! only its start.
//!
//! Two ways: the functions below walk the bytes (a string by jumping from quote to quote),
//! which suits a line read once for a few values; [`Blocks`] first finds a line's string
//! quotes and brackets 64 bytes at a time, as bit masks, and then skips any value with bit
//! operations, which suits lines made of many short strings (JSON inside tool output),
//! where the walk would stop at every quote.

use super::validate::{find_escaped, prefix_xor};

/// The index after the JSON whitespace at `b[i..]`.
pub fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The end (one past the closing quote) of the string starting at `b[i] == '"'`. Jumps
/// from quote to quote: a quote ends the string unless an odd number of backslashes comes
/// right before it (text with many escapes, `\n` in every line of a tool's output, would
/// stop a search for backslashes at each one).
pub fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    // Most strings a walk meets are short (keys, types, ids): their first 16 bytes are
    // looked at in one step before memchr, whose set-up costs more than such a string.
    if let Some(head) = b.get(j..j + 16) {
        let m = quotes_or_backslashes(head.try_into().expect("16 bytes"));
        if m == 0 {
            j += 16;
        } else if head[m.trailing_zeros() as usize] == b'"' {
            return Some(j + m.trailing_zeros() as usize + 1);
        }
    }
    loop {
        let k = j + memchr::memchr(b'"', b.get(j..)?)?;
        let backslashes = b[j..k].iter().rev().take_while(|&&c| c == b'\\').count();
        if backslashes % 2 == 0 {
            return Some(k + 1);
        }
        j = k + 1;
    }
}

/// The end (one past the closing quote) of the string starting at `b[i] == '"'` when it
/// has no backslash; `None` when it has one (or does not end). The keys and values a walk
/// reads are such strings nearly always, and for them one search for the first quote or
/// backslash does what a search for the end and another for a backslash did.
pub fn plain_string_end(b: &[u8], i: usize) -> Option<usize> {
    plain_body_end(b, i + 1).map(|k| k + 1)
}

/// [`plain_string_end`] of a string whose body starts at `b[from]`: where its closing
/// quote is.
pub fn plain_body_end(b: &[u8], from: usize) -> Option<usize> {
    let k = match b.get(from..from + 16) {
        Some(head) => match quotes_or_backslashes(head.try_into().expect("16 bytes")) {
            0 => from + 16 + memchr::memchr2(b'"', b'\\', &b[from + 16..])?,
            m => from + m.trailing_zeros() as usize,
        },
        None => from + memchr::memchr2(b'"', b'\\', b.get(from..)?)?,
    };
    (b[k] == b'"').then_some(k)
}

/// The text of a string whose body starts at `b[from]`, as serde_json reads it, when it
/// has no escape and no control character (then it is its bytes); and where its closing
/// quote is. `None` for any other string, which the caller leaves to serde. (A timestamp
/// is read from every line by `ls` and `stats`, and setting up serde cost more than its
/// two dozen bytes.)
pub fn plain_text(b: &[u8], from: usize) -> Option<(&str, usize)> {
    let end = plain_body_end(b, from)?;
    let body = &b[from..end];
    if body.iter().any(|&c| c < 0x20) {
        return None;
    }
    Some((super::text::utf8(body)?, end))
}

/// Whether `s` is ASCII without a backslash: a string's inside that is its own text (ids,
/// nearly always), tested 16 bytes a step (a byte at a time, a uuid's 36 cost a hundred
/// instructions, and Claude Code's index reads several of them from every line).
#[inline]
pub fn ascii_without_escape(s: &[u8]) -> bool {
    let mut chunks = s.chunks_exact(16);
    for c in chunks.by_ref() {
        if non_ascii_or_backslashes(c.try_into().expect("16 bytes")) != 0 {
            return false;
        }
    }
    chunks.remainder().iter().all(|&c| c.is_ascii() && c != b'\\')
}

/// Bit `k` set: `s[k]` is not ASCII, or is a backslash.
#[cfg(target_arch = "x86_64")]
#[inline]
fn non_ascii_or_backslashes(s: &[u8; 16]) -> u32 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8};
    // SAFETY: SSE2 is part of x86_64; the load reads the 16 bytes of `s`, unaligned.
    unsafe {
        let v = _mm_loadu_si128(s.as_ptr().cast());
        // (A byte's top bit, which `movemask` takes, is set when it is not ASCII.)
        _mm_movemask_epi8(_mm_or_si128(v, _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)))) as u32
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn non_ascii_or_backslashes(s: &[u8; 16]) -> u32 {
    s.iter().enumerate().fold(0, |m, (k, &c)| m | (u32::from(!c.is_ascii() || c == b'\\') << k))
}

/// Bit `k` set: `s[k]` is a quote or a backslash.
#[cfg(target_arch = "x86_64")]
#[inline]
fn quotes_or_backslashes(s: &[u8; 16]) -> u32 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8};
    // SAFETY: SSE2 is part of x86_64; the load reads the 16 bytes of `s`, unaligned.
    unsafe {
        let v = _mm_loadu_si128(s.as_ptr().cast());
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        _mm_movemask_epi8(_mm_or_si128(quote, backslash)) as u32
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn quotes_or_backslashes(s: &[u8; 16]) -> u32 {
    s.iter().enumerate().fold(0, |m, (k, &c)| m | (u32::from(c == b'"' || c == b'\\') << k))
}

/// The end of the JSON value starting at `b[i]`.
pub fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => string_end(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = string_end(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

/// Walks the object at `b[i] == '{'` (a line already validated): calls `f(key, at)` for each
/// key with where its value starts, and `f` returns where that value ends (having read it,
/// or with [`value_end`]), or `None` to give up. Returns the end of the object; `None` also
/// for a key with an escape (a reader wanting exact keys leaves such a line to a parser).
pub fn object<'b>(b: &'b [u8], i: usize, mut f: impl FnMut(&'b [u8], usize) -> Option<usize>) -> Option<usize> {
    members(b, i, b'{', b'}', |i| {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let end = plain_string_end(b, i)?;
        let key = &b[i + 1..end - 1];
        let i = skip_ws(b, end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        f(key, skip_ws(b, i + 1))
    })
}

/// Walks the array at `b[i] == '['` as [`object`] walks an object: `f(at)` for each element.
pub fn array(b: &[u8], i: usize, f: impl FnMut(usize) -> Option<usize>) -> Option<usize> {
    members(b, i, b'[', b']', f)
}

/// The members of the object or array at `b[i] == open`, each read by `member(at)`, which
/// returns where it ends; the end of the whole.
fn members(b: &[u8], i: usize, open: u8, close: u8, mut member: impl FnMut(usize) -> Option<usize>) -> Option<usize> {
    if b.get(i) != Some(&open) {
        return None;
    }
    let mut i = skip_ws(b, i + 1);
    if b.get(i) == Some(&close) {
        return Some(i + 1);
    }
    loop {
        i = skip_ws(b, member(i)?);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(&c) if c == close => return Some(i + 1),
            _ => return None,
        }
    }
}

/// The JSON value at `line[at]` (a line serde_json reads) as `Value::as_f64` reads it: a
/// number as an `f64`, `Some(None)` for any other value; `None` for a number serde_json
/// refuses (one too large for an `f64`), which the caller leaves to its parse. serde_json
/// reads an integer as a `u64`, so up to 18 digits it is that integer; another number is
/// read by serde_json itself.
pub fn as_f64(line: &[u8], at: usize) -> Option<Option<f64>> {
    let v = &line[at..value_end(line, at)?];
    match v.first()? {
        b'0'..=b'9' if v.len() <= 18 && v.iter().all(u8::is_ascii_digit) => {
            Some(Some(v.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')) as f64))
        }
        b'0'..=b'9' | b'-' => serde_json::from_slice::<serde_json::Value>(v).ok().map(|v| v.as_f64()),
        _ => Some(None),
    }
}

/// Where the last value of each of `keys` starts in the object at `b[at] == '{'` (a
/// repeated key's last, as a parsed `Value` keeps it); `None` as [`object`] gives up.
pub fn last_values<const N: usize>(b: &[u8], at: usize, keys: [&[u8]; N]) -> Option<[Option<usize>; N]> {
    let mut found = [None; N];
    object(b, at, |k, v| {
        if let Some(n) = keys.iter().position(|&x| x == k) {
            found[n] = Some(v);
        }
        value_end(b, v)
    })?;
    Some(found)
}

/// Where the values of the top-level keys asked for start, and of the `message` object's
/// (`None`: the message is null or missing), each `None` where the key is not there.
pub type Fields<const T: usize, const M: usize> = ([Option<usize>; T], Option<[Option<usize>; M]>);

/// Where the values of a line's top-level `top` keys start, and of its `message` object's
/// `inner` keys (`None` for a `message` that is null or missing), read as a derived
/// `Deserialize` of structs with those optional fields reads them: only from a line its
/// loading validated whole, as pi's does every line, that serde_json reads too
/// ([`super::validate::serde_reads_validated`]), an object whose `message` is an object or
/// null and whose keys wanted are each there once, unescaped. `None` for any other line,
/// which the caller parses. (pi's `usage` and `model` of every reply, for `ls`, `stats`
/// and `leaves`: serde skipped the rest of the line string by string.)
pub fn entry_fields_validated<const T: usize, const M: usize>(
    line: &[u8],
    top: [&[u8]; T],
    inner: [&[u8]; M],
) -> Option<Fields<T, M>> {
    super::validate::serde_reads_validated(line)?;
    let (mut found, mut message, mut messages) = ([None; T], None, 0);
    let once = |slot: &mut Option<usize>, at: usize| slot.replace(at).is_none().then_some(());
    let start = skip_ws(line, 0);
    object(line, start, |k, at| {
        if k == b"message" {
            messages += 1;
            if messages > 1 {
                return None;
            }
            return match line.get(at)? {
                b'{' => {
                    let mut fields = [None; M];
                    let end = object(line, at, |k, v| {
                        if let Some(n) = inner.iter().position(|&x| x == k) {
                            once(&mut fields[n], v)?;
                        }
                        value_end(line, v)
                    })?;
                    message = Some(fields);
                    Some(end)
                }
                b'n' => value_end(line, at),
                _ => None,
            };
        }
        if let Some(n) = top.iter().position(|&x| x == k) {
            once(&mut found[n], at)?;
        }
        value_end(line, at)
    })?;
    Some((found, message))
}

/// The JSON value starting at `line[at]`, parsed (serde reads one value and stops there).
pub fn value_at(line: &[u8], at: usize) -> Option<serde_json::Value> {
    serde::Deserialize::deserialize(&mut serde_json::Deserializer::from_slice(line.get(at..)?)).ok()
}

/// The characters of the JSON string at `s[i] == '"'`, decoded one at a time, so that a
/// reader wanting the start of a long text decodes only that. `Err` for what serde_json
/// refuses and a validated line may still hold (a lone surrogate).
pub fn string_chars(s: &str, i: usize) -> impl Iterator<Item = Result<char, ()>> + '_ {
    let mut rest = s.get(i + 1..).unwrap_or_default();
    std::iter::from_fn(move || {
        let mut cs = rest.chars();
        match cs.next()? {
            '"' => None,
            '\\' => {
                let (c, after) = unescape(rest);
                rest = after;
                Some(c)
            }
            c => {
                rest = cs.as_str();
                Some(Ok(c))
            }
        }
    })
}

/// The character of the escape at the start of `s` (`s[0] == '\\'`), and the text after it.
pub fn unescape(s: &str) -> (Result<char, ()>, &str) {
    let hex = |r: &str| r.get(..4).and_then(|h| u32::from_str_radix(h, 16).ok());
    let Some(e) = s.get(1..).and_then(|r| r.chars().next()) else { return (Err(()), "") };
    let simple = match e {
        '"' => '"',
        '\\' => '\\',
        '/' => '/',
        'b' => '\u{8}',
        'f' => '\u{c}',
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        'u' => {
            let rest = s.get(6..).unwrap_or_default();
            return match hex(&s[2..]) {
                Some(hi @ 0xD800..=0xDBFF) => match rest.strip_prefix("\\u").and_then(hex) {
                    Some(lo @ 0xDC00..=0xDFFF) => (
                        char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)).ok_or(()),
                        rest.get(6..).unwrap_or_default(),
                    ),
                    _ => (Err(()), rest),
                },
                Some(u) => (char::from_u32(u).ok_or(()), rest),
                None => (Err(()), rest),
            };
        }
        _ => return (Err(()), s.get(1 + e.len_utf8()..).unwrap_or_default()),
    };
    (Ok(simple), &s[2..])
}

/// One 64-byte block of a line: bit `i` is set when byte `i` of the block is of the kind.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct Block {
    /// A quote that starts or ends a string (not one escaped inside it).
    quote: u64,
    /// `{` or `[` outside strings.
    open: u64,
    /// `}` or `]` outside strings.
    close: u64,
}

/// A line's strings and brackets, found once (simdjson's first stage: quotes, backslashes
/// and brackets are classified into masks; escapes and string interiors come from bit
/// arithmetic). A line that is not JSON gives masks that mean nothing, never a panic: the
/// reader then finds values that do not end where it expects, and says so.
#[derive(Default, Debug)]
pub struct Blocks {
    blocks: Vec<Block>,
}

impl Blocks {
    /// Finds the strings and brackets of `line` (the buffer is reused from line to line).
    pub fn read<'l>(&'l mut self, line: &'l [u8]) -> Structure<'l> {
        self.blocks.clear();
        self.blocks.reserve(line.len().div_ceil(64));
        #[cfg(target_arch = "x86_64")]
        {
            if super::validate::has_avx2() {
                // SAFETY: the CPU has AVX2 and PCLMULQDQ (checked just above).
                unsafe { self.fill_avx2(line) }
            } else {
                self.fill(line, classify_sse2_safe, prefix_xor);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        self.fill(line, classify, prefix_xor);
        Structure { line, blocks: &self.blocks }
    }

    /// `fill` compiled for AVX2, so that the classification (32 bytes a step instead of
    /// SSE2's 16) and the carry-less prefix XOR are inlined into the loop.
    ///
    /// # Safety
    /// The CPU must have AVX2 and PCLMULQDQ.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi1,bmi2,popcnt,pclmulqdq")]
    unsafe fn fill_avx2(&mut self, line: &[u8]) {
        self.fill(
            line,
            // (Closures here inherit the function's target features.)
            |b| classify_avx2(b),
            |x| super::validate::prefix_xor_clmul(x),
        );
    }

    /// The blocks of `line`, with the given ways to classify a block and to XOR prefixes.
    #[inline(always)]
    fn fill(&mut self, line: &[u8], classify: impl Fn(&[u8; 64]) -> (u64, u64, u64, u64), pxor: impl Fn(u64) -> u64) {
        let (mut prev_escaped, mut prev_in_string) = (0u64, 0u64);
        let mut chunks = line.chunks_exact(64);
        let mut add = |block: &[u8; 64]| {
            let (quote, backslash, open, close) = classify(block);
            let escaped = find_escaped(backslash, &mut prev_escaped);
            let quote = quote & !escaped;
            // Bit i: byte i is inside a string (from its opening quote to before its
            // closing one).
            let in_string = pxor(quote) ^ prev_in_string;
            prev_in_string = ((in_string as i64) >> 63) as u64;
            self.blocks.push(Block { quote, open: open & !in_string, close: close & !in_string });
        };
        for chunk in chunks.by_ref() {
            add(chunk.try_into().expect("64 bytes"));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            // Padded with spaces, which are none of the kinds.
            let mut padded = [b' '; 64];
            padded[..rest.len()].copy_from_slice(rest);
            add(&padded);
        }
    }
}

/// A line with its [`Blocks`] read.
#[derive(Clone, Copy, Debug)]
pub struct Structure<'l> {
    line: &'l [u8],
    blocks: &'l [Block],
}

impl Structure<'_> {
    /// The first string quote at or after `from`.
    fn quote_from(&self, from: usize) -> Option<usize> {
        let mut k = from / 64;
        let mut bits = self.blocks.get(k)?.quote & (!0u64 << (from % 64));
        while bits == 0 {
            k += 1;
            bits = self.blocks.get(k)?.quote;
        }
        Some(k * 64 + bits.trailing_zeros() as usize)
    }

    /// The end (one past the closing quote) of the string starting at `line[i] == '"'`.
    pub fn string_end(&self, i: usize) -> Option<usize> {
        self.quote_from(i + 1).map(|q| q + 1)
    }

    /// The end of the JSON value starting at `line[i]`.
    pub fn value_end(&self, i: usize) -> Option<usize> {
        match *self.line.get(i)? {
            b'"' => self.string_end(i),
            b'{' | b'[' => self.container_end(i),
            _ => value_end(self.line, i),
        }
    }

    /// The end of the object or array opening at `i`: where its depth comes back to zero.
    /// A block whose closing brackets are fewer than the depth cannot end it, and is only
    /// counted.
    fn container_end(&self, i: usize) -> Option<usize> {
        let mut k = i / 64;
        let from = !0u64 << (i % 64);
        let first = self.blocks.get(k)?;
        let (mut open, mut close) = (first.open & from, first.close & from);
        let mut depth = 0u32;
        loop {
            if depth > close.count_ones() {
                depth = depth + open.count_ones() - close.count_ones();
            } else {
                let mut both = open | close;
                while both != 0 {
                    let bit = both & both.wrapping_neg();
                    if open & bit != 0 {
                        depth += 1;
                    } else {
                        // (A close before any open: not JSON.)
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(k * 64 + bit.trailing_zeros() as usize + 1);
                        }
                    }
                    both &= both - 1;
                }
            }
            k += 1;
            let b = self.blocks.get(k)?;
            (open, close) = (b.open, b.close);
        }
    }
}

/// A block's quotes, backslashes, opening and closing brackets, with SSE2 (which every
/// x86_64 CPU has).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify_sse2_safe(block: &[u8; 64]) -> (u64, u64, u64, u64) {
    // SAFETY: every x86_64 CPU has SSE2.
    unsafe { classify_sse2(block) }
}

/// The same with AVX2, 32 bytes at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn classify_avx2(block: &[u8; 64]) -> (u64, u64, u64, u64) {
    use std::arch::x86_64::*;
    let (mut quote, mut backslash, mut open, mut close) = (0u64, 0u64, 0u64, 0u64);
    let (q, b, o, c) = (
        _mm256_set1_epi8(b'"' as i8),
        _mm256_set1_epi8(b'\\' as i8),
        _mm256_set1_epi8(b'{' as i8),
        _mm256_set1_epi8(b'}' as i8),
    );
    for (k, part) in block.chunks_exact(32).enumerate() {
        // SAFETY: `part` has 32 bytes, which AVX2 loads unaligned.
        let v = unsafe { _mm256_loadu_si256(part.as_ptr().cast()) };
        // As in `classify_sse2`: brackets folded onto braces by bit 0x20.
        let folded = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
        let shift = 32 * k;
        quote |= (_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, q)) as u32 as u64) << shift;
        backslash |= (_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, b)) as u32 as u64) << shift;
        open |= (_mm256_movemask_epi8(_mm256_cmpeq_epi8(folded, o)) as u32 as u64) << shift;
        close |= (_mm256_movemask_epi8(_mm256_cmpeq_epi8(folded, c)) as u32 as u64) << shift;
    }
    (quote, backslash, open, close)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn classify_sse2(block: &[u8; 64]) -> (u64, u64, u64, u64) {
    use std::arch::x86_64::*;
    let (mut quote, mut backslash, mut open, mut close) = (0u64, 0u64, 0u64, 0u64);
    let (q, b, o, c) =
        (_mm_set1_epi8(b'"' as i8), _mm_set1_epi8(b'\\' as i8), _mm_set1_epi8(b'{' as i8), _mm_set1_epi8(b'}' as i8));
    for (k, part) in block.chunks_exact(16).enumerate() {
        // SAFETY: `part` has 16 bytes, which SSE2 loads unaligned.
        let v = unsafe { _mm_loadu_si128(part.as_ptr().cast()) };
        // `{` `[` and `}` `]` differ only in bit 0x20, which no other byte maps onto them.
        let folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
        let shift = 16 * k;
        quote |= (_mm_movemask_epi8(_mm_cmpeq_epi8(v, q)) as u16 as u64) << shift;
        backslash |= (_mm_movemask_epi8(_mm_cmpeq_epi8(v, b)) as u16 as u64) << shift;
        open |= (_mm_movemask_epi8(_mm_cmpeq_epi8(folded, o)) as u16 as u64) << shift;
        close |= (_mm_movemask_epi8(_mm_cmpeq_epi8(folded, c)) as u16 as u64) << shift;
    }
    (quote, backslash, open, close)
}

#[cfg(not(target_arch = "x86_64"))]
fn classify(block: &[u8; 64]) -> (u64, u64, u64, u64) {
    let (mut quote, mut backslash, mut open, mut close) = (0u64, 0u64, 0u64, 0u64);
    for (i, &c) in block.iter().enumerate() {
        let bit = 1u64 << i;
        match c {
            b'"' => quote |= bit,
            b'\\' => backslash |= bit,
            b'{' | b'[' => open |= bit,
            b'}' | b']' => close |= bit,
            _ => {}
        }
    }
    (quote, backslash, open, close)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_of_values() {
        let b = br#"{"a":"x\"y\\","b":[1,{"c":"]"}],"d":true}"#;
        assert_eq!(value_end(b, 0), Some(b.len()));
        assert_eq!(string_end(b, 5), Some(13));
        assert_eq!(value_end(b, 18), Some(31));
        assert_eq!(value_end(b, 36), Some(40));
    }

    /// Strings of every length up to 40 bytes, with an escape at every place or none, ended
    /// or not, with more of the line after them or not: the first 16 bytes looked at in one
    /// step give the end a byte-by-byte reading gives.
    #[test]
    fn string_ends_at_every_length_and_escape() {
        let by_bytes = |b: &[u8]| {
            let mut j = 1;
            while j < b.len() {
                match b[j] {
                    b'\\' => j += 2,
                    b'"' => return Some(j + 1),
                    _ => j += 1,
                }
            }
            None
        };
        let mut checked = 0;
        for n in 0..40 {
            for escape in [None, Some(&b"\\\\"[..]), Some(b"\\\""), Some(b"\\n")] {
                for at in 0..=n {
                    let mut body = vec![b'a'; n];
                    if let Some(e) = escape {
                        body.splice(at..at, e.iter().copied());
                    }
                    for (close, tail) in [(true, &b""[..]), (true, b",\"k\":\"v\"}"), (false, b"")] {
                        let mut b = vec![b'"'];
                        b.extend(&body);
                        if close {
                            b.push(b'"');
                        }
                        b.extend(tail);
                        let want = by_bytes(&b);
                        assert_eq!(want.is_some(), close);
                        assert_eq!(string_end(&b, 0), want, "{:?}", String::from_utf8_lossy(&b));
                        let plain = if escape.is_some() { None } else { want };
                        assert_eq!(plain_string_end(&b, 0), plain, "{:?}", String::from_utf8_lossy(&b));
                        checked += 1;
                    }
                    if escape.is_none() {
                        break;
                    }
                }
            }
        }
        assert!(checked > 4000, "{checked}");
    }

    /// Text of every length up to 40 bytes, with a backslash or a byte that is not ASCII at
    /// every place or none.
    #[test]
    fn ascii_without_escape_at_every_length() {
        for n in 0..40 {
            assert!(ascii_without_escape(&vec![b'a'; n]));
            for at in 0..n {
                for odd in [b'\\', 0x80, 0xC3, 0xFF] {
                    let mut s = vec![b'a'; n];
                    s[at] = odd;
                    assert!(!ascii_without_escape(&s), "{s:?}");
                }
            }
        }
    }

    #[test]
    fn objects_arrays_and_strings_walked() {
        let b = br#"{"a": "x", "b" :[1, {"c":2}] ,"d":{}}"#;
        let mut seen = Vec::new();
        let end = object(b, 0, |k, at| {
            seen.push((String::from_utf8_lossy(k).into_owned(), at));
            value_end(b, at)
        });
        assert_eq!(end, Some(b.len()));
        assert_eq!(seen, [("a".into(), 6), ("b".into(), 16), ("d".into(), 34)]);
        let mut items = Vec::new();
        assert_eq!(
            array(b, 16, |at| {
                items.push(at);
                value_end(b, at)
            }),
            Some(28)
        );
        assert_eq!(items, [17, 20]);
        assert_eq!(object(br#"{"a\"b":1}"#, 0, |_, at| value_end(b, at)), None, "an escaped key");
        assert_eq!(object(b"{}", 0, |_, _| None), Some(2));
        assert_eq!(array(b"[ ]", 0, |_| None), Some(3));
        for (json, want) in [
            (r#""plain""#, Some("plain".to_string())),
            (r#""a\"b\\c\/\n\t\u00e9\ud83d\ude00é""#, Some("a\"b\\c/\n\té😀é".to_string())),
            (r#""\ud83d""#, None),
            (r#""\ude00x""#, None),
        ] {
            let got: Result<String, ()> = string_chars(json, 0).collect();
            assert_eq!(got.ok(), want, "{json}");
            // Whatever serde_json reads, it reads the same.
            assert_eq!(serde_json::from_str::<String>(json).ok(), want, "{json}");
        }
    }

    /// The masks find what the byte walk finds, on strings full of escapes and brackets,
    /// across block edges.
    #[test]
    fn blocks_end_values_as_the_walk_does() {
        let mut lines: Vec<Vec<u8>> = vec![
            br#"{"a":"x\"y\\","b":[1,{"c":"]"}],"d":true}"#.to_vec(),
            br#"{"k":"\\\\\"}\\","v":[[[]]],"w":{"x":"\\"}}"#.to_vec(),
        ];
        // Runs of backslashes of every length before quotes, at every offset in a block.
        for pad in 0..70 {
            for run in 0..6 {
                let mut l = br#"{"p":""#.to_vec();
                l.extend(std::iter::repeat_n(b'x', pad));
                for _ in 0..run {
                    l.extend_from_slice(br"\\");
                }
                l.extend_from_slice(br#"\"{[","q":[{"r":"}"},"]"],"s":1}"#);
                lines.push(l);
            }
        }
        let mut blocks = Blocks::default();
        for l in &lines {
            let st = blocks.read(l);
            // Where values start: after `:` `,` `[` outside strings.
            let (mut in_string, mut escaped, mut starts) = (false, false, vec![0]);
            for (i, &c) in l.iter().enumerate() {
                match (in_string, escaped, c) {
                    (true, true, _) => escaped = false,
                    (true, false, b'\\') => escaped = true,
                    (_, false, b'"') => in_string = !in_string,
                    (false, _, b':' | b',' | b'[') => starts.push(i + 1),
                    _ => {}
                }
            }
            for i in starts {
                {
                    assert_eq!(st.value_end(i), value_end(l, i), "{} at {i}", String::from_utf8_lossy(l));
                }
            }
        }
        // Where the CPU has AVX2 it is used above: the SSE2 masks must be the same.
        #[cfg(target_arch = "x86_64")]
        for l in &lines {
            let mut sse2 = Blocks::default();
            sse2.fill(l, classify_sse2_safe, prefix_xor);
            assert_eq!(blocks.read(l).blocks, &sse2.blocks[..], "{}", String::from_utf8_lossy(l));
        }
        // Not JSON: an answer or none, never a panic.
        for bad in [&b"}}{"[..], b"{\"a", b"]", b"{\"\\", b"\"\\\""] {
            let st = blocks.read(bad);
            for i in 0..bad.len() {
                let _ = st.value_end(i);
            }
        }
    }
}
