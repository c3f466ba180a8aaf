//! A program state as a person (or the neural debugger) sees it at a debugger stop.
//!
//! This is the JSON object `replayground debug` prints per stop and the unit the
//! model predicts:
//! `{"event": "line", "line": 3, "function": "f", "depth": 1, "locals": {"x": "1"}}`.
//! At module level `locals` is `{}` and the user's globals are in `globals`; `return`
//! and `exception` stops carry `value`. Reprs are cut to [`STATE_REPR_CHARS`].

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::trace::{Binding, EventKind, Trace, cut_repr};

/// Reprs in a [`State`] are cut to this many characters (a cut ends in `...`).
pub const STATE_REPR_CHARS: usize = 200;

/// The kind of a stop, with `end` for "the program finished".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StopKind {
    Call,
    Line,
    Return,
    Exception,
    End,
}

impl From<EventKind> for StopKind {
    fn from(kind: EventKind) -> Self {
        match kind {
            EventKind::Call => Self::Call,
            EventKind::Line => Self::Line,
            EventKind::Return => Self::Return,
            EventKind::Exception => Self::Exception,
        }
    }
}

impl StopKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Call => "call",
            Self::Line => "line",
            Self::Return => "return",
            Self::Exception => "exception",
            Self::End => "end",
        }
    }
}

/// Names and reprs in definition order (serialised as a JSON object).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vars(pub Vec<(String, String)>);

impl Vars {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    fn from_bindings(trace: &Trace, bindings: &[Binding]) -> Self {
        Self(
            bindings
                .iter()
                .filter(|b| !b.name.starts_with("__"))
                .map(|b| (b.name.clone(), cut_repr(&trace.value(b.value).repr, STATE_REPR_CHARS)))
                .collect(),
        )
    }
}

impl Serialize for Vars {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Vars {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct VarsVisitor;
        impl<'de> Visitor<'de> for VarsVisitor {
            type Value = Vars;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of names to repr strings")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Vars, A::Error> {
                let mut out = Vec::with_capacity(access.size_hint().unwrap_or(0));
                while let Some((k, v)) = access.next_entry::<String, String>()? {
                    out.push((k, v));
                }
                Ok(Vars(out))
            }
        }
        deserializer.deserialize_map(VarsVisitor)
    }
}

/// A debugger stop, in the CLI's and the model's JSON form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    pub event: StopKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locals: Option<Vars>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub globals: Option<Vars>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

impl State {
    /// The state after the program ended.
    pub fn end() -> Self {
        Self {
            event: StopKind::End,
            line: None,
            function: None,
            depth: None,
            locals: None,
            globals: None,
            value: None,
        }
    }

    /// The state at event `index` of `trace`, `depth` frames of the user's file deep
    /// (0 at module level). Use [`StateTree::state`](crate::StateTree::state), which
    /// knows the depth of every event even for generators resumed from elsewhere.
    pub fn at_event(trace: &Trace, index: usize, depth: u32) -> Self {
        let event = &trace.events[index];
        let frame = trace.frame(event.frame);
        let vars = Vars::from_bindings(trace, &event.locals);
        let (locals, globals) = if depth == 0 {
            (Vars::default(), Some(vars))
        } else {
            (vars, None)
        };
        let value = match event.kind {
            EventKind::Return | EventKind::Exception => Some(event.value.map_or_else(
                || "None".to_owned(),
                |v| cut_repr(&trace.value(v).repr, STATE_REPR_CHARS),
            )),
            EventKind::Call | EventKind::Line => None,
        };
        Self {
            event: event.kind.into(),
            line: Some(event.line),
            function: Some(frame.function.clone()),
            depth: Some(depth),
            locals: Some(locals),
            globals,
            value,
        }
    }

    /// Field-by-field differences from `other`, named as in the JSON form
    /// (`event`, `line`, `locals.x`, ...). Empty when the states are equal.
    pub fn differences(&self, other: &State) -> Vec<String> {
        let mut out = Vec::new();
        if self.event != other.event {
            out.push("event".to_owned());
        }
        if self.line != other.line {
            out.push("line".to_owned());
        }
        if self.function != other.function {
            out.push("function".to_owned());
        }
        if self.depth != other.depth {
            out.push("depth".to_owned());
        }
        if self.value != other.value {
            out.push("value".to_owned());
        }
        for (field, a, b) in [
            ("locals", &self.locals, &other.locals),
            ("globals", &self.globals, &other.globals),
        ] {
            let empty = Vars::default();
            let (a, b) = (a.as_ref().unwrap_or(&empty), b.as_ref().unwrap_or(&empty));
            let mut names: Vec<&str> = a.0.iter().chain(&b.0).map(|(n, _)| n.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            for name in names {
                if a.get(name) != b.get(name) {
                    out.push(format!("{field}.{name}"));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_form_matches_the_cli_contract() {
        let state = State {
            event: StopKind::Return,
            line: Some(4),
            function: Some("f".into()),
            depth: Some(1),
            locals: Some(Vars(vec![("b".into(), "2".into()), ("a".into(), "1".into())])),
            globals: None,
            value: Some("3".into()),
        };
        let json = serde_json::to_string(&state).unwrap();
        assert_eq!(
            json,
            r#"{"event":"return","line":4,"function":"f","depth":1,"locals":{"b":"2","a":"1"},"value":"3"}"#
        );
        assert_eq!(serde_json::from_str::<State>(&json).unwrap(), state);
        assert_eq!(serde_json::to_string(&State::end()).unwrap(), r#"{"event":"end"}"#);
    }

    #[test]
    fn differences_name_each_field() {
        let a = State {
            locals: Some(Vars(vec![("x".into(), "1".into())])),
            ..State::end()
        };
        let b = State {
            locals: Some(Vars(vec![("x".into(), "2".into()), ("y".into(), "0".into())])),
            ..State::end()
        };
        assert_eq!(a.differences(&b), vec!["locals.x", "locals.y"]);
        assert!(a.differences(&a).is_empty());
    }
}
