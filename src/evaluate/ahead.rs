//! Builds running ahead (`--jobs N`), owned by the local executor
//! ([`crate::run::executor::Local`]): while the evaluation in turn is checked and timed, the
//! builds of the next ones — rendered by the evaluator ([`crate::evaluate::Evaluator::ahead`])
//! — run on threads of their own. They are pausable children: a timed
//! run holds them stopped ([`crate::process::pause`]), so timing stays exclusive and
//! their compile timeouts count only the time they ran.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use crate::evaluate::build::builds;
use crate::evaluate::outcome::Evaluated;
use crate::evaluate::outcome::Stop;
use crate::evaluate::variant::{Build, Rendered, Variant};
use crate::problem::Problem;
use crate::process;

/// A build done ahead: the rendered variant and how its builds (timed and check) ended.
pub struct Built {
    pub r: Rendered,
    pub build: Result<Build, Evaluated>,
}

/// What the executor did ahead of an evaluation's turn, handed to
/// [`crate::evaluate::Evaluator::evaluate`].
#[derive(Default)]
pub struct Ahead {
    /// The evaluation's own builds, made ahead.
    pub built: Option<Built>,
    /// Builds of later evaluations are running: held stopped while this one is timed.
    pub others_building: bool,
}

/// The builds in flight, by evaluation id.
#[derive(Default)]
pub struct Slots {
    /// The problem, shared with the build threads (set once the run's problem is known).
    problem: Option<Arc<Problem>>,
    running: HashMap<usize, JoinHandle<Built>>,
    /// At most `jobs` of them build at once; the others wait for a permit.
    permits: Arc<Permits>,
    /// Set to kill the builds in flight ([`Slots::cancel`]).
    cancelled: Arc<AtomicBool>,
}

/// A counting semaphore: builds running at once.
#[derive(Default)]
struct Permits {
    free: Mutex<usize>,
    freed: Condvar,
}

impl Permits {
    fn acquire(&self) -> Permit<'_> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        *free -= 1;
        Permit(self)
    }
}

/// A build's permit, given back when dropped (a panicking build included).
struct Permit<'a>(&'a Permits);

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.0.freed.notify_one();
    }
}

impl Slots {
    /// Shares `problem` with the build threads started from now on, `jobs` of which build at
    /// once.
    pub fn share(&mut self, problem: &Problem, jobs: usize) {
        self.problem = Some(Arc::new(problem.clone()));
        *self.permits.free.lock().unwrap_or_else(|e| e.into_inner()) = jobs.max(1);
    }

    /// Starts evaluation `eval_id`'s builds on a thread; false when no problem is shared.
    pub fn start(&mut self, eval_id: usize, r: Rendered) -> bool {
        let Some(problem) = self.problem.clone() else {
            return false;
        };
        let permits = Arc::clone(&self.permits);
        let cancelled = Arc::clone(&self.cancelled);
        let handle = std::thread::spawn(move || {
            let _permit = permits.acquire();
            let v = Variant {
                problem: &problem,
                r,
            };
            let _cancellable = process::cancellable(cancelled);
            let build = builds(&v);
            Built { r: v.r, build }
        });
        self.running.insert(eval_id, handle);
        true
    }

    /// Evaluation `eval_id`'s builds, waited for; `None` when none were started.
    pub fn take(&mut self, eval_id: usize) -> Option<Result<Built, Evaluated>> {
        let handle = self.running.remove(&eval_id)?;
        Some(handle.join().map_err(|_| {
            let why = format!("the build thread of evaluation {eval_id} panicked");
            Evaluated::Stopped(Stop::Environment(why))
        }))
    }

    /// Whether builds are in flight.
    pub fn busy(&self) -> bool {
        !self.running.is_empty()
    }

    /// Kills every build in flight (and keeps those waiting for a permit from starting),
    /// waits for their threads and removes their directories: proposals the search will not
    /// evaluate.
    pub fn cancel(&mut self) {
        self.cancelled.store(true, Ordering::SeqCst);
        for (_, handle) in self.running.drain() {
            if let Ok(built) = handle.join() {
                let _ = std::fs::remove_dir_all(&built.r.dir);
            }
        }
        self.cancelled = Arc::new(AtomicBool::new(false));
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        self.cancel();
    }
}
