//! The code editor: a plain `<textarea>` (so typing, selection, undo and screen readers
//! work as everywhere) over a `<pre>` highlighted from the syntax tree, with a gutter of
//! line numbers that toggle breakpoints on lines that start a statement, the debugger's
//! current line, the outline and the list of syntax errors.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use leptos::html::{Div, Pre, Textarea};
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::HtmlTextAreaElement;

use crate::playground::syntax::{Analysis, Changes, SyntaxDocument, push_escaped, utf16_offset};

/// Spaces per indentation level (PEP 8).
pub const INDENT: usize = 4;

/// The gutter as HTML: a button per line that starts a statement, a number otherwise.
pub fn gutter_html(analysis: &Analysis, breakpoints: &BTreeSet<u32>, current: Option<u32>) -> String {
    let mut out = String::with_capacity(analysis.line_count as usize * 64);
    for line in 1..=analysis.line_count {
        let mut class = String::from("ln");
        if current == Some(line) {
            class.push_str(" current");
        }
        if analysis.shown_problems().any(|p| p.line == line) {
            class.push_str(" error-line");
        }
        if analysis.statement_lines.contains(&line) {
            let on = breakpoints.contains(&line);
            if on {
                class.push_str(" breakpoint");
            }
            let _ = write!(
                out,
                r#"<button type="button" class="{class} can-break" data-line="{line}" aria-label="Breakpoint on line {line}" aria-pressed="{on}" tabindex="-1">{line}</button>"#
            );
        } else {
            let _ = write!(out, r#"<span class="{class}">{line}</span>"#);
        }
    }
    out
}

/// Breakpoints after an edit of `old` into `new`, so that each stays with its statement's
/// text: lines below the edit move with it; a line the edit began in keeps its breakpoint
/// when its code starts before the edit; the line the edit ended in takes its breakpoint
/// to where its text went when the edit ended in its indentation (a newline typed there,
/// lines deleted above it); lines deleted in between lose theirs, and so does a line left
/// blank or comment-only. A line that merely stopped parsing as a statement keeps its
/// breakpoint (hidden in the gutter) so that a half-typed bracket does not clear them all.
pub fn shift_breakpoints(breakpoints: &BTreeSet<u32>, changes: &Changes, old: &str, new: &str) -> BTreeSet<u32> {
    let old_lines: Vec<&str> = old.split('\n').collect();
    let new_lines: Vec<&str> = new.split('\n').collect();
    let in_indent = |line: Option<&&str>, column: usize| {
        line.and_then(|line| line.get(..column))
            .is_some_and(|prefix| prefix.trim().is_empty())
    };
    let (start, removed, inserted) = (changes.start_row, changes.removed_rows, changes.inserted_rows);
    let old_end = start + removed - 1;
    let starts_before_edit = !in_indent(new_lines.get(start), changes.start_column);
    let survives_edit_end = in_indent(old_lines.get(old_end), changes.old_end_column);
    breakpoints
        .iter()
        .filter_map(|&line| {
            let row = line.checked_sub(1)? as usize;
            let new_row = if row < start || (row == start && starts_before_edit) {
                row
            } else if row == old_end && survives_edit_end {
                start + inserted - 1
            } else if row <= old_end {
                return None;
            } else {
                row + inserted - removed
            };
            let code = new_lines.get(new_row)?.trim();
            (!code.is_empty() && !code.starts_with('#')).then(|| new_row as u32 + 1)
        })
        .collect()
}

/// Indents (or outdents) the lines touched by the selection `[start, end)` of `text`
/// (UTF-16 offsets, as a textarea counts). Returns the range to replace, its new text and
/// the selection afterwards, all in UTF-16 offsets.
pub fn reindent(text: &str, start: u32, end: u32, outdent: bool) -> (u32, u32, String, (u32, u32)) {
    let units: Vec<u16> = text.encode_utf16().collect();
    let (start, end) = (
        start.min(units.len() as u32) as usize,
        end.min(units.len() as u32) as usize,
    );
    let newline = u16::from(b'\n');
    let space = u16::from(b' ');
    let first = units[..start].iter().rposition(|&u| u == newline).map_or(0, |i| i + 1);
    if !outdent && start == end {
        // A caret: spaces up to the next indentation stop.
        let column = start - first;
        let spaces = " ".repeat(INDENT - column % INDENT);
        let after = (start + spaces.len()) as u32;
        return (start as u32, end as u32, spaces, (after, after));
    }
    // A selection ending at the start of a line does not touch that line.
    let last_touched = if end > start && units[end - 1] == newline {
        end - 1
    } else {
        end
    };
    let stop = units[last_touched..]
        .iter()
        .position(|&u| u == newline)
        .map_or(units.len(), |i| last_touched + i);
    let block = String::from_utf16_lossy(&units[first..stop]);
    let mut first_delta: i64 = 0;
    let lines: Vec<String> = block
        .split('\n')
        .enumerate()
        .map(|(i, line)| {
            let (new, delta) = if outdent {
                let leading = line.encode_utf16().take(INDENT).take_while(|&u| u == space).count();
                (line[leading..].to_owned(), -(leading as i64))
            } else if line.is_empty() {
                (String::new(), 0)
            } else {
                (format!("{}{line}", " ".repeat(INDENT)), INDENT as i64)
            };
            if i == 0 {
                first_delta = delta;
            }
            new
        })
        .collect();
    let replacement = lines.join("\n");
    let new_len = replacement.encode_utf16().count() as u32;
    let selection = if start == end {
        let caret = (start as i64 + first_delta).max(first as i64) as u32;
        (caret, caret)
    } else {
        (first as u32, first as u32 + new_len)
    };
    (first as u32, stop as u32, replacement, selection)
}

/// `0.9` em per outline level, written without float formatting (it costs ~14 KB of wasm).
pub fn indent_em(depth: u32) -> String {
    let tenths = depth * 9;
    format!("{}.{}", tenths / 10, tenths % 10)
}

/// Moves the caret to byte `offset` of the editor's text and scrolls it into view.
pub fn reveal(textarea: &HtmlTextAreaElement, offset: usize) {
    let text = textarea.value();
    let at = utf16_offset(&text, offset);
    let _ = textarea.focus();
    let _ = textarea.set_selection_range(at, at);
    let line = text[..offset.min(text.len())].matches('\n').count();
    scroll_to_line(textarea, line as u32 + 1);
}

/// Scrolls the editor so that 1-based `line` is in view, a few lines from the top.
pub fn scroll_to_line(textarea: &HtmlTextAreaElement, line: u32) {
    let Some(scroller) = textarea.closest(".code-scroll").ok().flatten() else {
        return;
    };
    let lines = textarea.value().matches('\n').count() as f64 + 1.0;
    let line_px = f64::from(textarea.scroll_height()) / lines;
    let top = (f64::from(line) - 1.0) * line_px;
    let (seen, height) = (f64::from(scroller.scroll_top()), f64::from(scroller.client_height()));
    if top < seen || top + line_px > seen + height {
        scroller.set_scroll_top((top - 3.0 * line_px).max(0.0) as i32);
    }
}

/// The highlighted code as the `<pre>`'s children: one `<div>` per line, so that an edit
/// replaces only the lines it changed.
pub fn lines_html(lines: &[String]) -> String {
    let mut out = String::with_capacity(lines.iter().map(|l| l.len() + 11).sum());
    for line in lines {
        out.push_str("<div>");
        out.push_str(line);
        out.push_str("</div>");
    }
    out
}

/// Applies `changes` to a `<pre>` rendered by [`lines_html`]: removes and inserts the
/// edited lines' `<div>`s, then rewrites the lines whose highlighting changed.
pub fn patch_lines(pre: &web_sys::Element, changes: &Changes, lines: &[String]) {
    let document = document();
    let children = pre.children();
    for _ in 0..changes.removed_rows {
        if let Some(child) = children.item(changes.start_row as u32) {
            child.remove();
        }
    }
    let next = children.item(changes.start_row as u32);
    for _ in 0..changes.inserted_rows {
        let Ok(div) = document.create_element("div") else {
            return;
        };
        let _ = pre.insert_before(&div, next.as_ref().map(JsCast::unchecked_ref));
    }
    for rows in &changes.highlighted {
        for row in rows.clone() {
            if let (Some(child), Some(line)) = (children.item(row as u32), lines.get(row)) {
                child.set_inner_html(line);
            }
        }
    }
}

/// The indentation a new line starts with after `before` (the text up to the caret): the
/// current line's, one level deeper after a block header's `:`.
pub fn indent_after_newline(before: &str) -> String {
    let line = before.rsplit('\n').next().unwrap_or_default();
    let mut indent: String = line.chars().take_while(|c| matches!(c, ' ' | '\t')).collect();
    let code = line.split('#').next().unwrap_or_default().trim_end();
    if code.ends_with(':') {
        indent.push_str(&" ".repeat(INDENT));
    }
    indent
}

/// The 1-based line of the editor's caret.
fn caret_line(area: &HtmlTextAreaElement) -> u32 {
    let caret = area.selection_start().ok().flatten().unwrap_or(0) as usize;
    area.value().encode_utf16().take(caret).filter(|&u| u == 10).count() as u32 + 1
}

/// Replaces `[start, end)` (UTF-16) with `text` the way typing would, so the browser's
/// undo stack keeps it; falls back to a plain replacement where `insertText` is missing.
fn insert_text(textarea: &HtmlTextAreaElement, start: u32, end: u32, text: &str) -> bool {
    let _ = textarea.set_selection_range(start, end);
    let document: web_sys::HtmlDocument = document().unchecked_into();
    if document
        .exec_command_with_show_ui_and_value("insertText", false, text)
        .unwrap_or(false)
    {
        return true;
    }
    let _ = textarea.set_range_text(text);
    false
}

#[allow(clippy::needless_pass_by_value)] // Leptos hands props over by value.
#[component]
pub fn CodeEditor(
    code: RwSignal<String>,
    breakpoints: RwSignal<BTreeSet<u32>>,
    /// The debugger's line, when the run shown is of this very code.
    current_line: Signal<Option<u32>>,
    /// Written after each parse: problems, outline, statement lines.
    analysis: RwSignal<Analysis>,
    on_run: Callback<()>,
    textarea: NodeRef<Textarea>,
    #[prop(optional)] readonly: Option<Signal<bool>>,
    /// Predict mode's guessed line, marked in the code.
    #[prop(optional)]
    guess_line: Option<Signal<Option<u32>>>,
    /// A click on a line (code or gutter); answers whether it picked that line (predict
    /// mode), in which case the gutter sets no breakpoint.
    #[prop(optional)]
    on_pick: Option<Callback<u32, bool>>,
) -> impl IntoView {
    let document = StoredValue::new_local(SyntaxDocument::new(&code.get_untracked()));
    analysis.set(document.with_value(|d| d.analysis().clone()));
    let pre_ref = NodeRef::<Pre>::new();
    // Whether the next change of `code` is typing (breakpoints follow their lines) rather
    // than a new program loaded with its own breakpoints (an example, a link, a reset).
    let typed = StoredValue::new(false);
    // Each keystroke re-highlights and re-analyses only what it changed (see
    // `SyntaxDocument::edit`), and the `<pre>` is patched line by line. Returns whether
    // the `<pre>` shows the document.
    Effect::new(move |shown: Option<bool>| {
        let mut changes = None;
        // Breakpoints follow typing; without any, a keystroke pays nothing for them.
        let shift = typed.get_value() && breakpoints.with_untracked(|b| !b.is_empty());
        let mut old_text = String::new();
        code.with(|text| {
            document.update_value(|d| {
                if shift {
                    d.text().clone_into(&mut old_text);
                }
                changes = d.edit(text);
            });
        });
        let Some(pre) = pre_ref.get() else { return false };
        document.with_value(|d| match (&changes, shown) {
            (Some(changes), Some(true)) => patch_lines(&pre, changes, d.line_html()),
            (None, Some(true)) => {}
            _ => pre.set_inner_html(&lines_html(d.line_html())),
        });
        if let Some(changes) = changes.as_ref().filter(|_| shift) {
            let moved = code
                .with_untracked(|text| breakpoints.with_untracked(|b| shift_breakpoints(b, changes, &old_text, text)));
            if breakpoints.with_untracked(|b| *b != moved) {
                breakpoints.set(moved);
            }
        }
        typed.set_value(false);
        match changes {
            Some(changes) if changes.analysis_changed => analysis.set(document.with_value(|d| d.analysis().clone())),
            // Only offsets moved: the lists stay, their clicks read the new offsets.
            Some(_) => analysis.update_untracked(|a| *a = document.with_value(|d| d.analysis().clone())),
            None => {}
        }
        true
    });
    let gutter = Memo::new(move |_| analysis.with(|a| breakpoints.with(|b| gutter_html(a, b, current_line.get()))));
    // After Escape, Tab leaves the editor (keyboard users must not be trapped).
    let tab_moves_focus = RwSignal::new(false);
    let gutter_ref = NodeRef::<Div>::new();
    let marker_ref = NodeRef::<Div>::new();

    // Predict mode: a click in the code picks its line, drawn by CSS from `data-guess` and
    // `--guess`. Set on the DOM rather than in the view: a view change re-instantiates the
    // page's whole view tree in the wasm (measured: ~10 KB).
    if let Some(pick) = on_pick {
        let clicks = window_event_listener(leptos::ev::click, move |ev| {
            if let Some(area) = textarea.get_untracked()
                && ev.target().is_some_and(|t| t == ****area)
            {
                pick.run(caret_line(&area));
            }
        });
        on_cleanup(move || clicks.remove());
    }
    Effect::new(move |_| {
        let guess = guess_line.and_then(|g| g.get());
        let Some(cell) = textarea.get().and_then(|area| area.parent_element()) else {
            return;
        };
        match guess {
            Some(line) => {
                let _ = cell.set_attribute("data-guess", &line.to_string());
                let _ = cell.set_attribute("style", &format!("--guess: {}", line.saturating_sub(1)));
            }
            None => {
                let _ = cell.remove_attribute("data-guess");
            }
        }
    });

    // Keep the debugger's line in sight.
    Effect::new(move |_| {
        if let (Some(line), Some(area)) = (current_line.get(), textarea.get_untracked()) {
            request_animation_frame(move || scroll_to_line(&area, line));
        }
    });

    let on_keydown = move |ev: web_sys::KeyboardEvent| {
        if (ev.ctrl_key() || ev.meta_key()) && ev.key() == "Enter" {
            ev.prevent_default();
            on_run.run(());
            return;
        }
        match ev.key().as_str() {
            "Escape" => tab_moves_focus.set(true),
            "Enter" if !ev.shift_key() && !ev.alt_key() => {
                let Some(area) = textarea.get_untracked() else { return };
                let (start, end) = (
                    area.selection_start().ok().flatten().unwrap_or(0),
                    area.selection_end().ok().flatten().unwrap_or(0),
                );
                let units: Vec<u16> = area.value().encode_utf16().take(start as usize).collect();
                let indent = indent_after_newline(&String::from_utf16_lossy(&units));
                // No indentation to carry: the browser's own Enter.
                if indent.is_empty() {
                    return;
                }
                ev.prevent_default();
                let text = format!("\n{indent}");
                if !insert_text(&area, start, end, &text) {
                    let caret = start + text.len() as u32;
                    let _ = area.set_selection_range(caret, caret);
                    typed.set_value(true);
                    code.set(area.value());
                }
            }
            "F9" => {
                // The keyboard's way to the gutter: toggle a breakpoint on the caret's line.
                ev.prevent_default();
                let Some(area) = textarea.get_untracked() else { return };
                let line = caret_line(&area);
                if analysis.with_untracked(|a| a.statement_lines.contains(&line)) {
                    breakpoints.update(|b| {
                        if !b.remove(&line) {
                            b.insert(line);
                        }
                    });
                }
            }
            "Tab" if !tab_moves_focus.get_untracked() && !ev.ctrl_key() && !ev.alt_key() && !ev.meta_key() => {
                ev.prevent_default();
                let Some(area) = textarea.get_untracked() else { return };
                let (start, end) = (
                    area.selection_start().ok().flatten().unwrap_or(0),
                    area.selection_end().ok().flatten().unwrap_or(0),
                );
                let (from, to, text, selection) = reindent(&area.value(), start, end, ev.shift_key());
                let inserted = insert_text(&area, from, to, &text);
                let _ = area.set_selection_range(selection.0, selection.1);
                if !inserted {
                    typed.set_value(true);
                    code.set(area.value());
                }
            }
            _ => tab_moves_focus.set(false),
        }
    };

    view! {
        <div class="code-scroll">
            <div class="code-grid">
                <div
                    class="gutter"
                    node_ref=gutter_ref
                    aria-label="Line numbers; click one that starts a statement to set or clear a breakpoint"
                    inner_html=move || gutter.get()
                    on:click=move |ev| {
                        let line = ev
                            .target()
                            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                            .and_then(|e| e.closest("[data-line]").ok().flatten())
                            .and_then(|e| e.get_attribute("data-line"))
                            .and_then(|l| l.parse::<u32>().ok());
                        if let Some(line) = line
                            && !on_pick.is_some_and(|pick| pick.run(line))
                        {
                            breakpoints.update(|b| if !b.remove(&line) { b.insert(line); });
                        }
                    }
                ></div>
                <div class="code-cell">
                    {move || {
                        current_line
                            .get()
                            .map(|line| {
                                view! {
                                    <div
                                        class="line-marker"
                                        node_ref=marker_ref
                                        aria-hidden="true"
                                        style=format!("--line: {}", line.saturating_sub(1))
                                    ></div>
                                }
                            })
                    }}
                    <pre class="highlight" aria-hidden="true" node_ref=pre_ref></pre>
                    <textarea
                        id="editor"
                        class="code-input"
                        data-testid="editor"
                        node_ref=textarea
                        wrap="off"
                        spellcheck="false"
                        autocomplete="off"
                        autocapitalize="off"
                        aria-label="Python code (Tab indents, Shift+Tab outdents, Escape then Tab leaves the editor, F9 toggles a breakpoint, Ctrl+Enter runs)"
                        aria-keyshortcuts="Control+Enter"
                        prop:readOnly=move || readonly.is_some_and(|r| r.get())
                        prop:value=move || code.get()
                        on:input=move |ev| {
                            typed.set_value(true);
                            code.set(event_target_value(&ev));
                        }
                        on:keydown=on_keydown
                    ></textarea>
                </div>
            </div>
        </div>
    }
}

/// The syntax errors as list items, each a button (`data-offset`) that puts the caret there.
pub fn problems_html(analysis: &Analysis) -> String {
    let mut out = String::new();
    for problem in analysis.shown_problems() {
        let _ = write!(
            out,
            r#"<li><button type="button" class="problem" data-offset="{}">Line {}:{} "#,
            problem.offset, problem.line, problem.column
        );
        push_escaped(&mut out, &problem.message);
        out.push_str("</button></li>");
    }
    out
}

/// The outline as list items, nested by indentation, each a button (`data-offset`) that
/// puts the caret on the definition.
pub fn outline_html(analysis: &Analysis) -> String {
    let mut out = String::new();
    for item in &analysis.outline {
        let keyword = item.kind.keyword();
        let _ = write!(
            out,
            r#"<li style="padding-left: {}em"><button type="button" class="outline-item kind-{keyword}" title="Line {}" data-offset="{}"><span class="kw">{keyword}</span> "#,
            indent_em(item.depth),
            item.line,
            item.offset
        );
        push_escaped(&mut out, &item.name);
        out.push_str("</button></li>");
    }
    out
}

/// A click on a `data-offset` button of the outline or the error list: caret there.
fn reveal_clicked(ev: &web_sys::MouseEvent, textarea: NodeRef<Textarea>) {
    let offset = crate::playground::ui::data_of(ev, "data-offset").and_then(|o| o.parse().ok());
    if let (Some(area), Some(offset)) = (textarea.get_untracked(), offset) {
        reveal(&area, offset);
    }
}

/// The syntax errors, each a button that puts the caret where it is. The lists are HTML
/// strings with one click handler: a Leptos view per item cost several KB of wasm.
#[component]
pub fn ProblemList(analysis: RwSignal<Analysis>, textarea: NodeRef<Textarea>) -> impl IntoView {
    view! {
        <section class="problems" aria-labelledby="problems-heading">
            <h3 id="problems-heading">
                {move || match analysis.with(|a| a.shown_problems().count()) {
                    0 => "No syntax errors".to_owned(),
                    1 => "1 syntax error".to_owned(),
                    n => format!("{n} syntax errors"),
                }}
            </h3>
            <ul
                data-testid="errors"
                class="problem-list"
                inner_html=move || analysis.with(problems_html)
                on:click=move |ev| reveal_clicked(&ev, textarea)
            ></ul>
        </section>
    }
}

/// Classes and functions, nested; a click moves the caret to the definition.
#[component]
pub fn Outline(analysis: RwSignal<Analysis>, textarea: NodeRef<Textarea>) -> impl IntoView {
    view! {
        <nav class="outline" aria-labelledby="outline-heading">
            <h3 id="outline-heading">"Outline"</h3>
            <ul
                data-testid="outline"
                inner_html=move || analysis.with(outline_html)
                on:click=move |ev| reveal_clicked(&ev, textarea)
            ></ul>
            {crate::playground::ui::when(
                move || analysis.with(|a| a.outline.is_empty()),
                || view! { <p class="empty">"No classes or functions yet."</p> },
            )}
        </nav>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Edits `old` into `new` through the real document and returns the breakpoints after.
    fn breakpoints_after(old: &str, new: &str, breakpoints: &[u32]) -> Vec<u32> {
        let mut document = SyntaxDocument::new(old);
        let changes = document.edit(new).expect("the texts differ");
        shift_breakpoints(&breakpoints.iter().copied().collect(), &changes, old, new)
            .into_iter()
            .collect()
    }

    #[test]
    fn enter_keeps_the_indentation_and_indents_after_a_colon() {
        assert_eq!(indent_after_newline("x = 1"), "");
        assert_eq!(indent_after_newline("def f(x):"), "    ");
        assert_eq!(indent_after_newline("def f(x):\n    if x:  # positive"), "        ");
        assert_eq!(indent_after_newline("def f(x):\n    return x"), "    ");
        assert_eq!(indent_after_newline("\tfor i in y:"), "\t    ");
    }

    #[test]
    fn breakpoints_follow_their_statements_through_edits() {
        let code = "a = 1\nb = 2\nc = 3\nd = 4\n";
        // A line inserted above moves the ones below; typing on a line keeps its own.
        assert_eq!(
            breakpoints_after(code, "a = 1\nx = 0\nb = 2\nc = 3\nd = 4\n", &[1, 2, 4]),
            [1, 3, 5]
        );
        assert_eq!(
            breakpoints_after(code, "a = 1\nb = 22\nc = 3\nd = 4\n", &[2, 3]),
            [2, 3]
        );
        // Enter at the start of a line pushes its statement, and its breakpoint, down.
        assert_eq!(breakpoints_after(code, "a = 1\n\nb = 2\nc = 3\nd = 4\n", &[2]), [3]);
        // Deleted lines lose theirs; the rest move up.
        assert_eq!(breakpoints_after(code, "a = 1\nd = 4\n", &[2, 3]), Vec::<u32>::new());
        assert_eq!(breakpoints_after(code, "a = 1\nd = 4\n", &[1, 4]), [1, 2]);
        // Typing at the start of a line keeps its breakpoint on it.
        assert_eq!(breakpoints_after(code, "a = 1\nbb = 2\nc = 3\nd = 4\n", &[2]), [2]);
        // A line emptied or commented out drops it.
        assert_eq!(breakpoints_after(code, "a = 1\n\nc = 3\nd = 4\n", &[2, 3]), [3]);
        assert_eq!(breakpoints_after(code, "a = 1\n# b = 2\nc = 3\nd = 4\n", &[2, 3]), [3]);
        // A half-typed bracket makes the lines below stop parsing; they keep theirs.
        assert_eq!(
            breakpoints_after(code, "a = (1\nb = 2\nc = 3\nd = 4\n", &[2, 3, 4]),
            [2, 3, 4]
        );
    }

    #[test]
    fn tab_at_a_caret_inserts_spaces_to_the_next_stop() {
        assert_eq!(reindent("ab", 2, 2, false), (2, 2, "  ".into(), (4, 4)));
        assert_eq!(reindent("x\n", 2, 2, false), (2, 2, "    ".into(), (6, 6)));
    }

    #[test]
    fn tab_and_shift_tab_move_whole_lines() {
        let text = "a\n  b\nc\n";
        let (from, to, new, selection) = reindent(text, 0, 5, false);
        assert_eq!((from, to, new.as_str()), (0, 5, "    a\n      b"));
        assert_eq!(selection, (0, 13));
        let (from, to, new, _) = reindent("    a\n  b\nc", 0, 9, true);
        assert_eq!((from, to, new.as_str()), (0, 9, "a\nb"));
        // Shift+Tab at a caret outdents its line and keeps the caret on its text.
        assert_eq!(reindent("        x", 8, 8, true), (0, 9, "    x".into(), (4, 4)));
        // A selection ending at a line start leaves that line alone.
        assert_eq!(reindent("a\nb\n", 0, 2, false).2, "    a");
    }

    #[test]
    fn problems_and_outline_are_buttons_to_their_offsets() {
        let analysis = SyntaxDocument::new("class A:\n    def f(self):\n        x = (<\n").analyse();
        let problems = problems_html(&analysis);
        assert!(
            problems.starts_with(r#"<li><button type="button" class="problem" data-offset=""#),
            "{problems}"
        );
        assert!(problems.contains("Line 3:"), "{problems}");
        assert!(!problems.contains("(<"), "messages are escaped: {problems}");
        let outline = outline_html(&analysis);
        assert!(
            outline.contains(r#"<li style="padding-left: 0.9em"><button type="button" class="outline-item kind-def" title="Line 2" data-offset="17"><span class="kw">def</span> f</button></li>"#),
            "{outline}"
        );
    }

    #[test]
    fn outline_indents_are_tenths_of_an_em() {
        assert_eq!(indent_em(0), "0.0");
        assert_eq!(indent_em(1), "0.9");
        assert_eq!(indent_em(3), "2.7");
    }

    #[test]
    fn the_gutter_offers_breakpoints_on_statements_only() {
        let analysis = SyntaxDocument::new("def f():\n\n    return 1\n").analyse();
        let html = gutter_html(&analysis, &BTreeSet::from([3]), Some(1));
        assert!(html.contains(r#"class="ln current can-break" data-line="1""#));
        assert!(html.contains(r#"<span class="ln">2</span>"#));
        assert!(html.contains(r#"class="ln breakpoint can-break" data-line="3""#));
        assert!(html.contains(r#"aria-pressed="true""#));
    }
}
