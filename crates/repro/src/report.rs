//! Reading a bug report (RepGen §3.2), the rules the Restructure stage
//! ([`crate::restructure`]) and the checks share.
//!
//! The rules parse Python stack traces (the last exception's type and message, its
//! frames), recognise the cues of the deep-learning symptom taxonomy (NaN loss,
//! exploding loss, shape words, "slow", warnings, save/reload differences, ...), split
//! text pasted from an issue tracker at its headings into problem / observed / expected
//! / steps, take code fences as snippets, and detect the framework. [`classify`] is
//! also what the runtime check applies to a candidate's output, so a report and a run
//! are judged by the same rules.

use std::fmt::Write as _;
use std::sync::LazyLock;

use regex::Regex;
use replayground_shared::repro::{BugReport, Symptom, SymptomClass};

/// One frame of a Python stack trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceFrame {
    pub file: String,
    pub line: u32,
    pub function: String,
}

/// The last exception of a Python stack trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Traceback {
    /// The exception's class without its module, e.g. `ValueError`.
    pub error_type: String,
    /// The exception's message (first line).
    pub message: String,
    pub frames: Vec<TraceFrame>,
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid built-in pattern")
}

static FRAME: LazyLock<Regex> = LazyLock::new(|| re(r#"^\s*File "([^"]+)", line (\d+)(?:, in (\S+))?"#));
/// An exception line: a (dotted) class name ending in Error/Exception/... then an optional message.
static EXCEPTION_LINE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^((?:[A-Za-z_][\w]*\.)*([A-Z]\w*(?:Error|Exception|Exit|Interrupt|Fault|Failure)|StopIteration|KeyboardInterrupt))(?::\s*(.*))?$",
    )
});
/// An exception named anywhere in prose, e.g. "I get a `ValueError`: shapes ...".
static EXCEPTION_IN_TEXT: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(?:[A-Za-z_]\w*\.)*([A-Z]\w*(?:Error|Exception))\b(?::\s*([^\n]*))?"));

/// The last stack trace in `text` (or, without one, the last line that names an exception).
pub fn parse_traceback(text: &str) -> Option<Traceback> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .rposition(|l| l.trim_start().starts_with("Traceback (most recent call last)"));
    if let Some(start) = start {
        let mut frames = Vec::new();
        for line in &lines[start + 1..] {
            if let Some(c) = FRAME.captures(line) {
                frames.push(TraceFrame {
                    file: c[1].to_owned(),
                    line: c[2].parse().unwrap_or(0),
                    function: c.get(3).map_or_else(String::new, |m| m.as_str().to_owned()),
                });
                continue;
            }
            let trimmed = line.trim();
            if let Some(c) = EXCEPTION_LINE.captures(trimmed) {
                return Some(Traceback {
                    error_type: c[2].to_owned(),
                    message: c.get(3).map_or_else(String::new, |m| m.as_str().trim().to_owned()),
                    frames,
                });
            }
        }
    }
    let found = EXCEPTION_IN_TEXT.captures_iter(text).last()?;
    Some(Traceback {
        error_type: found[1].to_owned(),
        message: found.get(2).map_or_else(String::new, |m| m.as_str().trim().to_owned()),
        frames: Vec::new(),
    })
}

/// A cue of the symptom taxonomy: its label and what it looks like in text.
struct Cue {
    label: &'static str,
    pattern: Regex,
}

