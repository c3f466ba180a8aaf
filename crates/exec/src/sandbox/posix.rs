//! The only code here that calls into libc directly: `pre_exec` (setsid, rlimits, dropping
//! to the sandbox uid between fork and exec), `killpg`, `flock`, and a forked helper that
//! kills every process of a sandbox uid. `unsafe` is allowed in this module alone because
//! these calls have no safe wrapper in std or tokio.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

use super::RunLimits;

/// Resource limits as (soft, hard) pairs, computed before fork so that the child
/// only makes system calls.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rlimits {
    address_space: u64,
    cpu: (u64, u64),
    file_size: u64,
    open_files: u64,
    processes: Option<u64>,
}

impl Rlimits {
    pub(crate) fn from_limits(limits: &RunLimits, dedicated_uid: bool) -> Self {
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
pub(crate) struct ChildSetup {
    pub(crate) limits: Rlimits,
    /// (uid, gid) to drop to.
    pub(crate) identity: Option<(u32, u32)>,
    /// An fd the program inherits (std opens everything close-on-exec).
    pub(crate) inherit: Option<i32>,
    /// The job cgroup's `cgroup.procs`, joined before dropping root.
    pub(crate) cgroup_procs: Option<i32>,
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
pub(crate) fn prepare(cmd: &mut tokio::process::Command, setup: ChildSetup) {
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

pub(crate) fn is_root() -> bool {
    // SAFETY: geteuid cannot fail and touches no memory.
    unsafe { libc::geteuid() == 0 }
}

/// SIGKILL to a whole process group; a group that is already gone is fine.
pub(crate) fn kill_group(group: i32) {
    if group > 1 {
        // SAFETY: killpg touches no memory.
        unsafe {
            libc::killpg(group, libc::SIGKILL);
        }
    }
}

/// Takes an exclusive `flock` without waiting: `Ok(false)` when someone else holds it.
pub(crate) fn try_lock(file: &File) -> io::Result<bool> {
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
pub(crate) fn kill_all_of_uid(uid: u32) -> io::Result<()> {
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
pub(crate) fn processes_of_uid(uid: u32) -> Vec<u32> {
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
