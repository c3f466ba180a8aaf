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
use std::fs::File;
use std::future::Future;
use std::io;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use replayground_shared::Limit;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

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

/// Configuration of [`Bubblewrap`].
#[derive(Debug, Clone)]
pub struct BubblewrapConfig {
    /// The `bwrap` executable: a path, or a name looked up on `PATH`. Default `bwrap`.
    pub bwrap: PathBuf,
    /// When the server runs as root, job `n` runs as uid and gid `uid_base + n`. Default 61000.
    pub uid_base: u32,
    /// Dedicated uids, hence jobs that can run at once. Default 16.
    pub slots: u32,
    /// Where the per-uid lock files live, so that several server processes on one machine
    /// never share a uid. Default `$TMPDIR/replayground-sandbox`.
    pub lock_dir: PathBuf,
}

impl Default for BubblewrapConfig {
    fn default() -> Self {
        Self {
            bwrap: PathBuf::from("bwrap"),
            uid_base: 61000,
            slots: 16,
            lock_dir: std::env::temp_dir().join("replayground-sandbox"),
        }
    }
}

/// The real sandbox: bubblewrap plus rlimits, run as a dedicated uid.
#[derive(Debug)]
pub struct Bubblewrap {
    bwrap: PathBuf,
    version: String,
    config: BubblewrapConfig,
    /// Dedicated uids when the server is root; otherwise jobs run as the server's own user.
    dedicated: bool,
    /// Where the next slot search starts, so that jobs rotate through the uids.
    next_slot: AtomicU32,
    /// A memory cgroup per job, or why the machine gives none.
    cgroups: Result<crate::cgroup::MemoryCgroups, String>,
}

/// A dedicated uid held for one job; the lock file keeps other jobs (and other server
/// processes) off it until dropped.
struct Slot {
    uid: u32,
    _lock: File,
}

impl Bubblewrap {
    /// Finds bubblewrap and checks that it runs (`bwrap --version`).
    pub fn detect(config: BubblewrapConfig) -> Result<Self, SandboxError> {
        let bwrap = find_executable(&config.bwrap).ok_or(SandboxError::NotInstalled)?;
        let output = std::process::Command::new(&bwrap)
            .arg("--version")
            .output()
            .map_err(|e| {
                if e.kind() == io::ErrorKind::NotFound {
                    SandboxError::NotInstalled
                } else {
                    SandboxError::Broken {
                        path: bwrap.display().to_string(),
                        detail: e.to_string(),
                    }
                }
            })?;
        if !output.status.success() {
            return Err(SandboxError::Broken {
                path: bwrap.display().to_string(),
                detail: format!("`bwrap --version` exited with {}", output.status),
            });
        }
        let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        let dedicated = posix::is_root();
        if dedicated {
            create_private_dir(&config.lock_dir)?;
        }
        let cgroups = if dedicated {
            crate::cgroup::MemoryCgroups::detect()
        } else {
            Err("the server is not root".to_owned())
        };
        match &cgroups {
            Ok(cgroups) => tracing::info!("sandbox jobs get a memory cgroup each ({})", cgroups.describe()),
            Err(why) => tracing::warn!(
                "sandbox jobs run without a memory cgroup: {why}; RLIMIT_AS and the sized tmpfs mounts bound their memory"
            ),
        }
        Ok(Self {
            bwrap,
            version,
            config,
            dedicated,
            next_slot: AtomicU32::new(0),
            cgroups,
        })
    }

    /// `bubblewrap 0.8.0`.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Where each job's memory cgroup is made, or why there is none.
    pub fn memory_cgroups(&self) -> Result<String, String> {
        self.cgroups
            .as_ref()
            .map(crate::cgroup::MemoryCgroups::describe)
            .map_err(Clone::clone)
    }

    /// The uids jobs run as, when the server is root.
    pub fn uid_range(&self) -> Option<std::ops::Range<u32>> {
        self.dedicated
            .then(|| self.config.uid_base..self.config.uid_base + self.config.slots)
    }

    /// Runs `/bin/true` in the sandbox: proves namespaces and uids work on this machine.
    pub async fn self_test(&self) -> Result<(), SandboxError> {
        let limits = RunLimits {
            wall_time: Duration::from_secs(10),
            ..RunLimits::default()
        };
        let job = Job {
            program: PathBuf::from("/bin/true"),
            args: Vec::new(),
            stdin: Vec::new(),
            limits,
        };
        let report = self.run(job, &mut discard).await?;
        if report.termination == Termination::Exited(0) {
            Ok(())
        } else {
            Err(SandboxError::Broken {
                path: self.bwrap.display().to_string(),
                detail: format!(
                    "a trial run ended with {:?}: {}",
                    report.termination,
                    report.stderr.trim()
                ),
            })
        }
    }

