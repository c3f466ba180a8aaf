//! Runs `tracer.py` in a [`Sandbox`] and assembles a [`Trace`] from its JSON lines.
//!
//! The line protocol is documented at the top of `tracer.py`. Lines are parsed as they
//! arrive ([`TraceAssembler`]), so memory holds the trace, never the raw stream. A stream
//! that is malformed or cut short still yields a trace: its outcome says what happened
//! (the limit that stopped the run, or `crashed` with a clear message).
//!
//! The stream is untrusted: the traced program shares the tracer's process and can write
//! to it (see "What the program can still do" in `tracer.py`). So the assembler enforces
//! every limit itself (events, assembled bytes, output, name length), refuses records
//! that break the protocol's invariants, and checks the final line's key and counts.

use std::hash::{BuildHasher, Hasher};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use replayground_shared::trace::{Binding, FrameId, Shape, TRACE_FORMAT_VERSION};
use replayground_shared::{Event, EventKind, Frame, Limit, Outcome, Trace, Value, ValueId};
use serde::Deserialize;

use crate::sandbox::{Job, RunLimits, RunReport, Sandbox, SandboxError, Termination};

/// The tracer, run as `python3 -s -c TRACER_SOURCE`.
pub const TRACER_SOURCE: &str = include_str!("tracer.py");

/// Where Debian's interpreter lives (a pyenv or venv python may be unreadable by the sandbox uid).
pub const DEFAULT_PYTHON: &str = "/usr/bin/python3";

/// A trace plus what the sandbox reported about the run.
#[derive(Debug, Clone)]
pub struct TraceRun {
    pub trace: Trace,
    pub report: RunReport,
}

/// Traces Python programs in a sandbox.
#[derive(Clone)]
pub struct Tracer {
    sandbox: Arc<dyn Sandbox>,
    python: PathBuf,
    limits: RunLimits,
}

impl std::fmt::Debug for Tracer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracer")
            .field("sandbox", &self.sandbox.describe())
            .field("python", &self.python)
            .field("limits", &self.limits)
            .finish()
    }
}

impl Tracer {
    /// `python` is the interpreter's absolute path as seen inside the sandbox.
    pub fn new(sandbox: Arc<dyn Sandbox>, python: impl Into<PathBuf>, limits: RunLimits) -> Self {
        Self {
            sandbox,
            python: python.into(),
            limits,
        }
    }

    /// The limits [`Tracer::trace`] uses.
    pub fn limits(&self) -> &RunLimits {
        &self.limits
    }

    pub fn sandbox(&self) -> &Arc<dyn Sandbox> {
        &self.sandbox
    }

    pub fn python(&self) -> &Path {
        &self.python
    }

    /// Traces `code` fed with `stdin`, under the tracer's limits.
    pub async fn trace(&self, code: &str, stdin: &str) -> Result<Trace, SandboxError> {
        Ok(self.run(code, stdin, &self.limits).await?.trace)
    }

    /// Traces `code` under `limits`, and returns the sandbox's report as well.
    pub async fn run(&self, code: &str, stdin: &str, limits: &RunLimits) -> Result<TraceRun, SandboxError> {
        self.run_observed(code, stdin, limits, &mut |_| {}).await
    }

    /// Like [`Tracer::run`], and shows `observe` the assembler after every piece of the
    /// tracer's output, so that a trace can be streamed while the program runs.
    pub async fn run_observed(
        &self,
        code: &str,
        stdin: &str,
        limits: &RunLimits,
        observe: &mut (dyn FnMut(&TraceAssembler) + Send),
    ) -> Result<TraceRun, SandboxError> {
        let key = run_key();
        let job = tracer_job(&self.python, code, stdin, limits, &key);
        let mut assembler = TraceAssembler::new(limits, Some(key));
        let report = self
            .sandbox
            .run(job, &mut |chunk: &[u8]| {
                let flow = assembler.feed(chunk);
                observe(&assembler);
                flow
            })
            .await?;
        let trace = assembler.finish(&report, limits);
        Ok(TraceRun { trace, report })
    }
}

