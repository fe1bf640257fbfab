//! `--parallel N`: N evaluations at once on this machine, each on a worker thread with an
//! evaluator of its own (build, check and run, start to end). For metrics that do not
//! measure time only — an accuracy, a score, a count — since N programs running together
//! slow each other down: a time taken that way says nothing (`--parallel` is refused for a
//! time metric, with that reason). The driver records arrivals in id order, as for the Slurm
//! farm, so resume, interrupt and the results log behave as with one evaluation at a time.
//! The end-of-run verification runs on one evaluator, serially.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::error::Error;
use crate::evaluate::outcome::{Measurement, Source, Stop};
use crate::evaluate::{Evaluated, Evaluator};
use crate::problem::space::Config;
use crate::problem::Problem;
use crate::run::executor::{Ended, Executor};
use crate::run::log::Record;
use crate::run::verification::{Plan, Verification};
use crate::run::verify;

/// `--parallel N` (`flag`), else what run.json recorded, else 1; refused for a time metric
/// (programs running together slow each other down) and with the Slurm executor (`slurm`:
/// its `--workers` already run evaluations at once).
pub fn resolve(
    flag: Option<u16>,
    prev: Option<&crate::run::meta::RunMeta>,
    slurm: bool,
    problem: &Problem,
) -> Result<usize, Error> {
    use crate::problem::objective::{Objective, Sense};
    let recorded = prev.and_then(|m| m.parallel);
    let n = flag.map(usize::from).or(recorded).unwrap_or(1);
    if n > 1 && slurm {
        let why = "`--parallel` with `--executor slurm`: the farm already runs `--workers` evaluations at once";
        return Err(Error::usage(why, Some("use `--workers N`")));
    }
    if problem.told {
        return Ok(n); // asks in flight, evaluated by the program: no thread, no timing here
    }
    let most = max_parallel();
    if n > most {
        return Err(Error::usage(
            format!("`--parallel {n}` is more than {most} evaluations at once ({MAX_PER_CORE} per core of this machine's {})", most / MAX_PER_CORE),
            Some("an evaluation per core is the most that helps a program that computes; give at most that"),
        ));
    }
    if n > 1 && Objective::of(&problem.metric).sense == Sense::Time {
        return Err(Error::usage(
            format!("`--parallel {n}` runs evaluations at once, and the metric is a time: programs running together slow each other down, so their times would say nothing"),
            Some("leave `--parallel` out (`--jobs N` builds ahead while timed runs stay exclusive), or tune a metric that is not a time"),
        ));
    }
    Ok(n)
}

/// Evaluations at once per core that `--parallel` allows: room for programs that wait on
/// input or output, none for a thousand threads.
pub const MAX_PER_CORE: usize = 4;

/// The most `--parallel` allows on this machine: [`MAX_PER_CORE`] per core.
pub fn max_parallel() -> usize {
    MAX_PER_CORE * std::thread::available_parallelism().map_or(1, usize::from)
}

/// A job for a worker.
type Job = (usize, Config, Source);

/// N evaluations at once, each on its own evaluator.
pub struct Parallel {
    /// Prepares the run (the reference output) and re-measures at its end.
    main: Box<dyn Evaluator + Send>,
    /// The workers' evaluators until they are started (at `prepare`).
    idle: Vec<Box<dyn Evaluator + Send>>,
    jobs: Option<Sender<Job>>,
    queue: Arc<Mutex<Receiver<Job>>>,
    results: Receiver<Result<Ended, Stop>>,
    sender: Sender<Result<Ended, Stop>>,
    workers: Vec<JoinHandle<()>>,
    /// Set when the search ends: workers skip the jobs still queued.
    cancelled: Arc<AtomicBool>,
    in_flight: usize,
    /// Why a worker stopped (an interrupt), told at the next wait after the evaluations
    /// that did end are returned.
    stopped: Option<Stop>,
}

impl Parallel {
    /// `make()` gives each of the `n` workers (and the main evaluator) its evaluator.
    pub fn new(n: usize, make: impl Fn() -> Box<dyn Evaluator + Send>) -> Parallel {
        let (jobs, queue) = channel();
        let (sender, results) = channel();
        Parallel {
            main: make(),
            idle: (0..n.max(1)).map(|_| make()).collect(),
            jobs: Some(jobs),
            queue: Arc::new(Mutex::new(queue)),
            results,
            sender,
            workers: Vec::new(),
            cancelled: Arc::new(AtomicBool::new(false)),
            in_flight: 0,
            stopped: None,
        }
    }

