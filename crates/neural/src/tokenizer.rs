//! The neural debugger's tokenizer: byte-level BPE trained on the corpus, with every
//! marker of the trace language as one special token.
//!
//! Byte-level pre-tokenisation without a prefix space makes encode → decode exact for
//! any text, so the model can write any repr. The result is a standard
//! `tokenizer.json` that Hugging Face tools read too.

use std::path::Path;

use replayground_shared::trace_lang::SPECIAL_TOKENS;
use tokenizers::decoders::DecoderWrapper;
use tokenizers::models::bpe::{BPE, BpeTrainerBuilder};
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::processors::PostProcessorWrapper;
use tokenizers::{AddedToken, Tokenizer, TokenizerBuilder};

/// Ends a training example and pads batches.
pub const END_OF_TEXT: &str = "<|endoftext|>";

/// All special tokens, in id order: end-of-text first, then the trace language's.
pub fn special_tokens() -> Vec<AddedToken> {
    std::iter::once(END_OF_TEXT)
        .chain(SPECIAL_TOKENS)
        .map(|t| AddedToken::from(t, true))
        .collect()
}

/// Trains a tokenizer of (at most) `vocab_size` entries on `texts`.
pub fn train<I, S>(texts: I, vocab_size: usize) -> anyhow::Result<Tokenizer>
where
    I: Iterator<Item = S> + Send,
    S: AsRef<str> + Send,
{
    let specials = special_tokens();
    let mut trainer = BpeTrainerBuilder::new()
        .show_progress(false)
        .vocab_size(vocab_size)
        .min_frequency(2)
        .special_tokens(specials.clone())
        .initial_alphabet(ByteLevel::alphabet().into_iter().collect())
        .build();
    let byte_level = ByteLevel::default().add_prefix_space(false);
    let mut tokenizer =
        TokenizerBuilder::<BPE, NormalizerWrapper, PreTokenizerWrapper, PostProcessorWrapper, DecoderWrapper>::default(
        )
        .with_model(BPE::default())
        .with_pre_tokenizer(Some(PreTokenizerWrapper::ByteLevel(byte_level)))
        .with_decoder(Some(DecoderWrapper::ByteLevel(byte_level)))
        .build()
        .map_err(|e| anyhow::anyhow!("cannot build the tokenizer: {e}"))?;
    tokenizer
        .train(&mut trainer, texts)
        .map_err(|e| anyhow::anyhow!("tokenizer training failed: {e}"))?;
    tokenizer
        .add_special_tokens(specials)
        .map_err(|e| anyhow::anyhow!("cannot add the special tokens: {e}"))?;
    Ok(tokenizer.into())
}

/// Trains on the `text` fields of a corpus JSONL file and saves `tokenizer.json`.
pub fn train_on_corpus(train_jsonl: &Path, out: &Path, vocab_size: usize) -> anyhow::Result<Tokenizer> {
    let data = std::fs::read_to_string(train_jsonl)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", train_jsonl.display()))?;
    let mut texts = Vec::new();
    for (n, line) in data.lines().enumerate() {
        let record: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| anyhow::anyhow!("{}:{}: not JSON: {e}", train_jsonl.display(), n + 1))?;
        if let Some(text) = record["text"].as_str() {
            texts.push(text.to_owned());
        }
    }
    let tokenizer = train(texts.iter(), vocab_size)?;
    tokenizer
        .save(out, false)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", out.display()))?;
    Ok(tokenizer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::{Curriculum, generate};

    fn sample_texts() -> Vec<String> {
        (0..60)
            .map(|seed| {
                let p = generate(
                    seed,
                    Curriculum {
                        level: (seed % 5) as u8,
                    },
                );
                format!(
                    "<|code|>\n{}<|end_code|>\n<|line|>1 0 <module> <|vars|>{{\"x\":\"[1, 2]\"}}\n<|step_over|>\n",
                    p.source
                )
            })
            .collect()
    }

    #[test]
    fn markers_are_single_tokens_and_text_round_trips() {
        let texts = sample_texts();
        let tokenizer = train(texts.iter(), 600).unwrap();
        for marker in SPECIAL_TOKENS.iter().chain([&END_OF_TEXT]) {
            let ids = tokenizer.encode(*marker, false).unwrap().get_ids().to_vec();
            assert_eq!(ids.len(), 1, "{marker} is {ids:?}");
        }
        for text in texts
            .iter()
            .take(5)
            .map(String::as_str)
            .chain(["naïve ünïcode → 🙂 '\\t'  spaces  "])
        {
            let ids = tokenizer.encode(text, false).unwrap().get_ids().to_vec();
            assert!(ids.len() < text.len(), "BPE compresses");
            assert_eq!(tokenizer.decode(&ids, false).unwrap(), text);
        }
        assert!(tokenizer.get_vocab_size(true) <= 600);
        assert_eq!(tokenizer.token_to_id(END_OF_TEXT), Some(0));
    }
}
