//! Whether a line is one whole JSON value, decided for every line when a file is loaded.
//!
//! pi keeps a line when `JSON.parse` accepts it and skips it otherwise, so whether an entry
//! exists at all (and with it the tree's shape, the default leaf, which id wins) depends on
//! every byte of its line. The loader therefore validates every line once, here, and every
//! command sees the same answer; nothing is discovered later.
//!
//! Speed: a session is mostly long strings, so this is a validator in the style of
//! simdjson. 64 bytes at a time are classified into bit masks (quotes, backslashes,
//! control bytes, whitespace, structural characters), escapes and string interiors are
//! found with bit arithmetic, and a block inside a string (most of them) is done with once
//! its string masks are checked. Elsewhere, scalars are checked on masks of the kinds of
//! bytes numbers are made of, brackets go through a small stack, and the other tokens (a
//! few per hundred bytes) through a table-driven state machine whose state is a shift,
//! without a branch per token: which token follows which is too irregular to predict.
//! AVX2 classifies 32 bytes per instruction, SSE2 (every x86_64) 16; other targets use u64s
//! as 8 bytes.
//!
//! What is accepted is exactly what pisces's parser ([`super::js::parse_value`], serde_json
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

/// `raw` as text when serde_json reads it whole (as a `Value`, or as a struct of some of
/// its fields): one JSON value by the validator, UTF-8, and no `\uD800`–`\uDFFF` escape
/// (serde_json refuses a lone surrogate, which the validator lets through as `JSON.parse`
/// does; a pair is left to the parse too).
///
/// Parsing a line builds or skips every string in it, several times the cost of validating
/// it. A reader that wants a few fields walks the line to them ([`super::walk`], or a
/// format's index spans) when it passes this, and reads what the whole parse gives (a
/// repeated key's last value, as a `Value` keeps it, or the line left to the parse); a line
/// with an escaped key where it looks is parsed whole. The check matters because a walk
/// skips the rest of the line unchecked, and a line that serde_json cannot read must fail
/// as it always did.
pub fn serde_reads(raw: &[u8]) -> Option<&str> {
    let Verdict::Whole { non_ascii } = validate(raw) else { return None };
    // (A line of ASCII bytes, which the validator has just seen, is UTF-8 without a second pass.)
    let line = match non_ascii {
        true => simdutf8::basic::from_utf8(raw).ok()?,
        // SAFETY: every byte is below 0x80 (the validator's verdict), so the bytes are UTF-8.
        false => unsafe { std::str::from_utf8_unchecked(raw) },
    };
    (!surrogate_escape(raw)).then_some(line)
}

/// [`serde_reads`] of a line already validated whole and found neither too deep nor with a
/// number out of range (a pi entry's that pisces reads: its loading validated every line,
/// `formats::pi::scan`): only the checks the validator leaves, UTF-8 and surrogates.
pub fn serde_reads_validated(raw: &[u8]) -> Option<&str> {
    let line = simdutf8::basic::from_utf8(raw).ok()?;
    (!surrogate_escape(raw)).then_some(line)
}

/// Whether `raw` has a `\uD800`–`\uDFFF` escape.
fn surrogate_escape(raw: &[u8]) -> bool {
    memchr::memmem::find_iter(raw, b"\\u")
        .any(|k| matches!(raw.get(k + 2..k + 4), Some([b'd' | b'D', b'8' | b'9' | b'a'..=b'f' | b'A'..=b'F'])))
}

/// Validates one line (without its `\n`).
pub fn validate(line: &[u8]) -> Verdict {
    #[cfg(target_arch = "x86_64")]
    {
        if Avx2::detect() {
            // SAFETY: the CPU has what `Avx2` needs (checked just above).
            return unsafe { run_avx2(line) };
        }
        run(line, Sse2)
    }
    #[cfg(not(target_arch = "x86_64"))]
    run(line, Plain)
}

/// Bit i of the result is the XOR of bits 0..=i of `x` (a block's quotes to the bytes
/// inside strings; also `session::walk`'s).
#[inline(always)]
pub(crate) fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// simdjson's `find_escaped`: the bytes that follow an odd run of backslashes (the runs
/// carry over from block to block in `prev_escaped`; also `session::walk`'s).
#[inline(always)]
pub(crate) fn find_escaped(backslash: u64, prev_escaped: &mut u64) -> u64 {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let backslash = backslash & !*prev_escaped;
    let follows = (backslash << 1) | *prev_escaped;
    let odd_starts = backslash & !EVEN & !follows;
    let (even_runs, carry) = odd_starts.overflowing_add(backslash);
    *prev_escaped = u64::from(carry);
    (EVEN ^ (even_runs << 1)) & follows
}

/// The instructions a line is validated with: how a block's masks are made, and the one bit
/// operation that some CPUs have an instruction for.
trait Kernel: Copy {
    // Each part of a block's masks is made only when it is needed.

    /// The masks of a block that strings need (all that a block inside a string needs).
    fn strings(self, block: &[u8; 64]) -> StringMasks;

    /// The masks of a block that the structure between strings needs.
    fn structure(self, block: &[u8; 64]) -> StructureMasks;

    /// The kinds of bytes that numbers are made of, in a block.
    fn numbers(self, block: &[u8; 64]) -> NumberKinds;

    /// Bit i of the result is the XOR of bits 0..=i of `x`.
    #[inline(always)]
    fn prefix_xor(self, x: u64) -> u64 {
        prefix_xor(x)
    }
}

/// The stack of open containers that lives in `run`'s frame: 2^8 entries plus two (see
/// `Validator::tokens`). A line nested deeper than this less a block is validated again
/// with a larger one.
const SHALLOW: usize = 256;

/// The validation of a line. Inlined into each caller, so that a kernel compiled for AVX2
/// is inlined into a loop compiled for it.
#[inline(always)]
fn run(line: &[u8], kernel: impl Kernel) -> Verdict {
    let mut stack = [0; SHALLOW + 2];
    match run_blocks(line, kernel, &mut stack) {
        Some(verdict) => verdict,
        None => run_deep(line),
    }
}