    /// `seccomp` is the fd of the filter the child inherits (see `crate::seccomp`).
    fn bwrap_args(job: &Job, seccomp: Option<i32>) -> Vec<OsString> {
        let mut args: Vec<OsString> = [
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",
            "--die-with-parent",
            "--new-session",
            "--clearenv",
            "--setenv",
            "PATH",
            "/usr/local/bin:/usr/bin:/bin",
            "--setenv",
            "LANG",
            "C.UTF-8",
            "--setenv",
            "HOME",
            "/tmp",
            "--setenv",
            "PYTHONDONTWRITEBYTECODE",
            "1",
            "--setenv",
            "PYTHONHASHSEED",
            "0",
            "--cap-drop",
            "ALL",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
        ]
        .into_iter()
        .map(OsString::from)
        .collect();
        // bwrap's /dev is a tmpfs of half the host's RAM that the program may fill, and
        // RLIMIT_AS does not count tmpfs pages: /dev/shm gets a small tmpfs of its own,
        // then /dev (its device nodes, /dev/pts) is made read-only.
        // (`--size` must come right before the `--tmpfs` it sizes.)
        args.extend([
            OsString::from("--size"),
            job.limits.shm_bytes.to_string().into(),
            "--tmpfs".into(),
            "/dev/shm".into(),
            "--remount-ro".into(),
            "/dev".into(),
        ]);
        if let Some(fd) = seccomp {
            args.extend([OsString::from("--seccomp"), fd.to_string().into()]);
        }
        args.extend(Self::root_filesystem(&job.program));
        args.push("--size".into());
        args.push(job.limits.tmp_bytes.to_string().into());
        // --as-pid-1: the program itself is pid 1 of its namespace, so the bwrap we spawned
        // is its parent and reaps it. With bwrap's own init in between, that init outlives
        // the bwrap we wait for and is left to the host's pid 1, which may never reap it (a
        // container without an init): its zombies would count against the uid's
        // RLIMIT_NPROC until no job can fork. The namespace still dies with its pid 1.
        // The sandbox's own root is a tmpfs bwrap builds; make it read-only too, so that
        // only the private /tmp is writable.
        args.extend(
            [
                "--tmpfs",
                "/tmp",
                "--remount-ro",
                "/",
                "--chdir",
                "/tmp",
                "--as-pid-1",
                "--",
            ]
            .map(OsString::from),
        );
        args.push(program_path(&job.program).into_os_string());
        args.extend(job.args.iter().cloned());
        args
    }

