//! Variables as structured values: the trace's interned [`Value`]s, expandable, with
//! each container tagged by its object so that aliases are visibly the same object.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use replayground_shared::trace::{Binding, Shape};
use replayground_shared::{Trace, ValueId};
use wasm_bindgen::JsCast as _;

use crate::playground::syntax::push_escaped;

/// Reprs longer than this are cut in the one-line summaries.
const SUMMARY_CHARS: usize = 120;

/// A short tag per object (`#1`, `#2`, ...) in order of first appearance at one stop, and
/// how often each object appears among the bindings shown.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ObjectTags {
    tags: HashMap<u64, (u32, u32)>,
}

impl ObjectTags {
    /// Tags every container reachable from `bindings`.
    pub fn of(trace: &Trace, bindings: &[Binding]) -> Self {
        let mut tags = Self::default();
        let mut seen = HashSet::new();
        for binding in bindings {
            tags.visit(trace, binding.value, &mut seen);
        }
        tags
    }

    fn visit(&mut self, trace: &Trace, id: ValueId, seen: &mut HashSet<ValueId>) {
        let value = trace.value(id);
        if value.shape.is_scalar() {
            return;
        }
        let next = self.tags.len() as u32 + 1;
        let entry = self.tags.entry(value.object_id).or_insert((next, 0));
        entry.1 += 1;
        // Interned values repeat; a value's children are the same wherever it appears.
        if seen.insert(id) {
            for child in value.shape.children() {
                self.visit(trace, child, seen);
            }
        }
    }

    /// The tag number of an object, and whether it appears more than once.
    pub fn tag(&self, object_id: u64) -> Option<(u32, bool)> {
        self.tags.get(&object_id).map(|&(n, count)| (n, count > 1))
    }
}

/// Names whose value differs from `before` (or that `before` lacks).
pub fn changed_names(trace: &Trace, now: &[Binding], before: &[Binding]) -> HashSet<String> {
    now.iter()
        .filter(|b| {
            before
                .iter()
                .find(|p| p.name == b.name)
                .is_none_or(|p| trace.value(p.value).repr != trace.value(b.value).repr)
        })
        .map(|b| b.name.clone())
        .collect()
}

fn cut(text: &str, max: usize) -> String {
    replayground_shared::trace::cut_repr(text, max)
}

/// The object tag of a container, if it has one.
fn push_tag(out: &mut String, tags: &ObjectTags, object_id: u64) {
    let Some((n, shared)) = tags.tag(object_id) else {
        return;
    };
    let (class, title) = if shared {
        ("obj-tag shared", "the same object appears more than once here (id ")
    } else {
        ("obj-tag", "(id ")
    };
    let _ = write!(
        out,
        r#"<span class="{class}" style="--tag-hue: {}" title="Object #{n}: {title}{object_id})">#{n}</span>"#,
        (n * 67) % 360
    );
}

