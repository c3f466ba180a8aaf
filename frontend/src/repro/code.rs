//! Code shown plainly: line numbers, a light highlighter, and line diffs.

use leptos::prelude::*;

use super::diff::{DiffLine, counts};
use super::highlight::highlight;

/// A read-only code block with line numbers; `code` may grow while tokens stream.
#[component]
pub fn CodeBlock(
    #[prop(into)] code: Signal<String>,
    #[prop(into)] label: String,
    #[prop(optional, into)] testid: String,
    #[prop(optional)] streaming: Option<Signal<bool>>,
) -> impl IntoView {
    let streaming = streaming.unwrap_or_else(|| Signal::derive(|| false));
    view! {
        <div class="code-block" role="region" aria-label=label tabindex="0" data-testid=testid>
            <pre>
                <code>
                    {move || {
                        code.with(|code| {
                            let lines = highlight(code.trim_end_matches('\n'));
                            let count = lines.len();
                            lines
                                .into_iter()
                                .enumerate()
                                .map(|(i, tokens)| {
                                    let last = i + 1 == count;
                                    view! {
                                        <span class="line">
                                            <span class="ln" aria-hidden="true">{i + 1}</span>
                                            <span class="text">
                                                {tokens
                                                    .into_iter()
                                                    .map(|(token, text)| view! { <span class=token.class()>{text}</span> })
                                                    .collect_view()}
                                                {move || (last && streaming.get()).then(|| view! { <span class="caret" aria-hidden="true"></span> })}
                                            </span>
                                        </span>
                                    }
                                })
                                .collect_view()
                        })
                    }}
                </code>
            </pre>
        </div>
    }
}

/// The changes from `old` to `new`, one line each, marked + and −.
#[component]
pub fn DiffView(diff: Vec<DiffLine>, #[prop(into)] title: String) -> impl IntoView {
    let (added, removed) = counts(&diff);
    let summary = if added + removed == 0 {
        "no changes".to_owned()
    } else {
        format!("+{added} −{removed}")
    };
    view! {
        <details class="diff" data-testid="attempt-diff">
            <summary>{title} " " <span class="diff-count">{summary}</span></summary>
            <div class="code-block" role="region" aria-label="Changes from the previous attempt" tabindex="0">
                <pre>
                    <code>
                        {diff
                            .into_iter()
                            .map(|line| {
                                view! {
                                    <span class=format!("line {}", line.class())>
                                        <span class="ln" aria-hidden="true">{line.sign()}</span>
                                        <span class="text">{line.text().to_owned()}</span>
                                    </span>
                                }
                            })
                            .collect_view()}
                    </code>
                </pre>
            </div>
        </details>
    }
}
