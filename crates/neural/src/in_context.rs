//! A code LLM as the neural debugger, prompted in context.
//!
//! Qwen2.5-Coder has never seen the trace language, so the prompt teaches it: a short
//! description, five worked examples written by the real tracer (calls and returns;
//! `step_return` from a call, over a comprehension's frame, to the `return` line with
//! every local's final value; a breakpoint, `continue` and an exception; a trajectory
//! written backwards; imports, a class body, `__init__` and a generator's yield and
//! resume), then the program and its states so far. The answer is decoded under the same grammar and
//! bounds as the from-scratch model's ([`decode_state_line`]), so every finished answer
//! parses and names only lines, frames and variables the program can have.
//!
//! A debugging session or an evaluation walks a trajectory forward, so each prompt
//! extends the one before: the key-value caches of the last prompts are kept
//! ([`PromptCache`]), and only the new states are read.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use candle_core::Device;
use replayground_llm::catalogue::{self, CATALOGUE, CataloguedModel};
use replayground_llm::model::{KvCache, Qwen2};
use replayground_llm::{ChatMessage, LocalLlm, PromptCache, chat_prompt};
use replayground_shared::Action;
use replayground_shared::trace_lang::{self, Trajectory};
use tokenizers::Tokenizer;

use super::infer::{
    AddedTokens, Engine, Guide, Prediction, PromptFrame, Reader, Sampling, decode_state_line, fitted_prompt,
    numbered_listing, token_bytes,
};

/// Trajectories (the program, its states so far and the action) longer than this lose
/// their earliest states: reading a long trajectory costs more on a CPU than the few states
/// it would add are worth. The header before it (instructions and worked examples) does
/// not count: it is read once and kept ([`Engine::warm_up`]), however long it grows.
pub const DEFAULT_MAX_TRAJECTORY_TOKENS: usize = 1_024;

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
frame returns; from the module, to the end of the program: the module returns at the last \
statement it runs, with every global), <|breakpoint|>N (break at line N, then continue), \
<|continue|> (to the next breakpoint), <|jump|>N (straight to the run's event number N: 0 \
is the module's call, 1 its first line, and every line, call, return and exception after \
that counts one). After <|inverse|>, the states run backwards and reverse actions lead to \
the previous state; from <|end|>, the first is the module's return.\n\
Five traces written by the real tracer:";

pub const EXAMPLES: [&str; 5] = [
    include_str!("examples/forward.trace"),
    include_str!("examples/step_return.trace"),
    include_str!("examples/breakpoint.trace"),
    include_str!("examples/inverse.trace"),
    include_str!("examples/classes.trace"),
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
    /// The header's length in tokens: the prompt's budget is this plus `max_trajectory_tokens`.
    header_tokens: usize,
    max_trajectory_tokens: usize,
    /// The last prompts read: the next one (the same program with one more state, or
    /// another program after the same header) reads only what they did not hold.
    prompts: PromptCache,
}

impl InContextDebugger {
    /// Loads a GGUF file (weights on `device`).
    pub fn load(path: &Path, device: &Device) -> anyhow::Result<Self> {
        Self::new(LocalLlm::load(path, device)?)
    }

    /// Wraps a loaded model (shared with its other users: the weights are not copied).
    pub fn new(llm: LocalLlm) -> anyhow::Result<Self> {
        let token_bytes = token_bytes(llm.tokenizer(), AddedTokens::Refused);
        let header = header();
        let header_tokens = llm.encode(&header)?.len();
        Ok(Self {
            llm,
            token_bytes,
            header,
            header_tokens,
            max_trajectory_tokens: DEFAULT_MAX_TRAJECTORY_TOKENS,
            prompts: PromptCache::new(2),
        })
    }

    /// Sets the longest trajectory read after the header (at least 256 tokens).
    #[must_use]
    pub fn with_max_trajectory_tokens(mut self, tokens: usize) -> Self {
        self.max_trajectory_tokens = tokens.max(256);
        self
    }

    /// The longest prompt read: the header and the longest trajectory.
    fn max_prompt_tokens(&self) -> usize {
        self.header_tokens + self.max_trajectory_tokens
    }

    /// The cache and logits after `ids`, reading only what the prompts before it did not hold.
    fn read_prompt(&mut self, ids: &[u32]) -> anyhow::Result<(KvCache, Vec<f32>)> {
        let started = std::time::Instant::now();
        let read = self
            .prompts
            .read(self.llm.model(), ids, &AtomicBool::new(false))?
            .expect("never cancelled");
        tracing::debug!(
            tokens = ids.len(),
            read = ids.len() - read.reused,
            seconds = started.elapsed().as_secs_f64(),
            "prompt read"
        );
        Ok((read.cache, read.logits.to_vec1::<f32>()?))
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

    fn warm_up(&mut self) -> anyhow::Result<()> {
        let ids = self.llm.encode(&self.header)?;
        self.read_prompt(&ids)?;
        Ok(())
    }

    fn read_ahead(&mut self, prompt: &str) -> anyhow::Result<()> {
        let ids = self.llm.encode(prompt)?;
        if ids.len() < self.llm.model().hparams.context_length {
            self.read_prompt(&ids)?;
        }
        Ok(())
    }

    fn context(&self) -> usize {
        // The prompt is capped at `max_prompt_tokens()`; the answer needs room after it.
        (self.max_prompt_tokens() + 512).min(self.llm.model().hparams.context_length)
    }

    fn prompt(&self, prefix: &Trajectory, action: Action, _sampling: &Sampling) -> anyhow::Result<String> {
        let preamble = self.frame().preamble(&prefix.code);
        fitted_prompt(prefix, action, &preamble, self.max_prompt_tokens(), &|text| {
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
        let (cache, first) = self.read_prompt(&ids)?;
        let llm = &self.llm;
        let mut reader = CacheReader {
            model: llm.model(),
            cache,
            prompt: &ids,
        };
        let started = std::time::Instant::now();
        let prediction = decode_state_line(
            first,
            &mut reader,
            Some(&|text| Ok(llm.encode(text)?)),
            &self.token_bytes,
            guide,
            sampling,
            budget,
            on_text,
        )?;
        tracing::debug!(
            tokens = prediction.tokens,
            seconds = started.elapsed().as_secs_f64(),
            "answer decoded"
        );
        Ok(prediction)
    }
}

/// Reads an answer after a prompt held in `cache`, drafts included.
struct CacheReader<'a> {
    model: &'a Qwen2,
    cache: KvCache,
    prompt: &'a [u32],
}

impl Reader for CacheReader<'_> {
    fn read(&mut self, tokens: &[u32], tail: usize) -> anyhow::Result<Vec<Vec<f32>>> {
        Ok(self
            .model
            .forward_tail(tokens, tail, &mut self.cache)?
            .to_vec2::<f32>()?)
    }

    fn forget(&mut self, n: usize) -> anyhow::Result<()> {
        self.cache.rewind(self.cache.len().saturating_sub(n));
        Ok(())
    }

    fn prompt(&self) -> &[u32] {
        self.prompt
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
