//! Running children safely: argv without a shell, a new process group per child, a timeout
//! that kills the whole group (grandchildren too: SIGTERM, a grace period, then SIGKILL),
//! output captured to files (so a chatty child can never deadlock us), wall and CPU time.
//!
//! Also the interrupt protocol: the first SIGINT/SIGTERM sets a flag that makes the running
//! children's groups die and the driver stop proposing; a second one kills every child group
//! and exits at once with 130. And pausing: while a [`pause`] guard lives, pausable children
//! (builds running ahead of a timed run) are held stopped, their timeouts and times counting
//! only the time they ran.

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

/// The process groups of the children running now, in slots the signal handler can read
/// without a lock (several run at once when builds run ahead, and in parallel tests).
const SLOTS: usize = 64;
static GROUPS: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];

fn hold_group(pgid: i32) {
    let free = GROUPS.iter().find(|g| {
        g.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    });
    // More children than slots: the group is still killed by execute, only a second
    // interrupt no longer reaches it.
    let _ = free;
}

fn release_group(pgid: i32) {
    for g in &GROUPS {
        let _ = g.compare_exchange(pgid, 0, Ordering::SeqCst, Ordering::SeqCst);
    }
}

fn groups() -> Vec<i32> {
    (GROUPS.iter().map(|g| g.load(Ordering::SeqCst)))
        .filter(|&g| g > 0)
        .collect()
}

extern "C" fn on_signal(_sig: libc::c_int) {
    let n = INTERRUPTS.fetch_add(1, Ordering::SeqCst) + 1;
    if n >= 2 {
        for g in &GROUPS {
            let pg = g.load(Ordering::SeqCst);
            if pg > 0 {
                // SAFETY: killpg is async-signal-safe.
                unsafe {
                    libc::killpg(pg, libc::SIGKILL);
                }
            }
        }
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(130) }
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

/// Where the running children's process groups are noted, so that a moldtune killed by SIGKILL
/// (which cannot clean up) has the group killed by the next moldtune on the same directory.
static STALE_FILE: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);

/// Notes running children's groups in `dir/.child` from now on.
pub fn track_children_in(dir: &std::path::Path) {
    *STALE_FILE.lock().unwrap_or_else(|e| e.into_inner()) = Some(dir.join(".child"));
}

/// Writes the groups running now into the note (one per line), or removes it when none is.
fn note_children() {
    let file = STALE_FILE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(p) = file.as_ref() else { return };
    let running = groups();
    if running.is_empty() {
        let _ = std::fs::remove_file(p);
    } else {
        let lines: Vec<String> = running.iter().map(i32::to_string).collect();
        let _ = std::fs::write(p, lines.join("\n"));
    }
}

