//! The process groups of the running children, and what reaches them from outside: the
//! interrupt protocol (the first SIGINT/SIGTERM sets a flag that makes the running children's
//! groups die and the driver stop proposing; a second one kills every child group and exits
//! at once with 130), the note that lets the next moldtune kill what a SIGKILLed one left, and
//! the subreaper that hands us a grandchild which left its group.

use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};

static INTERRUPTS: AtomicUsize = AtomicUsize::new(0);

/// The process groups of the children running now, in slots the signal handler can read
/// without a lock (several run at once when builds run ahead, and in parallel tests).
const SLOTS: usize = 64;
static GROUPS: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];

pub(super) fn hold_group(pgid: i32) {
    let free = GROUPS.iter().find(|g| {
        g.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    });
    // More children than slots: the group is still killed by execute, only a second
    // interrupt no longer reaches it.
    let _ = free;
}

pub(super) fn release_group(pgid: i32) {
    for g in &GROUPS {
        let _ = g.compare_exchange(pgid, 0, Ordering::SeqCst, Ordering::SeqCst);
    }
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

/// Takes charge of the children a command is about to start: the interrupt handlers
/// installed and moldtune their subreaper (idempotent). The one place both happen, called by
/// what starts children: every evaluator ([`crate::evaluate::make_evaluator`]), the Slurm
/// farm and `moldtune mctree` from its start (its discovery runs the compiler). Not by the
/// helpers themselves: a library caller (a test harness) has children of its own.
pub fn take_charge() {
    install_signal_handlers();
    become_subreaper();
}

/// Installs the SIGINT/SIGTERM/SIGHUP handlers (idempotent).
fn install_signal_handlers() {
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

pub(super) fn killpg(pgid: i32, sig: libc::c_int) {
    // SAFETY: plain syscall; ESRCH (group already gone) is fine.
    unsafe {
        libc::killpg(pgid, sig);
    }
}

/// The directory whose children's process groups are noted, so that a moldtune killed by
/// SIGKILL (which cannot clean up) has them killed by the next moldtune on that directory.
static NOTED_IN: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);

/// The name of a child's note: `.child-<its pid, which is its process group>`.
const NOTE_PREFIX: &str = ".child-";

/// Notes running children's groups in `dir` from now on.
pub fn track_children_in(dir: &std::path::Path) {
    *NOTED_IN.lock().unwrap_or_else(|e| e.into_inner()) = Some(dir.to_path_buf());
}

/// The note a child about to start writes itself, from inside, before it runs anything
/// ([`ChildNote::write`]): its path without the pid. `None` when nothing is tracked.
pub(super) fn child_note() -> Option<ChildNote> {
    let dir = NOTED_IN.lock().unwrap_or_else(|e| e.into_inner()).clone()?;
    let mut path = dir.join(NOTE_PREFIX).into_os_string().into_encoded_bytes();
    let prefix = path.len();
    path.resize(prefix + 24, 0); // room for any pid and the terminating NUL
    Some(ChildNote { path, prefix })
}

/// Removes the note of the child `pid` (it ended, its group was killed).
pub(super) fn forget_child(pid: i32) {
    let dir = NOTED_IN.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if let Some(dir) = dir {
        let _ = std::fs::remove_file(dir.join(format!("{NOTE_PREFIX}{pid}")));
    }
}

/// A child's note, prepared before the fork: written between fork and exec with only
/// async-signal-safe calls, so the note exists before the child can start anything (a
/// note written by moldtune after the spawn can come too late: the child's own children may
/// already run when moldtune is killed).
pub(super) struct ChildNote {
    path: Vec<u8>,
    prefix: usize,
}

impl ChildNote {
    /// Creates `<dir>/.child-<getpid()>` (best effort; called in the child).
    pub(super) fn write(&mut self) {
        // SAFETY: getpid, open and close are async-signal-safe; the buffer was allocated
        // before the fork and is only written in place.
        unsafe {
            let mut pid = libc::getpid() as u32;
            let mut digits = [0u8; 10];
            let mut n = 0;
            loop {
                digits[n] = b'0' + (pid % 10) as u8;
                n += 1;
                pid /= 10;
                if pid == 0 {
                    break;
                }
            }
            for k in 0..n {
                self.path[self.prefix + k] = digits[n - 1 - k];
            }
            self.path[self.prefix + n] = 0;
            let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC;
            let fd = libc::open(self.path.as_ptr().cast(), flags, 0o644);
            if fd >= 0 {
                libc::close(fd);
            }
        }
    }
}

/// The process groups noted in `dir` by a moldtune that died without cleaning up (the notes
/// are removed); also the one-file note `.child` (a group per line) of moldtune before
/// 2026-11-29, so a run it left is still cleaned up.
fn noted_groups(dir: &std::path::Path) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut pgids = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let noted: Vec<i32> = match name.strip_prefix(NOTE_PREFIX) {
            Some(pid) => pid.parse().ok().into_iter().collect(),
            None if name == ".child" => (std::fs::read_to_string(e.path()).unwrap_or_default())
                .lines()
                .filter_map(|l| l.trim().parse().ok())
                .collect(),
            None => continue,
        };
        let _ = std::fs::remove_file(e.path());
        pgids.extend(noted);
    }
    pgids
}

/// Kills what is left of the process groups noted in `dir` by a moldtune that died without
/// cleaning up: only processes of those groups whose working directory is inside `dir` (so
/// a recycled group id can never hit an unrelated process).
pub fn reap_stale_group(dir: &std::path::Path) {
    let pgids = noted_groups(dir);
    if pgids.is_empty() {
        return;
    }
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
fn become_subreaper() {
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

pub(super) fn live_leaders<T>(f: impl FnOnce(&mut Vec<i32>) -> T) -> T {
    f(&mut LIVE_LEADERS.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Kills and reaps every process re-parented to moldtune (an escaped descendant of a child
/// that has ended), until none is left: killing one may orphan its own children.
pub(super) fn kill_orphans() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_groups_noted_per_child_and_in_the_old_one_file_note_are_read_and_removed() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(".child-41"), "").unwrap();
        std::fs::write(d.path().join(".child"), "7\n9\n").unwrap();
        std::fs::write(d.path().join(".child-x"), "").unwrap();
        let mut g = noted_groups(d.path());
        g.sort();
        assert_eq!(g, [7, 9, 41]);
        assert!(noted_groups(d.path()).is_empty(), "the notes are removed");
    }
}
