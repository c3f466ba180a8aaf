//! The shape every repr the tracer writes has, for programs whose objects all print
//! like the standard library's: one value (a string, a number, a bracketed display, a
//! `<...>` object, a keyword such as `None`, or a name called or indexed, such as
//! `Counter({'a': 1})`), its brackets and quotes balanced, nothing after it but more
//! values joined by ` | ` (a type union), unless the repr was cut (it then ends in
//! `...`). So `hello` (a string without its quotes) or `[1], [2]` are refused.
//!
//! Checked a byte at a time on the repr itself (the caller undoes the JSON escapes).
//! The tracer writes non-ASCII characters as they are, so a JSON escape other than `\\`
//! and `\"` is a control character, which no such repr holds. A name may hold any
//! letters (UTF-8 bytes are compared as they are).

/// The names a repr can be on their own.
const KEYWORDS: [&[u8]; 7] = [
    b"True",
    b"False",
    b"None",
    b"Ellipsis",
    b"NotImplemented",
    b"inf",
    b"nan",
];

/// Names a repr of a builtin or standard object can start with where the program's text
/// may not write them (`dict_keys([1])`, `PosixPath('a')`, `JSONDecodeError('...')`);
/// besides these, a repr starts only with a name the text writes (its classes, the
/// modules and classes it imports) or a keyword.
pub(super) const REPR_NAMES: [&str; 107] = [
    "True",
    "False",
    "None",
    "Ellipsis",
    "NotImplemented",
    "inf",
    "nan",
    "b",
    "rb",
    "br",
    "set",
    "frozenset",
    "range",
    "slice",
    "bytearray",
    "dict_keys",
    "dict_values",
    "dict_items",
    "odict_keys",
    "odict_values",
    "odict_items",
    "mappingproxy",
    "namespace",
    "array",
    "deque",
    "Counter",
    "OrderedDict",
    "defaultdict",
    "ChainMap",
    "Decimal",
    "Fraction",
    "Context",
    // A dataclass's class attribute made by `field(...)`.
    "Field",
    "PosixPath",
    "PurePosixPath",
    "UUID",
    "datetime",
    "functools",
    "operator",
    "re",
    "sys",
    "os",
    "time",
    "collections",
    "typing",
    "environ",
    "count",
    "repeat",
    "error",
    "JSONDecodeError",
    "StatisticsError",
    "InvalidOperation",
    "DivisionByZero",
    "Empty",
    "Full",
    "BaseException",
    "Exception",
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BlockingIOError",
    "BrokenPipeError",
    "BufferError",
    "ConnectionError",
    "EOFError",
    "FileExistsError",
    "FileNotFoundError",
    "FloatingPointError",
    "GeneratorExit",
    "ImportError",
    "IndentationError",
    "IndexError",
    "InterruptedError",
    "IsADirectoryError",
    "KeyError",
    "KeyboardInterrupt",
    "LookupError",
    "MemoryError",
    "ModuleNotFoundError",
    "NameError",
    "NotADirectoryError",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "PermissionError",
    "RecursionError",
    "ReferenceError",
    "RuntimeError",
    "StopAsyncIteration",
    "StopIteration",
    "SyntaxError",
    "SystemError",
    "SystemExit",
    "TimeoutError",
    "TypeError",
    "UnboundLocalError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeError",
    "ValueError",
    "ZeroDivisionError",
    "Warning",
    "UserWarning",
    "DeprecationWarning",
    "RuntimeWarning",
    "ExceptionGroup",
    "_Feature",
];

/// Where the check is in the repr's top level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Top {
    Start,
    /// `.` or `..`: only the unchanged marker `..` starts so.
    Dots(u8),
    Number,
    /// A name (dotted), kept in [`ReprShape::word`].
    Word,
    /// Inside brackets (or a string) opened at the top level.
    Open,
    /// One whole value: only ` | ` and another may follow.
    Done,
    /// ` ` or ` |` of a ` | ` written so far.
    Bar(u8),
    /// A byte it cannot read: no more checks.
    Off,
}

/// An incremental check of a repr's shape.
#[derive(Debug, Clone)]
pub(super) struct ReprShape<'w> {
    /// The names a repr may start with, sorted.
    words: &'w [String],
    top: Top,
    /// The closers due, innermost last (`>` for a `<...>` object, inside which only
    /// quotes and `<`/`>` count).
    closers: Vec<u8>,
    /// The open string's quote, and whether a backslash escapes the next byte.
    string: Option<(u8, bool)>,
    word: Vec<u8>,
    /// The last three bytes: `...` marks a cut.
    last: [u8; 3],
    /// Inside a list, dict or set display: 1 right after a `,`, 2 after `, `. Their reprs
    /// put a space and an item after every comma outside a string (a call-like repr
    /// may not: `Field(name=None,type=None,...)`).
    comma: u8,
    unchanged: bool,
}

