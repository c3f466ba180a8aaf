//! A repr's text as the tracer writes it into a state: valid UTF-8 (JSON-escaped), at
//! most [`STATE_REPR_CHARS`] characters, and, when longer, cut to that many with `...`
//! as the last three (`cut_repr`).
//!
//! Without these checks a model could write continuation bytes for ever (they started
//! no character, so no count reached the cut) or reach the cut in the middle of a list
//! with nothing left that may follow; both ran answers into the token budget.

use replayground_shared::state::STATE_REPR_CHARS;

use super::repr_shape::ReprShape;

/// The first character a cut repr's `...` can take (1-based).
const CUT_START: usize = STATE_REPR_CHARS - 2;

/// Where a repr's JSON text is in its characters.
#[derive(Debug, Clone, Default)]
pub(super) struct ReprText {
    /// Characters so far (an escape and a multi-byte character count once).
    chars: usize,
    /// Hex digits of a `\u` escape still to come.
    hex_left: u8,
    /// Continuation bytes of a UTF-8 character still to come.
    utf8_left: u8,
    /// Whether every character from [`CUT_START`] on so far is a `.` (a cut being written).
    dots: bool,
}

impl ReprText {
    /// Whether the string may close here: no character is half written.
    pub(super) fn closable(&self) -> bool {
        self.hex_left == 0 && self.utf8_left == 0
    }

    /// Whether the next byte is one of a `\u` escape's hex digits.
    pub(super) fn in_hex_escape(&self) -> bool {
        self.hex_left > 0
    }

    /// Reads one byte of the JSON string's contents (`escaped`: a backslash is before it)
    /// after `shape` has read it (`shaped`: whether the shape admitted it). False where no
    /// text the tracer writes goes on so.
    pub(super) fn byte(&mut self, b: u8, escaped: bool, shape: &ReprShape<'_>, shaped: bool) -> bool {
        if self.utf8_left > 0 {
            self.utf8_left -= 1;
            return (0x80..0xC0).contains(&b) && shaped;
        }
        if self.hex_left > 0 {
            self.hex_left -= 1;
            return shaped;
        }
        if escaped {
            if b == b'u' {
                self.hex_left = 4;
            }
            return shaped;
        }
        self.utf8_left = match b {
            0x00..0x80 => 0,
            0xC2..=0xDF => 1,
            0xE0..=0xEF => 2,
            0xF0..=0xF4 => 3,
            // A continuation byte where no character began, or no UTF-8 lead byte.
            _ => return false,
        };
        // A new character.
        if self.chars == STATE_REPR_CHARS {
            return false;
        }
        self.chars += 1;
        let at = self.chars;
        // The last characters: the cut's `...`, or what ends the repr in time (an
        // escape's backslash was checked with what it escapes, [`ReprText::backslash`]).
        self.dots = at >= CUT_START && b == b'.' && (at == CUT_START || self.dots);
        if at < CUT_START || b == b'\\' {
            return shaped;
        }
        self.dots || (shaped && shape.fewest_to_complete() <= STATE_REPR_CHARS - at)
    }

    /// Whether a backslash (an escape's start, not yet read by the shape) may come: the
    /// escaped `\\` or `\"` it starts must fit the repr's shape and its length.
    pub(super) fn backslash(&self, shape: &ReprShape<'_>) -> bool {
        let at = self.chars + 1;
        let fits = |escaped: u8| {
            let mut shape = shape.clone();
            shape.feed(escaped) && (at < CUT_START || shape.fewest_to_complete() <= STATE_REPR_CHARS - at)
        };
        self.closable() && at <= STATE_REPR_CHARS && (fits(b'\\') || fits(b'"'))
    }
}