/// A line nested too deep for the fixed stack is validated again with one as deep as the
/// line is long (a line cannot nest deeper than it has bytes). Rare, so not fast.
#[cold]
#[inline(never)]
fn run_deep(line: &[u8]) -> Verdict {
    let mut stack = vec![0; (line.len() + 128).next_power_of_two() + 2];
    #[cfg(target_arch = "x86_64")]
    let verdict = run_blocks(line, Sse2, &mut stack);
    #[cfg(not(target_arch = "x86_64"))]
    let verdict = run_blocks(line, Plain, &mut stack);
    verdict.expect("a stack deeper than the line is long")
}

/// The loop over 64-byte blocks. `stack` has a power of two plus two entries; `None` when
/// the line nests too deep for it.
#[inline(always)]
fn run_blocks(line: &[u8], kernel: impl Kernel, stack: &mut [u8]) -> Option<Verdict> {
    let mut v = Validator::new(line);
    stack[1] = TOP_DONE as u8;
    let mut padded = [b' '; 64];
    let mut at = 0;
    while at < line.len() {
        // The last, partial block is classified as the line's last 64 bytes, and its masks
        // shifted down by `behind` (see `StringMasks::behind`); only a line shorter than a block
        // is copied, padded with spaces (whitespace, never a token). Copying every line's
        // end would make the block's loads wait for the copy's stores.
        let (block, behind): (&[u8; 64], u32) = match line.get(at..at + 64) {
            Some(block) => (block.try_into().expect("64 bytes"), 0),
            None if line.len() >= 64 => {
                (line[line.len() - 64..].try_into().expect("64 bytes"), (at + 64 - line.len()) as u32)
            }
            None => {
                padded[..line.len()].copy_from_slice(line);
                (&padded, 0)
            }
        };
        let (tokens, brackets) = match v.block(at, block, behind, kernel) {
            Block::Malformed => return Some(Verdict::Malformed),
            // (If the line ends here, it ends in a string.)
            Block::InString => {
                at += 64;
                continue;
            }
            Block::Tokens(tokens, brackets) => (tokens, brackets),
        };
        at += 64;
        // A block moves the depth by at most 64.
        if v.depth + 64 >= stack.len() - 2 {
            return None;
        }
        if !v.tokens(tokens << behind, brackets << behind, block, stack) {
            return Some(Verdict::Malformed);
        }
    }
    Some(v.finish(stack))
}

/// What strings are made of: bit `i` is set when byte `i` of the block is of the kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct StringMasks {
    quote: u64,
    backslash: u64,
    /// The characters that may follow a backslash in a string, but `u` (which takes four
    /// hex digits, and is rare enough to be looked at one by one): `" \ / b f n r t`.
    /// Only read after a backslash and at byte 0 (where escapes are).
    escape: u64,
    /// Bytes below 0x20 (never allowed raw inside a string).
    control: u64,
    /// Bytes >= 0x80.
    high: u64,
}

/// What is between strings: bit `i` is set when byte `i` of the block is of the kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct StructureMasks {
    /// Space, tab, carriage return (a line has no `\n`).
    space: u64,
    /// `{ } [ ] : ,`
    op: u64,
    /// `{ } [ ]`
    bracket: u64,
}

/// The bytes of a block that numbers are made of: bit `i` is set where byte `i` is of the
/// kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct NumberKinds {
    digit: u64,
    zero: u64,
    minus: u64,
    plus: u64,
    dot: u64,
    /// `e` or `E`.
    exp: u64,
}

impl NumberKinds {
    /// The kinds from byte `i` on.
    fn from(self, i: u32) -> NumberKinds {
        NumberKinds {
            digit: self.digit >> i,
            zero: self.zero >> i,
            minus: self.minus >> i,
            plus: self.plus >> i,
            dot: self.dot >> i,
            exp: self.exp >> i,
        }
    }

    /// (See `StringMasks::behind`.)
    fn behind(self, by: u32) -> NumberKinds {
        self.from(by)
    }

    /// Whether the scalars that start at `starts`, made of the bytes `run`, are all valid
    /// numbers, checked all at once: `None` when that cannot be told so (a literal, an
    /// exponent, a scalar that goes on into the next block), and they are to be looked at
    /// one by one. `quote`: the block's quotes (one right after a scalar is part of it).
    ///
    /// Without an exponent, JSON's number is `-? (0 | [1-9][0-9]*) (. [0-9]+)?`, and fewer
    /// than 64 digits are far from f64's limits.
    #[inline(always)]
    fn plain_numbers(self, starts: u64, run: u64, quote: u64) -> Option<bool> {
        let NumberKinds { digit, zero, minus, plus, dot, exp } = self;
        if starts & !(digit | minus) | run & (exp | plus) | run >> 63 != 0 {
            return None;
        }
        // The integer part's first bytes, and the dots of the run.
        let first = (starts & !minus) | (starts & minus) << 1;
        let dot = dot & run;
        // Each term is a bit where the grammar is broken.
        let broken = run & !(digit | minus | dot)
            | minus & run & !starts
            | first & !digit
            | (zero & first) << 1 & digit
            | (dot >> 1 | dot << 1) & !digit
            // A dot after a dot of the same scalar: adding the bits after the dots to the
            // run's carries them through the rest of each scalar, clearing it.
            | dot & !run.wrapping_add(dot << 1)
            | run << 1 & quote;
        Some(broken == 0)
    }

    /// Whether the first `len` (1..64) bytes are a number (`None` if not), and whether it
    /// has an exponent: JSON's `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`,
    /// checked on all bytes at once. Without an exponent, fewer than 64 digits are far from
    /// f64's limits.
    fn number(self, len: u32) -> Option<bool> {
        let all = u64::MAX >> (64 - len);
        let [digit, zero, minus, plus, dot, exp] =
            [self.digit, self.zero, self.minus, self.plus, self.dot, self.exp].map(|x| x & all);
        // The integer part's first byte, the byte after the `e`, and a sign there.
        let first = 1 << (minus & 1);
        let after_exp = exp << 1;
        let exp_sign = after_exp & (minus | plus);
        // Each term is a bit where the grammar is broken.
        let broken = ((digit | minus | plus | dot | exp) ^ all)
            | minus & !(1 | after_exp)
            | plus & !after_exp
            | first & !digit
            | (zero & first) << 1 & digit
            | dot & dot.wrapping_sub(1)
            | exp & exp.wrapping_sub(1)
            | (dot >> 1 | dot << 1) & !digit
            | (exp >> 1) & !digit
            | ((after_exp & !exp_sign) | exp_sign << 1) & !digit
            // A `.` after the `e`.
            | u64::from(exp.wrapping_sub(1) < dot);
        (broken == 0).then_some(exp != 0)
    }
}

