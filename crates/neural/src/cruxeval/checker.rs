//! Checking answers for real: `f(ARGS) == (EXPECTED)` run in the sandbox, a fresh
//! namespace and a 2 s timer per check, a bounded number of jobs at once.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use replayground_exec::sandbox::{Job, RunLimits, Sandbox};
use serde::Serialize;
use tokio::sync::Semaphore;

/// One check run in the sandbox: `f(ARGS) == (EXPECTED)`, both Python expressions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub args: String,
    pub expected: String,
}

/// Runs `f` for real, in the sandbox: a fresh namespace per check, a 2 s timer per
/// check, the program's own output swallowed, one JSON list of booleans printed.
const HARNESS: &str = r#"
import io, json, signal, sys
request = json.loads(sys.stdin.read())
out = sys.stdout
def stop(*_):
    raise TimeoutError("check took too long")
signal.signal(signal.SIGALRM, stop)
results = []
for check in request["checks"]:
    sys.stdout = io.StringIO()
    try:
        signal.setitimer(signal.ITIMER_REAL, 2.0)
        ns = {"__name__": "__main__"}
        exec(request["code"], ns)
        actual = eval("f(" + check["args"] + ")", ns)
        expected = eval("(" + check["expected"] + ")", ns)
        results.append(bool(actual == expected))
    except BaseException:
        results.append(False)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.stdout = out
out.write("\n" + json.dumps(results) + "\n")
out.flush()
"#;

/// Runs checks in the sandbox, a bounded number of jobs at once.
pub struct Checker {
    sandbox: Arc<dyn Sandbox>,
    python: PathBuf,
    pub(super) slots: Arc<Semaphore>,
}

impl Checker {
    pub fn new(sandbox: Arc<dyn Sandbox>, python: impl Into<PathBuf>, jobs: usize) -> Self {
        Self {
            sandbox,
            python: python.into(),
            slots: Arc::new(Semaphore::new(jobs.max(1))),
        }
    }

    /// The sandbox these checks run in (the tracer shares it).
    pub fn sandbox(&self) -> &Arc<dyn Sandbox> {
        &self.sandbox
    }

    /// Whether each check holds. A run that ends without its report (say `f` killed
    /// the interpreter) fails every check of the run.
    pub async fn check(&self, code: &str, checks: &[Check]) -> anyhow::Result<Vec<bool>> {
        if checks.is_empty() {
            return Ok(Vec::new());
        }
        let _slot = self.slots.acquire().await?;
        let limits = RunLimits {
            cpu_time: Duration::from_secs(30),
            wall_time: Duration::from_secs(20 + 3 * checks.len() as u64),
            ..RunLimits::default()
        };
        let job = Job {
            program: self.python.clone(),
            args: vec!["-I".into(), "-c".into(), HARNESS.into()],
            stdin: serde_json::to_vec(&serde_json::json!({ "code": code, "checks": checks }))?,
            limits,
        };
        let mut stdout = Vec::new();
        self.sandbox
            .run(job, &mut |chunk: &[u8]| {
                stdout.extend_from_slice(chunk);
                std::ops::ControlFlow::Continue(())
            })
            .await?;
        let text = String::from_utf8_lossy(&stdout);
        let results = text
            .lines()
            .rev()
            .find_map(|l| serde_json::from_str::<Vec<bool>>(l).ok())
            .filter(|r| r.len() == checks.len())
            .unwrap_or_else(|| vec![false; checks.len()]);
        Ok(results)
    }
}