static CUES: LazyLock<Vec<Cue>> = LazyLock::new(|| {
    [
        ("nan", r"(?i)\bnan\b"),
        ("inf", r"(?i)(?:\b-?inf\b|\binfinity\b|\binfinite\b)"),
        ("exploding", r"(?i)(?:explod|diverg|blows? up|blowing up|overflow)"),
        ("shape", r"(?i)(?:\bshapes?\b|\bdimensions?\b|not aligned|size mismatch|broadcast)"),
        ("dtype", r"(?i)(?:\bdtype\b|float64|float32|int64)"),
        ("accuracy", r"(?i)(?:accuracy|\bacc\b)"),
        (
            "not_learning",
            r"(?i)(?:not (?:learning|improving|decreasing|converging|going down)|stuck|plateau|(?:doesn'?t|does not|won'?t|never) (?:learn|improve|decrease|converge|go(?:es)? down)|constant loss|(?:predicts?|outputs?|returns?) the same (?:value|output|prediction|class|constant)|same (?:value|output|prediction) for (?:every|all|each)|\b(?:jumps?|bounc\w*|oscillat\w*) (?:around|between|up and down))",
        ),
        ("leakage", r"(?i)\bleak(?:age|s|ed|ing)?\b"),
        (
            "slow",
            r"(?i)(?:\bslow(?:s|ly|ness|[- ]?downs?)?\b|\bslower than\b|takes? (?:too )?long|takes? forever|still running after|\bspeed\b|memory (?:usage|leak|grows)|\boom\b|out of memory)",
        ),
        ("warning", r"(?:Warning\b|(?i)\bwarnings?\b)"),
        (
            "save_reload",
            r"(?i)(?:(?:sav|serializ|checkpoint|pickl|export)\w*[^.\n]{0,80}(?:load|restor)|(?:load|restor)\w*[^.\n]{0,80}(?:differ|changed|not the same|different))",
        ),
        ("negative", r"(?i)\bnegative\b"),
        ("zero", r"(?i)(?:divide by zero|division by zero|\bzeros?\b)"),
        ("learning_rate", r"(?i)(?:learning[ _]rate|\blr\b)"),
        // A hyper-parameter the reporter changed or set, named next to the verb.
        (
            "setting",
            r"(?i)(?:\b(?:after|since|when|once|I(?:\s+only|\s+just)?)\s+(?:chang|increas|decreas|rais|lower|switch|set)\w*\s+(?:the\s+|my\s+)?`?(?:batch[_ ]?size|learning[_ ]rate|\blr\b|momentum|weight[_ ]decay|epochs|seed|dropout)\b|\bseed\b[^.]{0,60}\b(?:not reproducible|different|differ)|\bnot reproducible\b[^.]{0,60}\bseed\b)",
        ),
        ("axis", r"(?i)(?:\baxis\b|\bdim\s*=|per (?:row|column|sample|feature)\b|\b(?:rows?|columns?)\b[^.]{0,40}\binstead of\b)"),
        // Numbers that change the wrong way: growing loss, wrap-around, values collapsing to zero.
        (
            "value_trend",
            r"(?i)(?:\bloss (?:goes|went|grows|increases|keeps increasing)\b|\bloss\b[^.]{0,20}\*?up\*? (?:monotonically|every)|\bwrap(?:s|ped)? around\b|\b(?:values?|pixels?|outputs?|weights?) (?:all )?(?:become|are|turn(?:s|ed)? into) (?:0|zero|nan)\b|\b(?:changes?|drifts?) (?:after|between|across|during) (?:every |each )?epochs?\b)",
        ),
        (
            "display",
            r"(?i)(?:\bprint(?:s|ed)? (?:wrong|incorrect)|\bprinted as\b|\bnames?\b[^.]{0,40}\b(?:wrong|incorrect|mislabell?ed)|\bprints\b[^.]{0,60}\b(?:wrong|incorrect)\b|display(?:s|ed)?|\blogged\b|progress bar|verbose)",
        ),
        ("structure", r"(?i)(?:\blayers?\b|architecture|model\.summary|model structure|parameter count)"),
        (
            "wrong_value",
            r"(?i)(?:wrong (?:result|value|output|answer|sign)|incorrect|differs? from|different from|mismatch)",
        ),
        ("loss", r"(?i)\bloss\b"),
    ]
    .into_iter()
    .map(|(label, pattern)| Cue { label, pattern: re(pattern) })
    .collect()
});

/// A warning's own message in a report's first line: the warning is the complaint.
pub(crate) static WARNING_HEADLINE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?:\b[A-Z]\w*Warning:|(?i)\bencountered in \w+|\bmean of empty slice\b|\bdegrees of freedom <= 0\b)")
});
/// A network too small or wrongly assembled to learn what it should.
static CAPACITY_WORDS: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)(?:can'?t|cannot|unable to|fails? to|never) (?:learn|fit|solve|represent)\b"));

static CRASH_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)(?:traceback|\bcrash(?:es|ed)?\b|\bthrows?\b|\braises?\b|segmentation fault|core dumped|\bexception\b)")
});
static WRONG_WORDS: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)(?:\bwrong\b|unexpected|instead of|\bexpected\b|should be|incorrect|but got|\bnot\b)"));
static DROP_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)(?:drop|lower|worse|degrad|\bpoor\b|too high|too good|stuck|not learning|not improving|\bonly\b|leak)")
});