// The masks of the last, partial block of a line are those of the line's last 64 bytes,
// shifted down by the number of bytes `by` (1..64) that the block reaches past the line's
// end, where it is padded with spaces.

impl StringMasks {
    fn behind(self, by: u32) -> StringMasks {
        StringMasks {
            quote: self.quote >> by,
            backslash: self.backslash >> by,
            escape: self.escape >> by,
            control: self.control >> by,
            high: self.high >> by,
        }
    }
}

impl StructureMasks {
    fn behind(self, by: u32) -> StructureMasks {
        StructureMasks { space: (self.space >> by) | !(u64::MAX >> by), op: self.op >> by, bracket: self.bracket >> by }
    }
}

// The grammar between two tokens, as a state. The container a value is in is part of the
// state, so a `,` needs no look at the stack. A state is a nibble's index (0..16) in a row
// of `NEXT`.

/// A value at the top of the line.
const TOP_VALUE: u64 = 0;
/// After the top value: nothing may follow.
const TOP_DONE: u64 = 1;
/// After `{`: a key or `}`.
const OBJ_KEY_OR_CLOSE: u64 = 2;
/// After `,` in an object: a key.
const OBJ_KEY: u64 = 3;
/// After a key: `:`.
const OBJ_COLON: u64 = 4;
/// After `:`: a value.
const OBJ_VALUE: u64 = 5;
/// After a value in an object: `,` or `}`.
const OBJ_NEXT: u64 = 6;
/// After `[`: a value or `]`.
const ARR_VALUE_OR_CLOSE: u64 = 7;
/// After `,` in an array: a value.
const ARR_VALUE: u64 = 8;
/// After a value in an array: `,` or `]`.
const ARR_NEXT: u64 = 9;
/// The line cannot be JSON. All ones, so that OR-ing anything into it leaves it.
const ERROR: u64 = 15;

/// What a bracket does to the stack, by its byte (see `Validator::tokens`). The stack
/// holds, at `depth + 1`, the state after a close at `depth + 1`: after a value in the
/// container at `depth` (`TOP_DONE` at the top).
#[derive(Clone, Copy)]
struct Bracket {
    /// +1 for an open, -1 for a close.
    depth: i8,
    /// What it writes to `stack[depth + 2]`: for an open, the state after a value in it,
    /// which its contents' closes return to; for a close, junk above the top. Never 0 (see
    /// `Validator::finish`).
    push: u8,
    /// The token the bracket becomes for the grammar: an open stays itself; a close
    /// becomes `CLOSE_OBJECT` or `CLOSE_ARRAY` plus the state it returns to (`pop` is the
    /// mask for that).
    code: u8,
    pop: u8,
}

/// What a close becomes for the grammar: this plus the state it returns to (bytes below
/// 0x20 are never tokens that reach the grammar: outside strings, they are scalars, which
/// are checked first, and fail).
const CLOSE_ARRAY: u8 = 0x00;
const CLOSE_OBJECT: u8 = 0x10;

/// What a close writes to the stack (above its top).
const JUNK: u8 = 0xFF;

static BRACKETS: [Bracket; 256] = {
    let mut t = [Bracket { depth: 0, push: 0, code: 0, pop: 0 }; 256];
    t[b'{' as usize] = Bracket { depth: 1, push: OBJ_NEXT as u8, code: b'{', pop: 0 };
    t[b'[' as usize] = Bracket { depth: 1, push: ARR_NEXT as u8, code: b'[', pop: 0 };
    t[b'}' as usize] = Bracket { depth: -1, push: JUNK, code: CLOSE_OBJECT, pop: 0xF };
    t[b']' as usize] = Bracket { depth: -1, push: JUNK, code: CLOSE_ARRAY, pop: 0xF };
    t
};

/// A u64 of nibbles, `ERROR` but for the given (index, value) pairs.
const fn nibbles(set: &[(u64, u64)]) -> u64 {
    let mut t = u64::MAX;
    let mut k = 0;
    while k < set.len() {
        let (s, v) = set[k];
        t &= !(0xF << (4 * s));
        t |= v << (4 * s);
        k += 1;
    }
    t
}

/// What a token does to the grammar's state, by its first byte (a close: by its code, see
/// `Bracket::code`): nibble `s` is the state after it in state `s` (`ERROR` if it may not
/// be there).
static NEXT: [u64; 256] = {
    const fn value(key: u64) -> u64 {
        // A value: in a value state, the state after a value; a key where a key may be.
        nibbles(&[
            (TOP_VALUE, TOP_DONE),
            (OBJ_VALUE, OBJ_NEXT),
            (ARR_VALUE, ARR_NEXT),
            (ARR_VALUE_OR_CLOSE, ARR_NEXT),
            (OBJ_KEY_OR_CLOSE, key),
            (OBJ_KEY, key),
        ])
    }
    const fn open(into: u64) -> u64 {
        nibbles(&[(TOP_VALUE, into), (OBJ_VALUE, into), (ARR_VALUE, into), (ARR_VALUE_OR_CLOSE, into)])
    }
    // Anything else starts a scalar (whose own text is checked apart); a key may not be one.
    let mut t = [value(ERROR); 256];
    t[b'"' as usize] = value(OBJ_COLON);
    t[b'{' as usize] = open(OBJ_KEY_OR_CLOSE);
    t[b'[' as usize] = open(ARR_VALUE_OR_CLOSE);
    t[b':' as usize] = nibbles(&[(OBJ_COLON, OBJ_VALUE)]);
    t[b',' as usize] = nibbles(&[(OBJ_NEXT, OBJ_KEY), (ARR_NEXT, ARR_VALUE)]);
    // A close, where it may be, returns to the state it was given.
    t[b'}' as usize] = u64::MAX;
    t[b']' as usize] = u64::MAX;
    let mut back = 0;
    while back < 16 {
        t[(CLOSE_OBJECT + back as u8) as usize] = nibbles(&[(OBJ_KEY_OR_CLOSE, back), (OBJ_NEXT, back)]);
        t[(CLOSE_ARRAY + back as u8) as usize] = nibbles(&[(ARR_VALUE_OR_CLOSE, back), (ARR_NEXT, back)]);
        back += 1;
    }
    t
};

