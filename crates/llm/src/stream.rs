//! Turns generated token ids into text pieces as soon as they are whole characters.
//!
//! A byte-level BPE token can end in the middle of a UTF-8 character (an emoji is often
//! three tokens), so each piece is the difference between decoding a short window of
//! tokens with and without the newest one, sent only when it ends on a whole character.

use tokenizers::Tokenizer;

use crate::error::{LlmError, Result};

pub struct TokenStream<'t> {
    tokenizer: &'t Tokenizer,
    tokens: Vec<u32>,
    /// Start of the window decoded for context (the last piece sent began here).
    window: usize,
    /// First token whose text has not been sent yet.
    unsent: usize,
}

impl<'t> TokenStream<'t> {
    pub fn new(tokenizer: &'t Tokenizer) -> Self {
        Self {
            tokenizer,
            tokens: Vec::new(),
            window: 0,
            unsent: 0,
        }
    }

    fn decode(&self, tokens: &[u32]) -> Result<String> {
        self.tokenizer
            .decode(tokens, true)
            .map_err(|e| LlmError::Tokenizer(e.to_string()))
    }

    /// Adds a token; returns the text it completes, if any.
    pub fn push(&mut self, token: u32) -> Result<Option<String>> {
        let before = self.decode(&self.tokens[self.window..self.unsent])?;
        self.tokens.push(token);
        let after = self.decode(&self.tokens[self.window..])?;
        if after.len() > before.len() && !after.ends_with('\u{fffd}') && after.is_char_boundary(before.len()) {
            self.window = self.unsent;
            self.unsent = self.tokens.len();
            return Ok(Some(after[before.len()..].to_owned()));
        }
        Ok(None)
    }

    /// The text of tokens not sent yet (an unfinished character comes out as U+FFFD).
    pub fn finish(&mut self) -> Result<Option<String>> {
        let before = self.decode(&self.tokens[self.window..self.unsent])?;
        let after = self.decode(&self.tokens[self.window..])?;
        self.window = self.unsent;
        self.unsent = self.tokens.len();
        Ok((after.len() > before.len() && after.is_char_boundary(before.len()))
            .then(|| after[before.len()..].to_owned()))
    }

    /// Every token pushed so far.
    pub fn tokens(&self) -> &[u32] {
        &self.tokens
    }
}
