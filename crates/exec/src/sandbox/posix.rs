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
    uid_processes(uid).into_iter().map(|p| p.pid).collect()
}

/// A live process of a sandbox uid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UidProcess {
    pub pid: u32,
    /// Being killed: a SIGKILL is pending (the kernel tears it down as soon as it is
    /// scheduled) or it is already in `do_exit`.
    pub dying: bool,
}

/// The live (not zombie) processes whose real uid is `uid`, from /proc.
pub(crate) fn uid_processes(uid: u32) -> Vec<UidProcess> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let status = ProcStatus::parse(&std::fs::read_to_string(entry.path().join("status")).ok()?);
            if status.real_uid != Some(uid) || status.zombie {
                return None;
            }
            // A process that has taken its SIGKILL off the pending set is exiting.
            let exiting = || {
                std::fs::read_to_string(entry.path().join("stat"))
                    .is_ok_and(|stat| stat_flags(&stat).is_some_and(|flags| flags & PF_EXITING != 0))
            };
            Some(UidProcess {
                pid,
                dying: status.killed || exiting(),
            })
        })
        .collect()
}

/// The kernel's flag for a task in `do_exit` (include/linux/sched.h).
const PF_EXITING: u64 = 0x4;

/// The flags field of `/proc/PID/stat` (the 9th; the command name before it is in
/// parentheses and may hold spaces).
fn stat_flags(stat: &str) -> Option<u64> {
    stat.rsplit_once(')')?.1.split_whitespace().nth(6)?.parse().ok()
}

/// What `/proc/PID/status` says about a process that matters to a sweep.
#[derive(Debug, Default, PartialEq, Eq)]
struct ProcStatus {
    real_uid: Option<u32>,
    zombie: bool,
    /// SIGKILL is in the thread's or the thread group's pending set.
    killed: bool,
}

impl ProcStatus {
    fn parse(status: &str) -> Self {
        const SIGKILL_BIT: u64 = 1 << (libc::SIGKILL - 1);
        let mut parsed = Self::default();
        for (key, value) in status.lines().filter_map(|line| line.split_once(':')) {
            let value = value.trim();
            match key {
                "State" => parsed.zombie = value.starts_with('Z'),
                "Uid" => parsed.real_uid = value.split_whitespace().next().and_then(|u| u.parse().ok()),
                "SigPnd" | "ShdPnd" => {
                    parsed.killed |= u64::from_str_radix(value, 16).is_ok_and(|mask| mask & SIGKILL_BIT != 0);
                }
                _ => {}
            }
        }
        parsed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_tells_the_uid_a_zombie_and_a_pending_sigkill() {
        let status = |state: &str, sigpnd: &str, shdpnd: &str| {
            format!(
                "Name:\tpython3\nState:\t{state}\nTgid:\t7\nUid:\t61001\t61001\t61001\t61001\nGid:\t61001\t61001\t61001\t61001\nSigQ:\t1/31\nSigPnd:\t{sigpnd}\nShdPnd:\t{shdpnd}\nSigBlk:\t0000000000000000\n"
            )
        };
        let running = ProcStatus::parse(&status("R (running)", "0000000000000000", "0000000000000000"));
        assert_eq!(
            running,
            ProcStatus {
                real_uid: Some(61001),
                zombie: false,
                killed: false
            }
        );
        // SIGKILL is signal 9: bit 8 of either pending mask.
        assert!(ProcStatus::parse(&status("R (running)", "0000000000000100", "0000000000000000")).killed);
        assert!(ProcStatus::parse(&status("S (sleeping)", "0000000000000000", "0000000000000102")).killed);
        // SIGTERM (15) and SIGINT (2) pending are not a kill.
        assert!(!ProcStatus::parse(&status("S (sleeping)", "0000000000004002", "0000000000000000")).killed);
        assert!(ProcStatus::parse(&status("Z (zombie)", "0000000000000000", "0000000000000000")).zombie);
        assert_eq!(ProcStatus::parse("garbage"), ProcStatus::default());
    }

    #[test]
    fn the_flags_of_a_stat_line_are_its_ninth_field() {
        let stat = "4242 (a (weird) name) R 1 4242 4242 0 -1 4194564 120 0 0 0 3 1 0 0 20 0 1 0";
        assert_eq!(stat_flags(stat), Some(4_194_564));
        assert_ne!(stat_flags(stat).unwrap() & PF_EXITING, 0);
        assert_eq!(stat_flags("garbage"), None);
        let me = std::fs::read_to_string("/proc/self/stat").unwrap();
        assert_eq!(stat_flags(&me).map(|f| f & PF_EXITING), Some(0));
    }

    #[test]
    fn this_process_is_live_and_not_dying() {
        let me = std::process::id();
        // SAFETY: getuid touches no memory.
        let uid = unsafe { libc::getuid() };
        let found = uid_processes(uid).into_iter().find(|p| p.pid == me);
        assert_eq!(found, Some(UidProcess { pid: me, dying: false }));
    }
}