/// What a block was.
enum Block {
    /// Not JSON: the line is not.
    Malformed,
    /// Inside a string all along (so no tokens).
    InString,
    /// Its tokens, and which of them are brackets.
    Tokens(u64, u64),
}

struct Validator<'a> {
    line: &'a [u8],
    // Carries from one block to the next.
    prev_escaped: u64,
    prev_in_string: u64,
    prev_scalar: u64,
    state: u64,
    /// How many containers are open.
    depth: usize,
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
            depth: 0,
            out_of_range: false,
            non_ascii: false,
        }
    }

    /// Takes the block at byte `at` (`behind` bytes before it, for the last one).
    #[inline(always)]
    fn block(&mut self, at: usize, block: &[u8; 64], behind: u32, kernel: impl Kernel) -> Block {
        let mut m = kernel.strings(block);
        if behind != 0 {
            m = m.behind(behind);
        }
        self.non_ascii |= m.high != 0;
        let escaped = self.find_escaped(m.backslash);
        let quote = m.quote & !escaped;
        // Most blocks are inside a long string: no quote ends it, and there are no tokens.
        // This is decided before (and without) `in_string`, whose carry-less product takes
        // a while.
        if quote == 0 && self.prev_in_string != 0 {
            if m.control | escaped & !m.escape != 0 && !self.strings_ok(at, m, escaped, u64::MAX) {
                return Block::Malformed;
            }
            // (The block ends inside the string: no scalar goes on into the next one.)
            self.prev_scalar = 0;
            return Block::InString;
        }
        // Bit i: inside a string (its opening quote included, its closing quote not).
        let in_string = kernel.prefix_xor(quote) ^ self.prev_in_string;
        self.prev_in_string = ((in_string as i64) >> 63) as u64;
        if (m.control | escaped & !m.escape) & in_string != 0 && !self.strings_ok(at, m, escaped, in_string) {
            return Block::Malformed;
        }
        let string_tail = in_string ^ quote;
        let mut structure = kernel.structure(block);
        if behind != 0 {
            structure = structure.behind(behind);
        }
        let StructureMasks { op, space, bracket } = structure;
        // Tokens: structural characters and the first byte of every string or scalar,
        // outside strings (simdjson's structural and pseudo-structural characters).
        let ends_scalar = op | space;
        let nonquote_scalar = !ends_scalar & !quote;
        let carried = self.prev_scalar;
        let follows_scalar = (nonquote_scalar << 1) | carried;
        self.prev_scalar = nonquote_scalar >> 63;
        let tokens = (op | (!ends_scalar & !follows_scalar)) & !string_tail;
        // A scalar's text does not depend on where it is, so scalars are checked here,
        // and are then one more value token to the state machine.
        let scalars = tokens & nonquote_scalar;
        if scalars != 0 {
            let mut kinds = kernel.numbers(block);
            if behind != 0 {
                kinds = kinds.behind(behind);
            }
            // The bytes of scalars, but those of one that began in the block before (which
            // was checked whole there).
            let run = nonquote_scalar & !in_string;
            let run = run & !(run & !run.wrapping_add(1) & carried.wrapping_neg());
            match kinds.plain_numbers(scalars, run, m.quote) {
                Some(true) => {}
                Some(false) => return Block::Malformed,
                None => {
                    let mut scalars = scalars;
                    while scalars != 0 {
                        let i = scalars.trailing_zeros();
                        scalars &= scalars - 1;
                        let len = (ends_scalar >> i).trailing_zeros();
                        match self.scalar(at + i as usize, len, kinds.from(i), kernel) {
                            Number::Invalid => return Block::Malformed,
                            Number::Finite => {}
                            Number::OutOfRange => self.out_of_range = true,
                        }
                    }
                }
            }
        }
        Block::Tokens(tokens, tokens & bracket)
    }

    /// The grammar over a block's tokens (`brackets` among them); `false` once the line
    /// cannot be JSON.
    ///
    /// Brackets first, on the stack: a close reads `stack[depth]`, and each bracket writes
    /// `stack[depth + 2]` (what an open saves for its contents' closes). What is written
    /// depends on the bracket alone, never on the state. The index is masked to the stack's
    /// power-of-two size (it may go below 0 after an error, which the state then says), plus
    /// two, so that no index needs a bounds check when the stack is the fixed one. Each
    /// close becomes a token that says what state it returns to, so that the loop over all
    /// tokens has no stack to look at, and nothing between two tokens' states but a
    /// lookup's shift.
    #[inline(always)]
    fn tokens(&mut self, mut tokens: u64, mut brackets: u64, block: &[u8; 64], stack: &mut [u8]) -> bool {
        let size_mask = stack.len() - 3;
        let mut codes = *block;
        let mut depth = self.depth;
        while brackets != 0 {
            let i = brackets.trailing_zeros() as usize;
            brackets &= brackets - 1;
            let k = &BRACKETS[block[i] as usize];
            let d = depth & size_mask;
            codes[i] = k.code | (stack[d] & k.pop);
            stack[d + 2] = k.push;
            depth = depth.wrapping_add_signed(k.depth.into());
        }
        self.depth = depth;
        // The state times four (a shift that picks its nibble), with junk above bit 5, which
        // shifts ignore: two instructions between two tokens' states.
        let mut shift = self.state << 2;
        while tokens != 0 {
            let i = tokens.trailing_zeros() as usize;
            tokens &= tokens - 1;
            shift = (NEXT[codes[i] as usize] >> (shift & 63)) << 2;
        }
        self.state = (shift >> 2) & 0xF;
        self.state != ERROR
    }

    /// The scalar at byte `start`, of `len` bytes (64 if it does not end in its block), the
    /// kinds of its bytes in `kinds`. Scalars are checked on those bits, without a branch
    /// per byte; one that goes on into the next block is looked at in a block of its own
    /// (that ends at the line's end, if the line ends sooner).
    #[inline(always)]
    fn scalar(&self, start: usize, mut len: u32, mut kinds: NumberKinds, kernel: impl Kernel) -> Number {
        if len >= 64 {
            let from = start.min(self.line.len().wrapping_sub(64));
            let Some(window) = self.line.get(from..from + 64) else { return scalar(&self.line[start..]) };
            let window = window.try_into().expect("64 bytes");
            let (skip, structure) = ((start - from) as u32, kernel.structure(window));
            // Past the line's end is the end of the scalar.
            len = ((structure.op | structure.space) >> skip | !(u64::MAX >> skip)).trailing_zeros();
            kinds = kernel.numbers(window).from(skip);
            if len >= 64 {
                return scalar(&self.line[start..]);
            }
        }
        let text = &self.line[start..][..len as usize];
        if let b"true" | b"false" | b"null" = text {
            return Number::Finite;
        }
        match kinds.number(len) {
            Some(false) => Number::Finite,
            Some(true) => number(text),
            None => Number::Invalid,
        }
    }

    /// Whether the strings of the block at `at` are still valid where control bytes or
    /// escapes other than the simple ones are in them: none of the first, and `\u` with
    /// four hex digits for the others.
    #[cold]
    #[inline(never)]
    fn strings_ok(&self, at: usize, m: StringMasks, escaped: u64, in_string: u64) -> bool {
        if m.control & in_string != 0 {
            return false;
        }
        let mut others = escaped & in_string & !m.escape;
        while others != 0 {
            let i = at + others.trailing_zeros() as usize;
            others &= others - 1;
            match self.line.get(i..i + 5) {
                Some([b'u', hex @ ..]) if hex.iter().all(u8::is_ascii_hexdigit) => {}
                _ => return false,
            }
        }
        true
    }

    /// simdjson's `find_escaped`: the bytes that follow an odd run of backslashes.
    #[inline(always)]
    fn find_escaped(&mut self, backslash: u64) -> u64 {
        find_escaped(backslash, &mut self.prev_escaped)
    }

    /// The verdict, once every block has been taken; `stack` as `tokens` left it.
    fn finish(self, stack: &[u8]) -> Verdict {
        // One complete value (an all-whitespace line has none), not inside a string.
        if self.state != TOP_DONE || self.prev_in_string != 0 {
            return Verdict::Malformed;
        }
        // Every bracket writes a byte that is never 0 to `stack[depth + 2]`, and the deepest
        // container's close is a bracket at its depth: the last slot ever written is two
        // above the deepest depth (`stack` is all 0 past it). This keeps the deepest depth
        // out of the loop over brackets.
        if stack[MAX_DEPTH as usize + 3] != 0 {
            let deepest = stack.iter().rposition(|&s| s != 0).expect("written") - 2;
            return Verdict::TooDeep { depth: deepest as u32 };
        }
        if self.out_of_range {
            return Verdict::NumberOutOfRange;
        }
        Verdict::Whole { non_ascii: self.non_ascii }
    }
}

