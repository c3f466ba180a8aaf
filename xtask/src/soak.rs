//! `cargo xtask soak`: a bounded mixed load against a real `replayground serve` on
//! loopback (classroom clients, hostile programs, uploads, cancelled requests, silent
//! connections), reporting latency percentiles, the server's RSS over time, and the
//! sandbox processes left behind. Not part of `cargo xtask test`: it takes minutes.

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

use crate::project::{Project, run};

/// Programs a class runs: short, printing, looping, recursing.
const CLASSROOM: [&str; 4] = [
    "def fact(n):\n    return 1 if n < 2 else n * fact(n - 1)\nprint(fact(10))\n",
    "total = 0\nfor i in range(200):\n    total += i * i\nprint(total)\n",
    "words = 'the quick brown fox jumps over the lazy dog'.split()\ncounts = {}\nfor w in words:\n    counts[w[0]] = counts.get(w[0], 0) + 1\nprint(sorted(counts.items()))\n",
    "xs = [5, 3, 8, 1, 9, 2]\nfor i in range(len(xs)):\n    for j in range(len(xs) - 1 - i):\n        if xs[j] > xs[j + 1]:\n            xs[j], xs[j + 1] = xs[j + 1], xs[j]\nprint(xs)\n",
];

/// The hostile programs.
const HOSTILE: [&str; 7] = [
    "while True:\n    pass\n",
    "import time\ntime.sleep(999)\n",
    "x = bytearray(10 * 1024 ** 3)\n",
    "g = globals()\nfor i in range(10): g['v%d_' % i + 'a'*100000] = i\ndel i, g\nwhile True:\n    pass\n",
    "import os\nfor _ in range(300000):\n    os.write(3, b'{\"t\":\"x\",\"outcome\":{\"kind\":\"finished\"}}\\n')\n",
    "with open('/dev/shm/x', 'wb') as f:\n    f.write(b'x' * (1 << 30))\n",
    "import os\nwhile True:\n    os.fork()\n",
];

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Classroom,
    Hostile,
    Upload,
    Cancelled,
}

impl Class {
    fn name(self) -> &'static str {
        match self {
            Self::Classroom => "classroom trace",
            Self::Hostile => "hostile trace",
            Self::Upload => "project upload",
            Self::Cancelled => "cancelled trace",
        }
    }
}

struct Sample {
    class: Class,
    millis: f64,
    ok: bool,
}