/// A fresh random key for one run: the tracer signs its final line with it, so a program
/// that writes a final line of its own into the stream without reading the tracer's memory
/// is caught.
fn run_key() -> String {
    let random = || std::collections::hash_map::RandomState::new().build_hasher().finish();
    format!("{:016x}{:016x}", random(), random())
}

/// The sandbox job that runs the tracer on `code`; `key` signs the final line.
pub fn tracer_job(python: &Path, code: &str, stdin: &str, limits: &RunLimits, key: &str) -> Job {
    let request = serde_json::json!({
        "key": key,
        "code": code,
        "stdin": stdin,
        "max_events": limits.max_events,
        "max_output_bytes": limits.max_output_bytes,
        "repr_chars": limits.repr_chars,
        "max_depth": limits.max_depth,
        "max_items": limits.max_items,
        "recursion_limit": limits.recursion_limit,
        "cpu_seconds": limits.cpu_time.as_secs_f64(),
        "memory_bytes": limits.memory_bytes,
    });
    Job {
        program: python.to_path_buf(),
        // -s: no user site-packages; the tracer reads its request from stdin.
        args: vec!["-s".into(), "-c".into(), TRACER_SOURCE.into()],
        stdin: request.to_string().into_bytes(),
        limits: limits.clone(),
    }
}

#[derive(Deserialize)]
struct FrameLine {
    id: FrameId,
    function: String,
    parent: Option<FrameId>,
    depth: u32,
    is_generator: bool,
    #[serde(default)]
    called_from_library: bool,
}

#[derive(Deserialize)]
struct ValueLine {
    id: ValueId,
    repr: String,
    #[serde(rename = "type")]
    type_name: String,
    object_id: u64,
    #[serde(default)]
    shape: Shape,
}

#[derive(Deserialize)]
struct EventLine {
    k: EventKind,
    f: FrameId,
    l: u32,
    o: u32,
    e: u32,
    #[serde(default)]
    v: Option<Vec<(String, ValueId)>>,
    #[serde(default)]
    r: Option<ValueId>,
    #[serde(default)]
    i: bool,
    #[serde(default)]
    g: bool,
}

#[derive(Deserialize)]
struct OutputLine {
    fd: u8,
    s: String,
}

#[derive(Deserialize)]
struct EndLine {
    outcome: Outcome,
    /// The run's key, as the server sent it in the request.
    #[serde(default)]
    k: Option<String>,
    /// Frames, values and events the tracer wrote.
    #[serde(default)]
    n: Option<[u64; 3]>,
}

/// Bytes the JSON form of an event takes at most besides its locals (kind, frame, line,
/// output offsets and flags).
const EVENT_JSON_BYTES: u64 = 180;
/// Bytes of the trace's JSON besides its lists and output, outcome included.
const TRACE_JSON_BYTES: u64 = 2048;
/// Bytes of one binding's JSON besides its name: `{"name":"","value":4294967295},`.
const BINDING_JSON_BYTES: u64 = 32;

/// Builds a [`Trace`] from the tracer's output, one chunk at a time, within the run's
/// limits.
#[derive(Debug)]
pub struct TraceAssembler {
    /// At most this many events ([`RunLimits::max_events`]).
    max_events: u32,
    /// The assembled trace's JSON may not grow past this ([`RunLimits::max_stdout_bytes`]).
    max_bytes: u64,
    /// Program output kept ([`RunLimits::max_output_bytes`]).
    max_output: u64,
    /// Names are cut to this many characters, like reprs ([`RunLimits::repr_chars`]).
    name_chars: usize,
    /// The key the final line must carry; `None` accepts a final line without one.
    key: Option<String>,
    partial: Vec<u8>,
    line_no: usize,
    events: Vec<Event>,
    frames: Vec<Frame>,
    values: Vec<Value>,
    /// Locals of each frame's latest event, with their JSON size: an event line leaves
    /// them out when unchanged, and the events share one allocation.
    frame_locals: Vec<(Arc<[Binding]>, u64)>,
    /// The JSON size of the trace assembled so far (an upper estimate).
    bytes: u64,
    stdout: String,
    stderr: String,
    outcome: Option<Outcome>,
    /// The first malformed line; everything after it is ignored.
    error: Option<String>,
    /// A limit this assembler enforced; everything after it is ignored.
    stopped: Option<Limit>,
}