/// The literal or number at the start of `rest`: it runs to the next whitespace or
/// structural character. Not inlined: it is rare, and a call in the loop over blocks
/// would keep its constants out of registers.
#[cold]
#[inline(never)]
fn scalar(rest: &[u8]) -> Number {
    let len = rest.iter().position(|&b| ENDS_SCALAR[b as usize]).unwrap_or(rest.len());
    literal_or_number(&rest[..len])
}

/// A whole scalar's text.
fn literal_or_number(text: &[u8]) -> Number {
    match text {
        b"true" | b"false" | b"null" => Number::Finite,
        _ => number(text),
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

// ---------------------------------------------------------------------------------------
// Kernels: the same masks three ways (AVX2, SSE2, plain), chosen once per line.
// ---------------------------------------------------------------------------------------

/// Eight bytes at a time, in u64s: other targets.
#[derive(Clone, Copy)]
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
struct Plain;

impl Kernel for Plain {
    #[inline(always)]
    fn strings(self, block: &[u8; 64]) -> StringMasks {
        strings_swar(block)
    }

    #[inline(always)]
    fn structure(self, block: &[u8; 64]) -> StructureMasks {
        structure_swar(block)
    }

    #[inline(always)]
    fn numbers(self, block: &[u8; 64]) -> NumberKinds {
        numbers_swar(block)
    }
}

/// SSE2, which every x86_64 CPU has.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Sse2;

#[cfg(target_arch = "x86_64")]
impl Kernel for Sse2 {
    #[inline(always)]
    fn strings(self, block: &[u8; 64]) -> StringMasks {
        classify_sse2(block).0
    }

    #[inline(always)]
    fn structure(self, block: &[u8; 64]) -> StructureMasks {
        classify_sse2(block).1
    }

    #[inline(always)]
    fn numbers(self, block: &[u8; 64]) -> NumberKinds {
        numbers_sse2(block)
    }
}

/// Whether this CPU has AVX2 and the instructions that come with it (also for
/// `session::walk`).
#[cfg(target_arch = "x86_64")]
pub(crate) fn has_avx2() -> bool {
    Avx2::detect()
}

/// AVX2, with the BMI, POPCNT and PCLMULQDQ instructions that come with it. A value exists
/// only once `detect` said yes, which is what makes its methods sound.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Avx2(());

#[cfg(target_arch = "x86_64")]
impl Avx2 {
    fn detect() -> bool {
        use std::arch::is_x86_feature_detected as has;
        has!("avx2") && has!("bmi1") && has!("bmi2") && has!("popcnt") && has!("pclmulqdq")
    }
}

#[cfg(target_arch = "x86_64")]
impl Kernel for Avx2 {
    #[inline(always)]
    fn strings(self, block: &[u8; 64]) -> StringMasks {
        // SAFETY: an `Avx2` exists only on a CPU with AVX2.
        unsafe { strings_avx2(block) }
    }

    #[inline(always)]
    fn structure(self, block: &[u8; 64]) -> StructureMasks {
        // SAFETY: an `Avx2` exists only on a CPU with AVX2.
        unsafe { structure_avx2(block) }
    }

    #[inline(always)]
    fn numbers(self, block: &[u8; 64]) -> NumberKinds {
        // SAFETY: an `Avx2` exists only on a CPU with AVX2.
        unsafe { numbers_avx2(block) }
    }

    #[inline(always)]
    fn prefix_xor(self, x: u64) -> u64 {
        // SAFETY: an `Avx2` exists only on a CPU with PCLMULQDQ.
        unsafe { prefix_xor_clmul(x) }
    }
}

/// `run` compiled for AVX2 and its companions, so that the AVX2 kernel is inlined into it
/// and the bit operations (`tzcnt`, `popcnt`, `shrx`, `blsr`) are single instructions.
///
/// # Safety
/// The CPU must have what `Avx2::detect` checks.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2,popcnt,pclmulqdq")]
unsafe fn run_avx2(line: &[u8]) -> Verdict {
    run(line, Avx2(()))
}

/// `prefix_xor` as one carry-less multiplication by all ones.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "pclmulqdq")]
pub(crate) fn prefix_xor_clmul(x: u64) -> u64 {
    use std::arch::x86_64::*;
    let product = _mm_clmulepi64_si128(_mm_set_epi64x(0, x as i64), _mm_set1_epi8(-1), 0);
    _mm_cvtsi128_si64(product) as u64
}

/// A mask of a block's 64 bytes, 8 at a time in a u64 ("SIMD within a register"): `bits`
/// gives bit 7 of each byte of a word that is of the kind.
#[inline(always)]
fn swar(block: &[u8; 64], bits: impl Fn(u64) -> u64) -> u64 {
    let mut mask = 0;
    for (k, word) in block.chunks_exact(8).enumerate() {
        let bits = bits(u64::from_le_bytes(word.try_into().expect("8 bytes")));
        // Bit 7 of byte j to bit j.
        mask |= (bits.wrapping_mul(0x0002_0408_1020_4081) >> 56) << (8 * k);
    }
    mask
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Bit 7 of each byte of `x` that is 0 (exactly: nothing carries between bytes).
#[inline(always)]
fn swar_zero(x: u64) -> u64 {
    !(((x & !HIGHS) + !HIGHS) | x) & HIGHS
}

/// Bit 7 of each byte of `w` that is `c`.
#[inline(always)]
fn swar_eq(w: u64, c: u8) -> u64 {
    swar_zero(w ^ (ONES * u64::from(c)))
}

/// (`escape` only where an escape may be: after a backslash, and at the block's start.)
fn strings_swar(block: &[u8; 64]) -> StringMasks {
    let backslash = swar(block, |w| swar_eq(w, b'\\'));
    let mut escape = 0;
    let mut after = (backslash << 1) | 1;
    while after != 0 {
        let i = after.trailing_zeros();
        after &= after - 1;
        if matches!(block[i as usize], b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') {
            escape |= 1 << i;
        }
    }
    StringMasks {
        quote: swar(block, |w| swar_eq(w, b'"')),
        backslash,
        escape,
        // Nothing above 0x1F.
        control: swar(block, |w| swar_zero(w & (ONES * 0xe0))),
        high: swar(block, |w| w & HIGHS),
    }
}

fn structure_swar(block: &[u8; 64]) -> StructureMasks {
    // `{`/`[` and `}`/`]` differ only in bit 0x20.
    let bracket = |w: u64| swar_eq(w | (ONES * 0x20), b'{') | swar_eq(w | (ONES * 0x20), b'}');
    StructureMasks {
        space: swar(block, |w| swar_eq(w, b' ') | swar_eq(w, b'\t') | swar_eq(w, b'\r')),
        op: swar(block, |w| bracket(w) | swar_eq(w, b':') | swar_eq(w, b',')),
        bracket: swar(block, bracket),
    }
}

fn numbers_swar(block: &[u8; 64]) -> NumberKinds {
    NumberKinds {
        // 0x30..=0x39: a high nibble of 3, and a low one that 0x76 takes no higher than 0x7F.
        digit: swar(block, |w| swar_eq(w & (ONES * 0xf0), 0x30) & !((w & (ONES * 0x0f)) + ONES * 0x76) & HIGHS),
        zero: swar(block, |w| swar_eq(w, b'0')),
        minus: swar(block, |w| swar_eq(w, b'-')),
        plus: swar(block, |w| swar_eq(w, b'+')),
        dot: swar(block, |w| swar_eq(w, b'.')),
        exp: swar(block, |w| swar_eq(w | (ONES * 0x20), b'e')),
    }
}

/// The plain classifier: one byte at a time (the tests' reference).
#[cfg(test)]
fn classify_plain(block: &[u8; 64]) -> (StringMasks, StructureMasks, NumberKinds) {
    let (mut m, mut n, mut k) = (StringMasks::default(), StructureMasks::default(), NumberKinds::default());
    for (i, &b) in block.iter().enumerate() {
        let bit = 1u64 << i;
        match b {
            b'"' => m.quote |= bit,
            b'\\' => m.backslash |= bit,
            b' ' | b'\t' | b'\r' => n.space |= bit,
            b'{' | b'}' | b'[' | b']' => {
                n.op |= bit;
                n.bracket |= bit;
            }
            b':' | b',' => n.op |= bit,
            b'0' => {
                k.digit |= bit;
                k.zero |= bit;
            }
            b'1'..=b'9' => k.digit |= bit,
            b'-' => k.minus |= bit,
            b'+' => k.plus |= bit,
            b'.' => k.dot |= bit,
            b'e' | b'E' => k.exp |= bit,
            _ => {}
        }
        if matches!(b, b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') {
            m.escape |= bit;
        }
        if b < 0x20 {
            m.control |= bit;
        }
        if b >= 0x80 {
            m.high |= bit;
        }
    }
    (m, n, k)
}

#[cfg(target_arch = "x86_64")]
fn classify_sse2(block: &[u8; 64]) -> (StringMasks, StructureMasks) {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline, so these instructions exist on every
    // x86_64 CPU; `_mm_loadu_si128` reads 16 bytes at offsets 0, 16, 32, 48 of a 64-byte
    // array, all in bounds, and needs no alignment.
    unsafe {
        let (mut m, mut n) = (StringMasks::default(), StructureMasks::default());
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
            n.space |= bits(_mm_or_si128(_mm_or_si128(eq(b' '), eq(b'\t')), eq(b'\r')));
            n.op |= bits(_mm_or_si128(brace, _mm_or_si128(eq(b':'), eq(b','))));
            n.bracket |= bits(brace);
            let escapes = [eq(b'/'), eq(b'b'), eq(b'f'), eq(b'n'), eq(b'r'), eq(b't')]
                .into_iter()
                .fold(_mm_or_si128(quote, backslash), |a, x| _mm_or_si128(a, x));
            m.escape |= bits(escapes);
            m.high |= bits(v);
        }
        (m, n)
    }
}

/// The bytes of each kind in `v`, as `vpmovmskb` takes them (for 16 or 32 bytes).
macro_rules! number_kinds {
    ($v:expr, $set1:ident, $cmpeq:ident, $cmplt:ident, $add:ident, $or:ident) => {{
        let v = $v;
        let eq = |x, c: u8| $cmpeq(x, $set1(c as i8));
        [
            // Digits moved to -128..-119 (signed), and nothing else there.
            $cmplt($add(v, $set1(0x50)), $set1(-118)),
            eq(v, b'0'),
            eq(v, b'-'),
            eq(v, b'+'),
            eq(v, b'.'),
            eq($or(v, $set1(0x20)), b'e'),
        ]
    }};
}

#[cfg(target_arch = "x86_64")]
fn numbers_sse2(block: &[u8; 64]) -> NumberKinds {
    use std::arch::x86_64::*;
    let mut kinds = [0u64; 6];
    for k in 0..4 {
        // SAFETY: SSE2 is part of the x86_64 baseline, so these instructions exist on every
        // x86_64 CPU; the load reads 16 bytes at offset 0, 16, 32 or 48 of a 64-byte array,
        // and needs no alignment.
        let bits = unsafe {
            let v = _mm_loadu_si128(block.as_ptr().add(16 * k) as *const __m128i);
            number_kinds!(v, _mm_set1_epi8, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_add_epi8, _mm_or_si128)
                .map(|x| _mm_movemask_epi8(x) as u32 as u64)
        };
        for (kind, bits) in kinds.iter_mut().zip(bits) {
            *kind |= bits << (16 * k);
        }
    }
    let [digit, zero, minus, plus, dot, exp] = kinds;
    NumberKinds { digit, zero, minus, plus, dot, exp }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn numbers_avx2(block: &[u8; 64]) -> NumberKinds {
    use std::arch::x86_64::*;
    // Signed "less than" is "greater than" with the operands swapped.
    let cmplt = |a, b| _mm256_cmpgt_epi8(b, a);
    // (No `array::map` with AVX2 in its closure: it would not be inlined.)
    let [v, w] = halves(block);
    let lo = number_kinds!(v, _mm256_set1_epi8, _mm256_cmpeq_epi8, cmplt, _mm256_add_epi8, _mm256_or_si256);
    let hi = number_kinds!(w, _mm256_set1_epi8, _mm256_cmpeq_epi8, cmplt, _mm256_add_epi8, _mm256_or_si256);
    let bits = |k: usize| bits([lo[k], hi[k]]);
    let [digit, zero, minus, plus, dot, exp] = [bits(0), bits(1), bits(2), bits(3), bits(4), bits(5)];
    NumberKinds { digit, zero, minus, plus, dot, exp }
}

/// AVX2: 32 bytes at a time, classes looked up by nibble (`vpshufb`), as simdjson does.
///
/// A byte's class is `CLASS_LO[low nibble] & CLASS_HI[high nibble]`; each bit of a class is
/// a set of characters that is all the combinations of some high and some low nibbles:
///   0x80 `,` (0x2C), 0x40 `:` (0x3A), 0x20 `[ ] { }` (0x5B 0x5D 0x7B 0x7D): the
///   structural characters, so a class of 0x20 or more is one;
///   0x01 `" /` (0x22 0x2F), 0x02 `\` (0x5C), 0x04 `b f n` (0x62 0x66 0x6E), 0x08 `r t`
///   (0x72 0x74): the simple escapes, so another class but 0 is one.
/// Bytes >= 0x80 have a high nibble of 8..F, whose entries are 0.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn class_avx2(v: std::arch::x86_64::__m256i) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    #[rustfmt::skip]
    const CLASS_LO: [u8; 32] = [
        0, 0, 0x0d, 0, 0x08, 0, 0x04, 0, 0, 0, 0x40, 0x20, 0x82, 0x20, 0x04, 0x01,
        0, 0, 0x0d, 0, 0x08, 0, 0x04, 0, 0, 0, 0x40, 0x20, 0x82, 0x20, 0x04, 0x01,
    ];
    #[rustfmt::skip]
    const CLASS_HI: [u8; 32] = [
        0, 0, 0x81, 0x40, 0, 0x22, 0x04, 0x28, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0x81, 0x40, 0, 0x22, 0x04, 0x28, 0, 0, 0, 0, 0, 0, 0, 0,
    ];
    let (lo, hi) = (table(&CLASS_LO), table(&CLASS_HI));
    // `vpshufb` looks up by the low nibble, and gives 0 for a byte >= 0x80.
    let high_nibble = _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0f));
    _mm256_and_si256(_mm256_shuffle_epi8(lo, v), _mm256_shuffle_epi8(hi, high_nibble))
}

