//! Whether a line is one whole JSON value, decided for every line when a file is loaded.
//!
//! pi keeps a line when `JSON.parse` accepts it and skips it otherwise, so whether an entry
//! exists at all (and with it the tree's shape, the default leaf, which id wins) depends on
//! every byte of its line. The loader therefore validates every line once, here, and every
//! command sees the same answer; nothing is discovered later.
//!
//! Speed: a session is mostly long strings, so this is a validator in the style of
//! simdjson's first stage. 64 bytes at a time are classified into bit masks (quotes,
//! backslashes, control bytes, whitespace, structural characters), escapes and string
//! interiors are found with bit arithmetic, and only the structural positions outside
//! strings (a few per hundred bytes) go through the grammar's state machine. SSE2 (every
//! x86_64) classifies 16 bytes per instruction; other targets use a plain loop.
//!
//! What is accepted is exactly what pisces's parser ([`super::load::parse_value`], serde_json
//! after Node's lossy UTF-8 decoding) accepts, which is what `JSON.parse` accepts, except for
//! two limits of pisces's parser that this reports separately: nesting deeper than 127
//! levels, and numbers beyond the range of a 64-bit float (JS reads those as `Infinity`).
//! Bytes that are not UTF-8 are never a reason to reject a line (Node decodes them to
//! U+FFFD before parsing); the verdict says whether a line has any non-ASCII byte, so that
//! only those lines are checked for UTF-8.

/// What a line is, as a JSON text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// One complete JSON value that pisces can read. `non_ascii`: some byte is >= 0x80.
    Whole { non_ascii: bool },
    /// Not JSON, or not complete JSON (`JSON.parse` throws): pi skips the line.
    Malformed,
    /// Valid JSON, nested `depth` levels deep: more than pisces's parser reads.
    TooDeep { depth: u32 },
    /// Valid JSON with a number too large for a 64-bit float (JS reads it as `Infinity`).
    NumberOutOfRange,
}

/// The deepest nesting serde_json reads (its recursion limit of 128 counts down to 0).
pub const MAX_DEPTH: u32 = 127;

/// Validates one line (without its `\n`).
pub fn validate(line: &[u8]) -> Verdict {
    run(line)
}

/// The validation loop over 64-byte blocks, with a given classifier. Inlined into each
/// caller, so that a classifier compiled for AVX2 is inlined into a loop compiled for it.
#[inline(always)]
fn run_with(line: &[u8], classify: impl Fn(&[u8; 64]) -> Masks) -> Verdict {
    let mut v = Validator::new(line);
    let mut block = [b' '; 64];
    let mut at = 0;
    while at < line.len() {
        let end = (at + 64).min(line.len());
        let masks = if end - at == 64 {
            classify(line[at..end].try_into().expect("64 bytes"))
        } else {
            // The last partial block is padded with spaces (whitespace, never a token).
            block.fill(b' ');
            block[..end - at].copy_from_slice(&line[at..end]);
            classify(&block)
        };
        if !v.block(at, masks) {
            return Verdict::Malformed;
        }
        at = end;
    }
    v.finish()
}

/// Bit `i` is set when byte `i` of the block is of the kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Masks {
    quote: u64,
    backslash: u64,
    /// Bytes below 0x20 (never allowed raw inside a string).
    control: u64,
    /// Space, tab, carriage return (a line has no `\n`).
    space: u64,
    /// `{ } [ ] : ,`
    op: u64,
    /// The characters that may follow a backslash in a string: `" \\ / b f n r t u`.
    escape_ok: u64,
    /// `u` (after a backslash: four hex digits follow).
    u: u64,
    /// Bytes >= 0x80.
    high: u64,
}

/// Where the grammar is between two tokens. The container a value is in is part of the
/// state, so a `,` or a close needs no look at the stack.
type State = u8;
/// A value at the top of the line.
const TOP_VALUE: State = 0;
/// After the top value: nothing may follow.
const TOP_DONE: State = 1;
/// After `{`: a key or `}`.
const OBJ_KEY_OR_CLOSE: State = 2;
/// After `,` in an object: a key.
const OBJ_KEY: State = 3;
/// After a key: `:`.
const OBJ_COLON: State = 4;
/// After `:`: a value.
const OBJ_VALUE: State = 5;
/// After a value in an object: `,` or `}`.
const OBJ_NEXT: State = 6;
/// After `[`: a value or `]`.
const ARR_VALUE_OR_CLOSE: State = 7;
/// After `,` in an array: a value.
const ARR_VALUE: State = 8;
/// After a value in an array: `,` or `]`.
const ARR_NEXT: State = 9;

