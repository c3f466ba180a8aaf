//! A throwaway PostgreSQL cluster for the store tests, from Debian's packages.
//!
//! `cargo xtask test` runs the server's store and API tests on SQLite always and on
//! Postgres when it can: it initialises a cluster in a temporary folder, starts it on
//! a free loopback port with trust authentication, passes its URL to the tests in
//! `REPLAYGROUND_TEST_POSTGRES_URL`, and stops and deletes it afterwards. When it
//! cannot (no server binaries, not root), it says why and the tests use SQLite only.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

/// The variable the server's tests read.
pub(crate) const URL_VARIABLE: &str = "REPLAYGROUND_TEST_POSTGRES_URL";
/// Postgres refuses to run as root; Debian's package creates this account.
const SERVICE_USER: &str = "postgres";

/// A running cluster; stopped and deleted on drop.
pub(crate) struct Cluster {
    pg_ctl: PathBuf,
    data: tempfile::TempDir,
    pub(crate) url: String,
}

impl Cluster {
    /// Starts a cluster, or explains in one sentence why it cannot.
    pub(crate) fn start() -> Result<Self> {
        let bin = server_binaries().context(
            "PostgreSQL's server binaries are not installed (apt-get install postgresql), so the store tests use SQLite only",
        )?;
        let as_root = std::env::var("USER").is_ok_and(|u| u == "root") || crate::project::is_root();
        if !as_root {
            bail!(
                "a throwaway PostgreSQL needs root to run it as the `postgres` user, so the store tests use SQLite only"
            );
        }
        let data = tempfile::Builder::new()
            .prefix("replayground-pg-")
            .tempdir()
            .context("cannot create a temp folder")?;
        let status = Command::new("chown")
            .args([
                &format!("{SERVICE_USER}:{SERVICE_USER}"),
                &data.path().display().to_string(),
            ])
            .status()
            .context("chown is missing")?;
        if !status.success() {
            bail!("cannot hand the cluster folder to the `{SERVICE_USER}` user (does it exist?)");
        }
        let cluster = data.path().join("cluster");
        let initdb = bin.join("initdb");
        as_service_user(&[
            initdb.as_os_str(),
            "-D".as_ref(),
            cluster.as_os_str(),
            "--auth=trust".as_ref(),
            "-U".as_ref(),
            SERVICE_USER.as_ref(),
        ])
        .context("initdb failed")?;
        let port = free_port()?;
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {port} -k {} -c fsync=off",
            data.path().display()
        );
        let pg_ctl = bin.join("pg_ctl");
        let log = data.path().join("server.log");
        as_service_user(&[
            pg_ctl.as_os_str(),
            "-D".as_ref(),
            cluster.as_os_str(),
            "-l".as_ref(),
            log.as_os_str(),
            "-o".as_ref(),
            options.as_ref(),
            "-w".as_ref(),
            "start".as_ref(),
        ])
        .with_context(|| format!("the server did not start; see {}", log.display()))?;
        let url = format!("postgres://{SERVICE_USER}@127.0.0.1:{port}/postgres");
        Ok(Self { pg_ctl, data, url })
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let cluster = self.data.path().join("cluster");
        let _ = as_service_user(&[
            self.pg_ctl.as_os_str(),
            "-D".as_ref(),
            cluster.as_os_str(),
            "-m".as_ref(),
            "immediate".as_ref(),
            "stop".as_ref(),
        ]);
    }
}

fn as_service_user(args: &[&std::ffi::OsStr]) -> Result<()> {
    let output = Command::new("runuser")
        .args(["-u", SERVICE_USER, "--"])
        .args(args)
        .current_dir("/")
        .stdin(Stdio::null())
        .output()
        .context("runuser is missing")?;
    if !output.status.success() {
        bail!("{}", String::from_utf8_lossy(&output.stderr).trim());
    }
    Ok(())
}

/// `/usr/lib/postgresql/<newest>/bin`, where Debian puts `initdb` and `pg_ctl`.
fn server_binaries() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, bin): &(u32, PathBuf)| Path::new(bin).join("initdb").is_file())
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").context("cannot find a free loopback port")?;
    Ok(listener.local_addr()?.port())
}