impl Default for TraceAssembler {
    fn default() -> Self {
        Self::new(&RunLimits::default(), None)
    }
}

impl TraceAssembler {
    /// An assembler that enforces `limits`; with a `key`, the final line must carry it.
    pub fn new(limits: &RunLimits, key: Option<String>) -> Self {
        Self {
            max_events: limits.max_events,
            max_bytes: limits.max_stdout_bytes,
            max_output: limits.max_output_bytes,
            name_chars: limits.repr_chars.max(1) as usize,
            key,
            partial: Vec::new(),
            line_no: 0,
            events: Vec::new(),
            frames: Vec::new(),
            values: Vec::new(),
            frame_locals: Vec::new(),
            bytes: TRACE_JSON_BYTES,
            stdout: String::new(),
            stderr: String::new(),
            outcome: None,
            error: None,
            stopped: None,
        }
    }

    /// The limit this assembler stopped the stream at, if any.
    pub fn stopped(&self) -> Option<Limit> {
        self.stopped
    }

    /// The frames parsed so far. With [`TraceAssembler::values`] and
    /// [`TraceAssembler::events`]: a prefix of the finished trace, unless the stream
    /// turns out to be malformed or cut inside an output line (see [`TraceAssembler::finish`]).
    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }

    /// The values parsed so far.
    pub fn values(&self) -> &[Value] {
        &self.values
    }

    /// The events parsed so far.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    fn done(&self) -> bool {
        self.error.is_some() || self.stopped.is_some()
    }

    /// Consumes a chunk of the stream; complete lines are parsed at once. `Break` once
    /// the stream is malformed or over a limit: the rest is not wanted.
    pub fn feed(&mut self, chunk: &[u8]) -> ControlFlow<()> {
        if self.done() {
            return ControlFlow::Break(());
        }
        let mut rest = chunk;
        while let Some(newline) = rest.iter().position(|&b| b == b'\n') {
            let (head, tail) = rest.split_at(newline);
            rest = &tail[1..];
            if self.partial.is_empty() {
                self.line(head);
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(head);
                self.line(&line);
            }
            if self.done() {
                return ControlFlow::Break(());
            }
        }
        if self.partial.len() + rest.len() > usize::try_from(self.max_bytes).unwrap_or(usize::MAX) {
            // One line longer than the whole trace may be.
            self.stopped = Some(Limit::Output);
            return ControlFlow::Break(());
        }
        self.partial.extend_from_slice(rest);
        ControlFlow::Continue(())
    }

    /// Counts `bytes` more of assembled JSON; past the cap the stream stops here.
    fn grow(&mut self, bytes: u64) -> bool {
        self.bytes += bytes;
        if self.bytes > self.max_bytes {
            self.stopped = Some(Limit::Output);
            return false;
        }
        true
    }

    fn line(&mut self, line: &[u8]) {
        self.line_no += 1;
        if line.is_empty() {
            return;
        }
        if self.outcome.is_some() {
            self.fail("a line follows the final one");
            return;
        }
        // An event's size is counted with its locals (see `event`); other lines as they are.
        if !line.starts_with(br#"{"t":"e""#) && !self.grow(line.len() as u64) {
            return;
        }
        if let Err(message) = self.parse(line) {
            self.fail(&message);
        }
    }

    fn fail(&mut self, message: &str) {
        self.error = Some(format!("line {}: {message}", self.line_no));
    }

    fn parse(&mut self, line: &[u8]) -> Result<(), String> {
        let tag = match line {
            [b'{', b'"', b't', b'"', b':', b'"', tag, b'"', ..] => *tag,
            _ => return Err("it does not start with a tag".to_owned()),
        };
        let json_error = |e: serde_json::Error| e.to_string();
        match tag {
            b'e' => {
                let e: EventLine = serde_json::from_slice(line).map_err(json_error)?;
                self.event(e)
            }
            b'v' => {
                let v: ValueLine = serde_json::from_slice(line).map_err(json_error)?;
                if v.id as usize != self.values.len() {
                    return Err(format!("value {} arrived out of order", v.id));
                }
                if v.shape.children().any(|c| c as usize >= self.values.len()) {
                    return Err(format!("value {} refers to a value not yet defined", v.id));
                }
                self.values.push(Value {
                    repr: v.repr,
                    type_name: v.type_name,
                    object_id: v.object_id,
                    shape: v.shape,
                });
                Ok(())
            }
            b'f' => {
                let f: FrameLine = serde_json::from_slice(line).map_err(json_error)?;
                if f.id as usize != self.frames.len() {
                    return Err(format!("frame {} arrived out of order", f.id));
                }
                let expected_depth = match f.parent {
                    Some(p) if p >= f.id => return Err(format!("frame {} has a parent defined after it", f.id)),
                    Some(p) => Some(self.frames[p as usize].depth + 1),
                    None => None,
                };
                if expected_depth.is_some_and(|d| d != f.depth) || (f.parent.is_none() && f.depth > 1) {
                    return Err(format!("frame {} has depth {} under its parent", f.id, f.depth));
                }
                self.frames.push(Frame {
                    function: f.function,
                    parent: f.parent,
                    depth: f.depth,
                    is_generator: f.is_generator,
                    called_from_library: f.called_from_library,
                });
                self.frame_locals.push((Arc::from([]), 2));
                Ok(())
            }
            b'o' => {
                let o: OutputLine = serde_json::from_slice(line).map_err(json_error)?;
                if (self.stdout.len() + self.stderr.len() + o.s.len()) as u64 > self.max_output {
                    self.stopped = Some(Limit::Output);
                    return Ok(());
                }
                match o.fd {
                    1 => self.stdout.push_str(&o.s),
                    2 => self.stderr.push_str(&o.s),
                    fd => return Err(format!("output for unknown fd {fd}")),
                }
                Ok(())
            }
            b'x' => {
                let end: EndLine = serde_json::from_slice(line).map_err(json_error)?;
                self.check_end(&end)?;
                self.outcome = Some(end.outcome);
                Ok(())
            }
            other => Err(format!("unknown tag {:?}", char::from(other))),
        }
    }

    /// The final line must carry the run's key and the counts of what the tracer wrote:
    /// a line the program wrote into the stream changes the counts.
    fn check_end(&self, end: &EndLine) -> Result<(), String> {
        let Some(key) = &self.key else {
            return Ok(());
        };
        let counts = [self.frames.len(), self.values.len(), self.events.len()].map(|n| n as u64);
        if end.k.as_deref() != Some(key.as_str()) || end.n != Some(counts) {
            return Err(
                "the final line does not match the stream, so the program wrote into the tracer's output".to_owned(),
            );
        }
        Ok(())
    }

    fn event(&mut self, e: EventLine) -> Result<(), String> {
        if self.events.len() >= self.max_events as usize {
            self.stopped = Some(Limit::Events);
            return Ok(());
        }
        let n_values = self.values.len();
        let name_chars = self.name_chars;
        let Some((last_locals, last_bytes)) = self.frame_locals.get_mut(e.f as usize) else {
            return Err(format!("an event refers to frame {} before it was defined", e.f));
        };
        if e.r.is_some_and(|r| r as usize >= n_values) {
            return Err("an event refers to a value not yet defined".to_owned());
        }
        if let Some(pairs) = e.v {
            if pairs.iter().any(|&(_, v)| v as usize >= n_values) {
                return Err("an event's locals refer to a value not yet defined".to_owned());
            }
            let locals: Vec<Binding> = pairs
                .into_iter()
                .map(|(name, value)| Binding {
                    name: cut_name(name, name_chars),
                    value,
                })
                .collect();
            *last_bytes = 2 + locals
                .iter()
                .map(|b| json_len(&b.name) + BINDING_JSON_BYTES)
                .sum::<u64>();
            *last_locals = locals.into();
        }
        let locals = Arc::clone(last_locals);
        let bytes = EVENT_JSON_BYTES + *last_bytes;
        if !self.grow(bytes) {
            return Ok(());
        }
        self.events.push(Event {
            kind: e.k,
            frame: e.f,
            line: e.l,
            locals,
            value: e.r,
            stdout_len: e.o,
            stderr_len: e.e,
            internal: e.i,
            generator_exit: e.g,
        });
        Ok(())
    }

    /// The trace, once the run is over. `report` explains a stream without a final line.
    pub fn finish(mut self, report: &RunReport, limits: &RunLimits) -> Trace {
        let killed = !matches!(report.termination, Termination::Exited(_));
        if !self.done() && self.outcome.is_none() && !self.partial.is_empty() && !killed {
            // A last line without its newline from a tracer that exited by itself.
            let line = std::mem::take(&mut self.partial);
            self.line(&line);
        }
        let outcome = if let Some(error) = self.error.take() {
            Outcome::Crashed {
                message: format!("the tracer's output could not be read ({error})"),
            }
        } else if let Some(limit) = self.stopped {
            Outcome::LimitReached {
                limit,
                detail: limit_detail(limit, limits),
            }
        } else if let Some(outcome) = self.outcome.take() {
            outcome
        } else {
            unreported_outcome(report, limits)
        };
        // The stream may have been cut between an output line and the events it precedes.
        let (out_len, err_len) = (clamp_u32(self.stdout.len()), clamp_u32(self.stderr.len()));
        for event in &mut self.events {
            event.stdout_len = event.stdout_len.min(out_len);
            event.stderr_len = event.stderr_len.min(err_len);
        }
        let trace = Trace {
            version: TRACE_FORMAT_VERSION,
            events: self.events,
            frames: self.frames,
            values: self.values,
            stdout: self.stdout,
            stderr: self.stderr,
            outcome,
        };
        match trace.validate() {
            Ok(()) => trace,
            Err(e) => {
                let mut empty = Trace::empty(Outcome::Crashed {
                    message: format!("the tracer produced {e}"),
                });
                empty.stdout = trace.stdout;
                empty.stderr = trace.stderr;
                empty
            }
        }
    }
}