/// Cue labels that name a quantity (a loss, a shape, an axis) without saying anything is
/// wrong with it.
const NAMING_CUES: [&str; 7] = [
    "shape",
    "dtype",
    "accuracy",
    "learning_rate",
    "axis",
    "structure",
    "loss",
];

/// Whether `text` says that something is wrong (`nan`, `negative`, `not learning`,
/// `instead of`, `dropped`), rather than only naming a quantity (`loss`, `shape:`).
pub(crate) fn makes_a_claim(text: &str) -> bool {
    CUES.iter()
        .any(|c| !NAMING_CUES.contains(&c.label) && c.pattern.is_match(text))
        || WRONG_WORDS.is_match(text)
        || DROP_WORDS.is_match(text)
        || CAPACITY_WORDS.is_match(text)
}

/// The cue labels found in `text`, in taxonomy order.
pub fn cues(text: &str) -> Vec<String> {
    CUES.iter()
        .filter(|c| c.pattern.is_match(text))
        .map(|c| c.label.to_owned())
        .collect()
}

/// Classifies a symptom from what a report or a run says happened.
pub fn classify(text: &str) -> Symptom {
    let found = cues(text);
    let has = |label: &str| found.iter().any(|c| c == label);
    let traceback = parse_traceback(text);
    let error_type = traceback.as_ref().map(|t| t.error_type.clone());
    let wrong = WRONG_WORDS.is_match(text);
    let class = if error_type.is_some() || CRASH_WORDS.is_match(text) {
        SymptomClass::Crash
    } else if has("setting") {
        // A changed hyper-parameter explains the numbers that follow (nan, inf, drift).
        SymptomClass::WrongParameterSetting
    } else if has("nan") || has("inf") || has("exploding") {
        SymptomClass::WrongCalculation
    } else if has("save_reload") {
        SymptomClass::WrongSaveReload
    } else if has("shape") && wrong && !has("not_learning") {
        // A model that does not learn is the complaint, whatever shapes the report names.
        SymptomClass::WrongShape
    } else if has("slow") {
        SymptomClass::LowEfficiency
    } else if has("axis") && wrong {
        SymptomClass::WrongParameterSetting
    } else if has("structure") && CAPACITY_WORDS.is_match(text) {
        SymptomClass::WrongStructure
    } else if has("leakage") || has("not_learning") || (has("accuracy") && DROP_WORDS.is_match(text)) {
        SymptomClass::PerformanceDegradation
    } else if has("learning_rate") && wrong {
        SymptomClass::WrongParameterSetting
    } else if has("structure") && wrong {
        SymptomClass::WrongStructure
    } else if has("display") {
        SymptomClass::WrongDisplayedMessage
    } else if has("warning") {
        SymptomClass::Warning
    } else if has("wrong_value") || has("value_trend") || has("negative") || (has("loss") && wrong) {
        SymptomClass::WrongCalculation
    } else {
        SymptomClass::Unknown
    };
    let mut all_cues = found;
    if let Some(t) = &traceback
        && !t.message.is_empty()
    {
        all_cues.push(format!(
            "{}: {}",
            t.error_type,
            t.message.chars().take(160).collect::<String>()
        ));
    }
    Symptom {
        class,
        error_type: if class == SymptomClass::Crash { error_type } else { None },
        cues: all_cues,
    }
}

/// Detects the framework a report or a script is about, most specific first.
pub fn detect_framework(text: &str) -> Option<String> {
    static FRAMEWORKS: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
        [
            (
                "torch",
                r"(?:\bimport torch\b|\bfrom torch\b|\btorch\.|\bpytorch\b|\bPyTorch\b)",
            ),
            ("keras", r"(?:\bimport keras\b|\bfrom keras\b|^keras\b)"),
            ("tensorflow", r"(?:\btensorflow\b|\bTensorFlow\b|\btf\.|\btf\.keras\b)"),
            ("jax", r"(?:\bimport jax\b|\bjax\.|\bjnp\.)"),
            ("sklearn", r"(?:\bsklearn\b|scikit-learn)"),
            ("pandas", r"(?:\bimport pandas\b|\bpd\.)"),
            ("numpy", r"(?:\bimport numpy\b|\bnp\.|\bnumpy\b|\bNumPy\b)"),
        ]
        .into_iter()
        .map(|(name, pattern)| {
            (
                name,
                Regex::new(&format!("(?m){pattern}")).expect("a valid built-in pattern"),
            )
        })
        .collect()
    });
    FRAMEWORKS
        .iter()
        .find(|(_, pattern)| pattern.is_match(text))
        .map(|(name, _)| (*name).to_owned())
}