    /// Closes the queue (the jobs no worker has taken are skipped), then waits for the
    /// workers to end what they run. (A worker waiting for a job holds the queue's lock, so
    /// the queue is closed, never drained from here.)
    fn stop_workers(&mut self) {
        self.cancelled.store(true, Ordering::SeqCst);
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
        while self.results.try_recv().is_ok() {}
        self.in_flight = 0;
    }
}

/// A worker: takes jobs until the queue closes, sends each outcome.
fn work(
    mut ev: Box<dyn Evaluator + Send>,
    problem: Arc<Problem>,
    (queue, cancelled): (Arc<Mutex<Receiver<Job>>>, Arc<AtomicBool>),
    out: Sender<Result<Ended, Stop>>,
) {
    loop {
        let job = match queue.lock() {
            Ok(q) => q.recv(),
            Err(_) => return,
        };
        let Ok((id, config, source)) = job else {
            return;
        };
        if cancelled.load(Ordering::SeqCst) {
            continue;
        }
        let ended = match ev.evaluate(
            &problem,
            &config,
            id,
            crate::evaluate::ahead::Ahead::default(),
        ) {
            Evaluated::Done(m) => Ok((id, config, source, m)),
            Evaluated::Stopped(stop) => Err(stop),
        };
        if out.send(ended).is_err() {
            return;
        }
    }
}

impl Executor for Parallel {
    fn prepare(&mut self, problem: &Problem, dir: &std::path::Path) -> Result<(), Error> {
        self.main.prepare(problem, dir)?;
        let shared = Arc::new(problem.clone());
        let n = self.idle.len();
        for (k, mut ev) in self.idle.drain(..).enumerate() {
            ev.prepare(problem, dir)?;
            let q = (self.queue.clone(), self.cancelled.clone());
            let (p, out) = (shared.clone(), self.sender.clone());
            let named = std::thread::Builder::new().name(format!("worker-{k}"));
            let started = named.spawn(move || work(ev, p, q, out));
            // A thread the system refuses (a memory or process limit) ends the run cleanly.
            let worker = started.map_err(|e| {
                Error::Environment(format!(
                    "cannot start worker {} of `--parallel {n}`: {e}; give fewer (`--parallel {k}`) or raise the limit",
                    k + 1
                ))
            })?;
            self.workers.push(worker);
        }
        Ok(())
    }

    fn remember(&mut self, m: &Measurement, eval_id: usize) {
        self.main.remember(m, eval_id);
    }

    fn capacity(&self) -> usize {
        self.workers.len().max(1)
    }

    fn lag(&self) -> Option<usize> {
        Some(self.capacity())
    }

    fn in_flight(&self) -> usize {
        self.in_flight
    }

    fn start(
        &mut self,
        _: &Problem,
        eval_id: usize,
        config: &Config,
        src: Source,
    ) -> Result<(), Error> {
        let sent = (self.jobs.as_ref()).map(|j| j.send((eval_id, config.clone(), src)));
        match sent {
            Some(Ok(())) => {
                self.in_flight += 1;
                Ok(())
            }
            _ => Err(Error::Environment(
                "the parallel workers have stopped".into(),
            )),
        }
    }

    /// Waits for one evaluation to end, then takes every other that has. A stop (an
    /// interrupt) is told once the evaluations that ended before it are returned.
    fn wait(&mut self, _: &Problem) -> Result<Vec<Ended>, Stop> {
        if let Some(stop) = self.stopped.take() {
            return Err(stop);
        }
        if self.in_flight == 0 {
            return Ok(Vec::new());
        }
        let first = self.results.recv().map_err(|_| {
            Stop::Environment("a parallel worker ended without its evaluation".into())
        })?;
        let mut arrived = vec![first];
        arrived.extend(std::iter::from_fn(|| self.results.try_recv().ok()));
        self.in_flight -= arrived.len();
        let mut ended = Vec::new();
        for a in arrived {
            match a {
                Ok(e) => ended.push(e),
                Err(stop) => self.stopped = Some(stop),
            }
        }
        match (ended.is_empty(), self.stopped.take()) {
            (true, Some(stop)) => Err(stop),
            (_, stop) => {
                self.stopped = stop;
                Ok(ended)
            }
        }
    }

    fn verify(
        &mut self,
        problem: &Problem,
        records: &[Record],
        plan: Plan,
        anchors: &[usize],
    ) -> Result<Option<Verification>, Stop> {
        verify::verify(problem, records, self.main.as_mut(), plan, anchors)
    }

    fn cancel(&mut self) {
        self.stop_workers();
    }
}

impl Drop for Parallel {
    fn drop(&mut self) {
        self.stop_workers();
    }
}