/// One HTTP/1.1 request on a fresh connection; the status, or an error.
fn request(addr: SocketAddr, method: &str, path: &str, body: &[u8], timeout: Duration) -> std::io::Result<u16> {
    let mut stream = TcpStream::connect_timeout(&addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    let status = answer
        .split(|&b| b == b' ')
        .nth(1)
        .and_then(|s| std::str::from_utf8(s).ok()?.parse().ok())
        .ok_or_else(|| std::io::Error::other("no HTTP status"))?;
    Ok(status)
}

fn trace_body(code: &str) -> Vec<u8> {
    let escaped: String = code
        .chars()
        .flat_map(|c| match c {
            '"' => vec!['\\', '"'],
            '\\' => vec!['\\', '\\'],
            '\n' => vec!['\\', 'n'],
            c => vec![c],
        })
        .collect();
    format!("{{\"code\":\"{escaped}\",\"stdin\":\"\"}}").into_bytes()
}

/// A ustar archive of one small Python file, as an upload.
fn project_tar(n: usize) -> Vec<u8> {
    let text = format!("def train(model, batch):\n    loss = model(batch)\n    return loss * {n}\n");
    let mut header = [0u8; 512];
    header[..8].copy_from_slice(b"train.py");
    header[100..108].copy_from_slice(b"0000644\0");
    header[124..136].copy_from_slice(format!("{:011o}\0", text.len()).as_bytes());
    header[136..148].copy_from_slice(b"00000000000\0");
    header[156] = b'0';
    header[257..263].copy_from_slice(b"ustar\0");
    header[263..265].copy_from_slice(b"00");
    header[148..156].copy_from_slice(b"        ");
    let sum: u32 = header.iter().map(|&b| u32::from(b)).sum();
    header[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    let mut tar = header.to_vec();
    tar.extend_from_slice(text.as_bytes());
    tar.resize(tar.len().div_ceil(512) * 512 + 1024, 0);
    tar
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Live processes whose real uid is in `uids`.
fn processes_of(uids: std::ops::Range<u32>) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()))
        .filter_map(|e| std::fs::read_to_string(e.path().join("status")).ok())
        .filter(|status| {
            let zombie = status.lines().any(|l| l.starts_with("State:") && l.contains('Z'));
            let uid = status
                .lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|u| u.split_whitespace().next()?.parse::<u32>().ok());
            !zombie && uid.is_some_and(|u| uids.contains(&u))
        })
        .count()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub(crate) fn soak(project: &Project, minutes: f64, clients: usize, release: bool) -> Result<()> {
    let mut build = project.cargo()?;
    build.args(["build", "-p", "replayground-server", "--bin", "replayground"]);
    if release {
        build.arg("--release");
    }
    run(&mut build)?;
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| project.root.join("target"), PathBuf::from);
    let binary = target
        .join(if release { "release" } else { "debug" })
        .join("replayground");
    let dir = tempfile::tempdir()?;
    let addr = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let log = std::fs::File::create(dir.path().join("server.log"))?;
    let server = Server(
        Command::new(&binary)
            .args(["serve", "--addr", &addr.to_string()])
            .arg("--db")
            .arg(format!("sqlite://{}", dir.path().join("shares.db").display()))
            .arg("--static-dir")
            .arg(dir.path())
            .args(["--no-model", "--no-embeddings", "--rate-limit-per-second", "0"])
            .args(["--max-queued-jobs", "256", "--queue-timeout", "60s"])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| format!("cannot start {}", binary.display()))?,
    );
    let pid = server.0.id();
    let started = Instant::now();
    while request(addr, "GET", "/healthz", b"", Duration::from_secs(2)).ok() != Some(200) {
        if started.elapsed() > Duration::from_secs(60) {
            bail!(
                "the server did not answer /healthz within 60 s (see {})",
                dir.path().display()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let duration = Duration::from_secs_f64(minutes * 60.0);
    println!(
        "soak: {clients} classroom clients, hostile programs, uploads, cancels and silent connections for {minutes} min on {addr}"
    );
    let stop = Arc::new(AtomicBool::new(false));
    let samples = Arc::new(Mutex::new(Vec::<Sample>::new()));
    let mut threads = Vec::new();
    let mut spawn = |class: Class, n: usize, pause: Duration, timeout: Duration| {
        let (stop, samples) = (Arc::clone(&stop), Arc::clone(&samples));
        threads.push(std::thread::spawn(move || {
            let mut i = n;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                let (path, body) = match class {
                    Class::Classroom => ("/api/trace", trace_body(CLASSROOM[i % CLASSROOM.len()])),
                    Class::Hostile => ("/api/trace", trace_body(HOSTILE[i % HOSTILE.len()])),
                    Class::Cancelled => ("/api/trace", trace_body(HOSTILE[0])),
                    Class::Upload => ("/api/projects?name=p.tar", project_tar(i)),
                };
                let sent = Instant::now();
                let status = request(addr, "POST", path, &body, timeout);
                let millis = sent.elapsed().as_secs_f64() * 1000.0;
                // A cancelled trace is one whose client hung up: the read times out by design.
                let ok = match class {
                    Class::Cancelled => true,
                    _ => status.is_ok_and(|s| s < 500),
                };
                samples.lock().unwrap().push(Sample { class, millis, ok });
                std::thread::sleep(pause);
            }
        }));
    };
    for n in 0..clients {
        spawn(Class::Classroom, n, Duration::from_millis(500), Duration::from_secs(90));
    }
    for n in 0..3 {
        spawn(Class::Hostile, n, Duration::from_millis(200), Duration::from_secs(90));
    }
    spawn(Class::Upload, 0, Duration::from_secs(1), Duration::from_secs(30));
    spawn(
        Class::Cancelled,
        0,
        Duration::from_millis(500),
        Duration::from_millis(300),
    );
    // Silent connections: opened, never written to, replaced as the server closes them.
    let silent = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut held = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                held.retain(|s: &TcpStream| s.peek(&mut [0u8; 1]).is_err());
                while held.len() < 100 {
                    match TcpStream::connect(addr) {
                        Ok(s) => {
                            let _ = s.set_nonblocking(true);
                            held.push(s);
                        }
                        Err(_) => break,
                    }
                }
                std::thread::sleep(Duration::from_millis(500));
            }
        })
    };
    let mut rss = Vec::new();
    while started.elapsed() < duration {
        std::thread::sleep(Duration::from_secs(1));
        if let Some(kib) = rss_kib(pid) {
            rss.push((started.elapsed(), kib));
        }
    }
    stop.store(true, Ordering::Relaxed);
    for thread in threads {
        let _ = thread.join();
    }
    let _ = silent.join();
    std::thread::sleep(Duration::from_secs(3));
    let uids = 61000..61016;
    let left_running = processes_of(uids.clone());
    drop(server);
    std::thread::sleep(Duration::from_secs(1));
    let left_after_exit = processes_of(uids);
    report(&samples.lock().unwrap(), &rss, left_running, left_after_exit);
    Ok(())
}

#[allow(clippy::print_stdout)] // the report is the task's output
fn report(samples: &[Sample], rss: &[(Duration, u64)], left_running: usize, left_after_exit: usize) {
    println!("\n| Requests | Count | Failed | p50 (ms) | p99 (ms) |\n| --- | --- | --- | --- | --- |");
    for class in [Class::Classroom, Class::Hostile, Class::Upload, Class::Cancelled] {
        let mut millis: Vec<f64> = samples.iter().filter(|s| s.class == class).map(|s| s.millis).collect();
        millis.sort_by(f64::total_cmp);
        let failed = samples.iter().filter(|s| s.class == class && !s.ok).count();
        println!(
            "| {} | {} | {failed} | {:.0} | {:.0} |",
            class.name(),
            millis.len(),
            percentile(&millis, 0.5),
            percentile(&millis, 0.99)
        );
    }
    let minute = |from: Duration, to: Duration| {
        let window: Vec<u64> = rss
            .iter()
            .filter(|(t, _)| *t >= from && *t < to)
            .map(|&(_, k)| k)
            .collect();
        window.iter().sum::<u64>() as f64 / window.len().max(1) as f64 / 1024.0
    };
    let end = rss.last().map_or(Duration::ZERO, |&(t, _)| t);
    let peak = rss.iter().map(|&(_, k)| k).max().unwrap_or(0) as f64 / 1024.0;
    println!(
        "\nserver RSS: first minute {:.0} MiB, last minute {:.0} MiB, peak {peak:.0} MiB",
        minute(Duration::ZERO, Duration::from_secs(60)),
        minute(
            end.saturating_sub(Duration::from_secs(60)),
            end + Duration::from_secs(1)
        ),
    );
    let per_minute: Vec<String> = (0..=end.as_secs() / 60)
        .map(|m| {
            let from = Duration::from_secs(m * 60);
            format!("{:.0}", minute(from, from + Duration::from_secs(60)))
        })
        .collect();
    println!("server RSS by minute (MiB): {}", per_minute.join(", "));
    println!("sandbox processes left: {left_running} with the server running, {left_after_exit} after it exited");
}
