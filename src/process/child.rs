//! One child, run safely: argv without a shell, a new process group per child, a timeout
//! that kills the whole group (grandchildren too: SIGTERM, a grace period, then SIGKILL),
//! output captured to files (so a chatty child can never deadlock us), wall and CPU time;
//! cancelled at once when moldtune is interrupted or its caller no longer needs it.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::groups::{
    child_note, forget_child, hold_group, interrupted, kill_orphans, killpg, live_leaders,
    release_group,
};
use super::pause::{join_pausable, leave_pausable, pauses};

/// One process to run.
#[derive(Debug, Clone)]
pub struct Command {
    pub argv: Vec<String>,
    /// Added to (not replacing) moldtune's own environment.
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    pub stdout: PathBuf,
    pub stderr: PathBuf,
    /// The most bytes the child (and its descendants) may write to any one file
    /// (RLIMIT_FSIZE): past it the writer gets SIGXFSZ, so a runaway program cannot fill the
    /// disk.
    pub max_file_bytes: u64,
    /// May be stopped while [`pause`] holds the machine for a timed run (a build running
    /// ahead); its timeout and `wall_s` count only the time it ran.
    pub pausable: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    Timeout,
    /// The program could not be started (not found, not executable).
    SpawnError(String),
    /// moldtune was interrupted while the child ran, or the child was [`cancellable`] and
    /// cancelled; the child group was killed.
    Interrupted,
    /// The caller's watch ([`execute_watched`]) stopped it, for the reason given.
    Stopped(String),
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

/// Grace period between SIGTERM and SIGKILL of a timed-out group.
const GRACE: Duration = Duration::from_millis(500);

thread_local! {
    /// The token that cancels the children started on this thread ([`cancellable`]).
    static CANCEL: std::cell::RefCell<Option<Arc<AtomicBool>>> =
        const { std::cell::RefCell::new(None) };
}

/// While the guard lives, every child started on this thread is killed as soon as `token`
/// is set (and none starts after): builds running ahead that the search will no longer use.
/// Their exit reads [`Exit::Interrupted`].
pub fn cancellable(token: Arc<AtomicBool>) -> Cancellable {
    CANCEL.with(|c| *c.borrow_mut() = Some(token));
    Cancellable(())
}

/// See [`cancellable`].
#[must_use = "the children are cancellable while the guard lives"]
pub struct Cancellable(());

impl Drop for Cancellable {
    fn drop(&mut self) {
        CANCEL.with(|c| *c.borrow_mut() = None);
    }
}

/// Runs `cmd` to completion or until `timeout`, then makes sure nothing of its group is left.
pub fn execute(cmd: &Command, timeout: Duration) -> Finished {
    execute_watched(cmd, timeout, &mut || None)
}

/// [`execute`], asking `watch` every few tens of milliseconds while the child runs whether
/// to stop it: a reason ends the group as a timeout does (SIGTERM, a grace period, SIGKILL)
/// and the exit is [`Exit::Stopped`] with that reason.
pub fn execute_watched(
    cmd: &Command,
    timeout: Duration,
    watch: &mut dyn FnMut() -> Option<String>,
) -> Finished {
    if cmd.argv.is_empty() {
        return Finished::spawn_error("empty command".into());
    }
    let cancel = CANCEL.with(|c| c.borrow().clone());
    let stop = || interrupted() || cancel.as_ref().is_some_and(|c| c.load(Ordering::SeqCst));
    if stop() {
        return Finished {
            exit: Exit::Interrupted,
            wall_s: 0.0,
            cpu_s: 0.0,
        };
    }
    let start = Instant::now();
    // Spawned under the lock of the live leaders, so no orphan hunt can mistake it for one.
    let spawned = live_leaders(|l| spawn(cmd).inspect(|&pid| l.push(pid)));
    let pid = match spawned {
        Ok(pid) => pid,
        Err(m) => return Finished::spawn_error(m),
    };
    hold_group(pid);
    let paused0 = cmd.pausable.then(|| join_pausable(pid));
    let rx = reap_in_thread(pid, start);
    let clock = Clock { start, paused0 };
    let (how, got) = wait_or_kill(pid, &rx, (clock, timeout), &stop, watch);
    // Whatever the leader did, nothing of its group may outlive it, nor any descendant
    // that left the group (setsid) and was handed to us as its subreaper.
    killpg(pid, libc::SIGKILL);
    let paused = paused0.map_or(Duration::ZERO, |p0| leave_pausable(pid) - p0);
    live_leaders(|l| l.retain(|&p| p != pid));
    kill_orphans();
    release_group(pid);
    forget_child(pid);
    let Some(reaped) = got else {
        return Finished::spawn_error("lost track of the child".into());
    };
    Finished {
        exit: how.unwrap_or_else(|| exit_of(&reaped)),
        wall_s: reaped.wall.saturating_sub(paused).as_secs_f64(),
        cpu_s: reaped.cpu_s,
    }
}

impl Finished {
    pub(crate) fn spawn_error(msg: String) -> Finished {
        Finished {
            exit: Exit::SpawnError(msg),
            wall_s: 0.0,
            cpu_s: 0.0,
        }
    }
}

/// Starts `cmd` in a new process group that dies with moldtune; returns its pid (= pgid).
fn spawn(cmd: &Command) -> Result<i32, String> {
    let open = |p: &PathBuf| {
        std::fs::File::create(p).map_err(|e| format!("cannot create `{}`: {e}", p.display()))
    };
    let (out, err) = (open(&cmd.stdout)?, open(&cmd.stderr)?);
    let mut c = std::process::Command::new(&cmd.argv[0]);
    c.args(&cmd.argv[1..])
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&cmd.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .process_group(0);
    let parent = std::process::id() as libc::pid_t;
    let mut note = child_note();
    let limit = libc::rlimit {
        rlim_cur: cmd.max_file_bytes as libc::rlim_t,
        rlim_max: cmd.max_file_bytes as libc::rlim_t,
    };
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        c.pre_exec(move || {
            // Die with moldtune, even when it is SIGKILLed.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent {
                libc::_exit(137);
            }
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Noted before it runs anything: a SIGKILLed moldtune's next run finds it.
            if let Some(n) = note.as_mut() {
                n.write();
            }
            Ok(())
        });
    }
    let child = c
        .spawn()
        .map_err(|e| format!("cannot run `{}`: {e}", cmd.argv[0]))?;
    // The Child handle is dropped without waiting: the waiter thread reaps it with wait4,
    // which also gives its resource usage.
    Ok(child.id() as i32)
}