/// Text pasted from an issue tracker, cut at its headings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sections {
    pub problem: String,
    pub observed: String,
    pub expected: String,
    pub steps: Vec<String>,
    /// Python code fences.
    pub snippets: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Problem,
    Observed,
    Expected,
    Steps,
    Environment,
}

static HEADING: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:#{1,6}\s*(.+?)\s*#*|\*\*(.+?)\*\*:?|__(.+?)__:?|([A-Z][A-Za-z /'()-]{2,40}):)\s*$"));
static LIST_ITEM: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*(?:\d+[.)]|[-*+])\s+(.*)$"));
static FENCE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?ms)^[ \t]*(```|~~~)[ \t]*([\w+-]*)[^\n]*\n(.*?)^[ \t]*(```|~~~)[ \t]*$"));

/// More words than this make a heading line a title rather than a section name.
const TITLE_WORDS: usize = 5;
/// Headings that name a section ("Describe the bug") rather than state the problem.
static SECTION_NAME: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)\b(?:describ\w*|description|summary|bug|issue|problem|context|details|overview|question)\b")
});
/// "Expected: ..." or "Actual output: ..." with the text on the same line.
static INLINE_LABEL: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^((?:expected|actual|observed)(?: behaviou?r| result| output)?):\s+(\S.*)$"));
/// "Versions: torch==2.4.0, numpy==1.26" on one line: the environment, never the output
/// it often follows (its numbers are not values the program printed).
static INLINE_ENVIRONMENT: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^(?:versions?|environment|system info|platform|requirements|installed packages|packages)\s*:\s+\S")
});

fn heading_part(heading: &str) -> Part {
    let h = heading.to_lowercase();
    if h.contains("expect") || h.contains("should") || h.contains("desired") {
        Part::Expected
    } else if h.contains("reproduc")
        || h.contains("step")
        || h.contains("code")
        || h.contains("example")
        || h.contains("how to")
    {
        Part::Steps
    } else if h.contains("actual")
        || h.contains("observ")
        || h.contains("current behav")
        || h.contains("error")
        || h.contains("traceback")
        || h.contains("stack")
        || h.contains("output")
        || h.split(|c: char| !c.is_alphanumeric())
            .any(|w| w == "log" || w == "logs")
        || h.contains("result")
    {
        Part::Observed
    } else if h.contains("environment") || h.contains("system info") || h.contains("version") || h.contains("platform")
    {
        Part::Environment
    } else {
        Part::Problem
    }
}

/// Whether a code fence holds output (a trace, a log) rather than Python to run.
fn is_output_fence(lang: &str, body: &str) -> bool {
    let lang = lang.to_lowercase();
    if [
        "text",
        "txt",
        "console",
        "shell",
        "sh",
        "bash",
        "log",
        "output",
        "pytb",
        "stacktrace",
    ]
    .contains(&lang.as_str())
    {
        return true;
    }
    body.contains("Traceback (most recent call last)")
        || body.lines().next().is_some_and(|l| EXCEPTION_LINE.is_match(l.trim()))
        || (lang.is_empty() && !looks_like_python(body))
}

/// A cheap test: does this text read as Python code?
pub fn looks_like_python(text: &str) -> bool {
    static PYTHONISH: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?m)^\s*(?:import \w|from [\w.]+ import|def \w+\(|class \w+|for \w+ in |while |if |print\(|\w+(?:\[[^\]]*\])?\s*=\s*\S|\w+\.\w+\()",
        )
    });
    let lines = text.lines().filter(|l| !l.trim().is_empty()).count().max(1);
    let code = PYTHONISH.find_iter(text).count();
    code * 3 >= lines
}