impl<'w> ReprShape<'w> {
    /// A check against `words` (sorted), or none at all (`None`); `unchanged`: whether the
    /// unchanged marker `..` may be written (else a `.` cannot start the value).
    pub(super) fn new(words: Option<&'w [String]>, unchanged: bool) -> Self {
        Self {
            unchanged,
            words: words.unwrap_or_default(),
            top: if words.is_some() { Top::Start } else { Top::Off },
            closers: Vec::new(),
            string: None,
            word: Vec::new(),
            last: [0; 3],
            comma: 0,
        }
    }

    /// Reads a JSON escape other than `\\` and `\"` (`\n`, `\u0001`): a control
    /// character, which no repr the check applies to holds (a string's repr escapes
    /// them itself), so it is refused unless nothing is checked.
    pub(super) fn control(&self) -> bool {
        self.top == Top::Off
    }

    /// Reads one byte of the repr; false when no repr the tracer writes goes on so.
    pub(super) fn feed(&mut self, c: u8) -> bool {
        self.last = [self.last[1], self.last[2], c];
        if self.top == Top::Off {
            return true;
        }
        if let Some((quote, escaped)) = self.string {
            self.string = if escaped {
                Some((quote, false))
            } else if c == b'\\' {
                Some((quote, true))
            } else if c == quote {
                None
            } else {
                Some((quote, false))
            };
            if self.string.is_none() && self.closers.is_empty() {
                self.top = Top::Done;
            }
            return true;
        }
        match self.top {
            Top::Start => self.start(c),
            Top::Dots(n) => {
                self.top = Top::Dots(n + 1);
                c == b'.' && n < 2
            }
            Top::Number => {
                self.word.push(c);
                number(&self.word).is_some()
            }
            Top::Word => {
                // A dotted name's parts are names: none empty, none starting with a digit.
                let after_dot = self.word.last() == Some(&b'.');
                let named = self.first_name(true) && !after_dot;
                if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 {
                    self.word.push(c);
                    !(after_dot && c.is_ascii_digit()) && self.first_name(false)
                } else if c == b'.' {
                    self.word.push(c);
                    named
                } else if matches!(c, b'(' | b'[' | b'{') {
                    named && self.open(c)
                } else if matches!(c, b'\'' | b'"') {
                    // Bytes: `b'..'`.
                    self.string = Some((c, false));
                    matches!(self.word.as_slice(), b"b" | b"rb" | b"br")
                } else if c == b' ' {
                    self.top = Top::Bar(0);
                    named
                } else {
                    false
                }
            }
            Top::Open => self.inside(c),
            Top::Done => {
                self.top = Top::Bar(0);
                c == b' '
            }
            Top::Bar(0) => {
                self.top = Top::Bar(1);
                c == b'|'
            }
            Top::Bar(_) => {
                self.top = Top::Start;
                c == b' '
            }
            Top::Off => true,
        }
    }