/// What wait4 told about the child.
struct Reaped {
    result: libc::pid_t,
    status: libc::c_int,
    wall: Duration,
    cpu_s: f64,
}

/// Waits for `pid` on a thread of its own (wait4, for the exit status and CPU time).
fn reap_in_thread(pid: i32, start: Instant) -> mpsc::Receiver<Reaped> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut status: libc::c_int = 0;
        // SAFETY: zeroed rusage is a valid out-parameter.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let result = loop {
            // SAFETY: waiting for our own child.
            let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
            if r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            break r;
        };
        let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        let _ = tx.send(Reaped {
            result,
            status,
            wall: start.elapsed(),
            cpu_s: seconds(usage.ru_utime) + seconds(usage.ru_stime),
        });
    });
    rx
}

/// When a child started, and for a pausable one the pause clock then: how long it has run.
#[derive(Clone, Copy)]
struct Clock {
    start: Instant,
    paused0: Option<Duration>,
}

impl Clock {
    /// Time since the start, less the time the child was paused.
    fn ran(&self, now: Instant) -> Duration {
        let wall = now.saturating_duration_since(self.start);
        match self.paused0 {
            Some(p0) => wall.saturating_sub(pauses(|p| p.paused_by(now)).saturating_sub(p0)),
            None => wall,
        }
    }
}

/// Waits until the child ends, has run for `timeout` or `watch` gives a reason to stop it
/// (SIGTERM to the group, a grace period, then SIGKILL), or `stop` says moldtune was
/// interrupted or the child cancelled (SIGKILL at once). Returns how it was ended, if
/// moldtune ended it, and what the waiter reaped.
fn wait_or_kill(
    pid: i32,
    rx: &mpsc::Receiver<Reaped>,
    (clock, timeout): (Clock, Duration),
    stop: &dyn Fn() -> bool,
    watch: &mut dyn FnMut() -> Option<String>,
) -> (Option<Exit>, Option<Reaped>) {
    loop {
        if stop() {
            killpg(pid, libc::SIGKILL);
            return (Some(Exit::Interrupted), rx.recv().ok());
        }
        let ran = clock.ran(Instant::now());
        if ran >= timeout {
            return (Some(Exit::Timeout), terminate(pid, rx));
        }
        if let Some(why) = watch() {
            return (Some(Exit::Stopped(why)), terminate(pid, rx));
        }
        let slice = (timeout - ran).min(Duration::from_millis(50));
        match rx.recv_timeout(slice) {
            Ok(v) => return (None, Some(v)),
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => return (None, None),
        }
    }
}

/// Ends the group: SIGTERM, a grace period, then SIGKILL; what the waiter reaped.
fn terminate(pid: i32, rx: &mpsc::Receiver<Reaped>) -> Option<Reaped> {
    killpg(pid, libc::SIGTERM);
    killpg(pid, libc::SIGCONT); // a stopped group must run to see SIGTERM
    rx.recv_timeout(GRACE).ok().or_else(|| {
        killpg(pid, libc::SIGKILL);
        rx.recv().ok()
    })
}