    /// The read-only view of the host the program gets: the system's programs and
    /// libraries (`/usr` and the merged-usr links), the few files of `/etc` that the
    /// dynamic linker and Python read, and the interpreter's own prefix when it lives
    /// elsewhere. Nothing else of the host (home folders, the server's data, other
    /// projects) is visible.
    fn root_filesystem(program: &Path) -> Vec<OsString> {
        let mut args: Vec<OsString> = ["--ro-bind", "/usr", "/usr"].map(OsString::from).into();
        for top in ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"] {
            let path = Path::new(top);
            if let Ok(target) = std::fs::read_link(path) {
                args.extend([OsString::from("--symlink"), target.into_os_string(), path.into()]);
            } else if path.is_dir() {
                args.extend(["--ro-bind", top, top].map(OsString::from));
            }
        }
        let etc = [
            "/etc/ld.so.cache",
            "/etc/ld.so.conf",
            "/etc/ld.so.conf.d",
            "/etc/localtime",
            "/etc/alternatives",
        ];
        for file in etc {
            args.extend(["--ro-bind-try", file, file].map(OsString::from));
        }
        if let Ok(entries) = std::fs::read_dir("/etc") {
            // Debian's Python reads its site customisation from /etc/python3.X.
            for entry in entries.flatten() {
                if entry.file_name().to_string_lossy().starts_with("python3") {
                    let path = entry.path().into_os_string();
                    args.extend([OsString::from("--ro-bind-try"), path.clone(), path]);
                }
            }
        }
        let program = program_path(program);
        if let Some(venv) = virtual_environment(&program) {
            // A virtual environment (`cargo xtask setup --with dl`'s `.tools/dl`): its
            // folder holds the packages, its interpreter links to one in /usr or a prefix.
            let venv = venv.into_os_string();
            args.extend([OsString::from("--ro-bind"), venv.clone(), venv]);
        }
        let program = std::fs::canonicalize(&program).unwrap_or(program);
        if !program.starts_with("/usr") {
            // An interpreter installed elsewhere (/opt/python/bin/python3): its prefix.
            if let Some(prefix) = program.parent().and_then(Path::parent).filter(|p| p != &Path::new("/")) {
                let prefix = prefix.as_os_str().to_owned();
                args.extend([OsString::from("--ro-bind"), prefix.clone(), prefix]);
            }
        }
        args
    }

    async fn acquire_slot(&self, wait: Duration) -> Result<Slot, SandboxError> {
        let started = Instant::now();
        loop {
            let first = self.next_slot.fetch_add(1, Ordering::Relaxed);
            for n in 0..self.config.slots {
                let uid = self.config.uid_base + (first.wrapping_add(n) % self.config.slots);
                let path = self.config.lock_dir.join(format!("uid-{uid}.lock"));
                let file = File::options().create(true).truncate(false).write(true).open(&path)?;
                if posix::try_lock(&file)? {
                    // A previous holder that crashed may have left processes behind.
                    if !posix::processes_of_uid(uid).is_empty() {
                        sweep_uid(uid).await;
                    }
                    return Ok(Slot { uid, _lock: file });
                }
            }
            if started.elapsed() >= wait {
                return Err(SandboxError::Busy {
                    slots: self.config.slots,
                    waited_s: wait.as_secs(),
                });
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

impl Sandbox for Bubblewrap {
    fn describe(&self) -> String {
        match self.uid_range() {
            Some(uids) => format!("{} as uids {}..{}", self.version, uids.start, uids.end),
            None => format!(
                "{} as the server's own user (not root: no per-job uid, no process limit)",
                self.version
            ),
        }
    }

    fn run<'a>(&'a self, job: Job, stdout: StdoutSink<'a>) -> BoxFuture<'a, Result<RunReport, SandboxError>> {
        Box::pin(async move {
            let slot = if self.dedicated {
                Some(self.acquire_slot(job.limits.wall_time * 3).await?)
            } else {
                None
            };
            // Kept open until bwrap has read it (the run's end).
            let filter = crate::seccomp::filter_file()?;
            let filter_fd = filter.as_ref().map(std::os::fd::AsRawFd::as_raw_fd);
            let mut cmd = Command::new(&self.bwrap);
            cmd.args(Self::bwrap_args(&job, filter_fd)).env_clear().current_dir("/");
            let cgroup = match (&self.cgroups, &slot) {
                (Ok(cgroups), Some(slot)) => cgroups
                    .job(&format!("uid-{}", slot.uid), cgroup_memory_limit(&job.limits))
                    .map_err(|e| tracing::warn!("this job runs without a memory cgroup: {e}"))
                    .ok(),
                _ => None,
            };
            let setup = posix::ChildSetup {
                limits: posix::Rlimits::from_limits(&job.limits, slot.is_some()),
                identity: slot.as_ref().map(|s| (s.uid, s.uid)),
                inherit: filter_fd,
                cgroup_procs: cgroup.as_ref().map(|c| std::os::fd::AsRawFd::as_raw_fd(c.procs())),
            };
            posix::prepare(&mut cmd, setup);
            let result = supervise(cmd, &job, stdout, &self.bwrap).await;
            let stray = match &slot {
                Some(slot) => sweep_uid(slot.uid).await,
                None => 0,
            };
            let mut report = result?;
            report.termination = match report.termination {
                // The kernel's OOM killer acted inside the job's cgroup.
                Termination::Exited(_) | Termination::Signaled(_) | Termination::Stopped(Limit::CpuTime)
                    if cgroup.as_ref().is_some_and(crate::cgroup::JobCgroup::oom_killed) =>
                {
                    Termination::Stopped(Limit::Memory)
                }
                // bwrap reports a child killed by signal N as exit status 128 + N.
                Termination::Exited(code) if (129..=128 + 64).contains(&code) => classify_signal(code - 128),
                other => other,
            };
            drop(cgroup);
            report.uid = slot.as_ref().map(|s| s.uid);
            report.stray_processes = stray;
            Ok(report)
        })
    }
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

/// Waits for the processes of `uid` to disappear (the pid namespace tears down a moment
/// after bwrap exits), then kills whatever is left. Returns how many were left.
async fn sweep_uid(uid: u32) -> usize {
    tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let mut left = posix::processes_of_uid(uid);
        while !left.is_empty() && started.elapsed() < Duration::from_secs(1) {
            std::thread::sleep(Duration::from_millis(10));
            left = posix::processes_of_uid(uid);
        }
        let stray = left.len();
        if stray > 0 {
            tracing::warn!(uid, stray, "processes outlived their sandbox; killing them");
            for _ in 0..50 {
                if let Err(e) = posix::kill_all_of_uid(uid) {
                    tracing::error!(uid, "could not kill the sandbox uid's processes: {e}");
                }
                std::thread::sleep(Duration::from_millis(20));
                if posix::processes_of_uid(uid).is_empty() {
                    break;
                }
            }
        }
        stray
    })
    .await
    .unwrap_or(0)
}

/// Pids of live (not zombie) processes whose real uid is `uid`.
pub fn processes_of_uid(uid: u32) -> Vec<u32> {
    posix::processes_of_uid(uid)
}

/// The program as the sandbox runs it: a relative path with a folder in it
/// (`.tools/dl/bin/python`) is made absolute, since the sandbox starts in its own /tmp;
/// a bare name is looked up on the sandbox's PATH.
fn program_path(program: &Path) -> PathBuf {
    if program.is_relative() && program.components().count() > 1 {
        std::path::absolute(program).unwrap_or_else(|_| program.to_path_buf())
    } else {
        program.to_path_buf()
    }
}

/// The virtual environment whose interpreter `program` is (`<venv>/bin/python`, with
/// `<venv>/pyvenv.cfg`), if it is one.
fn virtual_environment(program: &Path) -> Option<PathBuf> {
    let root = program.parent()?.parent()?;
    root.join("pyvenv.cfg").is_file().then(|| root.to_path_buf())
}

fn find_executable(name: &Path) -> Option<PathBuf> {
    if name.components().count() > 1 {
        return name.is_file().then(|| name.to_path_buf());
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

/// The only code here that calls into libc directly: `pre_exec` (setsid, rlimits, dropping
/// to the sandbox uid between fork and exec), `killpg`, `flock`, and a forked helper that
/// kills every process of a sandbox uid. `unsafe` is allowed in this module alone because
/// these calls have no safe wrapper in std or tokio.
#[allow(unsafe_code)]
mod posix {
    use std::fs::File;
    use std::io;
    use std::os::fd::AsRawFd;

    use super::RunLimits;

    /// Resource limits as (soft, hard) pairs, computed before fork so that the child
    /// only makes system calls.
    #[derive(Debug, Clone, Copy)]
    pub(super) struct Rlimits {
        address_space: u64,
        cpu: (u64, u64),
        file_size: u64,
        open_files: u64,
        processes: Option<u64>,
    }

    impl Rlimits {
        pub(super) fn from_limits(limits: &RunLimits, dedicated_uid: bool) -> Self {
            let cpu = limits.cpu_seconds();
            Self {
                address_space: limits.memory_bytes,
                cpu: (cpu, cpu + 1),
                file_size: limits.max_file_bytes,
                open_files: u64::from(limits.max_open_files),
                processes: dedicated_uid.then_some(u64::from(limits.max_processes)),
            }
        }
    }

    #[derive(Clone, Copy)]
    pub(super) struct ChildSetup {
        pub(super) limits: Rlimits,
        /// (uid, gid) to drop to.
        pub(super) identity: Option<(u32, u32)>,
        /// An fd the program inherits (std opens everything close-on-exec).
        pub(super) inherit: Option<i32>,
        /// The job cgroup's `cgroup.procs`, joined before dropping root.
        pub(super) cgroup_procs: Option<i32>,
    }

    fn check(result: libc::c_int) -> io::Result<()> {
        if result == -1 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    fn set(resource: libc::__rlimit_resource_t, soft: u64, hard: u64) -> io::Result<()> {
        let limit = libc::rlimit {
            rlim_cur: soft,
            rlim_max: hard,
        };
        // SAFETY: setrlimit only reads the struct we pass.
        check(unsafe { libc::setrlimit(resource, &raw const limit) })
    }

    /// Registers the code that runs in the child between fork and exec: a new session
    /// (so one killpg reaches everything), the rlimits, then the sandbox uid.
    pub(super) fn prepare(cmd: &mut tokio::process::Command, setup: ChildSetup) {
        let ChildSetup {
            limits,
            identity,
            inherit,
            cgroup_procs,
        } = setup;
        let hook = move || -> io::Result<()> {
            // SAFETY (whole hook): only async-signal-safe system calls, no allocation.
            check(unsafe { libc::setsid() })?;
            if let Some(fd) = cgroup_procs {
                crate::cgroup::join_raw(fd)?;
            }
            if let Some(fd) = inherit {
                check(unsafe { libc::fcntl(fd, libc::F_SETFD, 0) })?;
            }
            set(libc::RLIMIT_CORE, 0, 0)?;
            set(libc::RLIMIT_AS, limits.address_space, limits.address_space)?;
            set(libc::RLIMIT_CPU, limits.cpu.0, limits.cpu.1)?;
            set(libc::RLIMIT_FSIZE, limits.file_size, limits.file_size)?;
            set(libc::RLIMIT_NOFILE, limits.open_files, limits.open_files)?;
            if let Some(n) = limits.processes {
                set(libc::RLIMIT_NPROC, n, n)?;
            }
            if let Some((uid, gid)) = identity {
                check(unsafe { libc::setgroups(0, std::ptr::null()) })?;
                check(unsafe { libc::setgid(gid) })?;
                check(unsafe { libc::setuid(uid) })?;
            }
            Ok(())
        };
        // SAFETY: the hook is async-signal-safe (see above).
        unsafe {
            cmd.pre_exec(hook);
        }
    }

    pub(super) fn is_root() -> bool {
        // SAFETY: geteuid cannot fail and touches no memory.
        unsafe { libc::geteuid() == 0 }
    }

    /// SIGKILL to a whole process group; a group that is already gone is fine.
    pub(super) fn kill_group(group: i32) {
        if group > 1 {
            // SAFETY: killpg touches no memory.
            unsafe {
                libc::killpg(group, libc::SIGKILL);
            }
        }
    }

    /// Takes an exclusive `flock` without waiting: `Ok(false)` when someone else holds it.
    pub(super) fn try_lock(file: &File) -> io::Result<bool> {
        // SAFETY: flock on a file descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(true);
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
            Ok(false)
        } else {
            Err(err)
        }
    }

    /// Kills every process of `uid`, wherever it is (other pid namespaces included), from
    /// a forked helper that becomes `uid` and calls `kill(-1, SIGKILL)`, which signals
    /// everything the caller may signal except itself. Only for root with a dedicated uid.
    pub(super) fn kill_all_of_uid(uid: u32) -> io::Result<()> {
        // SAFETY: after fork the child makes only async-signal-safe system calls and
        // leaves with _exit; the parent waits for it.
        unsafe {
            let pid = libc::fork();
            if pid == -1 {
                return Err(io::Error::last_os_error());
            }
            if pid == 0 {
                let ok = libc::setgroups(0, std::ptr::null()) == 0
                    && libc::setgid(uid) == 0
                    && libc::setuid(uid) == 0
                    && libc::getuid() == uid;
                if ok {
                    libc::kill(-1, libc::SIGKILL);
                }
                libc::_exit(i32::from(!ok));
            }
            let mut status = 0;
            while libc::waitpid(pid, &raw mut status, 0) == -1 {
                let err = io::Error::last_os_error();
                if err.kind() != io::ErrorKind::Interrupted {
                    return Err(err);
                }
            }
            if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
                Ok(())
            } else {
                Err(io::Error::other(format!("the helper that drops to uid {uid} failed")))
            }
        }
    }

    /// Pids of live (not zombie) processes whose real uid is `uid`, from /proc.
    pub(super) fn processes_of_uid(uid: u32) -> Vec<u32> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        let mut pids = Vec::new();
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
                continue;
            };
            let mut real_uid = None;
            let mut zombie = false;
            for line in status.lines() {
                if let Some(state) = line.strip_prefix("State:") {
                    zombie = state.trim_start().starts_with('Z');
                } else if let Some(uids) = line.strip_prefix("Uid:") {
                    real_uid = uids.split_whitespace().next().and_then(|u| u.parse::<u32>().ok());
                    break;
                }
            }
            if real_uid == Some(uid) && !zombie {
                pids.push(pid);
            }
        }
        pids
    }
}
