//! The trace's JSON as the page reads it. `Shape` and `Outcome` are internally tagged
//! enums (`"kind"`); serde reads those by buffering each one into a generic tree and
//! deserializing that a second time, which costs ~25 KB of wasm for the two. The flat
//! structs here read the same JSON in one pass and convert; the tests hold them to the
//! shared types' own serialisation.

use replayground_shared::protocol::{NeuralCapability, Prediction};
use replayground_shared::trace::{Binding, Limit, Shape};
use replayground_shared::{Event, Frame, Outcome, State, Trace, Value, ValueId};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ShapeKind {
    Scalar,
    List,
    Tuple,
    Set,
    Dict,
    Object,
    Elided,
}

/// Every field any [`Shape`] variant has.
#[derive(Debug, Deserialize)]
struct WireShape {
    kind: ShapeKind,
    #[serde(default)]
    items: Vec<ValueId>,
    #[serde(default)]
    entries: Vec<(ValueId, ValueId)>,
    #[serde(default)]
    attrs: Vec<Binding>,
    #[serde(default)]
    truncated: bool,
}

impl From<WireShape> for Shape {
    fn from(wire: WireShape) -> Self {
        let WireShape {
            kind,
            items,
            entries,
            attrs,
            truncated,
        } = wire;
        match kind {
            ShapeKind::Scalar => Self::Scalar,
            ShapeKind::List => Self::List { items, truncated },
            ShapeKind::Tuple => Self::Tuple { items, truncated },
            ShapeKind::Set => Self::Set { items, truncated },
            ShapeKind::Dict => Self::Dict { entries, truncated },
            ShapeKind::Object => Self::Object { attrs, truncated },
            ShapeKind::Elided => Self::Elided,
        }
    }
}

#[derive(Debug, Deserialize)]
struct WireValue {
    repr: String,
    #[serde(rename = "type")]
    type_name: String,
    object_id: u64,
    #[serde(default)]
    shape: Option<WireShape>,
}