/// The exit of a child that ended by itself.
fn exit_of(r: &Reaped) -> Exit {
    match r.status {
        _ if r.result == -1 => Exit::SpawnError("wait4 failed".into()),
        s if libc::WIFEXITED(s) => Exit::Code(libc::WEXITSTATUS(s)),
        s if libc::WIFSIGNALED(s) => Exit::Signal(libc::WTERMSIG(s)),
        _ => Exit::Code(-1),
    }
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
    use crate::process::{pause, take_charge};

    fn sh(script: &str, dir: &std::path::Path) -> Command {
        Command {
            argv: vec!["sh".into(), "-c".into(), script.into()],
            env: vec![("MT_X".into(), "42".into())],
            cwd: dir.to_path_buf(),
            stdout: dir.join("out"),
            stderr: dir.join("err"),
            max_file_bytes: crate::problem::limits::DEFAULT_OUTPUT_BYTES,
            pausable: false,
        }
    }

    #[test]
    fn a_paused_child_is_stopped_and_its_timeout_counts_only_its_running() {
        let tmp = tempfile::tempdir().unwrap();
        let ticks = tmp.path().join("ticks");
        let cmd = Command {
            pausable: true,
            ..sh("while :; do echo >> ticks; sleep 0.02; done", tmp.path())
        };
        let t0 = Instant::now();
        let child = std::thread::spawn(move || execute(&cmd, Duration::from_millis(1000)));
        std::thread::sleep(Duration::from_millis(300));
        let count = || std::fs::read_to_string(&ticks).unwrap_or_default().len();
        let guard = pause();
        std::thread::sleep(Duration::from_millis(100));
        let stopped_at = count();
        std::thread::sleep(Duration::from_millis(1000));
        assert_eq!(count(), stopped_at, "the child ran while paused");
        drop(guard);
        let f = child.join().unwrap();
        assert_eq!(f.exit, Exit::Timeout);
        assert!(count() > stopped_at, "the child ran again after the pause");
        assert!(
            t0.elapsed() >= Duration::from_millis(2000),
            "cut before 1 s of running"
        );
        assert!(
            (0.9..1.6).contains(&f.wall_s),
            "its time, pauses left out: {}",
            f.wall_s
        );
    }

    /// Defect: the note of a child's group was written by moldtune after the spawn, so a
    /// moldtune SIGKILLed in between left the child's own children running for good (CI:
    /// `sigkill_of_moldtune_then_resume_leaves_no_grandchild`). The child notes itself now,
    /// before it runs anything: its first command finds the note; its end removes it.
    #[test]
    fn a_child_finds_its_group_noted_when_it_starts_and_gone_after() {
        let d = tempfile::tempdir().unwrap();
        crate::process::track_children_in(d.path());
        let f = execute(
            &sh(r#"test -e ".child-$$" && echo noted; echo $$"#, d.path()),
            Duration::from_secs(10),
        );
        assert_eq!(f.exit, Exit::Code(0));
        let out = std::fs::read_to_string(d.path().join("out")).unwrap();
        let mut lines = out.lines();
        assert_eq!(lines.next(), Some("noted"), "{out}");
        let pid = lines.next().unwrap();
        assert!(!d.path().join(format!(".child-{pid}")).exists());
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
        assert_eq!(
            crate::process::helper::tail(&d.path().join("err"), 5),
            "oops"
        );
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
    fn a_grandchild_that_calls_setsid_dies_with_the_child() {
        take_charge();
        let d = tempfile::tempdir().unwrap();
        // setsid puts the sleeper in a session (and group) of its own: killpg misses it.
        let script = "setsid sleep 301 & echo $! > gc.pid; sleep 302";
        let f = execute(&sh(script, d.path()), Duration::from_millis(300));
        assert_eq!(f.exit, Exit::Timeout);
        let gc: i32 = std::fs::read_to_string(d.path().join("gc.pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // SAFETY: probing a pid with signal 0.
        let alive = unsafe { libc::kill(gc, 0) } == 0 && !is_zombie(gc);
        assert!(!alive, "setsid grandchild {gc} survived");
    }

    #[test]
    fn a_child_writing_without_end_is_stopped_at_the_file_limit() {
        let d = tempfile::tempdir().unwrap();
        let mut c = sh(
            "while :; do echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done",
            d.path(),
        );
        c.max_file_bytes = 1 << 20;
        let t0 = Instant::now();
        let f = execute(&c, Duration::from_secs(20));
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
        assert_eq!(f.exit, Exit::Signal(libc::SIGXFSZ));
        let len = std::fs::metadata(d.path().join("out")).unwrap().len();
        assert!(len <= 1 << 20, "wrote {len} bytes");
        assert!(crate::process::helper::tail(&d.path().join("out"), 2).starts_with("xxx"));
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
