//! Running untrusted programs with bounded resources.
//!
//! [`Sandbox`] is the seam between the server and the machinery, so the web server and
//! its tests can use a fake. [`Bubblewrap`] is the real one: new namespaces (no network,
//! its own pids), a read-only root and `/dev`, a small private `/tmp` and `/dev/shm`, no
//! capabilities, a seccomp filter (`crate::seccomp`), a cleared environment, a dedicated
//! non-root uid per concurrent job, rlimits, and a wall-clock kill of the whole process
//! group. [`Unsandboxed`] runs the program directly, for an
//! operator who passed `--unsafe-no-sandbox` on a machine they own.

use std::ffi::OsString;
use std::future::Future;
use std::io;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use replayground_shared::Limit;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

mod bubblewrap;
/// The one module that calls into libc directly (see its header).
#[allow(unsafe_code)]
mod posix;

pub use bubblewrap::{Bubblewrap, BubblewrapConfig, processes_of_uid};

/// A boxed future, so that [`Sandbox`] can be used as `Arc<dyn Sandbox>`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Receives the program's standard output as it arrives, in chunks of any size; `Break`
/// stops the program (reported as [`Limit::Output`]): its reader wants no more.
pub type StdoutSink<'a> = &'a mut (dyn FnMut(&[u8]) -> ControlFlow<()> + Send);

/// A sink that keeps nothing.
pub fn discard(_: &[u8]) -> ControlFlow<()> {
    ControlFlow::Continue(())
}

const MIB: u64 = 1 << 20;

/// What one run may use. Every limit ends the run with an explicit outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLimits {
    /// Trace events before the tracer stops with `limit_reached: events`. Default 100 000.
    pub max_events: u32,
    /// CPU time: the soft `RLIMIT_CPU` (whole seconds, rounded up); the hard limit, one
    /// second later, kills a program stuck in C code. Default 5 s.
    pub cpu_time: Duration,
    /// Wall-clock time before the whole process group is killed. Default 10 s.
    pub wall_time: Duration,
    /// Address space (`RLIMIT_AS`): a larger allocation raises `MemoryError`. Default 512 MiB.
    pub memory_bytes: u64,
    /// The program's own stdout plus stderr, as the tracer counts it. Default 1 MiB.
    pub max_output_bytes: u64,
    /// Reprs are cut to this many characters (a cut ends in `...`). Default 1000.
    pub repr_chars: u32,
    /// Containers and objects are expanded this many levels deep. Default 3.
    pub max_depth: u32,
    /// At most this many items of a container are recorded. Default 50.
    pub max_items: u32,
    /// Python's recursion limit for the program. Default 1000 (Python's own).
    pub recursion_limit: u32,
    /// Processes and threads of the sandbox uid (`RLIMIT_NPROC`); applied only when the
    /// sandbox runs jobs as a dedicated uid (the server runs as root). Default 32.
    pub max_processes: u32,
    /// Open file descriptors (`RLIMIT_NOFILE`). Default 64.
    pub max_open_files: u32,
    /// Largest file the program may write (`RLIMIT_FSIZE`). Default 16 MiB.
    pub max_file_bytes: u64,
    /// Size of the private `/tmp`. Default 16 MiB.
    pub tmp_bytes: u64,
    /// Size of `/dev/shm` (shared memory, POSIX semaphores): tmpfs pages are not counted
    /// by `RLIMIT_AS`, so it stays small. Default 1 MiB.
    pub shm_bytes: u64,
    /// The raw standard output stream (for the tracer: the trace itself) before the run
    /// is killed with `limit_reached: output`. Default 64 MiB.
    pub max_stdout_bytes: u64,
    /// Standard error kept for diagnostics (the rest is read and dropped). Default 64 KiB.
    pub max_stderr_bytes: usize,
}

impl Default for RunLimits {
    fn default() -> Self {
        Self {
            max_events: 100_000,
            cpu_time: Duration::from_secs(5),
            wall_time: Duration::from_secs(10),
            memory_bytes: 512 * MIB,
            max_output_bytes: MIB,
            repr_chars: 1000,
            max_depth: 3,
            max_items: 50,
            recursion_limit: 1000,
            max_processes: 32,
            max_open_files: 64,
            max_file_bytes: 16 * MIB,
            tmp_bytes: 16 * MIB,
            shm_bytes: MIB,
            max_stdout_bytes: 64 * MIB,
            max_stderr_bytes: 64 * 1024,
        }
    }
}

