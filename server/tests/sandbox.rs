//! Hostile programs in the real bubblewrap sandbox: each is contained, reported with the
//! right outcome, leaves no process behind, and the next run works.
//!
//! These run for real in CI (as root, so jobs get dedicated uids). Without bwrap they
//! print why and pass, except under `cargo xtask test`, which requires the sandbox.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use replayground_server::runner::{DEFAULT_PYTHON, TraceRun, Tracer};
use replayground_server::sandbox::{
    Bubblewrap, BubblewrapConfig, Job, RunLimits, Sandbox, SandboxError, Termination, processes_of_uid,
};
use replayground_shared::{Limit, Outcome};

/// One hostile program at a time: they are CPU-heavy, and the leftover checks look at
/// the sandbox uids.
pub(crate) static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

pub(crate) fn bubblewrap() -> Option<Arc<Bubblewrap>> {
    match Bubblewrap::detect(BubblewrapConfig::default()) {
        Ok(bwrap) => Some(Arc::new(bwrap)),
        Err(SandboxError::NotInstalled) => {
            assert!(
                !crate::common::sandbox_required(),
                "bubblewrap (bwrap) is not installed and `cargo xtask test` requires it: run `cargo xtask setup`"
            );
            eprintln!("SKIPPED: bubblewrap (bwrap) is not installed; apt-get install bubblewrap to run these tests");
            None
        }
        Err(e) => panic!("bubblewrap is installed but broken: {e}"),
    }
}

pub(crate) fn quick_limits() -> RunLimits {
    RunLimits {
        cpu_time: Duration::from_secs(1),
        wall_time: Duration::from_secs(4),
        ..RunLimits::default()
    }
}

pub(crate) async fn run(bwrap: &Arc<Bubblewrap>, code: &str, limits: &RunLimits) -> TraceRun {
    let tracer = Tracer::new(Arc::clone(bwrap) as Arc<dyn Sandbox>, DEFAULT_PYTHON, limits.clone());
    let run = tracer.run(code, "", limits).await.expect("the sandbox starts");
    run.trace.validate().expect("a valid trace");
    run
}

/// Runs `code`, checks what the sandbox left behind, then that a normal program still works.
pub(crate) async fn contained(bwrap: &Arc<Bubblewrap>, code: &str, limits: &RunLimits) -> TraceRun {
    let run = run(bwrap, code, limits).await;
    assert_eq!(
        run.report.stray_processes, 0,
        "processes outlived the sandbox: {:?}",
        run.report
    );
    if let Some(uid) = run.report.uid {
        assert!(processes_of_uid(uid).is_empty(), "processes of uid {uid} are left");
    }
    if bwrap.uid_range().is_some() {
        assert!(run.report.uid.is_some(), "as root every job gets a dedicated uid");
        assert!(run.report.uid.unwrap() >= 61000);
    }
    let next = self::run(bwrap, "print('ok')\n", &RunLimits::default()).await;
    assert_eq!(
        next.trace.outcome,
        Outcome::Finished,
        "the next run works: {:?}",
        next.report
    );
    assert_eq!(next.trace.stdout, "ok\n");
    run
}

pub(crate) fn assert_limit(run: &TraceRun, limit: Limit) {
    match &run.trace.outcome {
        Outcome::LimitReached { limit: got, detail } => {
            assert_eq!(*got, limit, "{detail}");
            assert!(!detail.is_empty());
        }
        other => panic!("expected {limit:?}, got {other:?} ({:?})", run.report),
    }
}

#[tokio::test]
async fn an_infinite_loop_hits_the_step_limit() {
    let Some(bwrap) = bubblewrap() else { return };
    let _serial = SERIAL.lock().await;
    let run = contained(&bwrap, "while True:\n    pass\n", &quick_limits()).await;
    assert_limit(&run, Limit::Events);
    assert_eq!(run.trace.events.len(), RunLimits::default().max_events as usize);
}