    fn start(&mut self, c: u8) -> bool {
        match c {
            b'\'' | b'"' => {
                self.string = Some((c, false));
                self.top = Top::Open;
                true
            }
            b'.' => {
                self.top = Top::Dots(1);
                self.unchanged
            }
            b'0'..=b'9' | b'-' => {
                self.word = vec![c];
                self.top = Top::Number;
                true
            }
            b'(' | b'[' | b'{' | b'<' => self.open(c),
            _ if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                self.word = vec![c];
                self.top = Top::Word;
                self.first_name(false)
            }
            _ => false,
        }
    }

    /// Whether the name the repr starts with (up to a `.`) is one of the words, or
    /// (`!whole`, while it is being written) can still become one.
    fn first_name(&self, whole: bool) -> bool {
        let name = self.word.split(|&c| c == b'.').next().unwrap_or_default();
        if self.word.contains(&b'.') || whole {
            return self.words.binary_search_by(|w| w.as_bytes().cmp(name)).is_ok();
        }
        let at = self.words.partition_point(|w| w.as_bytes() < name);
        self.words.get(at).is_some_and(|w| w.as_bytes().starts_with(name))
    }

    fn open(&mut self, c: u8) -> bool {
        self.closers.push(match c {
            b'(' => b')',
            b'[' => b']',
            b'{' => b'}',
            _ => b'>',
        });
        self.top = Top::Open;
        true
    }

    /// A byte inside brackets, outside any string.
    fn inside(&mut self, c: u8) -> bool {
        let in_object = self.closers.last() == Some(&b'>');
        let comma = std::mem::take(&mut self.comma);
        if matches!(self.closers.last(), Some(b']' | b'}')) {
            let fits = match comma {
                // A cut may come anywhere: `[1, 2,...`.
                1 => matches!(c, b' ' | b'.'),
                2 => !matches!(c, b' ' | b',' | b')' | b']' | b'}'),
                _ => true,
            };
            if !fits {
                return false;
            }
            self.comma = match c {
                b',' => 1,
                b' ' if comma == 1 => 2,
                _ => 0,
            };
        }
        match c {
            b'\'' | b'"' => self.string = Some((c, false)),
            b'<' => self.closers.push(b'>'),
            b'(' | b'[' | b'{' if !in_object => return self.open(c),
            b')' | b']' | b'}' | b'>' if !in_object || c == b'>' => {
                if self.closers.pop() != Some(c) {
                    return false;
                }
                if self.closers.is_empty() {
                    self.top = Top::Done;
                }
            }
            _ => {}
        }
        true
    }

    /// A lower bound on the characters that can complete the repr from here: its open
    /// string's quote, its closers, what a started ` | ` or `.` needs. Never more than
    /// the truth, so a repr that ends in time is never refused for its length.
    pub(super) fn fewest_to_complete(&self) -> usize {
        if self.top == Top::Off {
            return 0;
        }
        let top = match self.top {
            Top::Start | Top::Dots(1) => 1,
            Top::Bar(0) => 3,
            Top::Bar(_) => 2,
            // A name is whole only as a keyword; any other takes brackets after it.
            Top::Word if self.string.is_none() && !KEYWORDS.contains(&self.word.as_slice()) => KEYWORDS
                .iter()
                .filter_map(|k| k.strip_prefix(self.word.as_slice()))
                .map(<[u8]>::len)
                .fold(2, usize::min),
            _ => 0,
        };
        usize::from(self.string.is_some()) + self.closers.len() + top
    }

    /// Whether the repr may end here: one whole value (or more joined by ` | `), the
    /// unchanged marker, or a cut.
    pub(super) fn complete(&self) -> bool {
        let cut = self.last == *b"...";
        cut || match self.top {
            Top::Number => number(&self.word) == Some(true),
            Top::Done | Top::Off => true,
            Top::Dots(n) => n == 2,
            Top::Word => KEYWORDS.contains(&self.word.as_slice()),
            Top::Start | Top::Open | Top::Bar(_) => false,
        }
    }
}