impl RunLimits {
    /// `RLIMIT_CPU` works in whole seconds.
    fn cpu_seconds(&self) -> u64 {
        let secs = self.cpu_time.as_secs();
        if self.cpu_time.subsec_nanos() > 0 {
            secs + 1
        } else {
            secs.max(1)
        }
    }
}

/// One program to run.
#[derive(Debug, Clone)]
pub struct Job {
    /// Absolute path of the program (inside the sandbox `/usr` and the program's own
    /// prefix are visible read-only; see `Bubblewrap::root_filesystem`).
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// Written to the program's standard input, which is then closed.
    pub stdin: Vec<u8>,
    pub limits: RunLimits,
}

/// How a run ended, as the sandbox saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    /// The program exited by itself with this status.
    Exited(i32),
    /// The program was killed by this signal, and no limit explains it.
    Signaled(i32),
    /// The sandbox stopped the program at a limit: [`Limit::WallTime`], [`Limit::Output`]
    /// (standard output over [`RunLimits::max_stdout_bytes`]) or [`Limit::CpuTime`].
    Stopped(Limit),
}

/// What the sandbox reports about a finished run.
#[derive(Debug, Clone)]
pub struct RunReport {
    pub termination: Termination,
    /// The start of standard error (see [`RunLimits::max_stderr_bytes`]), lossily decoded.
    pub stderr: String,
    /// Bytes of standard output handed to the sink.
    pub stdout_bytes: u64,
    pub elapsed: Duration,
    /// The uid the program ran as, when the sandbox used a dedicated one.
    pub uid: Option<u32>,
    /// Processes of that uid still alive after the run ended and the sandbox had time to
    /// tear down (then killed). Always 0 unless containment failed.
    pub stray_processes: usize,
}

/// The sandbox could not run the program at all.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "bubblewrap (bwrap) is not installed, so untrusted code cannot be sandboxed; install it (apt-get install bubblewrap) or start with --unsafe-no-sandbox on a machine you own"
    )]
    NotInstalled,
    #[error(
        "bubblewrap at {path} does not work ({detail}); check the installation or start with --unsafe-no-sandbox on a machine you own"
    )]
    Broken { path: String, detail: String },
    #[error("the sandbox could not start {program}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("all {slots} sandbox slots stayed busy for {waited_s} s; try again in a moment")]
    Busy { slots: u32, waited_s: u64 },
    #[error("the sandbox failed: {0}")]
    Io(#[from] io::Error),
}

/// Runs a program with bounded resources. Implementations must never let the program
/// outlive the returned future.
pub trait Sandbox: Send + Sync {
    /// One line for logs: what isolates the programs.
    fn describe(&self) -> String;

    /// Runs `job`, handing its standard output to `stdout` as it arrives.
    fn run<'a>(&'a self, job: Job, stdout: StdoutSink<'a>) -> BoxFuture<'a, Result<RunReport, SandboxError>>;
}

/// The memory cgroup limit of a job: its address space plus its tmpfs mounts plus room
/// for the kernel's own buffers, so that the cgroup only bites on memory the rlimits miss.
pub fn cgroup_memory_limit(limits: &RunLimits) -> u64 {
    limits.memory_bytes + limits.tmp_bytes + limits.shm_bytes + 64 * MIB
}

/// Runs programs directly: rlimits and a process-group kill, but no isolation at all.
#[derive(Debug)]
pub struct Unsandboxed {
    _private: (),
}

impl Unsandboxed {
    /// Logs a loud warning: every program then runs with the server's own rights.
    #[allow(clippy::new_without_default)] // choosing no sandbox must be a deliberate, logged act
    pub fn new() -> Self {
        tracing::warn!(
            "UNSAFE: --unsafe-no-sandbox is set; programs run WITHOUT a sandbox, with this server's user, files and network. Use this only on a machine you own, for code you trust."
        );
        Self { _private: () }
    }
}

impl Sandbox for Unsandboxed {
    fn describe(&self) -> String {
        "no sandbox (--unsafe-no-sandbox): programs run with the server's own rights".to_owned()
    }

    fn run<'a>(&'a self, job: Job, stdout: StdoutSink<'a>) -> BoxFuture<'a, Result<RunReport, SandboxError>> {
        Box::pin(async move {
            let dir = tempfile::Builder::new().prefix("replayground-run-").tempdir()?;
            let mut cmd = Command::new(&job.program);
            cmd.args(&job.args)
                .env_clear()
                .env("PATH", "/usr/local/bin:/usr/bin:/bin")
                .env("LANG", "C.UTF-8")
                .env("HOME", dir.path())
                .env("PYTHONDONTWRITEBYTECODE", "1")
                .env("PYTHONHASHSEED", "0")
                .current_dir(dir.path());
            // RLIMIT_NPROC would count every process of the server's user, so it is not set.
            let setup = posix::ChildSetup {
                limits: posix::Rlimits::from_limits(&job.limits, false),
                identity: None,
                inherit: None,
                cgroup_procs: None,
            };
            posix::prepare(&mut cmd, setup);
            let mut report = supervise(cmd, &job, stdout, &job.program).await?;
            if let Termination::Signaled(signal) = report.termination {
                report.termination = classify_signal(signal);
            }
            Ok(report)
        })
    }
}