/// Kills what is left of the process groups noted in `dir/.child` by a moldtune that died
/// without cleaning up: only processes of those groups whose working directory is inside
/// `dir` (so a recycled group id can never hit an unrelated process).
pub fn reap_stale_group(dir: &std::path::Path) {
    let note = dir.join(".child");
    let Ok(text) = std::fs::read_to_string(&note) else {
        return;
    };
    let _ = std::fs::remove_file(&note);
    let pgids: Vec<i32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
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
        if !stat_field(pid, 2).is_some_and(|g| pgids.contains(&g)) {
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

/// Makes moldtune the subreaper of its descendants (PR_SET_CHILD_SUBREAPER): a grandchild
/// that leaves its process group with setsid() and is orphaned is re-parented to moldtune
/// instead of init, so [`execute`] can find and kill it.
pub fn become_subreaper() {
    // SAFETY: plain prctl on our own process.
    let ok = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } == 0;
    SUBREAPER.store(ok, Ordering::SeqCst);
}

/// Whether [`become_subreaper`] took effect: only then can a child of ours that we did not
/// start be an orphan handed to us (otherwise it is a child some other part of the process
/// started — a test harness's — and none of ours to kill).
static SUBREAPER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The leaders of the children running now (several only in tests that run in parallel);
/// they are ours, not orphans.
static LIVE_LEADERS: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

fn live_leaders<T>(f: impl FnOnce(&mut Vec<i32>) -> T) -> T {
    f(&mut LIVE_LEADERS.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Kills and reaps every process re-parented to moldtune (an escaped descendant of a child
/// that has ended), until none is left: killing one may orphan its own children.
fn kill_orphans() {
    if !SUBREAPER.load(Ordering::SeqCst) {
        return;
    }
    let me = std::process::id() as i32;
    live_leaders(|live| {
        for _ in 0..100 {
            let orphans: Vec<i32> = children_of(me)
                .into_iter()
                .filter(|p| !live.contains(p))
                .collect();
            if orphans.is_empty() {
                return;
            }
            for pid in orphans {
                // SAFETY: the process is our child (its parent is us); waiting reaps it.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, std::ptr::null_mut(), 0);
                }
            }
        }
    })
}

/// The processes whose parent is `ppid` (from /proc).
fn children_of(ppid: i32) -> Vec<i32> {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    procs
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .filter(|pid| stat_field(*pid, 1) == Some(ppid))
        .collect()
}

/// Field `k` after the command in /proc/PID/stat (0 = state, 1 = ppid, 2 = pgrp).
fn stat_field(pid: i32, k: usize) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(')')?.1;
    after.split_whitespace().nth(k)?.parse().ok()
}

/// Grace period between SIGTERM and SIGKILL of a timed-out group.
const GRACE: Duration = Duration::from_millis(500);

thread_local! {
    /// The token that cancels the children started on this thread ([`cancellable`]).
    static CANCEL: std::cell::RefCell<Option<std::sync::Arc<std::sync::atomic::AtomicBool>>> =
        const { std::cell::RefCell::new(None) };
}

/// While the guard lives, every child started on this thread is killed as soon as `token`
/// is set (and none starts after): builds running ahead that the search will no longer use.
/// Their exit reads [`Exit::Interrupted`].
pub fn cancellable(token: std::sync::Arc<std::sync::atomic::AtomicBool>) -> Cancellable {
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
    note_children();
    let paused0 = cmd.pausable.then(|| join_pausable(pid));
    let rx = reap_in_thread(pid, start);
    let (how, got) = wait_or_kill(pid, &rx, Clock { start, paused0 }, timeout, &stop);
    // Whatever the leader did, nothing of its group may outlive it, nor any descendant
    // that left the group (setsid) and was handed to us as its subreaper.
    killpg(pid, libc::SIGKILL);
    let paused = paused0.map_or(Duration::ZERO, |p0| leave_pausable(pid) - p0);
    live_leaders(|l| l.retain(|&p| p != pid));
    kill_orphans();
    release_group(pid);
    note_children();
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

/// Waits until the child ends, has run for `timeout` (SIGTERM to the group, a grace period,
/// then SIGKILL) or `stop` says moldtune was interrupted or the child cancelled (SIGKILL at
/// once). Returns how it was ended, if moldtune ended it, and what the waiter reaped.
fn wait_or_kill(
    pid: i32,
    rx: &mpsc::Receiver<Reaped>,
    clock: Clock,
    timeout: Duration,
    stop: &dyn Fn() -> bool,
) -> (Option<Exit>, Option<Reaped>) {
    loop {
        if stop() {
            killpg(pid, libc::SIGCONT); // a stopped group dies of SIGKILL all the same
            killpg(pid, libc::SIGKILL);
            return (Some(Exit::Interrupted), rx.recv().ok());
        }
        let ran = clock.ran(Instant::now());
        if ran >= timeout {
            killpg(pid, libc::SIGTERM);
            killpg(pid, libc::SIGCONT); // a stopped group must run to see SIGTERM
            let got = rx.recv_timeout(GRACE).ok().or_else(|| {
                killpg(pid, libc::SIGKILL);
                rx.recv().ok()
            });
            return (Some(Exit::Timeout), got);
        }
        let slice = (timeout - ran).min(Duration::from_millis(50));
        match rx.recv_timeout(slice) {
            Ok(v) => return (None, Some(v)),
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => return (None, None),
        }
    }
}

/// The pausable children (builds running ahead) and the pause clock: how long they have
/// been held stopped in all, so that their timeouts and times count only their running.
struct Pauses {
    /// [`Paused`] guards alive.
    depth: usize,
    /// Since when the current pause lasts.
    since: Option<Instant>,
    /// Paused time before `since`.
    total: Duration,
    groups: Vec<i32>,
}

impl Pauses {
    fn paused_by(&self, now: Instant) -> Duration {
        let current = self
            .since
            .map_or(Duration::ZERO, |s| now.saturating_duration_since(s));
        self.total + current
    }
}

static PAUSES: std::sync::Mutex<Pauses> = std::sync::Mutex::new(Pauses {
    depth: 0,
    since: None,
    total: Duration::ZERO,
    groups: Vec::new(),
});

fn pauses<T>(f: impl FnOnce(&mut Pauses) -> T) -> T {
    f(&mut PAUSES.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Registers a pausable child's group (stopped at once while a pause holds); returns the
/// pause clock at its start.
fn join_pausable(pgid: i32) -> Duration {
    pauses(|p| {
        p.groups.push(pgid);
        if p.depth > 0 {
            killpg(pgid, libc::SIGSTOP);
        }
        p.paused_by(Instant::now())
    })
}

/// Forgets a pausable child's group; returns the pause clock at its end.
fn leave_pausable(pgid: i32) -> Duration {
    pauses(|p| {
        p.groups.retain(|&g| g != pgid);
        p.paused_by(Instant::now())
    })
}

/// While it lives, every pausable child is stopped (SIGSTOP to its group; one started
/// meanwhile is stopped at once) and continued when the last guard is dropped: a timed run
/// has the machine to itself while builds run ahead.
#[must_use = "the pause ends when the guard is dropped"]
pub struct Paused(());

/// Stops the pausable children until the guard is dropped (see [`Paused`]).
pub fn pause() -> Paused {
    pauses(|p| {
        p.depth += 1;
        if p.depth == 1 {
            p.since = Some(Instant::now());
            p.groups.iter().for_each(|&g| killpg(g, libc::SIGSTOP));
        }
    });
    Paused(())
}

impl Drop for Paused {
    fn drop(&mut self) {
        pauses(|p| {
            p.depth -= 1;
            if p.depth == 0 {
                p.groups.iter().for_each(|&g| killpg(g, libc::SIGCONT));
                if let Some(s) = p.since.take() {
                    p.total += s.elapsed();
                }
            }
        })
    }
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
            crate::evaluate::helper::tail(&d.path().join("err"), 5),
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
        become_subreaper();
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
        assert!(crate::evaluate::helper::tail(&d.path().join("out"), 2).starts_with("xxx"));
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
