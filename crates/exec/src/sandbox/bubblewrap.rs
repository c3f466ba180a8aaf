//! [`Bubblewrap`]: the real sandbox. New namespaces (no network, its own pids), a
//! read-only root and a minimal `/dev`, a small private `/tmp` and `/dev/shm`, no
//! capabilities, the seccomp filter, a cleared environment, a dedicated non-root uid per
//! concurrent job (its lock file and a sweep of its leftover processes), rlimits, a
//! per-job memory cgroup where the machine allows one, and a wall-clock kill.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use replayground_shared::Limit;
use tokio::process::Command;

use super::{
    BoxFuture, Job, RunLimits, RunReport, Sandbox, SandboxError, StdoutSink, Termination, cgroup_memory_limit,
    classify_signal, discard, posix, supervise,
};

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

/// How long the processes of a finished job may go without one of them exiting, while
/// none is being killed, before those left count as strays.
const TEARDOWN_STALL: Duration = Duration::from_secs(1);
/// The longest a teardown is waited for while it makes progress or a process of it is
/// being killed.
const TEARDOWN_LIMIT: Duration = Duration::from_secs(15);

/// Waits for the processes of `uid` to disappear, then kills whatever is left. Returns how
/// many had outlived the sandbox: left at the end and not being killed.
///
/// The program is pid 1 of its namespace in a session of its own, so the kill of bwrap's
/// process group reaches it only as bwrap's death signal: it has a SIGKILL pending, and
/// when it runs and exits the kernel kills the rest of the namespace. On a loaded machine
/// that can take seconds, during which a fork bomb's other processes still run; so the
/// wait goes on while any process is being killed or one has exited within
/// [`TEARDOWN_STALL`].
async fn sweep_uid(uid: u32) -> usize {
    tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let mut left = posix::uid_processes(uid);
        let mut progress = Instant::now();
        while !left.is_empty() && started.elapsed() < TEARDOWN_LIMIT {
            if progress.elapsed() >= TEARDOWN_STALL && !left.iter().any(|p| p.dying) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
            let now = posix::uid_processes(uid);
            if now.len() < left.len() {
                progress = Instant::now();
            }
            left = now;
        }
        let stray = left.iter().filter(|p| !p.dying).count();
        if !left.is_empty() {
            tracing::warn!(
                uid,
                stray,
                dying = left.len() - stray,
                "processes outlived their sandbox; killing them"
            );
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
