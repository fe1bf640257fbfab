//! Running children safely: argv without a shell, a new process group per child, a timeout
//! that kills the whole group (grandchildren too: SIGTERM, a grace period, then SIGKILL),
//! output captured to files (so a chatty child can never deadlock us), wall and CPU time.
//!
//! Also the interrupt protocol: the first SIGINT/SIGTERM sets a flag that makes the running
//! child's group die and the driver stop proposing; a second one kills the child group and
//! exits at once with 130.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// One process to run.
#[derive(Debug, Clone)]
pub struct Command {
    pub argv: Vec<String>,
    /// Added to (not replacing) moldtune's own environment.
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    pub stdout: PathBuf,
    pub stderr: PathBuf,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    Timeout,
    /// The program could not be started (not found, not executable).
    SpawnError(String),
    /// moldtune was interrupted while the child ran; the child group was killed.
    Interrupted,
}

#[derive(Debug, Clone)]
pub struct Finished {
    pub exit: Exit,
    pub wall_s: f64,
    /// User + system CPU time of the child and the descendants it waited for.
    pub cpu_s: f64,
}

impl Finished {
    pub fn success(&self) -> bool {
        self.exit == Exit::Code(0)
    }
}

static INTERRUPTS: AtomicUsize = AtomicUsize::new(0);
static CHILD_PGID: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(_sig: libc::c_int) {
    let n = INTERRUPTS.fetch_add(1, Ordering::SeqCst) + 1;
    if n >= 2 {
        let pg = CHILD_PGID.load(Ordering::SeqCst);
        // SAFETY: killpg and _exit are async-signal-safe.
        unsafe {
            if pg > 0 {
                libc::killpg(pg, libc::SIGKILL);
            }
            libc::_exit(130);
        }
    }
}

/// Installs the SIGINT/SIGTERM/SIGHUP handlers (idempotent).
pub fn install_signal_handlers() {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for s in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        // SAFETY: the handler only touches atomics and calls async-signal-safe functions.
        unsafe {
            let _ = sigaction(s, &action);
        }
    }
}

pub fn interrupted() -> bool {
    INTERRUPTS.load(Ordering::SeqCst) > 0
}

fn killpg(pgid: i32, sig: libc::c_int) {
    // SAFETY: plain syscall; ESRCH (group already gone) is fine.
    unsafe {
        libc::killpg(pgid, sig);
    }
}

/// Where the running child's process group is noted, so that a moldtune killed by SIGKILL
/// (which cannot clean up) has the group killed by the next moldtune on the same directory.
static STALE_FILE: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);

/// Notes running children's groups in `dir/.child` from now on.
pub fn track_children_in(dir: &std::path::Path) {
    *STALE_FILE.lock().unwrap_or_else(|e| e.into_inner()) = Some(dir.join(".child"));
}

fn note_child(pgid: Option<i32>) {
    if let Some(p) = STALE_FILE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
    {
        match pgid {
            Some(g) => {
                let _ = std::fs::write(p, g.to_string());
            }
            None => {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

/// Kills what is left of the process group noted in `dir/.child` by a moldtune that died
/// without cleaning up: only processes of that group whose working directory is inside
/// `dir` (so a recycled group id can never hit an unrelated process).
pub fn reap_stale_group(dir: &std::path::Path) {
    let note = dir.join(".child");
    let Ok(text) = std::fs::read_to_string(&note) else {
        return;
    };
    let _ = std::fs::remove_file(&note);
    let Ok(pgid) = text.trim().parse::<i32>() else {
        return;
    };
    let Ok(root) = std::fs::canonicalize(dir) else {
        return;
    };
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return;
    };
    for e in procs.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the parenthesised command: state ppid pgrp ...
        let Some(after) = stat.rsplit_once(')').map(|x| x.1) else {
            continue;
        };
        let pgrp = after
            .split_whitespace()
            .nth(2)
            .and_then(|v| v.parse::<i32>().ok());
        if pgrp != Some(pgid) {
            continue;
        }
        let inside =
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(&root));
        if inside {
            // SAFETY: plain syscall on a process verified above.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}

/// Grace period between SIGTERM and SIGKILL of a timed-out group.
const GRACE: Duration = Duration::from_millis(500);

/// Runs `cmd` to completion or until `timeout`, then makes sure nothing of its group is left.
pub fn execute(cmd: &Command, timeout: Duration) -> Finished {
    let fail = |msg: String| Finished {
        exit: Exit::SpawnError(msg),
        wall_s: 0.0,
        cpu_s: 0.0,
    };
    if cmd.argv.is_empty() {
        return fail("empty command".into());
    }
    if interrupted() {
        return Finished {
            exit: Exit::Interrupted,
            wall_s: 0.0,
            cpu_s: 0.0,
        };
    }
    let open = |p: &PathBuf| {
        std::fs::File::create(p).map_err(|e| format!("cannot create `{}`: {e}", p.display()))
    };
    let (out, err) = match (open(&cmd.stdout), open(&cmd.stderr)) {
        (Ok(o), Ok(e)) => (o, e),
        (Err(m), _) | (_, Err(m)) => return fail(m),
    };
    let mut c = std::process::Command::new(&cmd.argv[0]);
    c.args(&cmd.argv[1..])
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&cmd.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .process_group(0);
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        c.pre_exec(move || {
            // Die with moldtune, even when it is SIGKILLed.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent {
                libc::_exit(137);
            }
            Ok(())
        });
    }
    let start = Instant::now();
    let child = match c.spawn() {
        Ok(ch) => ch,
        Err(e) => return fail(format!("cannot run `{}`: {e}", cmd.argv[0])),
    };
    let pid = child.id() as i32;
    CHILD_PGID.store(pid, Ordering::SeqCst);
    note_child(Some(pid));
    // The Child handle is dropped without waiting: the waiter thread reaps it with wait4,
    // which also gives its resource usage.
    drop(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut status: libc::c_int = 0;
        // SAFETY: zeroed rusage is a valid out-parameter.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let r = loop {
            // SAFETY: waiting for our own child.
            let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
            if r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            break r;
        };
        let wall = start.elapsed();
        let cpu = usage.ru_utime.tv_sec as f64
            + usage.ru_utime.tv_usec as f64 * 1e-6
            + usage.ru_stime.tv_sec as f64
            + usage.ru_stime.tv_usec as f64 * 1e-6;
        let _ = tx.send((r, status, wall, cpu));
    });

    let deadline = start + timeout;
    let mut how = None;
    let got = loop {
        let now = Instant::now();
        if interrupted() {
            how = Some(Exit::Interrupted);
            killpg(pid, libc::SIGKILL);
            break rx.recv().ok();
        }
        if now >= deadline {
            how = Some(Exit::Timeout);
            killpg(pid, libc::SIGTERM);
            match rx.recv_timeout(GRACE) {
                Ok(v) => break Some(v),
                Err(_) => {
                    killpg(pid, libc::SIGKILL);
                    break rx.recv().ok();
                }
            }
        }
        let slice = (deadline - now).min(Duration::from_millis(50));
        match rx.recv_timeout(slice) {
            Ok(v) => break Some(v),
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break None,
        }
    };
    // Whatever the leader did, nothing of its group may outlive it.
    killpg(pid, libc::SIGKILL);
    CHILD_PGID.store(0, Ordering::SeqCst);
    note_child(None);
    let Some((r, status, wall, cpu)) = got else {
        return fail("lost track of the child".into());
    };
    let exit = match how {
        Some(h) => h,
        None if r == -1 => Exit::SpawnError("wait4 failed".into()),
        None if libc::WIFEXITED(status) => Exit::Code(libc::WEXITSTATUS(status)),
        None if libc::WIFSIGNALED(status) => Exit::Signal(libc::WTERMSIG(status)),
        None => Exit::Code(-1),
    };
    Finished {
        exit,
        wall_s: wall.as_secs_f64(),
        cpu_s: cpu,
    }
}

