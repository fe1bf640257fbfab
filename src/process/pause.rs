//! Pausing: while a [`pause`] guard lives, pausable children (builds running ahead of a
//! timed run) are held stopped, their timeouts and times counting only the time they ran.

use std::time::{Duration, Instant};

use super::groups::killpg;

/// The pausable children (builds running ahead) and the pause clock: how long they have
/// been held stopped in all, so that their timeouts and times count only their running.
pub(super) struct Pauses {
    /// [`Paused`] guards alive.
    depth: usize,
    /// Since when the current pause lasts.
    since: Option<Instant>,
    /// Paused time before `since`.
    total: Duration,
    groups: Vec<i32>,
}

impl Pauses {
    pub(super) fn paused_by(&self, now: Instant) -> Duration {
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

pub(super) fn pauses<T>(f: impl FnOnce(&mut Pauses) -> T) -> T {
    f(&mut PAUSES.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Registers a pausable child's group (stopped at once while a pause holds); returns the
/// pause clock at its start.
pub(super) fn join_pausable(pgid: i32) -> Duration {
    pauses(|p| {
        p.groups.push(pgid);
        if p.depth > 0 {
            killpg(pgid, libc::SIGSTOP);
        }
        p.paused_by(Instant::now())
    })
}

/// Forgets a pausable child's group; returns the pause clock at its end.
pub(super) fn leave_pausable(pgid: i32) -> Duration {
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