/// The most bytes `s` takes as a JSON string's contents: a control character, a quote
/// or a backslash takes at most six (`\u001f`).
fn json_len(s: &str) -> u64 {
    let escaped = s.bytes().filter(|&b| b < 0x20 || b == b'"' || b == b'\\').count();
    (s.len() + 5 * escaped) as u64
}

/// A name longer than a repr may be is cut like one (Python allows names of any length).
fn cut_name(mut name: String, chars: usize) -> String {
    if let Some((at, _)) = name.char_indices().nth(chars) {
        name.truncate(at);
        name.push_str("...");
    }
    name
}

fn clamp_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The outcome of a run whose tracer never wrote its final line.
fn unreported_outcome(report: &RunReport, limits: &RunLimits) -> Outcome {
    match report.termination {
        Termination::Stopped(limit) => Outcome::LimitReached {
            limit,
            detail: limit_detail(limit, limits),
        },
        Termination::Exited(code) => Outcome::Crashed {
            message: format!(
                "the tracer ended without reporting how the program ended (exit status {code}){}",
                stderr_hint(&report.stderr)
            ),
        },
        Termination::Signaled(signal) => Outcome::Crashed {
            message: format!(
                "the tracer was killed by signal {signal}{}",
                stderr_hint(&report.stderr)
            ),
        },
    }
}

