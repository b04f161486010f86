//! The crash-isolated first-use probe.
//!
//! A backend's [`Backend::probe`] touches the driver for the first time, which
//! is where a broken driver crashes. The runtime therefore runs it in a child
//! process (`fork` on Unix): the child probes and writes its report to a pipe
//! as JSON; the parent waits up to a timeout. A child that dies by a signal or
//! exits without a report is a crash, one that outlives the timeout is killed
//! and reported as hung, and a report with a failed check is a wrong answer.
//! The user's process never touches the driver before the probe passed.
//!
//! `GEARBOX_PROBE_INJECT=crash|hang|wrong` makes the child abort, sleep past
//! the timeout, or report a failed numeric check, so all three paths are tested.
//! Without `fork` (non-Unix targets) the probe runs in-process. The child runs
//! the probe inside a rayon pool of its own: the parent's pool threads do not
//! exist after `fork`, and work sent to them would wait forever.

use std::sync::Arc;
use std::time::Duration;

use crate::runtime::backend::{Backend, ProbeCheck, ProbeReport};
use crate::runtime::cache_file::CacheRepair;

/// How a probe ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ProbeOutcome {
    /// The probe ran and reported (its checks may still have failed).
    Report(ProbeReport),
    /// The probe returned an error (no device, missing library, ...).
    Failed(String),
    /// The child died without a report.
    Crashed(String),
    /// The child outlived the timeout and was killed.
    TimedOut(Duration),
}

impl ProbeOutcome {
    /// `Ok` with the report when every check passed, else the reason for the status table.
    pub fn verdict(&self) -> Result<&ProbeReport, String> {
        match self {
            ProbeOutcome::Report(r) => match r.first_failure() {
                None => Ok(r),
                Some(c) => Err(format!("probe check failed: {}: {}", c.name, c.detail)),
            },
            ProbeOutcome::Failed(e) => Err(format!("probe failed: {e}")),
            ProbeOutcome::Crashed(how) => Err(format!("isolated GPU probe crashed ({how}); disabled for session")),
            ProbeOutcome::TimedOut(t) => Err(format!(
                "isolated GPU probe hung for more than {:.0} s and was killed; disabled for session \
                 (raise GEARBOX_PROBE_TIMEOUT_S if the device is just slow to start)",
                t.as_secs_f64()
            )),
        }
    }
}

/// The injected behaviour asked for by `GEARBOX_PROBE_INJECT`, if any.
fn injection() -> Option<String> {
    std::env::var("GEARBOX_PROBE_INJECT")
        .ok()
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
}

/// What the child sends back: the probe's report or its error, and the
/// cache entries it found damaged and rebuilt (which the parent adds to
/// its own [`crate::runtime::cache_file::repairs`]).
#[derive(serde::Serialize, serde::Deserialize)]
struct ChildPayload {
    result: Result<ProbeReport, String>,
    #[serde(default)]
    repairs: Vec<CacheRepair>,
}

/// What the child computes, as JSON text.
fn child_payload(backend: &dyn Backend, inject: Option<&str>) -> String {
    // A forked child starts with the parent's list: send only its own.
    let known = crate::runtime::cache_file::repairs().len();
    let result: Result<ProbeReport, String> = match inject {
        Some("wrong") => backend.probe().map_err(|e| e.to_string()).map(|mut r| {
            r.checks.push(ProbeCheck {
                name: "float32 GEMM 64x64 (injected)".into(),
                passed: false,
                detail: "max relative error 1.0e0 exceeds 1e-4".into(),
            });
            r
        }),
        _ => backend.probe().map_err(|e| e.to_string()),
    };
    let payload = ChildPayload {
        result,
        repairs: crate::runtime::cache_file::repairs().split_off(known),
    };
    serde_json::to_string(&payload)
        .unwrap_or_else(|e| format!("{{\"result\":{{\"Err\":\"report not serializable: {e}\"}}}}"))
}

/// The outcome a child's payload reports; its cache repairs are recorded
/// here (those the probe made in this process are recorded already).
fn parse_payload(text: &str, in_child: bool) -> ProbeOutcome {
    match serde_json::from_str::<ChildPayload>(text) {
        Ok(p) => {
            if in_child {
                p.repairs
                    .into_iter()
                    .for_each(crate::runtime::cache_file::note);
            }
            match p.result {
                Ok(r) => ProbeOutcome::Report(r),
                Err(e) => ProbeOutcome::Failed(e),
            }
        }
        Err(e) => ProbeOutcome::Crashed(format!("unreadable report: {e}")),
    }
}