#[tokio::test]
async fn an_infinite_loop_hits_the_cpu_limit() {
    let Some(bwrap) = bubblewrap() else { return };
    let _serial = SERIAL.lock().await;
    // Few events, much CPU: the soft limit's SIGXCPU ends the trace at the next event.
    let limits = RunLimits {
        max_events: u32::MAX,
        ..quick_limits()
    };
    let started = Instant::now();
    let run = contained(&bwrap, "while True:\n    total = sum(range(10 ** 6))\n", &limits).await;
    assert_limit(&run, Limit::CpuTime);
    assert!(!run.trace.events.is_empty(), "the events up to the limit are kept");
    assert!(started.elapsed() < Duration::from_secs(4));
}

#[tokio::test]
async fn a_loop_in_c_code_is_killed_at_the_hard_cpu_limit() {
    let Some(bwrap) = bubblewrap() else { return };
    let _serial = SERIAL.lock().await;
    // sum() over an endless iterator never returns to Python, so only SIGKILL stops it.
    let run = contained(&bwrap, "import itertools\nsum(itertools.repeat(1))\n", &quick_limits()).await;
    assert_limit(&run, Limit::CpuTime);
}

#[tokio::test]
async fn sleeping_forever_hits_the_wall_clock_limit() {
    let Some(bwrap) = bubblewrap() else { return };
    let _serial = SERIAL.lock().await;
    let limits = RunLimits {
        wall_time: Duration::from_secs(2),
        ..quick_limits()
    };
    let started = Instant::now();
    let run = contained(&bwrap, "import time\nprint('zz')\ntime.sleep(10 ** 6)\n", &limits).await;
    assert_limit(&run, Limit::WallTime);
    assert!(started.elapsed() < Duration::from_secs(6));
    assert!(run.trace.events.len() >= 3, "the events before the kill are kept");
    assert_eq!(run.trace.stdout, "zz\n");
}

#[tokio::test]
async fn a_ten_gigabyte_allocation_is_a_memory_error() {
    let Some(bwrap) = bubblewrap() else { return };
    let _serial = SERIAL.lock().await;
    let run = contained(&bwrap, "x = bytearray(10 * 1024 ** 3)\n", &quick_limits()).await;
    assert_limit(&run, Limit::Memory);
}

#[tokio::test]
async fn a_fork_bomb_is_capped_and_cleaned_up() {
    let Some(bwrap) = bubblewrap() else { return };
    let _serial = SERIAL.lock().await;
    let code = "import os\nforks = 0\nfailures = 0\nwhile True:\n    try:\n        if os.fork() == 0:\n            continue\n        forks += 1\n    except OSError:\n        failures += 1\n";
    let run = contained(&bwrap, code, &quick_limits()).await;
    assert!(
        matches!(run.trace.outcome, Outcome::LimitReached { .. }),
        "{:?}",
        run.trace.outcome
    );
    if bwrap.uid_range().is_some() {
        // As root the uid's process limit makes fork fail; the trace shows it happening.
        let failures = run.trace.events.iter().rev().find_map(|e| {
            e.locals
                .iter()
                .find(|b| b.name == "failures")
                .map(|b| run.trace.value(b.value).repr.clone())
        });
        assert_ne!(
            failures.as_deref(),
            Some("0"),
            "fork never failed: the process limit is not applied"
        );
    }
}

#[tokio::test]
async fn the_network_is_unreachable() {
    let Some(bwrap) = bubblewrap() else { return };
    let _serial = SERIAL.lock().await;
    // A server on the host's loopback: the sandbox has its own (down) loopback.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let code = format!(
        "import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    print('connected')\nexcept OSError as e:\n    print('blocked', type(e).__name__)\n"
    );
    let run = contained(&bwrap, &code, &quick_limits()).await;
    assert_eq!(run.trace.outcome, Outcome::Finished);
    assert!(run.trace.stdout.starts_with("blocked"), "{}", run.trace.stdout);
    assert!(listener.accept().is_err(), "nothing reached the host");
}