/// A lookup table for `vpshufb` (the same 16 bytes in both lanes).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn table(t: &[u8; 32]) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    // SAFETY: reads 32 bytes of a 32-byte array; no alignment needed.
    unsafe { _mm256_loadu_si256(t.as_ptr() as *const __m256i) }
}

/// The two halves of a block.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn halves(block: &[u8; 64]) -> [std::arch::x86_64::__m256i; 2] {
    use std::arch::x86_64::*;
    // SAFETY: reads 32 bytes at offsets 0 and 32 of a 64-byte array; no alignment needed.
    unsafe { [0, 32].map(|k| _mm256_loadu_si256(block.as_ptr().add(k) as *const __m256i)) }
}

/// A mask of the bit 7 of each byte of the two halves.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn bits(v: [std::arch::x86_64::__m256i; 2]) -> u64 {
    use std::arch::x86_64::*;
    u64::from(_mm256_movemask_epi8(v[0]) as u32) | (u64::from(_mm256_movemask_epi8(v[1]) as u32) << 32)
}

/// `vpmovmskb` (one a cycle) is what limits this, so control and high bytes, which are
/// rare, are first looked for together (as the bytes below 0x20 when signed).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn strings_avx2(block: &[u8; 64]) -> StringMasks {
    use std::arch::x86_64::*;
    let v = halves(block);
    let eq = |c: u8| bits(v.map(|v| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(c as i8))));
    let no_escape =
        bits(v.map(|v| {
            _mm256_cmpeq_epi8(_mm256_and_si256(class_avx2(v), _mm256_set1_epi8(0x0f)), _mm256_setzero_si256())
        }));
    let below_space = v.map(|v| _mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), v));
    let (control, high) = if _mm256_movemask_epi8(_mm256_or_si256(below_space[0], below_space[1])) == 0 {
        (0, 0)
    } else {
        let high = bits(v);
        (bits(below_space) & !high, high)
    };
    StringMasks { quote: eq(b'"'), backslash: eq(b'\\'), escape: !no_escape, control, high }
}