fn limit_detail(limit: Limit, limits: &RunLimits) -> String {
    match limit {
        Limit::WallTime => format!(
            "the program ran longer than {} of wall-clock time",
            seconds(limits.wall_time)
        ),
        Limit::CpuTime => format!("the program used more than {} of CPU time", seconds(limits.cpu_time)),
        Limit::Output => format!(
            "the trace grew past {} MiB (or the output past {} KiB); the program prints or changes too much per step",
            limits.max_stdout_bytes >> 20,
            limits.max_output_bytes >> 10
        ),
        Limit::Memory => format!(
            "the program ran out of memory (limit {} MiB)",
            limits.memory_bytes >> 20
        ),
        Limit::Events => format!("the program ran more than {} steps", limits.max_events),
        Limit::RecursionDepth => format!("the program nested calls more than {} deep", limits.recursion_limit),
    }
}

fn seconds(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

fn stderr_hint(stderr: &str) -> String {
    let stderr = stderr.trim();
    if stderr.is_empty() {
        return String::new();
    }
    let tail: String = {
        let chars: Vec<char> = stderr.chars().collect();
        chars[chars.len().saturating_sub(600)..].iter().collect()
    };
    format!(": {tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(termination: Termination) -> RunReport {
        RunReport {
            termination,
            stderr: String::new(),
            stdout_bytes: 0,
            elapsed: Duration::ZERO,
            uid: None,
            stray_processes: 0,
        }
    }

    const STREAM: &str = concat!(
        r#"{"t":"f","id":0,"function":"<module>","parent":null,"depth":0,"is_generator":false,"called_from_library":false}"#,
        "\n",
        r#"{"t":"e","k":"call","f":0,"l":1,"o":0,"e":0,"v":[]}"#,
        "\n",
        r#"{"t":"v","id":0,"repr":"1","type":"int","object_id":7}"#,
        "\n",
        r#"{"t":"v","id":1,"repr":"[1]","type":"list","object_id":8,"shape":{"kind":"list","items":[0],"truncated":false}}"#,
        "\n",
        r#"{"t":"o","fd":1,"s":"hé\n"}"#,
        "\n",
        r#"{"t":"e","k":"line","f":0,"l":2,"o":4,"e":0,"v":[["x",1]]}"#,
        "\n",
        r#"{"t":"e","k":"line","f":0,"l":3,"o":4,"e":0}"#,
        "\n",
        r#"{"t":"x","outcome":{"kind":"finished"}}"#,
        "\n",
    );

    #[test]
    fn assembles_a_stream_fed_in_arbitrary_chunks() {
        for chunk in [1, 3, 7, 64, 10_000] {
            let mut a = TraceAssembler::default();
            for piece in STREAM.as_bytes().chunks(chunk) {
                let _ = a.feed(piece);
            }
            let trace = a.finish(&report(Termination::Exited(0)), &RunLimits::default());
            assert_eq!(trace.outcome, Outcome::Finished);
            assert_eq!(trace.events.len(), 3);
            assert_eq!(
                *trace.events[2].locals,
                [Binding {
                    name: "x".into(),
                    value: 1
                }]
            );
            assert_eq!(trace.stdout, "hé\n");
            assert_eq!(
                trace.values[1].shape,
                Shape::List {
                    items: vec![0],
                    truncated: false
                }
            );
        }
    }

    #[test]
    fn a_stream_cut_by_a_limit_reports_the_limit() {
        let cut = &STREAM[..STREAM.find(r#"{"t":"e","k":"line","f":0,"l":3"#).unwrap() + 10];
        let mut a = TraceAssembler::default();
        let _ = a.feed(cut.as_bytes());
        let trace = a.finish(&report(Termination::Stopped(Limit::WallTime)), &RunLimits::default());
        assert!(
            matches!(
                trace.outcome,
                Outcome::LimitReached {
                    limit: Limit::WallTime,
                    ..
                }
            ),
            "{:?}",
            trace.outcome
        );
        assert_eq!(trace.events.len(), 2);
    }

    #[test]
    fn garbage_becomes_a_clear_crash() {
        let mut a = TraceAssembler::default();
        let _ = a.feed(b"{\"t\":\"e\",\"k\":\"line\",\"f\":0}\n");
        let trace = a.finish(&report(Termination::Exited(0)), &RunLimits::default());
        let Outcome::Crashed { message } = trace.outcome else {
            panic!("{:?}", trace.outcome)
        };
        assert!(message.contains("line 1"), "{message}");

        let mut a = TraceAssembler::default();
        let _ = a.feed(b"Traceback (most recent call last):\n");
        let trace = a.finish(&report(Termination::Exited(1)), &RunLimits::default());
        assert!(matches!(trace.outcome, Outcome::Crashed { .. }));
    }

    fn limits(max_events: u32, max_bytes: u64) -> RunLimits {
        RunLimits {
            max_events,
            max_stdout_bytes: max_bytes,
            ..RunLimits::default()
        }
    }

    const FRAME: &str = r#"{"t":"f","id":0,"function":"<module>","parent":null,"depth":0,"is_generator":false}"#;
    const EVENT: &str = r#"{"t":"e","k":"line","f":0,"l":1,"o":0,"e":0}"#;

    #[test]
    fn the_assembler_enforces_the_step_limit_itself() {
        let mut a = TraceAssembler::new(&limits(10, 1 << 30), None);
        let _ = a.feed(format!("{FRAME}\n").as_bytes());
        let mut flow = ControlFlow::Continue(());
        for _ in 0..1000 {
            flow = a.feed(format!("{EVENT}\n").as_bytes());
        }
        assert!(flow.is_break(), "the stream is refused past the limit");
        let trace = a.finish(&report(Termination::Stopped(Limit::Output)), &limits(10, 1 << 30));
        assert_eq!(trace.events.len(), 10);
        assert!(matches!(
            trace.outcome,
            Outcome::LimitReached {
                limit: Limit::Events,
                ..
            }
        ));
    }

    #[test]
    fn unchanged_locals_are_shared_and_counted_against_the_byte_cap() {
        let name = "n".repeat(5000);
        let head = format!(
            "{FRAME}\n{{\"t\":\"v\",\"id\":0,\"repr\":\"1\",\"type\":\"int\",\"object_id\":1}}\n\
             {{\"t\":\"e\",\"k\":\"line\",\"f\":0,\"l\":1,\"o\":0,\"e\":0,\"v\":[[\"{name}\",0]]}}\n"
        );
        let cap = 100_000;
        let mut a = TraceAssembler::new(&limits(100_000, cap), None);
        let _ = a.feed(head.as_bytes());
        let mut events = 1;
        while a.feed(format!("{EVENT}\n").as_bytes()).is_continue() {
            events += 1;
            assert!(events < 1000, "the byte cap never stopped the stream");
        }
        assert!(Arc::ptr_eq(&a.events()[0].locals, &a.events()[1].locals));
        let trace = a.finish(&report(Termination::Stopped(Limit::Output)), &limits(100_000, cap));
        assert_eq!(
            trace.events[0].locals[0].name.chars().count(),
            1003,
            "names are cut like reprs"
        );
        assert!(matches!(
            trace.outcome,
            Outcome::LimitReached {
                limit: Limit::Output,
                ..
            }
        ));
        let json = serde_json::to_vec(&trace).unwrap();
        assert!(json.len() as u64 <= cap, "{} bytes", json.len());
    }

    #[test]
    fn the_final_line_must_carry_the_key_and_the_counts() {
        let stream = |end: &str| format!("{FRAME}\n{EVENT}\n{end}\n");
        let outcome_of = |end: &str| {
            let mut a = TraceAssembler::new(&RunLimits::default(), Some("k1".into()));
            let _ = a.feed(stream(end).as_bytes());
            a.finish(&report(Termination::Exited(0)), &RunLimits::default()).outcome
        };
        assert_eq!(
            outcome_of(r#"{"t":"x","k":"k1","n":[1,0,1],"outcome":{"kind":"finished"}}"#),
            Outcome::Finished
        );
        for forged in [
            r#"{"t":"x","outcome":{"kind":"finished"}}"#,
            r#"{"t":"x","k":"k2","n":[1,0,1],"outcome":{"kind":"finished"}}"#,
            r#"{"t":"x","k":"k1","n":[1,0,2],"outcome":{"kind":"finished"}}"#,
        ] {
            let outcome = outcome_of(forged);
            assert!(matches!(outcome, Outcome::Crashed { .. }), "{forged}: {outcome:?}");
        }
    }

    #[test]
    fn frames_must_nest() {
        let mut a = TraceAssembler::default();
        let _ = a.feed(format!("{FRAME}\n").as_bytes());
        let deep = r#"{"t":"f","id":1,"function":"f","parent":0,"depth":7,"is_generator":false}"#;
        assert!(a.feed(format!("{deep}\n").as_bytes()).is_break());
        let trace = a.finish(&report(Termination::Exited(0)), &RunLimits::default());
        let Outcome::Crashed { message } = trace.outcome else {
            panic!("{:?}", trace.outcome)
        };
        assert!(message.contains("depth"), "{message}");
    }

    #[test]
    fn a_silent_exit_says_what_stderr_said() {
        let mut r = report(Termination::Exited(1));
        r.stderr = "bwrap: execvp /nope: No such file or directory\n".into();
        let trace = TraceAssembler::default().finish(&r, &RunLimits::default());
        let Outcome::Crashed { message } = trace.outcome else {
            panic!()
        };
        assert!(message.contains("No such file"), "{message}");
    }
}