/// A signal the sandbox did not send: `SIGXCPU` is the soft CPU limit, and `SIGKILL` the
/// hard one (memory is capped by `RLIMIT_AS`, so the OOM killer is not expected).
fn classify_signal(signal: i32) -> Termination {
    if signal == libc::SIGXCPU || signal == libc::SIGKILL {
        Termination::Stopped(Limit::CpuTime)
    } else {
        Termination::Signaled(signal)
    }
}

/// Starts `cmd`, feeds its stdin, streams its stdout to `sink` with a byte cap, keeps the
/// start of stderr, and kills its process group at the wall-clock limit.
async fn supervise(
    mut cmd: Command,
    job: &Job,
    sink: StdoutSink<'_>,
    program: &Path,
) -> Result<RunReport, SandboxError> {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let started = Instant::now();
    let deadline = tokio::time::Instant::now() + job.limits.wall_time;
    let mut child = cmd.spawn().map_err(|source| SandboxError::Spawn {
        program: program.display().to_string(),
        source,
    })?;
    // The child called setsid(), so its pid is its process group.
    let group = child.id().map(|pid| pid as i32);

    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = job.stdin.clone();
    let writer = tokio::spawn(async move {
        // A program that exits without reading its input closes the pipe: not an error.
        let _ = stdin.write_all(&input).await;
    });
    let stderr = child.stderr.take().expect("stderr is piped");
    let stderr_reader = tokio::spawn(read_capped(stderr, job.limits.max_stderr_bytes));
    let mut out = child.stdout.take().expect("stdout is piped");

    let mut buf = vec![0u8; 64 * 1024];
    let mut stdout_bytes = 0u64;
    let mut stdout_open = true;
    let mut status: Option<ExitStatus> = None;
    let mut stopped: Option<Limit> = None;
    // After the program exits, a straggler holding stdout gets this long before it is ignored.
    let mut drain_until: Option<tokio::time::Instant> = None;
    while stdout_open || status.is_none() {
        let wake = drain_until.map_or(deadline, |d| d.min(deadline));
        tokio::select! {
            read = out.read(&mut buf), if stdout_open => match read {
                Ok(0) | Err(_) => stdout_open = false,
                Ok(n) => {
                    stdout_bytes += n as u64;
                    if stdout_bytes > job.limits.max_stdout_bytes {
                        stopped = Some(Limit::Output);
                        break;
                    }
                    if sink(&buf[..n]).is_break() {
                        stopped = Some(Limit::Output);
                        break;
                    }
                }
            },
            exit = child.wait(), if status.is_none() => {
                status = Some(exit?);
                drain_until = Some(tokio::time::Instant::now() + Duration::from_millis(500));
            },
            () = tokio::time::sleep_until(wake) => {
                if status.is_none() || wake >= deadline {
                    stopped = Some(Limit::WallTime);
                }
                break;
            }
        }
    }
    // Always: stragglers of a finished program die with its group, too.
    if let Some(group) = group {
        posix::kill_group(group);
    }
    let _ = child.start_kill();
    let status = match status {
        Some(status) => status,
        None => child.wait().await?,
    };
    writer.abort();
    let stderr = match tokio::time::timeout(Duration::from_secs(1), stderr_reader).await {
        Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
        _ => String::new(),
    };
    let termination = match stopped {
        Some(limit) => Termination::Stopped(limit),
        None => match (status.code(), std::os::unix::process::ExitStatusExt::signal(&status)) {
            (Some(code), _) => Termination::Exited(code),
            (None, Some(signal)) => Termination::Signaled(signal),
            (None, None) => Termination::Exited(-1),
        },
    };
    Ok(RunReport {
        termination,
        stderr,
        stdout_bytes,
        elapsed: started.elapsed(),
        uid: None,
        stray_processes: 0,
    })
}

/// Reads all of `reader`, keeping the first `cap` bytes.
async fn read_capped(mut reader: impl AsyncRead + Unpin, cap: usize) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => return kept,
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}