impl From<WireValue> for Value {
    fn from(wire: WireValue) -> Self {
        Self {
            repr: wire.repr,
            type_name: wire.type_name,
            object_id: wire.object_id,
            shape: wire.shape.map_or(Shape::Scalar, Shape::from),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum OutcomeKind {
    Finished,
    UncaughtException,
    Exited,
    SyntaxError,
    LimitReached,
    Crashed,
}

/// Every field any [`Outcome`] variant has.
#[derive(Debug, Deserialize)]
struct WireOutcome {
    kind: OutcomeKind,
    exception_type: Option<String>,
    message: Option<String>,
    line: Option<u32>,
    column: Option<u32>,
    code: Option<i32>,
    limit: Option<Limit>,
    detail: Option<String>,
}

impl TryFrom<WireOutcome> for Outcome {
    type Error = &'static str;

    fn try_from(wire: WireOutcome) -> Result<Self, Self::Error> {
        let message = wire.message.ok_or("missing field `message` in the outcome");
        Ok(match wire.kind {
            OutcomeKind::Finished => Self::Finished,
            OutcomeKind::UncaughtException => Self::UncaughtException {
                exception_type: wire
                    .exception_type
                    .ok_or("missing field `exception_type` in the outcome")?,
                message: message?,
                line: wire.line,
            },
            OutcomeKind::Exited => Self::Exited {
                code: wire.code.ok_or("missing field `code` in the outcome")?,
            },
            OutcomeKind::SyntaxError => Self::SyntaxError {
                message: message?,
                line: wire.line,
                column: wire.column,
            },
            OutcomeKind::LimitReached => Self::LimitReached {
                limit: wire.limit.ok_or("missing field `limit` in the outcome")?,
                detail: wire.detail.ok_or("missing field `detail` in the outcome")?,
            },
            OutcomeKind::Crashed => Self::Crashed { message: message? },
        })
    }
}

/// `deserialize_with` for a list of [`Value`]s.
pub fn values<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Value>, D::Error> {
    Ok(Vec::<WireValue>::deserialize(deserializer)?
        .into_iter()
        .map(Value::from)
        .collect())
}

/// `deserialize_with` for an [`Outcome`].
pub fn outcome<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Outcome, D::Error> {
    Outcome::try_from(WireOutcome::deserialize(deserializer)?).map_err(D::Error::custom)
}

/// Every top-level field of a trace (`POST /api/trace`), a server message or an error body
/// the page reads, all optional: one flat struct, so the bundle holds one deserializer for
/// them all instead of one per message (each costs kilobytes of wasm).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct WireMessage {
    #[serde(rename = "type")]
    pub kind: String,
    pub version: Option<u32>,
    pub events: Option<Vec<Event>>,
    pub frames: Option<Vec<Frame>>,
    #[serde(deserialize_with = "some_values")]
    pub values: Option<Vec<Value>>,
    pub stdout: Option<String>,
    pub stderr: Option<String>,
    #[serde(deserialize_with = "some_outcome")]
    pub outcome: Option<Outcome>,
    pub sample: Option<u32>,
    pub text: Option<String>,
    pub message: Option<String>,
    pub neural: Option<NeuralCapability>,
    pub predictions: Option<Vec<Prediction>>,
    pub actual: Option<State>,
    /// The sentence of an error body (`{"error": "..."}`).
    pub error: Option<String>,
}

/// A WebSocket message from the server: the job it concerns and its body (`seq` is
/// not needed by the page).
#[derive(Debug, Deserialize)]
pub struct WireEnvelope {
    #[serde(default)]
    pub job: Option<u64>,
    pub body: WireMessage,
}

fn some_values<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<Value>>, D::Error> {
    values(deserializer).map(Some)
}

fn some_outcome<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Outcome>, D::Error> {
    outcome(deserializer).map(Some)
}

/// A field the message must have, or serde's `missing field` error.
pub fn required<T>(field: Option<T>, name: &'static str) -> Result<T, serde_json::Error> {
    field.ok_or_else(|| <serde_json::Error as serde::de::Error>::missing_field(name))
}

/// Reads a [`Trace`] from its JSON.
pub fn trace_from_json(json: &str) -> Result<Trace, serde_json::Error> {
    let wire: WireMessage = serde_json::from_str(json)?;
    Ok(Trace {
        version: required(wire.version, "version")?,
        events: required(wire.events, "events")?,
        frames: required(wire.frames, "frames")?,
        values: required(wire.values, "values")?,
        stdout: required(wire.stdout, "stdout")?,
        stderr: required(wire.stderr, "stderr")?,
        outcome: required(wire.outcome, "outcome")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(object_id: u64, shape: Shape) -> Value {
        Value {
            repr: format!("<{object_id}>"),
            type_name: "t".into(),
            object_id,
            shape,
        }
    }

    fn outcomes() -> Vec<Outcome> {
        vec![
            Outcome::Finished,
            Outcome::UncaughtException {
                exception_type: "ValueError".into(),
                message: "bad".into(),
                line: Some(3),
            },
            Outcome::UncaughtException {
                exception_type: "E".into(),
                message: String::new(),
                line: None,
            },
            Outcome::Exited { code: 2 },
            Outcome::SyntaxError {
                message: "invalid syntax".into(),
                line: Some(1),
                column: None,
            },
            Outcome::LimitReached {
                limit: Limit::CpuTime,
                detail: "5 s".into(),
            },
            Outcome::Crashed { message: "boom".into() },
        ]
    }

    #[test]
    fn traces_read_exactly_as_the_shared_types_write_them() {
        let mut trace: Trace =
            serde_json::from_str(include_str!("../../tests/fixtures/double.json")).expect("the fixture is a trace");
        trace.values.extend([
            value(1, Shape::Scalar),
            value(2, Shape::Elided),
            value(
                3,
                Shape::List {
                    items: vec![0, 1],
                    truncated: true,
                },
            ),
            value(
                4,
                Shape::Tuple {
                    items: vec![1],
                    truncated: false,
                },
            ),
            value(
                5,
                Shape::Set {
                    items: vec![],
                    truncated: false,
                },
            ),
            value(
                6,
                Shape::Dict {
                    entries: vec![(0, 1)],
                    truncated: false,
                },
            ),
            value(
                7,
                Shape::Object {
                    attrs: vec![Binding {
                        name: "x".into(),
                        value: 0,
                    }],
                    truncated: false,
                },
            ),
        ]);
        for outcome in outcomes() {
            trace.outcome = outcome;
            let json = serde_json::to_string(&trace).unwrap();
            assert_eq!(trace_from_json(&json).unwrap(), trace);
        }
    }

    #[test]
    fn a_broken_outcome_is_an_error_not_a_guess() {
        let read = |json: &str| outcome(&mut serde_json::Deserializer::from_str(json));
        assert_eq!(
            read(r#"{"kind":"exited","code":0}"#).unwrap(),
            Outcome::Exited { code: 0 }
        );
        let error = read(r#"{"kind":"limit_reached","detail":"x"}"#).unwrap_err();
        assert!(error.to_string().contains("missing field `limit`"), "{error}");
        assert!(read(r#"{"kind":"exploded"}"#).is_err());
    }
}