#[tokio::test]
async fn only_the_private_tmp_is_writable() {
    let Some(bwrap) = bubblewrap() else { return };
    let _serial = SERIAL.lock().await;
    // World-writable on the host, so only the read-only mount can stop the write.
    let dir = tempfile::Builder::new()
        .prefix("sandbox-write-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let world_writable = std::os::unix::fs::PermissionsExt::from_mode(0o777);
    std::fs::set_permissions(dir.path(), world_writable).unwrap();
    let target = dir.path().join("escaped.txt");
    let code = format!(
        "for path in [{:?}, '/etc/replayground-test', '/tmp/inside.txt']:\n    try:\n        with open(path, 'w') as f:\n            f.write('x')\n        print('wrote', path)\n    except OSError as e:\n        print('blocked', path, type(e).__name__)\n",
        target.display().to_string()
    );
    let run = contained(&bwrap, &code, &quick_limits()).await;
    let lines: Vec<&str> = run.trace.stdout.lines().collect();
    assert!(lines[0].starts_with("blocked"), "{lines:?}");
    assert!(lines[1].starts_with("blocked"), "{lines:?}");
    assert_eq!(lines[2], "wrote /tmp/inside.txt");
    assert!(!target.exists());
    assert!(!PathBuf::from("/etc/replayground-test").exists());
}

#[tokio::test]
async fn host_files_outside_the_system_folders_are_invisible() {
    let Some(bwrap) = bubblewrap() else { return };
    let _serial = SERIAL.lock().await;
    // This very source tree, host accounts and the server's home are all off limits;
    // the interpreter's own library is there (the program imports from it).
    let here = env!("CARGO_MANIFEST_DIR");
    let code = format!(
        "import os, json\nfor path in [{here:?}, '/etc/passwd', '/root', '/home', '/var']:\n    print(path, os.path.exists(path))\nprint('json', json.dumps([1]))\n"
    );
    let run = contained(&bwrap, &code, &quick_limits()).await;
    let lines: Vec<&str> = run.trace.stdout.lines().collect();
    assert_eq!(lines.len(), 6, "{lines:?} {:?}", run.trace.outcome);
    for line in &lines[..5] {
        assert!(line.ends_with(" False"), "visible inside the sandbox: {line}");
    }
    assert_eq!(lines[5], "json [1]");
}

#[tokio::test]
async fn the_servers_environment_is_invisible() {
    let Some(bwrap) = bubblewrap() else { return };
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("env.py");
    std::fs::write(
        &program,
        "import os\nprint(sorted(os.environ))\nprint(os.environ.get('REPLAYGROUND_TEST_SECRET'))\n",
    )
    .unwrap();
    // The secret is in the environment of the process that runs the sandbox.
    let secret = "s3cr3t-do-not-leak";
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_replayground"))
        .arg("trace")
        .arg(&program)
        .env("REPLAYGROUND_TEST_SECRET", secret)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(!text.contains(secret), "the secret leaked: {text}");
    let trace: replayground_shared::Trace = serde_json::from_str(&text).unwrap();
    let names = trace.stdout.lines().next().unwrap();
    for name in ["CARGO", "HOME=/root", "REPLAYGROUND_TEST_SECRET", "RUST"] {
        assert!(!names.contains(name), "{name} is visible: {names}");
    }
    assert_eq!(trace.stdout.lines().nth(1), Some("None"));
    drop(bwrap);
}

#[tokio::test]
async fn a_hundred_megabytes_of_output_hits_the_output_limit() {
    let Some(bwrap) = bubblewrap() else { return };
    let _serial = SERIAL.lock().await;
    let run = contained(&bwrap, "print('x' * 100_000_000)\n", &quick_limits()).await;
    assert_limit(&run, Limit::Output);
    assert_eq!(run.trace.stdout.len() as u64, RunLimits::default().max_output_bytes);

    // Without the tracer, the sandbox's own cap on standard output stops the run.
    let limits = RunLimits {
        max_stdout_bytes: 1 << 20,
        ..quick_limits()
    };
    let job = Job {
        program: PathBuf::from(DEFAULT_PYTHON),
        args: vec![
            OsString::from("-c"),
            OsString::from("import sys\nsys.stdout.write('x' * 100_000_000)"),
        ],
        stdin: Vec::new(),
        limits,
    };
    let mut received = 0usize;
    let report = bwrap
        .run(job, &mut |chunk| {
            received += chunk.len();
            std::ops::ControlFlow::Continue(())
        })
        .await
        .unwrap();
    assert_eq!(report.termination, Termination::Stopped(Limit::Output));
    assert!(received <= 1 << 20);
    assert_eq!(report.stray_processes, 0);
}

#[tokio::test]
async fn deep_recursion_hits_the_recursion_limit() {
    let Some(bwrap) = bubblewrap() else { return };
    let _serial = SERIAL.lock().await;
    let run = contained(
        &bwrap,
        "def down(n):\n    return down(n + 1)\n\ndown(0)\n",
        &quick_limits(),
    )
    .await;
    assert_limit(&run, Limit::RecursionDepth);
}

#[tokio::test]
async fn programs_run_as_an_unprivileged_user_without_capabilities() {
    let Some(bwrap) = bubblewrap() else { return };
    let _serial = SERIAL.lock().await;
    let code = "import os\nprint(os.getuid() != 0, open('/proc/self/status').read().split('CapEff:')[1].split()[0])\n";
    let run = contained(&bwrap, code, &quick_limits()).await;
    assert_eq!(run.trace.stdout, "True 0000000000000000\n");
}

#[tokio::test]
async fn back_to_back_jobs_on_one_uid_leave_no_zombies() {
    if bubblewrap().is_none() {
        return;
    }
    let _serial = SERIAL.lock().await;
    // One slot, so every job reuses the same uid: a zombie per job would soon exhaust
    // its process limit (the host's pid 1 is not guaranteed to reap orphans).
    let config = BubblewrapConfig {
        uid_base: 61090,
        slots: 1,
        ..BubblewrapConfig::default()
    };
    let bwrap = Bubblewrap::detect(config).unwrap();
    let limits = RunLimits {
        max_processes: 8,
        ..quick_limits()
    };
    for i in 0..40 {
        let job = Job {
            program: PathBuf::from("/bin/true"),
            args: Vec::new(),
            stdin: Vec::new(),
            limits: limits.clone(),
        };
        let report = bwrap
            .run(job, &mut replayground_server::sandbox::discard)
            .await
            .unwrap();
        assert_eq!(report.termination, Termination::Exited(0), "job {i}: {}", report.stderr);
    }
}

#[tokio::test]
async fn a_virtual_environments_packages_are_importable_read_only() {
    let Some(bwrap) = bubblewrap() else { return };
    let _serial = SERIAL.lock().await;
    // As `cargo xtask setup --with dl` makes one: a venv whose interpreter links into /usr.
    let dir = tempfile::Builder::new()
        .prefix("sandbox-venv-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let venv = dir.path().join("dl");
    let made = std::process::Command::new(DEFAULT_PYTHON)
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(made.success(), "python3 -m venv failed");
    let site = glob_one(&venv.join("lib"), "site-packages");
    std::fs::write(site.join("only_in_the_venv.py"), "ANSWER = 42\n").unwrap();
    let python = venv.join("bin/python");
    let tracer = Tracer::new(Arc::clone(&bwrap) as Arc<dyn Sandbox>, &python, quick_limits());
    let code = "import only_in_the_venv, sys\nprint(only_in_the_venv.ANSWER, sys.prefix != sys.base_prefix)\ntry:\n    open(only_in_the_venv.__file__, 'a')\n    print('wrote')\nexcept OSError:\n    print('read-only')\n";
    let run = tracer.run(code, "", &quick_limits()).await.expect("the sandbox starts");
    assert_eq!(run.trace.outcome, Outcome::Finished, "{:?}", run.trace.stderr);
    assert_eq!(run.trace.stdout, "42 True\nread-only\n");
}

/// `parent/python3.X/name`: a venv has one `python3.X` folder under `lib`.
fn glob_one(parent: &std::path::Path, name: &str) -> PathBuf {
    let version = std::fs::read_dir(parent).unwrap().flatten().next().unwrap().path();
    let found = version.join(name);
    assert!(found.is_dir(), "no {}", found.display());
    found
}
