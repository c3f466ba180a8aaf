//! A code LLM as the neural debugger, prompted in context.
//!
//! Qwen2.5-Coder has never seen the trace language, so the prompt teaches it: a short
//! description, three worked examples written by the real tracer (calls and returns;
//! a breakpoint, `continue` and an exception; a trajectory written backwards), then the
//! program and its states so far. The answer is decoded under the same grammar and
//! bounds as the from-scratch model's ([`decode_state_line`]), so every finished answer
//! parses and names only lines, frames and variables the program can have.
//!
//! A debugging session or an evaluation walks a trajectory forward, so each prompt
//! extends the one before: the key-value cache of the last prompt is kept, and only the
//! new states are read.

use std::path::{Path, PathBuf};

use candle_core::Device;
use replayground_llm::catalogue::{self, CATALOGUE, CataloguedModel};
use replayground_llm::model::KvCache;
use replayground_llm::{ChatMessage, LocalLlm, PREFILL_CHUNK, chat_prompt};
use replayground_shared::Action;
use replayground_shared::trace_lang::{self, Trajectory};
use tokenizers::Tokenizer;

use super::infer::{
    AddedTokens, Engine, Guide, Prediction, PromptFrame, Sampling, decode_state_line, fitted_prompt, numbered_listing,
    token_bytes,
};

/// Prompts longer than this lose their earliest states: reading a long prompt costs
/// more on a CPU than the few states it would add are worth.
pub const DEFAULT_MAX_PROMPT_TOKENS: usize = 3_072;

const SYSTEM: &str = "You are a Python debugger. You predict exactly what the program's state \
is after each debugger action, in the trace language.";

const INSTRUCTIONS: &str = "The trace language writes a program between <|code|> and \
<|end_code|>, then one state per line, each followed by the debugger action that leads to the \
next state.\n\
A state line is `<|event|>LINE DEPTH FUNCTION <|vars|>{JSON}` where event is call, line \
(about to run LINE), return or exception; DEPTH counts the program's frames below this one (0 \
at module level); the JSON maps each local variable (the globals at module level) to its \
repr, and a value that equals the previous state's of the same frame is written \"..\". \
return and exception states end with ` <|value|>\"REPR\"`: the returned value or the \
exception. <|end|> means the program has finished.\n\
Actions: <|step_into|> (pdb step), <|step_over|> (pdb next), <|step_return|> (run until the \
frame returns), <|breakpoint|>N (break at line N, then continue), <|continue|> (to the next \
breakpoint). After <|inverse|>, the states run backwards and reverse actions lead to the \
previous state.\n\
Three traces written by the real tracer:";

pub(crate) const EXAMPLES: [&str; 3] = [
    include_str!("examples/forward.trace"),
    include_str!("examples/breakpoint.trace"),
    include_str!("examples/inverse.trace"),
];

/// The chat turns before the trajectory: the assistant's answer is the trajectory.
fn header() -> String {
    let mut user = INSTRUCTIONS.to_owned();
    for example in EXAMPLES {
        let code = trace_lang::parse(example).map(|t| t.code).unwrap_or_default();
        user.push_str("\n\n");
        user.push_str(&numbered_listing(&code));
        user.push_str(example.trim_end());
    }
    user.push_str("\n\nNow write the next trace, one state after each action.");
    chat_prompt(&[ChatMessage::system(SYSTEM), ChatMessage::user(user)])
}

/// A GGUF code LLM, prompted with the trace language.
pub struct InContextDebugger {
    llm: LocalLlm,
    token_bytes: Vec<Vec<u8>>,
    header: String,
    max_prompt_tokens: usize,
    /// The header alone, read once: every prompt starts with it.
    header_read: Option<Read>,
    /// The last prompt read, the cache holding exactly it, and the logits after it.
    read: Option<Read>,
}

struct Read {
    ids: Vec<u32>,
    cache: KvCache,
    logits: Vec<f32>,
}

impl InContextDebugger {
    /// Loads a GGUF file (weights on `device`).
    pub fn load(path: &Path, device: &Device) -> anyhow::Result<Self> {
        Ok(Self::new(LocalLlm::load(path, device)?))
    }

    /// Wraps a loaded model (shared with its other users: the weights are not copied).
    pub fn new(llm: LocalLlm) -> Self {
        let token_bytes = token_bytes(llm.tokenizer(), AddedTokens::Refused);
        Self {
            llm,
            token_bytes,
            header: header(),
            max_prompt_tokens: DEFAULT_MAX_PROMPT_TOKENS,
            header_read: None,
            read: None,
        }
    }

    /// Sets the longest prompt read (at least 512 tokens).
    #[must_use]
    pub fn with_max_prompt_tokens(mut self, tokens: usize) -> Self {
        self.max_prompt_tokens = tokens.max(512);
        self
    }