/// The state after a value in the container of state `s` (a value state).
fn after_value(s: State) -> State {
    match s {
        TOP_VALUE => TOP_DONE,
        OBJ_VALUE => OBJ_NEXT,
        _ => ARR_NEXT,
    }
}

struct Validator<'a> {
    line: &'a [u8],
    // Carries from one block to the next.
    prev_escaped: u64,
    prev_in_string: u64,
    prev_scalar: u64,
    state: State,
    /// For each open container, innermost last: the state to return to when it closes.
    stack: Vec<State>,
    deepest: u32,
    out_of_range: bool,
    non_ascii: bool,
}

impl<'a> Validator<'a> {
    fn new(line: &'a [u8]) -> Self {
        Validator {
            line,
            prev_escaped: 0,
            prev_in_string: 0,
            prev_scalar: 0,
            state: TOP_VALUE,
            stack: Vec::new(),
            deepest: 0,
            out_of_range: false,
            non_ascii: false,
        }
    }

    /// Takes the masks of the block at byte `at`; `false` once the line cannot be JSON.
    #[inline(always)]
    fn block(&mut self, at: usize, m: Masks) -> bool {
        self.non_ascii |= m.high != 0;
        let escaped = self.find_escaped(m.backslash);
        let quote = m.quote & !escaped;
        // Bit i: inside a string (its opening quote included, its closing quote not).
        let in_string = prefix_xor(quote) ^ self.prev_in_string;
        self.prev_in_string = ((in_string as i64) >> 63) as u64;
        if m.control & in_string != 0 {
            return false;
        }
        // Every escape inside a string must be one JSON has; `\\u` takes four hex digits.
        let escapes = escaped & in_string;
        if escapes & !m.escape_ok != 0 {
            return false;
        }
        let mut unicode = escapes & m.u;
        while unicode != 0 {
            let i = at + unicode.trailing_zeros() as usize;
            unicode &= unicode - 1;
            match self.line.get(i + 1..i + 5) {
                Some(hex) if hex.iter().all(u8::is_ascii_hexdigit) => {}
                _ => return false,
            }
        }
        // Tokens: structural characters and the first byte of every string or scalar,
        // outside strings (simdjson's structural and pseudo-structural characters).
        let string_tail = in_string ^ quote;
        let scalar = !(m.op | m.space);
        let nonquote_scalar = scalar & !quote;
        let follows_scalar = (nonquote_scalar << 1) | self.prev_scalar;
        self.prev_scalar = nonquote_scalar >> 63;
        let mut tokens = (m.op | (scalar & !follows_scalar)) & !string_tail;
        // The state machine, with its state in a local (a register) for the whole block.
        let mut state = self.state;
        while tokens != 0 {
            let i = at + tokens.trailing_zeros() as usize;
            tokens &= tokens - 1;
            let c = self.line[i];
            state = match (state, c) {
                (TOP_VALUE | OBJ_VALUE | ARR_VALUE | ARR_VALUE_OR_CLOSE, b'{' | b'[') => {
                    self.stack.push(after_value(state));
                    self.deepest = self.deepest.max(self.stack.len() as u32);
                    if c == b'{' {
                        OBJ_KEY_OR_CLOSE
                    } else {
                        ARR_VALUE_OR_CLOSE
                    }
                }
                (OBJ_KEY_OR_CLOSE, b'}') | (ARR_VALUE_OR_CLOSE, b']') | (OBJ_NEXT, b'}') | (ARR_NEXT, b']') => {
                    // A container state is only entered by an open, so the stack has it.
                    match self.stack.pop() {
                        Some(back) => back,
                        None => return false,
                    }
                }
                (TOP_VALUE | OBJ_VALUE | ARR_VALUE | ARR_VALUE_OR_CLOSE, b'"') => after_value(state),
                (TOP_VALUE | OBJ_VALUE | ARR_VALUE | ARR_VALUE_OR_CLOSE, _) => {
                    if !self.scalar(i) {
                        return false;
                    }
                    after_value(state)
                }
                (OBJ_KEY_OR_CLOSE | OBJ_KEY, b'"') => OBJ_COLON,
                (OBJ_COLON, b':') => OBJ_VALUE,
                (OBJ_NEXT, b',') => OBJ_KEY,
                (ARR_NEXT, b',') => ARR_VALUE,
                _ => return false,
            };
        }
        self.state = state;
        true
    }

