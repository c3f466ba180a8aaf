//! What a call's arguments give the callee's parameters: a step into a statement whose first
//! frame is a plain function of the program ([`CodeFacts::first_callee`]) reaches its call
//! event, which shows each parameter bound to its argument (a name's repr as the caller's
//! state shows it, or a value [`super::evaluate`] computes) or to its default (only an
//! immutable literal: a mutable default may have changed since the `def` ran).

use replayground_shared::trace_lang::normalize_repr;
use replayground_shared::{State, StopKind};
use tree_sitter::Node;

use super::calls::alone_on;
use super::code::{CodeFacts, ScopeKind};
use super::evaluate::{self, Env};
use super::flow::{field, named, statements_at};
use super::values::Value;

impl CodeFacts {
    /// The function a step into the line event `from` calls first, and the reprs its call
    /// event shows for its parameters, where the caller's state tells them.
    pub(super) fn call_bindings(&self, from: &State) -> Option<(String, Vec<(String, String)>)> {
        let (function, line) = (from.function.as_deref()?, from.line?);
        if from.event != StopKind::Line || !self.plain_values() {
            return None;
        }
        let (callee, first) = self.first_callee(function, line)?;
        if !self.program.plain_functions.contains(&callee) {
            return None;
        }
        let (root, source) = (self.tree.root_node(), self.source.as_bytes());
        let scope = self
            .scopes
            .iter()
            .find(|s| s.name == callee && s.first == first && s.kind == ScopeKind::Function)?;
        let definition = *statements_at(root, scope.header).last()?;
        if definition.kind() != "function_definition" {
            return None;
        }
        let call = the_call(alone_on(root, line)?, &callee, source)?;
        let env = self.env(from);
        // A name's repr as shown (the very object), else the value computed.
        let repr_of = |node: Node<'_>| evaluate::repr_of(node, source, &env).map(|r| normalize_repr(&r));
        let mut positional = Vec::new();
        let mut keywords = Vec::new();
        for argument in named(field(call, "arguments")?) {
            match argument.kind() {
                "keyword_argument" => {
                    let name = field(argument, "name")?.utf8_text(source).ok()?;
                    keywords.push((name, repr_of(field(argument, "value")?)?));
                }
                "list_splat" | "dictionary_splat" | "parenthesized_list_splat" => return None,
                _ if keywords.is_empty() => positional.push(repr_of(argument)?),
                _ => return None,
            }
        }
        let no_names = Env {
            vars: &[],
            program: &self.program,
        };
        let parameters = named(field(definition, "parameters")?);
        if positional.len() > parameters.len() {
            return None;
        }
        let mut bound = Vec::new();
        for (i, parameter) in parameters.into_iter().enumerate() {
            let (name, default) = match parameter.kind() {
                "identifier" => (parameter.utf8_text(source).ok()?, None),
                "default_parameter" => (
                    field(parameter, "name")?.utf8_text(source).ok()?,
                    field(parameter, "value"),
                ),
                // Annotations, `*args`, `**kwargs`, `*` and `/`: left to the model.
                _ => return None,
            };
            let given = positional.get(i).cloned();
            let named_too = keywords.iter().position(|(k, _)| *k == name);
            let repr = match (given, named_too) {
                (Some(_), Some(_)) => return None,
                (Some(repr), None) => repr,
                (None, Some(k)) => keywords.remove(k).1,
                (None, None) => {
                    let value = evaluate::value(default?, source, &no_names)?;
                    if !matches!(value, Value::Int(_) | Value::Str(_) | Value::Bool(_) | Value::None) {
                        continue;
                    }
                    value.repr()?
                }
            };
            bound.push((name.to_owned(), repr));
        }
        // A keyword no parameter takes raises.
        keywords.is_empty().then_some((callee, bound))
    }
}

/// The one call of `callee` by name in `statement`.
fn the_call<'t>(statement: Node<'t>, callee: &str, source: &[u8]) -> Option<Node<'t>> {
    let mut found = None;
    let mut stack = vec![statement];
    while let Some(node) = stack.pop() {
        if node.kind() == "call"
            && field(node, "function").is_some_and(|f| f.kind() == "identifier" && f.utf8_text(source) == Ok(callee))
        {
            if found.is_some() {
                return None;
            }
            found = Some(node);
        }
        stack.extend(named(node));
    }
    found
}