    /// The logits after `ids`, reading only what the last prompt (or the header, for a
    /// new program) did not hold.
    fn read_prompt(&mut self, ids: &[u32]) -> anyhow::Result<(KvCache, Vec<f32>)> {
        if let Some(read) = &self.read
            && read.ids == ids
        {
            return Ok((read.cache.clone(), read.logits.clone()));
        }
        if self.header_read.is_none() {
            let header = self.llm.encode(&self.header)?;
            if ids.starts_with(&header) {
                self.header_read = Some(self.extend(None, &header)?);
            }
        }
        let last = self.read.take().filter(|r| ids.starts_with(&r.ids));
        let start = last.or_else(|| {
            self.header_read
                .as_ref()
                .filter(|h| ids.starts_with(&h.ids))
                .map(|h| Read {
                    ids: h.ids.clone(),
                    cache: h.cache.clone(),
                    logits: h.logits.clone(),
                })
        });
        let read = self.extend(start, ids)?;
        let answer = (read.cache.clone(), read.logits.clone());
        self.read = Some(read);
        Ok(answer)
    }

    /// `start` (a prefix of `ids` already read, or nothing) extended to all of `ids`.
    fn extend(&self, start: Option<Read>, ids: &[u32]) -> anyhow::Result<Read> {
        let model = self.llm.model();
        let Read {
            mut cache,
            mut logits,
            ids: done,
        } = start.unwrap_or_else(|| Read {
            ids: Vec::new(),
            cache: model.new_cache(),
            logits: Vec::new(),
        });
        for chunk in ids[done.len()..].chunks(PREFILL_CHUNK) {
            logits = model.forward(chunk, &mut cache)?.flatten_all()?.to_vec1::<f32>()?;
        }
        Ok(Read {
            ids: ids.to_vec(),
            cache,
            logits,
        })
    }
}

impl Engine for InContextDebugger {
    fn name(&self) -> String {
        format!("{} (in context)", self.llm.name())
    }

    fn count_tokens(&self, text: &str) -> anyhow::Result<usize> {
        Ok(self.llm.encode(text)?.len())
    }

    fn tokenizer(&self) -> &Tokenizer {
        self.llm.tokenizer()
    }

    fn frame(&self) -> PromptFrame {
        PromptFrame {
            header: self.header.clone(),
            listing: true,
        }
    }

    fn context(&self) -> usize {
        // The prompt is capped at `max_prompt_tokens`; the answer needs room after it.
        (self.max_prompt_tokens + 512).min(self.llm.model().hparams.context_length)
    }

    fn prompt(&self, prefix: &Trajectory, action: Action, _sampling: &Sampling) -> anyhow::Result<String> {
        let preamble = self.frame().preamble(&prefix.code);
        fitted_prompt(prefix, action, &preamble, self.max_prompt_tokens, &|text| {
            self.count_tokens(text)
        })
    }

    fn predict(
        &mut self,
        prompt: &str,
        guide: &Guide<'_>,
        sampling: &Sampling,
        on_text: &mut dyn FnMut(&str),
    ) -> anyhow::Result<Prediction> {
        let ids = self.llm.encode(prompt)?;
        let context = self.llm.model().hparams.context_length;
        anyhow::ensure!(
            ids.len() < context,
            "the prompt takes {} tokens; {} holds {context}",
            ids.len(),
            self.llm.name()
        );
        let budget = sampling.max_tokens.min(context - ids.len());
        let (mut cache, first) = self.read_prompt(&ids)?;
        let model = self.llm.model();
        decode_state_line(
            first,
            &mut |token| Ok(model.forward(&[token], &mut cache)?.flatten_all()?.to_vec1::<f32>()?),
            &self.token_bytes,
            guide,
            sampling,
            budget,
            on_text,
        )
    }
}

/// Where the catalogued model `id` (`qwen-0.5b`, `qwen-1.5b`) is installed, or how to install it.
pub fn locate(id: &str) -> anyhow::Result<PathBuf> {
    let model: &CataloguedModel = CATALOGUE.iter().find(|m| m.id == id).ok_or_else(|| {
        let known: Vec<&str> = CATALOGUE.iter().map(|m| m.id).collect();
        anyhow::anyhow!("no catalogued model `{id}` (known: {})", known.join(", "))
    })?;
    let root = std::env::current_dir().unwrap_or_default();
    catalogue::locate(model, &root).ok_or_else(|| {
        anyhow::anyhow!(
            "{} is not installed: run `cargo xtask setup --with {}`",
            model.name,
            model.id
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worked_examples_are_valid_trace_language() {
        for example in EXAMPLES {
            let trajectory = trace_lang::parse(example).unwrap_or_else(|e| panic!("{e}\n{example}"));
            assert!(trajectory.steps.len() >= 5, "{example}");
        }
        let header = header();
        assert!(header.ends_with("<|im_start|>assistant\n"), "{header}");
        assert!(header.contains("<|inverse|>\n<|line|>3 1 add_all"));
        assert!(header.contains("  3|     for n in nums:\n"), "{header}");
    }
}