/// Whether `word` starts the repr of an `int`, a `float` or an imaginary `complex`
/// (`-12`, `0.5`, `1e-05`, `-inf`, `2j`), or such a repr cut (`1234...`): `None` when no
/// such repr starts so, else whether it can end here. No number's repr has a leading
/// zero, an underscore, or a sign but after the `e` of its exponent.
fn number(word: &[u8]) -> Option<bool> {
    #[derive(Clone, Copy)]
    enum At {
        Sign,
        Int,
        Point,
        Fraction,
        E,
        ExponentSign,
        Exponent,
        Imaginary,
        /// `inf` or `nan`: the letters read so far.
        Letters(&'static [u8], usize),
        /// The dots of a cut read so far.
        Cut(u8),
    }
    let mut at = At::Sign;
    let mut zero = false;
    for (i, &c) in word.iter().enumerate() {
        at = match (at, c) {
            (At::Sign, b'-') if i == 0 => At::Sign,
            (At::Sign, b'0'..=b'9') => {
                zero = c == b'0';
                At::Int
            }
            (At::Sign, b'i') => At::Letters(b"inf", 1),
            (At::Sign, b'n') => At::Letters(b"nan", 1),
            (At::Letters(w, n), _) if n < w.len() && w[n] == c => At::Letters(w, n + 1),
            (At::Int, b'0'..=b'9') if !zero => At::Int,
            (At::Int, b'.') => At::Point,
            (At::Point | At::Fraction, b'0'..=b'9') => At::Fraction,
            (At::Point, b'.') => At::Cut(2),
            (At::Int | At::Fraction, b'e') if !zero || matches!(at, At::Fraction) => At::E,
            (At::E, b'+' | b'-') => At::ExponentSign,
            (At::ExponentSign | At::Exponent, b'0'..=b'9') => At::Exponent,
            (At::Int | At::Fraction | At::Exponent, b'j') => At::Imaginary,
            (At::Letters(w, n), b'j') if n == w.len() => At::Imaginary,
            (At::Fraction | At::Exponent, b'.') => At::Cut(1),
            (At::Cut(n), b'.') if n < 3 => At::Cut(n + 1),
            _ => return None,
        };
    }
    Some(match at {
        At::Int | At::Fraction | At::Exponent | At::Imaginary => true,
        At::Letters(w, n) => n == w.len(),
        At::Cut(n) => n == 3,
        At::Sign | At::Point | At::E | At::ExponentSign => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words() -> &'static [String] {
        static WORDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        WORDS.get_or_init(|| {
            let mut words: Vec<String> = REPR_NAMES.iter().map(|w| (*w).to_owned()).collect();
            words.extend(["Größe".to_owned(), "List".to_owned(), "int".to_owned()]);
            words.sort();
            words
        })
    }

    fn shape(repr: &str) -> Option<ReprShape<'static>> {
        let mut shape = ReprShape::new(Some(words()), true);
        repr.bytes().all(|c| shape.feed(c)).then_some(shape)
    }

    fn whole(repr: &str) -> bool {
        shape(repr).is_some_and(|s| s.complete())
    }

    #[test]
    fn the_standard_librarys_reprs_have_the_shape() {
        for repr in [
            "\"it's\"",
            "'a\\'b'",
            "-12",
            "1e-05",
            "-inf",
            "(1+2j)",
            "[1, [2, (3,)], {'a': {4}}]",
            "{'k': '}'}",
            "None",
            "True",
            "Counter({'a': 2})",
            "datetime.date(2024, 1, 2)",
            "b'\\x00'",
            "<function f>",
            "<class '__main__.Book'>",
            "[<function <lambda>>, <re.Match object; span=(0, 1), match='>'>]",
            "defaultdict(<class 'list'>, {})",
            "typing.List[int]",
            "int | None",
            "..",
            "{'a': {...}}",
            "[1, 2, 3, 4, ...",
            "[1, 2, 3, 4,...",
            "'unterminated and cut ...",
            "<repr failed: ValueError>",
        ] {
            assert!(whole(repr), "{repr}");
        }
    }

    #[test]
    fn what_no_repr_looks_like_is_refused() {
        assert!(shape("hello world").is_none(), "a string without its quotes");
        assert!(!whole("hello"), "a bare name that is no keyword");
        assert!(shape("[4, 1], [4, 1]").is_none(), "two values");
        assert!(shape("[1, 2)").is_none(), "a bracket closed by another");
        assert!(!whole("[1, 2"), "left open without a cut");
        assert!(!whole("'abc"));
        assert!(!whole(""));
        assert!(shape("...x").is_none());
        assert!(shape(" 1").is_none());
        assert!(shape("x'a'").is_none(), "only bytes put a quote after a name");
        assert!(shape("h").is_none(), "no name the text writes starts so");
        assert!(shape("Coun").is_some() && shape("Counter.x(").is_some());
        assert!(shape("Countess(").is_none());
        assert!(
            shape("Counter..").is_none() && shape("Counter.(").is_none(),
            "an empty part"
        );
        assert!(shape("Counter.1").is_none(), "a part starting with a digit");
        assert!(shape("Counter.a1.b_(").is_some());
        assert!(shape("00").is_none() && shape("-01").is_none(), "a leading zero");
        for number in [
            "0", "0.5", "-0.0", "0j", "10", "-3", "1e-05", "-inf", "1e+16", "1.5e+16", "-2j", "1.5e-07j", "-infj",
            "12345...", "0.123...",
        ] {
            assert!(whole(number), "{number}");
        }
        for made_up in ["3+4+2x", "1_000", "12abc", "1.2.3", "1e5", "0x1f", "1-2", "--1", "-nat"] {
            assert!(!whole(made_up), "{made_up}");
        }
        assert!(!whole("1e") && !whole("-") && !whole("1."), "not finished");
        for made_up in ["[None, ]", "[1,2]", "{1,}", "[1,  2]", "[1, , 2]", "{'a': 1, }"] {
            assert!(shape(made_up).is_none(), "{made_up}");
        }
        for real in [
            "(1,)",
            "[(1,), (2,)]",
            "<Pair [1,2]>",
            "['a,b', 'c, ]']",
            "Counter(a=[1, 2], b=(3,))",
            "Counter(a=1,b=2)",
        ] {
            assert!(shape(real).is_some(), "{real}");
        }
    }

    #[test]
    fn a_name_may_be_any_letters_the_text_writes_and_no_check_reads_anything() {
        assert!(whole("Größe(1)"), "a name the text writes, in any script");
        assert!(shape("Grö").is_some() && shape("Grü").is_none());
        assert!(shape(".é").is_none() && shape("1é").is_none());
        assert!(whole("['é']"), "anything inside a string");
        let mut t = ReprShape::new(None, false);
        assert!(t.feed(b',') && t.complete());
    }

    #[test]
    fn a_name_needs_brackets_unless_it_is_a_keyword() {
        let fewest = |repr: &str| shape(repr).map(|s| s.fewest_to_complete());
        assert_eq!(fewest("None"), Some(0));
        assert_eq!(fewest("Non"), Some(1));
        assert_eq!(fewest("N"), Some(2), "`N()` is shorter than `None`");
        assert_eq!(fewest("namespace.day"), Some(2));
        assert_eq!(fewest("b'x"), Some(1));
        assert_eq!(fewest("[1, 'a"), Some(2));
    }
}
