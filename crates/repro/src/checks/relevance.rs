//! The relevance check: does the script address the report? Embedding cosine between
//! code and report (with an embedder), an LLM's yes/no (with an LLM), else word overlap.

use std::sync::Arc;

use replayground_shared::repro::{CheckKind, CheckVerdict};

use super::score::{verdict, word_overlap};
use crate::embed::{Embedder, cosine};
use crate::llm::{ChatMessage, GenParams, Llm, LlmTask};

/// Characters of the report and of the script in the LLM's relevance question: a whole
/// long report (a 300-line model pasted into it) made one yes/no cost minutes on a CPU.
const MAX_REPORT_CHARS: usize = 3000;
const MAX_SCRIPT_CHARS: usize = 5000;

/// `text` cut to about `max` characters: its start and its end (where a report's output and
/// a script's calls are), with the number of characters left out between them.
fn clipped(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let head: String = text.chars().take(max * 2 / 3).collect();
    let tail: String = text.chars().skip(count - max / 3).collect();
    format!(
        "{head}\n[... {} characters ...]\n{tail}",
        count - head.chars().count() - tail.chars().count()
    )
}

/// Does the code address the report? Embedding cosine (with an embedder), an LLM's
/// yes/no (with an LLM), else word overlap.
pub async fn relevance(
    code: &str,
    report_text: &str,
    embedder: Option<&Arc<Embedder>>,
    llm: Option<&dyn Llm>,
) -> CheckVerdict {
    let mut parts: Vec<(f32, String)> = Vec::new();
    if let Some(embedder) = embedder {
        let embedder = embedder.clone();
        let (code_owned, report_owned) = (code.to_owned(), report_text.to_owned());
        let similarity = tokio::task::spawn_blocking(move || {
            let vectors = embedder.embed(&[&code_owned, &report_owned]).ok()?;
            Some(cosine(&vectors[0], &vectors[1]))
        })
        .await
        .ok()
        .flatten();
        if let Some(similarity) = similarity {
            // MiniLM cosines between code and prose sit around 0.1-0.6: rescale to 0..1.
            let score = ((similarity - 0.1) / 0.4).clamp(0.0, 1.0);
            parts.push((score, format!("embedding cosine {similarity:.2}")));
        }
    }
    if parts.is_empty() {
        let overlap = word_overlap(code, report_text);
        let score = (overlap * 2.0).min(1.0);
        parts.push((
            score,
            format!("{:.0}% of the report's words appear in the code", overlap * 100.0),
        ));
    }
    if let Some(llm) = llm {
        let messages = [
            ChatMessage::system("You judge bug reproductions (task: relevance). Answer only `yes` or `no`."),
            ChatMessage::user(format!(
                "Bug report:\n{}\n\nScript:\n```python\n{}\n```\n\nDoes this script try to reproduce exactly this bug?",
                clipped(report_text, MAX_REPORT_CHARS),
                clipped(code, MAX_SCRIPT_CHARS)
            )),
        ];
        let params = GenParams {
            temperature: 0.0,
            ..GenParams::new(LlmTask::Relevance, 8)
        };
        match llm.complete(&messages, &params, &mut |_| {}).await {
            Ok(answer) => {
                let yes = answer.trim().to_lowercase().starts_with("yes");
                parts.push((
                    if yes { 1.0 } else { 0.0 },
                    format!("the LLM says {}", if yes { "yes" } else { "no" }),
                ));
            }
            Err(e) => tracing::warn!(error = %e, "the relevance question to the LLM failed"),
        }
    }
    let score = parts.iter().map(|(s, _)| s).sum::<f32>() / parts.len() as f32;
    let detail = parts.into_iter().map(|(_, d)| d).collect::<Vec<_>>().join("; ");
    let passed = score >= 0.3;
    verdict(
        CheckKind::Relevance,
        passed,
        Some(score),
        if passed {
            format!("Relevant to the report ({detail}).")
        } else {
            format!("The script seems unrelated to the report ({detail}).")
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_llms_relevance_question_stays_short_for_a_long_report() {
        use crate::llm::{ScriptedLlm, ScriptedReply};
        let report = format!(
            "Traceback first\n{}\nValueError: last line",
            "layer = Conv2d(3, 3)\n".repeat(2000)
        );
        let llm = ScriptedLlm::new(vec![ScriptedReply::Any("yes".into())]);
        let verdict = relevance("raise ValueError('x')", &report, None, Some(&llm)).await;
        assert!(verdict.detail.contains("the LLM says yes"), "{}", verdict.detail);
        let prompt = &llm.prompts()[0].1;
        assert!(
            prompt.len() < MAX_REPORT_CHARS + MAX_SCRIPT_CHARS + 400,
            "{}",
            prompt.len()
        );
        assert!(prompt.contains("Traceback first") && prompt.contains("ValueError: last line"));
        assert!(prompt.contains("characters ...]"));
        assert_eq!(clipped("short", 10), "short");
    }

    #[tokio::test]
    async fn relevance_without_models_uses_word_overlap() {
        let report = "the softmax cross entropy loss becomes nan with large logits";
        let related = "import numpy as np\nlogits = np.array([1000.0, 0.0])\nloss = -np.log(np.exp(logits) / np.exp(logits).sum())\nprint('loss', loss)";
        let unrelated = "for i in range(3):\n    print(i)";
        assert!(relevance(related, report, None, None).await.passed);
        assert!(!relevance(unrelated, report, None, None).await.passed);
    }
}