/// Whitespace is found by a lookup of its own: `SPACE[low nibble]` is the one whitespace
/// byte with that low nibble (0x80, which no such byte equals, where there is none).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn structure_avx2(block: &[u8; 64]) -> StructureMasks {
    use std::arch::x86_64::*;
    #[rustfmt::skip]
    const SPACE: [u8; 32] = [
        b' ', 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, b'\t', 0x80, 0x80, 0x80, b'\r', 0x80, 0x80,
        b' ', 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, b'\t', 0x80, 0x80, 0x80, b'\r', 0x80, 0x80,
    ];
    let space = table(&SPACE);
    let v = halves(block);
    StructureMasks {
        space: bits(v.map(|v| _mm256_cmpeq_epi8(_mm256_shuffle_epi8(space, v), v))),
        // A saturating add sets bit 7 from a class of 0x20 on.
        op: bits(v.map(|v| _mm256_adds_epu8(class_avx2(v), _mm256_set1_epi8(0x60)))),
        // Bit 0x20 of the class, moved to bit 7.
        bracket: bits(v.map(|v| _mm256_slli_epi16(class_avx2(v), 2))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::js::parse_value;

    /// The validator against pisces's parser: they must agree on every input.
    fn agrees(line: &[u8]) {
        let verdict = validate(line);
        // Every kernel this CPU runs gives the same verdict.
        assert_eq!(run(line, Plain), verdict, "plain on {:?}", show(line));
        #[cfg(target_arch = "x86_64")]
        {
            assert_eq!(run(line, Sse2), verdict, "sse2 on {:?}", show(line));
            if Avx2::detect() {
                // SAFETY: the CPU has what `Avx2` needs.
                assert_eq!(unsafe { run_avx2(line) }, verdict, "avx2 on {:?}", show(line));
            }
        }
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
            let mut plain = (Plain.strings(block), Plain.structure(block), Plain.numbers(block));
            // (Its escapes are only where they are read.)
            plain.0.escape |= want.0.escape & !((want.0.backslash << 1) | 1);
            assert_eq!(plain, want, "plain on {block:?}");
            #[cfg(target_arch = "x86_64")]
            {
                assert_eq!(
                    (classify_sse2(block), numbers_sse2(block)),
                    ((want.0, want.1), want.2),
                    "sse2 on {block:?}"
                );
                if Avx2::detect() {
                    let avx2 = Avx2(());
                    let got = (avx2.strings(block), avx2.structure(block), avx2.numbers(block));
                    assert_eq!(got, want, "avx2 on {block:?}");
                }
            }
            assert_eq!(want.0.quote.count_ones() as usize, block.iter().filter(|&&b| b == b'"').count());
        }
    }

    /// The scalar check on bits gives what the plain one does, on every short text over
    /// the characters of numbers and literals, and on random longer ones, at every offset.
    #[test]
    fn scalars_agree() {
        const CHARS: &[u8] = b"01-+.eE9tx";
        let mut texts: Vec<Vec<u8>> = vec![b"true".to_vec(), b"false".to_vec(), b"null".to_vec(), b"nul".to_vec()];
        let mut level = vec![Vec::new()];
        for _ in 0..5 {
            level = level
                .iter()
                .flat_map(|t: &Vec<u8>| CHARS.iter().map(move |&c| [t.as_slice(), &[c]].concat()))
                .collect();
            texts.extend(level.iter().cloned());
        }
        let mut x = 7u64;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as usize
        };
        for _ in 0..100_000 {
            let len = 1 + next() % 40;
            let digits = next() % 2 == 0;
            texts.push(
                (0..len)
                    .map(|_| if digits { b"0123456789"[next() % 10] } else { b"0123456789-+.eE"[next() % 15] })
                    .collect(),
            );
        }
        for (n, text) in texts.iter().enumerate() {
            let want = literal_or_number(text);
            // At some offset in a block, followed by a comma and more bytes.
            let at = n % (64 - text.len().min(63));
            let mut line = vec![b'9'; at];
            line.extend_from_slice(text);
            line.extend_from_slice(b",12345678");
            line.resize(line.len().max(64), b'1');
            let block: &[u8; 64] = line[..64].try_into().unwrap();
            let v = Validator::new(&line);
            let len = if at + text.len() < 64 { text.len() as u32 } else { 64 };
            let check = |kinds: NumberKinds| v.scalar(at, len, kinds.from(at as u32), Plain);
            assert_eq!(check(classify_plain(block).2), want, "{:?}", String::from_utf8_lossy(text));
        }
    }

    /// Numbers and literals, valid and not, at every offset of a block, alone and among
    /// others, checked by the whole-block path and the one-by-one one.
    #[test]
    fn scalars_at_every_offset() {
        let texts = [
            "0",
            "-0",
            "7",
            "12",
            "-12",
            "01",
            "-01",
            "00",
            "1.5",
            "0.5",
            "-0.5",
            "1.",
            ".5",
            "1..5",
            "1.5.5",
            "1.5e3",
            "1e5",
            "1E+5",
            "1e-5",
            "1e",
            "1e+",
            "-",
            "--1",
            "1-2",
            "+1",
            "1+",
            "true",
            "false",
            "null",
            "tru",
            "nul",
            "truex",
            "1a",
            "1\"",
            "12345678901234567890123456789",
            "0.00309875",
            "1764928053158",
            "1.7976931348623159e308",
        ];
        for text in texts {
            for pad in 0..70 {
                let before = "1,".repeat(pad / 2) + &" ".repeat(pad % 2);
                agrees(format!("[{before}{text}]").as_bytes());
                agrees(format!("[{before}{text},{text}]").as_bytes());
                agrees(format!("{{\"{}\":{text}}}", "k".repeat(pad)).as_bytes());
            }
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
