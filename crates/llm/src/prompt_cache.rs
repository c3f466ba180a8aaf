//! Prompts read before, kept so that a prompt sharing a start with one of them reads only
//! the rest.
//!
//! On a CPU a model reads a prompt at about 100 tokens a second, so the agent's calls,
//! which repeat the same instructions, report and plan with a different question at the
//! end, and the neural debugger's, which repeat the worked examples and the program with
//! one more state each time, would spend most of their time reading what they read the
//! call before. A [`PromptCache`] keeps the key/value cache of the last few prompts; a
//! new prompt starts from the one it shares the longest start with, cut to that start,
//! and only the tokens after it are read.

use std::sync::atomic::{AtomicBool, Ordering};

use candle_core::Tensor;

use crate::error::Result;
use crate::model::{KvCache, Qwen2};

/// How many prompts a [`PromptCache`] keeps by default: the agent asks in turn for a
/// restructuring, a plan, scripts and verdicts, each with its own instructions.
pub const DEFAULT_KEPT_PROMPTS: usize = 4;

/// Prompt tokens read per forward pass: bounds the attention scores' memory on long prompts.
pub const PREFILL_CHUNK: usize = 512;

/// Shared starts shorter than this are read again: cutting a cache costs a copy of it.
const MIN_SHARED_TOKENS: usize = 16;

/// A prompt read: its ids, the cache holding exactly them, the logits after the last.
struct Kept {
    ids: Vec<u32>,
    cache: KvCache,
    logits: Tensor,
}

/// The state after a prompt, ready for its answer.
pub struct Prefilled {
    /// Holds the prompt; generating appends to it without touching what is kept.
    pub cache: KvCache,
    /// Predicts the token after the prompt.
    pub logits: Tensor,
    /// How many of the prompt's tokens came from a kept prompt instead of being read.
    pub reused: usize,
}

/// The last few prompts read, most recently used last.
pub struct PromptCache {
    kept: Vec<Kept>,
    capacity: usize,
}

impl PromptCache {
    /// Keeps at most `capacity` prompts (at least one).
    pub fn new(capacity: usize) -> Self {
        Self {
            kept: Vec::new(),
            capacity: capacity.max(1),
        }
    }

    /// How many prompts are kept.
    pub fn len(&self) -> usize {
        self.kept.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// Reads `ids` (not empty) with `model`, starting from the kept prompt that shares the
    /// longest start with it, and keeps the result. `None` when `cancel` was set before
    /// the prompt was read (checked before each chunk of [`PREFILL_CHUNK`] tokens).
    pub fn read(&mut self, model: &Qwen2, ids: &[u32], cancel: &AtomicBool) -> Result<Option<Prefilled>> {
        let best = self
            .kept
            .iter()
            .enumerate()
            .map(|(i, kept)| (i, shared_start(&kept.ids, ids)))
            .max_by_key(|&(_, shared)| shared);
        if let Some((i, shared)) = best
            && shared == ids.len()
            && shared == self.kept[i].ids.len()
        {
            let kept = self.kept.remove(i);
            let prefilled = Prefilled {
                cache: kept.cache.clone(),
                logits: kept.logits.clone(),
                reused: shared,
            };
            self.kept.push(kept);
            return Ok(Some(prefilled));
        }
        // At least the last token is read: its logits start the answer.
        let (mut cache, reused) = match best.map(|(i, shared)| (i, shared.min(ids.len() - 1))) {
            Some((i, reused)) if reused >= MIN_SHARED_TOKENS => {
                if reused == self.kept[i].ids.len() {
                    // The new prompt holds all of it: it takes the kept one's place.
                    (self.kept.remove(i).cache, reused)
                } else {
                    (self.kept[i].cache.truncated(reused)?, reused)
                }
            }
            _ => (model.new_cache(), 0),
        };
        let mut logits = None;
        for chunk in ids[reused..].chunks(PREFILL_CHUNK) {
            if cancel.load(Ordering::Relaxed) {
                return Ok(None);
            }
            logits = Some(model.forward(chunk, &mut cache)?);
        }
        let logits = logits.expect("at least one token is read");
        if self.kept.len() >= self.capacity {
            self.kept.remove(0);
        }
        self.kept.push(Kept {
            ids: ids.to_vec(),
            cache: cache.clone(),
            logits: logits.clone(),
        });
        Ok(Some(Prefilled { cache, logits, reused }))
    }
}

/// How many leading tokens `a` and `b` share.
fn shared_start(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::shared_start;

    #[test]
    fn the_shared_start_stops_at_the_first_difference() {
        assert_eq!(shared_start(&[1, 2, 3, 4], &[1, 2, 9, 4]), 2);
        assert_eq!(shared_start(&[1, 2], &[1, 2, 3]), 2);
        assert_eq!(shared_start(&[], &[1]), 0);
    }
}