/// The last `max_lines` lines of a file (lossy UTF-8), for error messages and results.
pub fn tail(path: &std::path::Path, max_lines: usize) -> String {
    let bytes = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(max_lines);
    lines[start..].join("\n")
}

pub fn signal_name(sig: i32) -> String {
    match nix::sys::signal::Signal::try_from(sig) {
        Ok(s) => s.as_str().to_string(),
        Err(_) => format!("signal {sig}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, dir: &std::path::Path) -> Command {
        Command {
            argv: vec!["sh".into(), "-c".into(), script.into()],
            env: vec![("MT_X".into(), "42".into())],
            cwd: dir.to_path_buf(),
            stdout: dir.join("out"),
            stderr: dir.join("err"),
        }
    }

    #[test]
    fn captures_output_exit_code_and_env() {
        let d = tempfile::tempdir().unwrap();
        let f = execute(
            &sh("echo $MT_X; echo oops >&2; exit 3", d.path()),
            Duration::from_secs(10),
        );
        assert_eq!(f.exit, Exit::Code(3));
        assert_eq!(
            std::fs::read_to_string(d.path().join("out")).unwrap(),
            "42\n"
        );
        assert_eq!(tail(&d.path().join("err"), 5), "oops");
    }

    #[test]
    fn signal_is_reported() {
        let d = tempfile::tempdir().unwrap();
        let f = execute(&sh("kill -SEGV $$", d.path()), Duration::from_secs(10));
        assert_eq!(f.exit, Exit::Signal(libc::SIGSEGV));
    }

    #[test]
    fn timeout_kills_the_grandchild_too() {
        let d = tempfile::tempdir().unwrap();
        // The grandchild ignores nothing but would sleep for a long time; its pid is recorded.
        let script = "sleep 300 & echo $! > gc.pid; wait";
        let t0 = Instant::now();
        let f = execute(&sh(script, d.path()), Duration::from_millis(300));
        assert_eq!(f.exit, Exit::Timeout);
        assert!(t0.elapsed() < Duration::from_secs(5));
        let gc: i32 = std::fs::read_to_string(d.path().join("gc.pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        std::thread::sleep(Duration::from_millis(100));
        // SAFETY: probing a pid with signal 0.
        let alive = unsafe { libc::kill(gc, 0) } == 0 && !is_zombie(gc);
        assert!(!alive, "grandchild {gc} survived");
    }

    fn is_zombie(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| s.split_whitespace().nth(2) == Some("Z"))
            .unwrap_or(true)
    }

    #[test]
    fn missing_program_is_a_spawn_error() {
        let d = tempfile::tempdir().unwrap();
        let mut c = sh("", d.path());
        c.argv = vec!["/nonexistent/moldtune-cc".into()];
        assert!(matches!(
            execute(&c, Duration::from_secs(1)).exit,
            Exit::SpawnError(_)
        ));
    }
}
