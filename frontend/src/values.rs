//! Variables as structured values: the trace's interned [`Value`]s, expandable, with
//! each container tagged by its object so that aliases are visibly the same object.

use std::collections::{HashMap, HashSet};

use leptos::prelude::*;
use replayground_shared::trace::{Binding, Shape};
use replayground_shared::{Trace, ValueId};

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

fn tag_view(tags: &ObjectTags, object_id: u64) -> Option<AnyView> {
    let (n, shared) = tags.tag(object_id)?;
    let class = if shared { "obj-tag shared" } else { "obj-tag" };
    let title = if shared {
        format!("Object #{n}: the same object appears more than once here (id {object_id})")
    } else {
        format!("Object #{n} (id {object_id})")
    };
    Some(
        view! {
            <span class=class style=format!("--tag-hue: {}", (n * 67) % 360) title=title>
                {format!("#{n}")}
            </span>
        }
        .into_any(),
    )
}

/// One value: a scalar as its repr, a container as a `<details>` listing its parts.
/// `path` names the value for keeping it open across steps.
#[allow(clippy::implicit_hasher)] // the signal's set is the page's own, default hasher
pub fn value_view(
    trace: &Trace,
    id: ValueId,
    tags: &ObjectTags,
    path: &str,
    expanded: RwSignal<HashSet<String>>,
) -> AnyView {
    let value = trace.value(id);
    let type_class = format!(
        "val type-{}",
        value.type_name.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    );
    let (children, truncated): (Vec<(String, ValueId)>, bool) = match &value.shape {
        Shape::Scalar | Shape::Elided => {
            return view! {
                <code class=type_class title=value.type_name.clone()>{cut(&value.repr, SUMMARY_CHARS)}</code>
                {tag_view(tags, value.object_id)}
            }
            .into_any();
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
    let open = expanded.with_untracked(|e| e.contains(path));
    let count = if truncated {
        format!("{}+ items", children.len())
    } else {
        format!("{} item{}", children.len(), if children.len() == 1 { "" } else { "s" })
    };
    let toggle_path = path.to_owned();
    let rows = children
        .into_iter()
        .map(|(key, child)| {
            let child_path = format!("{path}/{key}");
            view! {
                <li>
                    <span class="key">{key}</span>
                    {value_view(trace, child, tags, &child_path, expanded)}
                </li>
            }
        })
        .collect_view();
    view! {
        <details class="value-tree" open=open>
            <summary on:click=move |_| {
                let path = toggle_path.clone();
                expanded.update(|e| if !e.remove(&path) { e.insert(path); });
            }>
                <span class="type-name">{value.type_name.clone()}</span>
                {tag_view(tags, value.object_id)}
                " "
                <code class=type_class>{cut(&value.repr, SUMMARY_CHARS)}</code>
                <span class="count">{count}</span>
            </summary>
            <ul class="value-children">{rows}</ul>
            {truncated.then(|| view! { <p class="empty">"(more items were not recorded)"</p> })}
        </details>
    }
    .into_any()
}