    /// simdjson's `find_escaped`: the bytes that follow an odd run of backslashes.
    #[inline(always)]
    fn find_escaped(&mut self, backslash: u64) -> u64 {
        const EVEN: u64 = 0x5555_5555_5555_5555;
        let backslash = backslash & !self.prev_escaped;
        let follows = (backslash << 1) | self.prev_escaped;
        let odd_starts = backslash & !EVEN & !follows;
        let (even_runs, carry) = odd_starts.overflowing_add(backslash);
        self.prev_escaped = u64::from(carry);
        (EVEN ^ (even_runs << 1)) & follows
    }

    /// A literal or a number starting at `i`: it runs to the next whitespace or
    /// structural character. `false` if it is neither.
    fn scalar(&mut self, i: usize) -> bool {
        let rest = &self.line[i..];
        let len = rest.iter().position(|&b| ENDS_SCALAR[b as usize]).unwrap_or(rest.len());
        let text = &rest[..len];
        match text {
            b"true" | b"false" | b"null" => true,
            _ => match number(text) {
                Number::Invalid => false,
                Number::Finite => true,
                Number::OutOfRange => {
                    self.out_of_range = true;
                    true
                }
            },
        }
    }

    fn finish(self) -> Verdict {
        // One complete value (an all-whitespace line has none), not inside a string.
        if self.state != TOP_DONE || self.prev_in_string != 0 {
            return Verdict::Malformed;
        }
        if self.deepest > MAX_DEPTH {
            return Verdict::TooDeep { depth: self.deepest };
        }
        if self.out_of_range {
            return Verdict::NumberOutOfRange;
        }
        Verdict::Whole { non_ascii: self.non_ascii }
    }
}

/// The bytes that end a scalar: whitespace and structural characters.
static ENDS_SCALAR: [bool; 256] = {
    let mut t = [false; 256];
    let ends = b" \t\r{}[]:,";
    let mut k = 0;
    while k < ends.len() {
        t[ends[k] as usize] = true;
        k += 1;
    }
    t
};

enum Number {
    Invalid,
    Finite,
    /// Valid JSON, but no 64-bit float holds it (serde_json refuses it; JS: `Infinity`).
    OutOfRange,
}

/// JSON's number grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
fn number(t: &[u8]) -> Number {
    let mut i = usize::from(t.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < t.len() && t[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - s
    };
    match t.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        _ => return Number::Invalid,
    }
    let int_digits = i;
    let mut exponent = false;
    if t.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return Number::Invalid;
        }
    }
    if matches!(t.get(i), Some(b'e' | b'E')) {
        exponent = true;
        i += 1;
        if matches!(t.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return Number::Invalid;
        }
    }
    if i != t.len() {
        return Number::Invalid;
    }
    // Without an exponent, only an integer part of 309 or more digits exceeds f64::MAX.
    if !exponent && int_digits < 309 {
        return Number::Finite;
    }
    let text = std::str::from_utf8(t).expect("ASCII by the grammar");
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() => Number::Finite,
        _ => Number::OutOfRange,
    }
}

/// Bit i of the result is the XOR of bits 0..=i of `x`.
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

// ---------------------------------------------------------------------------------------
// Classifying a block: the same masks three ways (AVX2, SSE2, plain), chosen once per line.
// ---------------------------------------------------------------------------------------

/// Validates with the fastest classifier this CPU has.
fn run(line: &[u8]) -> Verdict {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { run_avx2(line) };
        }
        run_with(line, classify_sse2)
    }
    #[cfg(not(target_arch = "x86_64"))]
    run_with(line, classify_plain)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn run_avx2(line: &[u8]) -> Verdict {
    // `run_with` is inlined here, so the AVX2 classifier is inlined into its loop.
    run_with(line, |b| classify_avx2(b))
}

/// The plain classifier: one byte at a time (other targets, and the tests' reference).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn classify_plain(block: &[u8; 64]) -> Masks {
    let mut m = Masks::default();
    for (i, &b) in block.iter().enumerate() {
        let bit = 1u64 << i;
        match b {
            b'"' => m.quote |= bit,
            b'\\' => m.backslash |= bit,
            b' ' | b'\t' | b'\r' => m.space |= bit,
            b'{' | b'}' | b'[' | b']' | b':' | b',' => m.op |= bit,
            _ => {}
        }
        if matches!(b, b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' | b'u') {
            m.escape_ok |= bit;
        }
        if b == b'u' {
            m.u |= bit;
        }
        if b < 0x20 {
            m.control |= bit;
        }
        if b >= 0x80 {
            m.high |= bit;
        }
    }
    m
}