/// Runs `backend.probe()` in a child process and waits at most `timeout`;
/// in this process when the backend already drives its device here (see
/// [`Backend::is_initialized`]), where only the `wrong` injection applies.
#[cfg(unix)]
pub fn run_isolated(backend: &Arc<dyn Backend>, timeout: Duration) -> ProbeOutcome {
    if backend.is_initialized() {
        let inject = injection().filter(|i| i == "wrong");
        return parse_payload(&child_payload(backend.as_ref(), inject.as_deref()), false);
    }
    use std::io::{Read, Write};
    use std::os::fd::FromRawFd;
    use std::time::Instant;

    let inject = injection();
    let mut fds = [0i32; 2];
    // SAFETY: `fds` is a valid two-element array for pipe(2) to fill.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return ProbeOutcome::Failed(format!(
            "cannot create a pipe: {}",
            std::io::Error::last_os_error()
        ));
    }
    let (read_fd, write_fd) = (fds[0], fds[1]);
    // SAFETY: fork(2) has no preconditions; the child only runs the probe,
    // writes to its pipe and leaves with _exit, never returning into the caller.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        // SAFETY: both descriptors came from pipe(2) above and are still open.
        unsafe {
            libc::close(read_fd);
            libc::close(write_fd);
        }
        return ProbeOutcome::Failed(format!(
            "cannot fork the probe: {}",
            std::io::Error::last_os_error()
        ));
    }
    if pid == 0 {
        // Child.
        // SAFETY: read_fd is open in the child and unused there.
        unsafe { libc::close(read_fd) };
        match inject.as_deref() {
            // SAFETY: abort(3) ends the child, simulating a driver crash.
            Some("crash") => unsafe { libc::abort() },
            Some("hang") => loop {
                std::thread::sleep(Duration::from_secs(3600));
            },
            _ => {}
        }
        // The parent's rayon pool has no threads in this child: run the probe
        // inside a pool created here, so probes may use rayon freely.
        let payload = match rayon::ThreadPoolBuilder::new().num_threads(2).build() {
            Ok(pool) => pool.install(|| child_payload(backend.as_ref(), inject.as_deref())),
            Err(e) => serde_json::to_string(&ChildPayload {
                result: Err(format!("no thread pool in the probe: {e}")),
                repairs: Vec::new(),
            })
            .unwrap_or_default(),
        };
        // SAFETY: write_fd is the open write end of the pipe, owned from here on.
        let mut w = unsafe { std::fs::File::from_raw_fd(write_fd) };
        let code = if w.write_all(payload.as_bytes()).is_ok() {
            0
        } else {
            1
        };
        drop(w);
        // SAFETY: _exit(2) ends the child without running the parent's atexit
        // handlers or destructors of state it shares with the parent.
        unsafe { libc::_exit(code) };
    }
    // Parent.
    // SAFETY: write_fd belongs to the child now; the parent closes its copy so
    // that reading sees end-of-file when the child is done.
    unsafe { libc::close(write_fd) };
    // SAFETY: read_fd is the open read end of the pipe, owned by this File.
    let mut reader = unsafe { std::fs::File::from_raw_fd(read_fd) };
    // SAFETY: read_fd is valid; O_NONBLOCK lets the wait below honour the timeout.
    unsafe {
        let flags = libc::fcntl(read_fd, libc::F_GETFL);
        libc::fcntl(read_fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
    let start = Instant::now();
    let mut text = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => text.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if start.elapsed() > timeout {
                    // SAFETY: pid is our child; SIGKILL and waitpid reap it.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                        libc::waitpid(pid, std::ptr::null_mut(), 0);
                    }
                    return ProbeOutcome::TimedOut(timeout);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return ProbeOutcome::Crashed(format!("lost the probe's pipe: {e}")),
        }
    }
    let mut status = 0i32;
    // SAFETY: pid is our child; status is a valid out-pointer.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    if libc::WIFSIGNALED(status) {
        return ProbeOutcome::Crashed(format!("killed by signal {}", libc::WTERMSIG(status)));
    }
    if text.is_empty() {
        return ProbeOutcome::Crashed(format!(
            "exited with status {} and no report",
            libc::WEXITSTATUS(status)
        ));
    }
    parse_payload(&String::from_utf8_lossy(&text), true)
}

/// Runs the probe in-process (no `fork` on this platform).
#[cfg(not(unix))]
pub fn run_isolated(backend: &Arc<dyn Backend>, _timeout: Duration) -> ProbeOutcome {
    parse_payload(
        &child_payload(backend.as_ref(), injection().as_deref()),
        false,
    )
}