/// Markdown's other code block: Python indented by four spaces after a blank line becomes
/// a fence, so it is taken as a snippet like fenced code.
fn fence_indented_code(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let indented = |l: &str| l.starts_with("    ") || l.starts_with('\t');
    let mut out = String::new();
    let mut in_fence = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
            in_fence = !in_fence;
        }
        let after_blank = i == 0 || lines[i - 1].trim().is_empty();
        let previous_item = lines[..i]
            .iter()
            .rev()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| LIST_ITEM.is_match(l));
        if !in_fence && after_blank && indented(line) && !previous_item {
            let end = (i..lines.len())
                .find(|&j| !lines[j].trim().is_empty() && !indented(lines[j]))
                .unwrap_or(lines.len());
            let block: Vec<&str> = lines[i..end]
                .iter()
                .map(|l| l.strip_prefix("    ").unwrap_or(l.trim_start_matches('\t')))
                .collect();
            let body = block.join("\n");
            if looks_like_python(&body) {
                let _ = writeln!(out, "```python\n{}\n```", body.trim_end());
                out.push('\n');
                i = end;
                continue;
            }
        }
        out.push_str(line);
        out.push('\n');
        i += 1;
    }
    out
}

/// Splits pasted issue text at its headings; code fences become snippets, output
/// fences and stack traces become observed behaviour.
pub fn split_free_text(text: &str) -> Sections {
    let fenced = fence_indented_code(text);
    let text = fenced.as_str();
    let mut sections = Sections::default();
    // Fences first, so headings inside code are not taken as headings.
    let mut prose = String::new();
    let mut last = 0;
    let mut fence_parts: Vec<(usize, String, String)> = Vec::new();
    for m in FENCE.captures_iter(text) {
        let whole = m.get(0).expect("the whole match");
        prose.push_str(&text[last..whole.start()]);
        // A placeholder line keeps each fence in the section it was written in.
        let _ = writeln!(prose, "\u{0}FENCE{}", fence_parts.len());
        fence_parts.push((fence_parts.len(), m[2].to_owned(), m[3].to_owned()));
        last = whole.end();
    }
    prose.push_str(&text[last..]);
    let mut part = Part::Problem;
    let mut in_traceback = false;
    let push = |sections: &mut Sections, part: Part, line: &str| match part {
        Part::Problem => push_line(&mut sections.problem, line),
        Part::Observed => push_line(&mut sections.observed, line),
        Part::Expected => push_line(&mut sections.expected, line),
        Part::Steps => {
            if let Some(c) = LIST_ITEM.captures(line) {
                sections.steps.push(c[1].trim().to_owned());
            } else if !line.trim().is_empty() {
                match sections.steps.last_mut() {
                    Some(step) if !line.starts_with(char::is_alphanumeric) => {
                        step.push(' ');
                        step.push_str(line.trim());
                    }
                    _ => sections.steps.push(line.trim().to_owned()),
                }
            }
        }
        Part::Environment => {}
    };
    for line in prose.lines() {
        if let Some(index) = line
            .strip_prefix("\u{0}FENCE")
            .and_then(|n| n.trim().parse::<usize>().ok())
        {
            let (_, lang, body) = &fence_parts[index];
            if is_output_fence(lang, body) {
                push_line(&mut sections.observed, body.trim_end());
            } else {
                sections.snippets.push(body.trim_end().to_owned());
            }
            continue;
        }
        if line.trim_start().starts_with("Traceback (most recent call last)") {
            in_traceback = true;
        }
        if in_traceback {
            push_line(&mut sections.observed, line);
            if EXCEPTION_LINE.is_match(line.trim()) {
                in_traceback = false;
            }
            continue;
        }
        if let Some(c) = HEADING.captures(line.trim()) {
            let heading = (1..=4).find_map(|i| c.get(i)).map_or("", |m| m.as_str());
            // Section headings are short; a long one is the issue's title, i.e. the problem.
            let words = heading.split_whitespace().count();
            part = heading_part(heading);
            let named_section = SECTION_NAME.is_match(heading);
            if words > TITLE_WORDS || (part == Part::Problem && words >= 3 && !named_section) {
                part = Part::Problem;
                push(&mut sections, part, heading);
            }
            continue;
        }
        if let Some(c) = INLINE_LABEL.captures(line.trim()) {
            part = heading_part(&c[1]);
            push(&mut sections, part, &c[2]);
            continue;
        }
        // One line of versions is left out; the section it sits in goes on after it.
        if INLINE_ENVIRONMENT.is_match(line.trim()) {
            continue;
        }
        push(&mut sections, part, line);
    }
    for text in [&mut sections.problem, &mut sections.observed, &mut sections.expected] {
        let trimmed = text.trim();
        if trimmed.len() != text.len() {
            *text = trimmed.to_owned();
        }
    }
    sections
}