#[cfg(target_arch = "x86_64")]
fn classify_sse2(block: &[u8; 64]) -> Masks {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline, so these instructions exist on every
    // x86_64 CPU; `_mm_loadu_si128` reads 16 bytes at offsets 0, 16, 32, 48 of a 64-byte
    // array, all in bounds, and needs no alignment.
    unsafe {
        let mut m = Masks::default();
        for k in 0..4 {
            let v = _mm_loadu_si128(block.as_ptr().add(16 * k) as *const __m128i);
            let eq = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
            let bits = |x: __m128i| (_mm_movemask_epi8(x) as u32 as u64) << (16 * k);
            // `{`/`[` and `}`/`]` differ only in bit 0x20.
            let folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
            let brace = _mm_or_si128(
                _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'{' as i8)),
                _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'}' as i8)),
            );
            let (quote, backslash) = (eq(b'"'), eq(b'\\'));
            m.quote |= bits(quote);
            m.backslash |= bits(backslash);
            m.control |= bits(_mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v));
            m.space |= bits(_mm_or_si128(_mm_or_si128(eq(b' '), eq(b'\t')), eq(b'\r')));
            m.op |= bits(_mm_or_si128(brace, _mm_or_si128(eq(b':'), eq(b','))));
            let u = eq(b'u');
            m.u |= bits(u);
            let escapes = [eq(b'/'), eq(b'b'), eq(b'f'), eq(b'n'), eq(b'r'), eq(b't'), u]
                .into_iter()
                .fold(_mm_or_si128(quote, backslash), |a, x| _mm_or_si128(a, x));
            m.escape_ok |= bits(escapes);
            m.high |= bits(v);
        }
        m
    }
}