/// One value as HTML: a scalar as its repr (a function or class in a few words, with its
/// parameters from `code`: `function average(xs)`), a container as a `<details>` listing its parts.
/// `path` names the value's place; what keeps it open across steps is its object, or that
/// place when it has no object id (the `<summary>` carries the key as `data-path`; see
/// [`toggle_expanded`]). Written as a string rather than a Leptos view per
/// value: the recursive view cost ~20 KB of wasm.
#[allow(clippy::implicit_hasher)] // the page's own set, default hasher
pub fn push_value_html(
    out: &mut String,
    trace: &Trace,
    id: ValueId,
    tags: &ObjectTags,
    path: &str,
    expanded: &HashSet<String>,
    code: &str,
) {
    let value = trace.value(id);
    let type_class: String = value
        .type_name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let (children, truncated): (Vec<(String, ValueId)>, bool) = match &value.shape {
        Shape::Scalar | Shape::Elided => {
            let _ = write!(out, r#"<code class="val type-{type_class}" title=""#);
            push_escaped(out, &value.type_name);
            out.push_str("\">");
            let text = if value.shape.is_scalar() && crate::playground::heap::is_heap(value) {
                crate::playground::heap::short_form(value, code)
            } else {
                cut(&value.repr, SUMMARY_CHARS)
            };
            push_escaped(out, &text);
            out.push_str("</code>");
            push_tag(out, tags, value.object_id);
            return;
        }
        Shape::List { items, truncated } | Shape::Tuple { items, truncated } | Shape::Set { items, truncated } => (
            items.iter().enumerate().map(|(i, &v)| (i.to_string(), v)).collect(),
            *truncated,
        ),
        Shape::Dict { entries, truncated } => (
            entries
                .iter()
                .map(|&(k, v)| (cut(&trace.value(k).repr, 40), v))
                .collect(),
            *truncated,
        ),
        Shape::Object { attrs, truncated } => (
            attrs.iter().map(|b| (format!(".{}", b.name), b.value)).collect(),
            *truncated,
        ),
    };
    let key = expansion_key(value, path);
    out.push_str(r#"<details class="value-tree""#);
    if expanded.contains(&key) {
        out.push_str(" open");
    }
    out.push_str(r#"><summary data-path=""#);
    push_escaped(out, &key);
    out.push_str(r#""><span class="type-name">"#);
    push_escaped(out, &value.type_name);
    out.push_str("</span>");
    push_tag(out, tags, value.object_id);
    let _ = write!(out, r#" <code class="val type-{type_class}">"#);
    push_escaped(out, &cut(&value.repr, SUMMARY_CHARS));
    let plural = if children.len() == 1 { "" } else { "s" };
    let more = if truncated { "+" } else { "" };
    let _ = write!(
        out,
        r#"</code><span class="count">{}{more} item{}</span></summary><ul class="value-children">"#,
        children.len(),
        if truncated { "s" } else { plural }
    );
    for (key, child) in children {
        out.push_str(r#"<li><span class="key">"#);
        push_escaped(out, &key);
        out.push_str("</span>");
        push_value_html(out, trace, child, tags, &format!("{path}/{key}"), expanded, code);
        out.push_str("</li>");
    }
    out.push_str("</ul>");
    if truncated {
        out.push_str(r#"<p class="empty">(more items were not recorded)</p>"#);
    }
    out.push_str("</details>");
}

/// What keeps a container open across steps: its Python object when the tracer recorded
/// one (so every name bound to that object shows it open, and a new object bound to the
/// same name starts closed), otherwise its place (`activation/name/key...`).
fn expansion_key(value: &replayground_shared::trace::Value, path: &str) -> String {
    if value.object_id == 0 {
        path.to_owned()
    } else {
        format!("obj:{}", value.object_id)
    }
}

/// A click in the variables: a `<summary>` toggles its key in `expanded`, so that the value
/// stays open (or closed) across steps. The browser opens the clicked `<details>` itself;
/// the other names bound to the same object follow it at once.
#[allow(clippy::implicit_hasher)] // the page's own set, default hasher
pub fn toggle_expanded(ev: &web_sys::Event, expanded: &mut HashSet<String>) {
    let Some(key) = crate::playground::ui::data_of(ev, "data-path") else {
        return;
    };
    let open = !expanded.remove(&key);
    if open {
        expanded.insert(key.clone());
    }
    // Object keys are `obj:` and digits, safe in a selector; places are unique anyway.
    let Some(panel) = ev.current_target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else {
        return;
    };
    let Some(clicked) = ev.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else {
        return;
    };
    if !key.starts_with("obj:") {
        return;
    }
    let Ok(aliases) = panel.query_selector_all(&format!(r#"summary[data-path="{key}"]"#)) else {
        return;
    };
    for i in 0..aliases.length() {
        let Some(summary) = aliases.item(i).and_then(|n| n.dyn_into::<web_sys::Element>().ok()) else {
            continue;
        };
        if summary.contains(Some(clicked.as_ref())) {
            continue;
        }
        if let Some(details) = summary.parent_element() {
            let _ = if open {
                details.set_attribute("open", "")
            } else {
                details.remove_attribute("open")
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use replayground_shared::trace::{Outcome, Value};

    fn value(repr: &str, type_name: &str, object_id: u64, shape: Shape) -> Value {
        Value {
            repr: repr.into(),
            type_name: type_name.into(),
            object_id,
            shape,
        }
    }

    #[test]
    fn values_render_as_escaped_html_with_shared_tags() {
        let mut trace = Trace::empty(Outcome::Finished);
        trace.values = vec![
            value("1", "int", 10, Shape::Scalar),
            value("'<b>'", "str", 11, Shape::Scalar),
            value(
                "[1, '<b>']",
                "list",
                12,
                Shape::List {
                    items: vec![0, 1],
                    truncated: false,
                },
            ),
        ];
        let bindings = vec![
            Binding {
                name: "a".into(),
                value: 2,
            },
            Binding {
                name: "b".into(),
                value: 2,
            },
        ];
        let tags = ObjectTags::of(&trace, &bindings);
        let mut html = String::new();
        push_value_html(&mut html, &trace, 2, &tags, "0/a", &HashSet::new(), "");
        assert!(
            html.starts_with(r#"<details class="value-tree"><summary data-path="obj:12">"#),
            "{html}"
        );
        assert!(
            html.contains(r#"<span class="obj-tag shared" style="--tag-hue: 67""#),
            "{html}"
        );
        assert!(
            html.contains(r#"<code class="val type-list">[1, '&lt;b&gt;']</code>"#),
            "{html}"
        );
        assert!(html.contains(r#"<span class="count">2 items</span>"#), "{html}");
        assert!(
            html.contains(
                r#"<li><span class="key">1</span><code class="val type-str" title="str">'&lt;b&gt;'</code></li>"#
            ),
            "{html}"
        );
        // Opened under `a`, the same list is open under its alias `b` too, and stays open
        // when it moves to another name; a list without an object id is kept by place.
        let expanded = HashSet::from(["obj:12".to_owned(), "0/c".to_owned()]);
        let render = |trace: &Trace, path: &str| {
            let mut html = String::new();
            push_value_html(&mut html, trace, 2, &tags, path, &expanded, "");
            html
        };
        for path in ["0/a", "0/b", "1/renamed"] {
            let open = render(&trace, path);
            assert!(open.starts_with(r#"<details class="value-tree" open>"#), "{open}");
        }
        trace.values[2].object_id = 0;
        assert!(render(&trace, "0/c").starts_with(r#"<details class="value-tree" open><summary data-path="0/c">"#));
        assert!(render(&trace, "0/a").starts_with(r#"<details class="value-tree"><summary data-path="0/a">"#));
    }
}