fn push_line(text: &mut String, line: &str) {
    if text.is_empty() && line.trim().is_empty() {
        return;
    }
    text.push_str(line);
    text.push('\n');
}

pub(crate) fn join(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// A report read once, as every stage takes it: the report's fields (through `Deref`),
/// everything it says as one text, and its Python code.
#[derive(Debug, Clone)]
pub struct ParsedReport {
    report: BugReport,
    text: String,
    code: Vec<String>,
}

impl From<BugReport> for ParsedReport {
    fn from(report: BugReport) -> Self {
        Self {
            text: report_text(&report),
            code: code_snippets(&report),
            report,
        }
    }
}

impl ParsedReport {
    /// Everything the report says (title, description, observed, expected, free text),
    /// for retrieval, restructuring and relevance.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Every piece of Python code in it: its snippets, then the code fences of its text.
    pub fn code(&self) -> &[String] {
        &self.code
    }

    /// What retrieval searches the project for: the report's text and its code.
    pub fn query(&self) -> String {
        format!("{}\n{}", self.text, self.code.join("\n"))
    }
}

impl std::ops::Deref for ParsedReport {
    type Target = BugReport;

    fn deref(&self) -> &BugReport {
        &self.report
    }
}

/// Every piece of Python code in the report: its snippets, then code fences of its text.
fn code_snippets(report: &BugReport) -> Vec<String> {
    let mut out: Vec<String> = report
        .snippets
        .iter()
        .filter(|s| !s.trim().is_empty())
        .cloned()
        .collect();
    for text in [
        &report.description,
        &report.observed,
        &report.expected,
        &report.free_text,
    ] {
        for snippet in split_free_text(text).snippets {
            if !out.contains(&snippet) {
                out.push(snippet);
            }
        }
    }
    out
}

/// Everything the report says, for retrieval and relevance.
fn report_text(report: &BugReport) -> String {
    join(&[
        &report.title,
        &report.description,
        &report.observed,
        &report.expected,
        &report.free_text,
    ])
}

/// The first JSON value (object or array) inside an LLM's answer.
pub fn json_in_answer(answer: &str) -> Option<&str> {
    let start = answer.find(['{', '['])?;
    let close = if answer[start..].starts_with('{') { '}' } else { ']' };
    let end = answer.rfind(close)?;
    (end > start).then(|| &answer[start..=end])
}

/// The `Label: value` lines of an LLM's answer, labels lower-cased with spaces as `_`:
/// the format small models follow more reliably than JSON. Numbering, bullets and
/// Markdown emphasis around a label are ignored; a line without a label continues the
/// value before it.
pub fn labelled_lines(answer: &str) -> Vec<(String, String)> {
    static LABELLED: LazyLock<Regex> =
        LazyLock::new(|| re(r"^\s*(?:\d+[.)]\s*|[-*]\s+)?[*_`]*([A-Za-z][A-Za-z _]{0,30}?)[*_`]*\s*:\s*(.*)$"));
    let mut lines: Vec<(String, String)> = Vec::new();
    for line in answer.lines() {
        if let Some(c) = LABELLED.captures(line) {
            let label = c[1].trim().to_lowercase().replace(' ', "_");
            let value = c[2].trim().trim_matches(['*', '`']).trim().to_owned();
            lines.push((label, value));
        } else if let Some((_, value)) = lines.last_mut()
            && !line.trim().is_empty()
        {
            value.push(' ');
            value.push_str(line.trim());
        }
    }
    lines
}

/// Reads a bug report file: `.json` in the `BugReport` shape, anything else (`.md`,
/// `.txt`) as text pasted from an issue tracker; a report without content is refused.
pub fn read_report(path: &std::path::Path) -> Result<BugReport, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the report {} ({e}); check the path", path.display()))?;
    let report = if path.extension().is_some_and(|x| x.eq_ignore_ascii_case("json")) {
        serde_json::from_str::<BugReport>(&text).map_err(|e| {
            format!(
                "the report {} is not a bug report in JSON ({e}); see BugReport in shared/src/repro.rs",
                path.display()
            )
        })?
    } else {
        BugReport {
            free_text: text,
            ..BugReport::default()
        }
    };
    report.check().map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::restructure::restructure_rules;

    const TRACE: &str = "Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n    y = x.dot(w)\n  File \"model.py\", line 3, in forward\n    return np.dot(a, b)\nValueError: shapes (3,4) and (3,4) not aligned: 4 (dim 1) != 3 (dim 0)\n";

    #[test]
    fn a_line_of_versions_after_the_output_is_not_output() {
        let text = "This code gives the output below.\n\n```python\nprint(x)\n```\n\nOutput:\n\n```\ntensor(0.5000)\n```\n\nVersions: torch==2.4.0, numpy==2.1.0\nThe loss then stays at 0.5.\n";
        let sections = split_free_text(text);
        assert!(!sections.observed.contains("Versions"), "{}", sections.observed);
        assert!(sections.observed.starts_with("tensor(0.5000)"), "{}", sections.observed);
        assert!(
            sections.observed.ends_with("The loss then stays at 0.5."),
            "the section goes on: {}",
            sections.observed
        );
        assert!(!sections.problem.contains("Versions"), "{}", sections.problem);
    }

    #[test]
    fn stack_traces_give_the_last_exception_and_frames() {
        let t = parse_traceback(TRACE).unwrap();
        assert_eq!(t.error_type, "ValueError");
        assert!(t.message.starts_with("shapes (3,4) and (3,4) not aligned"));
        assert_eq!(t.frames.len(), 2);
        assert_eq!(
            t.frames[1],
            TraceFrame {
                file: "model.py".into(),
                line: 3,
                function: "forward".into()
            }
        );
        let chained = format!(
            "{TRACE}\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"a.py\", line 1, in <module>\ntorch.cuda.OutOfMemoryError: CUDA out of memory.\n"
        );
        assert_eq!(parse_traceback(&chained).unwrap().error_type, "OutOfMemoryError");
        assert_eq!(
            parse_traceback("it fails with KeyError: 'label'").unwrap().error_type,
            "KeyError"
        );
        assert!(parse_traceback("the loss is nan").is_none());
    }

    #[test]
    fn symptoms_follow_the_taxonomy() {
        let crash = classify(TRACE);
        assert_eq!(crash.class, SymptomClass::Crash);
        assert_eq!(crash.error_type.as_deref(), Some("ValueError"));
        assert!(crash.cues.contains(&"shape".to_owned()));
        let cases = [
            (
                "after a few epochs the loss becomes nan",
                SymptomClass::WrongCalculation,
            ),
            ("loss is exploding with lr=10", SymptomClass::WrongCalculation),
            (
                "the output has the wrong shape (3,) instead of (4,)",
                SymptomClass::WrongShape,
            ),
            ("training is very slow on the GPU", SymptomClass::LowEfficiency),
            (
                "test accuracy is 100%, too good: data leakage from the test set",
                SymptomClass::PerformanceDegradation,
            ),
            ("the accuracy is stuck at 0.5", SymptomClass::PerformanceDegradation),
            (
                "after I saved and loaded the model the predictions differ",
                SymptomClass::WrongSaveReload,
            ),
            ("a UserWarning is printed on every batch", SymptomClass::Warning),
            (
                "the mean is taken over the wrong axis",
                SymptomClass::WrongParameterSetting,
            ),
            ("the loss has the wrong sign", SymptomClass::WrongCalculation),
            ("hello there", SymptomClass::Unknown),
            (
                "loss goes to inf after I increased batch size to 64",
                SymptomClass::WrongParameterSetting,
            ),
            (
                "I set seed: 42 but results are not reproducible, accuracy differs every run",
                SymptomClass::WrongParameterSetting,
            ),
            (
                "the values wrapped around and became black",
                SymptomClass::WrongCalculation,
            ),
            ("the loss increases every epoch", SymptomClass::WrongCalculation),
            (
                "the loss goes up every epoch. Lowering lr only makes it grow slower",
                SymptomClass::WrongCalculation,
            ),
            ("my X_train changes after every epoch", SymptomClass::WrongCalculation),
            ("predict takes forever on 3k samples", SymptomClass::LowEfficiency),
            (
                "the class names it prints are often wrong, dog printed as cat",
                SymptomClass::WrongDisplayedMessage,
            ),
            (
                "a two-layer network can't learn XOR, the loss is stuck at 0.69",
                SymptomClass::WrongStructure,
            ),
            (
                "the rows are standardised instead of the columns, accuracy is worse",
                SymptomClass::WrongParameterSetting,
            ),
            // A model that does not learn, whatever shapes the report names.
            (
                "features.npy is float32 of shape (1000, 8); the training MSE jumps around and does not go down",
                SymptomClass::PerformanceDegradation,
            ),
            (
                "every prediction is 0.99999, the network predicts the same value for every house",
                SymptomClass::PerformanceDegradation,
            ),
        ];
        for (text, class) in cases {
            assert_eq!(classify(text).class, class, "{text}");
        }
    }

    #[test]
    fn frameworks_are_detected_most_specific_first() {
        assert_eq!(
            detect_framework("import torch\nimport numpy as np").as_deref(),
            Some("torch")
        );
        assert_eq!(
            detect_framework("model = tf.keras.Sequential()").as_deref(),
            Some("tensorflow")
        );
        assert_eq!(detect_framework("x = np.zeros(3)").as_deref(), Some("numpy"));
        assert_eq!(detect_framework("no code here"), None);
    }

    const ISSUE: &str = "### Describe the bug\nThe training loss becomes NaN after the first epoch.\n\n### To Reproduce\n1. Create the model\n2. Train it:\n```python\nimport numpy as np\nloss = np.log(0.0)\n```\n\n### Expected behavior\nThe loss decreases, no NaN.\n\n### Actual behavior\n```\nRuntimeWarning: divide by zero encountered in log\nloss: -inf\n```\n\n### Environment\n- numpy 1.24\n";

    #[test]
    fn pasted_issues_split_at_their_headings() {
        let s = split_free_text(ISSUE);
        assert_eq!(s.problem, "The training loss becomes NaN after the first epoch.");
        assert_eq!(s.steps, vec!["Create the model".to_owned(), "Train it:".to_owned()]);
        assert_eq!(s.snippets, vec!["import numpy as np\nloss = np.log(0.0)".to_owned()]);
        assert_eq!(s.expected, "The loss decreases, no NaN.");
        assert!(s.observed.contains("loss: -inf"), "{}", s.observed);
        let report = ParsedReport::from(BugReport {
            free_text: ISSUE.into(),
            ..BugReport::default()
        });
        let r = restructure_rules(&report);
        assert_eq!(r.symptom.class, SymptomClass::WrongCalculation);
        assert!(r.symptom.cues.contains(&"nan".to_owned()));
        assert_eq!(r.framework.as_deref(), Some("numpy"));
        assert_eq!(report.code().len(), 1);
    }

    #[test]
    fn a_long_heading_is_the_title_and_inline_labels_switch_sections() {
        let text = "# Loss becomes nan after the first epoch (logistic regression)\n\nI train it.\n\n```\nepoch 1 loss nan\n```\n\nExpected: the loss goes down.\n";
        let sections = split_free_text(text);
        assert!(sections.problem.starts_with("Loss becomes nan"), "{}", sections.problem);
        assert!(sections.problem.contains("I train it."), "{}", sections.problem);
        assert!(sections.observed.contains("loss nan"), "{}", sections.observed);
        assert_eq!(sections.expected, "the loss goes down.");
        assert!(!sections.problem.contains("goes down"));
    }

    #[test]
    fn indented_python_is_a_snippet() {
        let text = "values become 0 like this\n\n    x = imgs.astype(np.int64) // 255\n    print(x.max())\n\nprints `0 1`.\n\n    python run.py --n 3\n";
        let sections = split_free_text(text);
        assert_eq!(
            sections.snippets,
            vec!["x = imgs.astype(np.int64) // 255\nprint(x.max())".to_owned()]
        );
        assert!(sections.problem.contains("prints `0 1`."), "{}", sections.problem);
        assert!(!sections.problem.contains("astype"), "{}", sections.problem);
    }

    #[test]
    fn unfenced_tracebacks_are_observed_behaviour() {
        let text = format!("I ran my script and got\n{TRACE}\nWhat is wrong?");
        let s = split_free_text(&text);
        assert!(s.observed.contains("ValueError"));
        assert!(!s.problem.contains("ValueError"));
        assert!(s.problem.contains("What is wrong?"));
    }
}