/// AVX2: 32 bytes at a time, classes looked up by nibble (`vpshufb`), as simdjson does.
///
/// A byte's class is `LO[low nibble] & HI[high nibble]`; each bit of a class is one set
/// of characters sharing a high nibble:
///   structure: 0x01 `\t \r` (0x09 0x0D), 0x02 space (0x20), 0x04 `,` (0x2C), 0x08 `:`
///   (0x3A), 0x10 `[ ] { }` (0x5B 0x5D 0x7B 0x7D);
///   escapes:   0x01 `" /` (0x22 0x2F), 0x02 `\` (0x5C), 0x04 `b f n` (0x62 0x66 0x6E),
///   0x08 `r t u` (0x72 0x74 0x75).
/// Bytes >= 0x80 have a high nibble of 8..F, whose entries are 0.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn classify_avx2(block: &[u8; 64]) -> Masks {
    use std::arch::x86_64::*;
    #[rustfmt::skip]
    const STRUCT_LO: [u8; 16] = [0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x08, 0x10, 0x04, 0x11, 0, 0];
    #[rustfmt::skip]
    const STRUCT_HI: [u8; 16] = [0x01, 0, 0x06, 0x08, 0, 0x10, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0];
    #[rustfmt::skip]
    const ESCAPE_LO: [u8; 16] = [0, 0, 0x0d, 0, 0x08, 0x08, 0x04, 0, 0, 0, 0, 0, 0x02, 0, 0x04, 0x01];
    #[rustfmt::skip]
    const ESCAPE_HI: [u8; 16] = [0, 0, 0x01, 0, 0, 0x02, 0x04, 0x08, 0, 0, 0, 0, 0, 0, 0, 0];
    // SAFETY: the caller runs this only on a CPU with AVX2 (`run` checks); the loads read
    // 32 bytes at offsets 0 and 32 of a 64-byte array (in bounds, no alignment needed) and
    // the tables are 16-byte arrays loaded whole.
    unsafe {
        let table = |t: &[u8; 16]| _mm256_broadcastsi128_si256(_mm_loadu_si128(t.as_ptr() as *const __m128i));
        let (struct_lo, struct_hi) = (table(&STRUCT_LO), table(&STRUCT_HI));
        let (escape_lo, escape_hi) = (table(&ESCAPE_LO), table(&ESCAPE_HI));
        let nibble = _mm256_set1_epi8(0x0f);
        let zero = _mm256_setzero_si256();
        let mut m = Masks::default();
        for k in 0..2 {
            let v = _mm256_loadu_si256(block.as_ptr().add(32 * k) as *const __m256i);
            let bits = |x: __m256i| (_mm256_movemask_epi8(x) as u32 as u64) << (32 * k);
            // Set where none of `mask`'s class bits are.
            let none_of =
                |class: __m256i, mask: i8| _mm256_cmpeq_epi8(_mm256_and_si256(class, _mm256_set1_epi8(mask)), zero);
            let lo = _mm256_and_si256(v, nibble);
            let hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
            let structure = _mm256_and_si256(_mm256_shuffle_epi8(struct_lo, lo), _mm256_shuffle_epi8(struct_hi, hi));
            let escape = _mm256_and_si256(_mm256_shuffle_epi8(escape_lo, lo), _mm256_shuffle_epi8(escape_hi, hi));
            m.quote |= bits(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'"' as i8)));
            m.u |= bits(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'u' as i8)));
            m.backslash |= bits(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\\' as i8)));
            m.control |= bits(_mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(0x1f)), v));
            m.space |= !bits(none_of(structure, 0x03)) & (u64::from(u32::MAX) << (32 * k));
            m.op |= !bits(none_of(structure, 0x1c)) & (u64::from(u32::MAX) << (32 * k));
            m.escape_ok |= !bits(_mm256_cmpeq_epi8(escape, zero)) & (u64::from(u32::MAX) << (32 * k));
            m.high |= bits(v);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::js::parse_value;

    /// The validator against pisces's parser: they must agree on every input.
    fn agrees(line: &[u8]) {
        let verdict = validate(line);
        let parsed = parse_value(line);
        match verdict {
            Verdict::Whole { .. } => assert!(parsed.is_ok(), "{:?}: whole, but {:?}", show(line), parsed.err()),
            Verdict::Malformed => assert!(parsed.is_err(), "{:?}: malformed, but it parses", show(line)),
            Verdict::TooDeep { .. } => {
                let e = parsed.expect_err("too deep, but it parses").to_string();
                assert!(e.contains("recursion limit"), "{:?}: too deep, but {e}", show(line));
            }
            Verdict::NumberOutOfRange => {
                let e = parsed.expect_err("out of range, but it parses").to_string();
                assert!(e.contains("out of range"), "{:?}: out of range, but {e}", show(line));
            }
        }
    }

    fn show(line: &[u8]) -> String {
        let s = String::from_utf8_lossy(line);
        if s.len() > 200 {
            format!("{}…", &s[..s.char_indices().nth(200).map_or(s.len(), |(i, _)| i)])
        } else {
            s.into_owned()
        }
    }

    #[test]
    fn agrees_with_the_parser_on_hand_made_cases() {
        let cases: &[&[u8]] = &[
            b"{}",
            b"[]",
            b" {\"a\":1} \r",
            b"{\"a\":1,}",
            b"{\"a\" 1}",
            b"{\"a\":}",
            b"{,}",
            b"[1,]",
            b"[,1]",
            b"[1 2]",
            b"{\"a\":1}{}",
            b"{\"a\":1} x",
            b"\"str\"",
            b"\"unterminated",
            b"\"a\\\"b\"",
            b"\"a\\\\\"",
            b"\"a\\\\\\\"\"",
            b"\"\\u00e9\\ud800\\udc00\\ud800\"",
            b"\"\\u00g9\"",
            b"\"\\u00\"",
            b"\"\\x\"",
            b"\"tab\there\"",
            b"\"del\x7f ok\"",
            b"\"nul\x00\"",
            b"\xef\xbb\xbf{}",
            b"{\"bad utf8\":\"\xff\xfe\"}",
            b"{\"k\xff\":1}",
            b"\xff",
            b"true",
            b"tru",
            b"truex",
            b"nul",
            b"null null",
            b"-",
            b"-0",
            b"01",
            b"1.",
            b".5",
            b"1.5e",
            b"1.5e+",
            b"1.5E-3",
            b"+1",
            b"1e400",
            b"-1e400",
            b"[1e308, 1.7976931348623157e308]",
            b"1.7976931348623159e308",
            b"0e99999999999999999",
            b"1e-99999",
            b"18446744073709551616",
            b"{\"a\":[1,{\"b\":null}],\"c\":\"}\"}",
            b"{\"a\":\"[\"}",
            b"[\"a\"\"b\"]",
            b"[1\"a\"]",
            b"[true\"a\"]",
            b"{\"a\"\\:1}",
            b"\\",
            b"",
            b"   ",
            b"{\"a\":1}\x0b",
            b"{\"a\":1\x0c}",
        ];
        for c in cases {
            agrees(c);
        }
        agrees("9".repeat(308).as_bytes());
        agrees("9".repeat(309).as_bytes());
        agrees(format!("-{}.5", "9".repeat(400)).as_bytes());
        agrees(format!("{}e-400", "1".repeat(401)).as_bytes());
        for depth in [126, 127, 128, 129, 100_000] {
            agrees(format!("{}{}", "[".repeat(depth), "]".repeat(depth)).as_bytes());
            agrees(format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth)).as_bytes());
            agrees(format!("{}{}", "[".repeat(depth), "]".repeat(depth - 1)).as_bytes());
        }
        assert_eq!(
            validate(format!("{}{}", "[".repeat(500), "]".repeat(500)).as_bytes()),
            Verdict::TooDeep { depth: 500 }
        );
    }

    /// Every classifier this CPU runs gives the plain one's masks, for every byte value at
    /// every position.
    #[test]
    fn classifiers_agree() {
        let mut blocks = Vec::new();
        for b in 0..=255u8 {
            for pos in [0, 15, 16, 31, 32, 47, 48, 63] {
                let mut block = [b'a'; 64];
                block[pos] = b;
                blocks.push(block);
            }
        }
        let mut x = 1u64;
        for _ in 0..2000 {
            let mut block = [0u8; 64];
            for byte in &mut block {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                *byte = (x >> 56) as u8;
            }
            blocks.push(block);
        }
        for block in &blocks {
            let want = classify_plain(block);
            #[cfg(target_arch = "x86_64")]
            {
                assert_eq!(classify_sse2(block), want, "sse2 on {block:?}");
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU has AVX2.
                    assert_eq!(unsafe { classify_avx2(block) }, want, "avx2 on {block:?}");
                }
            }
            assert_eq!(want.quote.count_ones() as usize, block.iter().filter(|&&b| b == b'"').count());
        }
    }

    #[test]
    fn strings_and_escapes_across_blocks() {
        // A string whose escapes, quotes and backslash runs fall on every offset of a block.
        for pad in 0..70 {
            for body in [r#"\""#, r#"\\"#, r#"\\\""#, r#"\u0041"#, r#"\\\\"#, r#"x\"#, "\\\"\\"] {
                let line = format!("{{\"{}\":\"{}{body}end\"}}", "k".repeat(pad), "a".repeat(pad % 7));
                agrees(line.as_bytes());
                let line = format!("[\"{}\",\"{body}\",{pad}]", " ".repeat(pad));
                agrees(line.as_bytes());
            }
        }
    }

    /// Lines of the corpus, damaged at random (bytes changed, dropped, doubled, cut), all
    /// judged as the parser judges them.
    #[test]
    fn agrees_with_the_parser_on_damaged_corpus_lines() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
        let mut lines = Vec::new();
        for dir in ["pi-1.6.0", "edge", "real"] {
            let Ok(read) = std::fs::read_dir(root.join(dir)) else { continue };
            let mut files: Vec<_> = read.flatten().map(|e| e.path()).collect();
            files.sort();
            for f in files.iter().filter(|p| p.extension().is_some_and(|x| x == "jsonl")) {
                let data = std::fs::read(f).unwrap();
                lines.extend(data.split(|&b| b == b'\n').filter(|l| l.len() < 20_000).map(<[u8]>::to_vec));
            }
        }
        assert!(lines.len() > 500, "corpus lines: {}", lines.len());
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        const SPECIAL: &[u8] = b"\"\\{}[],: \t\r0123456789-+.eEtfnu\x00\x1f\x7f\x80\xff";
        for line in &lines {
            agrees(line);
            for _ in 0..6 {
                let mut l = line.clone();
                for _ in 0..1 + next() % 3 {
                    if l.is_empty() {
                        break;
                    }
                    let at = (next() as usize) % l.len();
                    match next() % 4 {
                        0 => l[at] = SPECIAL[(next() as usize) % SPECIAL.len()],
                        1 => {
                            l.remove(at);
                        }
                        2 => l.insert(at, l[at]),
                        _ => l.truncate(at),
                    }
                }
                agrees(&l);
            }
        }
    }
}
