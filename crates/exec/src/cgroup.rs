//! A memory cgroup per sandbox job, where the machine allows one.
//!
//! `RLIMIT_AS` bounds what a program maps, not what it makes the kernel hold for it (tmpfs
//! pages, pipe and socket buffers, page cache). A job's cgroup counts all of it. The server
//! makes one cgroup per job under its own, sets the limit, and the job's first process
//! joins it before it drops root (by writing `0` to `cgroup.procs`).
//!
//! cgroup v2 needs the memory controller enabled for the server's cgroup's children (a
//! delegated cgroup, e.g. systemd's `Delegate=yes`); cgroup v1 needs the memory hierarchy
//! mounted at `/sys/fs/cgroup/memory` and writable. Elsewhere (no root, a container
//! without cgroup access) [`MemoryCgroups::detect`] says why, the server logs it, and jobs
//! run without one: `RLIMIT_AS` and the sized tmpfs mounts are then the bounds.

use std::fs::{File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    V1,
    V2,
}

/// Where job cgroups are made.
#[derive(Debug)]
pub(crate) struct MemoryCgroups {
    version: Version,
    parent: PathBuf,
}

/// One job's cgroup; removed when dropped (after its processes are gone).
#[derive(Debug)]
pub(crate) struct JobCgroup {
    version: Version,
    dir: PathBuf,
    procs: File,
}

/// The server's own cgroup path in `hierarchy` (`0::/path` for v2, `N:memory:/path` for
/// v1), from `/proc/self/cgroup`.
fn own_path(proc_self_cgroup: &str, version: Version) -> Option<&str> {
    proc_self_cgroup.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (id, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        let wanted = match version {
            Version::V2 => id == "0" && controllers.is_empty(),
            Version::V1 => controllers.split(',').any(|c| c == "memory"),
        };
        wanted.then_some(path)
    })
}

impl MemoryCgroups {
    /// The cgroups jobs can get on this machine, or why there are none.
    pub(crate) fn detect() -> Result<Self, String> {
        let own = std::fs::read_to_string("/proc/self/cgroup").map_err(|e| format!("/proc/self/cgroup: {e}"))?;
        let v2_root = Path::new("/sys/fs/cgroup");
        let v2_controllers = std::fs::read_to_string(v2_root.join("cgroup.controllers")).unwrap_or_default();
        let (version, parent) = if v2_controllers.split_whitespace().any(|c| c == "memory") {
            let path = own_path(&own, Version::V2).ok_or("no cgroup v2 path in /proc/self/cgroup")?;
            let parent = v2_root.join(path.trim_start_matches('/'));
            let control = parent.join("cgroup.subtree_control");
            let enabled = std::fs::read_to_string(&control).unwrap_or_default();
            if !enabled.split_whitespace().any(|c| c == "memory") {
                std::fs::write(&control, "+memory").map_err(|e| {
                    format!(
                        "cannot enable the memory controller for {}: {e} (run the server in a delegated cgroup, e.g. systemd Delegate=yes)",
                        parent.display()
                    )
                })?;
            }
            (Version::V2, parent)
        } else if Path::new("/sys/fs/cgroup/memory/cgroup.procs").is_file() {
            let path = own_path(&own, Version::V1).ok_or("no memory cgroup in /proc/self/cgroup")?;
            (
                Version::V1,
                Path::new("/sys/fs/cgroup/memory").join(path.trim_start_matches('/')),
            )
        } else {
            return Err("this machine has no memory cgroup controller the server can use".to_owned());
        };
        let cgroups = Self { version, parent };
        // A trial cgroup proves that this process may make them.
        drop(
            cgroups
                .job(&format!("probe-{}", std::process::id()), 64 << 20)
                .map_err(|e| format!("cannot create a memory cgroup under {}: {e}", cgroups.parent.display()))?,
        );
        Ok(cgroups)
    }

    /// `cgroup v2 at /sys/fs/cgroup/...`.
    pub(crate) fn describe(&self) -> String {
        let version = match self.version {
            Version::V1 => "v1",
            Version::V2 => "v2",
        };
        format!("cgroup {version} under {}", self.parent.display())
    }

    /// A fresh cgroup named `name` whose memory is capped at `limit` bytes.
    pub(crate) fn job(&self, name: &str, limit: u64) -> io::Result<JobCgroup> {
        let dir = self.parent.join(format!("replayground-{name}"));
        if dir.exists() {
            // Left by a server that was killed; empty once its processes are gone.
            let _ = std::fs::remove_dir(&dir);
        }
        std::fs::create_dir(&dir)?;
        let limit = limit.to_string();
        let (memory, swap) = match self.version {
            Version::V1 => ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes"),
            Version::V2 => ("memory.max", "memory.swap.max"),
        };
        let job = JobCgroup {
            version: self.version,
            procs: OpenOptions::new().write(true).open(dir.join("cgroup.procs"))?,
            dir,
        };
        std::fs::write(job.dir.join(memory), &limit)?;
        // Swap must not extend the limit; kernels without swap accounting lack the file.
        let _ = std::fs::write(
            job.dir.join(swap),
            if job.version == Version::V2 { "0" } else { &limit },
        );
        Ok(job)
    }
}

impl JobCgroup {
    /// The open `cgroup.procs`: the job's first process writes `0` to it to join.
    pub(crate) fn procs(&self) -> &File {
        &self.procs
    }

    /// Whether the kernel killed a process of this job for going over the limit.
    pub(crate) fn oom_killed(&self) -> bool {
        let file = match self.version {
            Version::V1 => "memory.oom_control",
            Version::V2 => "memory.events",
        };
        std::fs::read_to_string(self.dir.join(file)).is_ok_and(|text| {
            text.lines()
                .filter_map(|line| line.strip_prefix("oom_kill "))
                .any(|n| n.trim().parse::<u64>().is_ok_and(|n| n > 0))
        })
    }
}

impl Drop for JobCgroup {
    fn drop(&mut self) {
        // The job's processes are dead by now, but the kernel may take a moment to let go.
        for _ in 0..20 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        tracing::warn!(dir = %self.dir.display(), "a job's cgroup could not be removed");
    }
}

/// Writes `0` to `procs` from the child between fork and exec: async-signal-safe.
pub(crate) fn join_raw(fd: i32) -> io::Result<()> {
    let mut file = std::mem::ManuallyDrop::new(file_from_raw(fd));
    file.write_all(b"0")
}

#[allow(unsafe_code)]
fn file_from_raw(fd: i32) -> File {
    use std::os::fd::FromRawFd as _;
    // SAFETY: `fd` is the open `cgroup.procs` of a live JobCgroup; ManuallyDrop in the
    // caller keeps it from being closed here.
    unsafe { File::from_raw_fd(fd) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_own_path_is_read_for_each_hierarchy() {
        let hybrid = "9:name=systemd:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/user.slice/x\n";
        assert_eq!(own_path(hybrid, Version::V1), Some("/process_api/abc"));
        assert_eq!(own_path(hybrid, Version::V2), Some("/user.slice/x"));
        assert_eq!(own_path("0::/\n", Version::V1), None);
        assert_eq!(own_path("4:cpu,memory:/a\n", Version::V1), Some("/a"));
    }
}
