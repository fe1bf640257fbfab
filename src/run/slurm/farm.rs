//! The driver's side of `--executor slurm`: evaluations submitted as jobs, `workers` of
//! them in flight, collected in whatever order they end. A job that leaves the queue
//! without a reply was lost by the environment (cancelled, the time limit, its node failed):
//! its evaluation becomes a [`Status::Lost`] measurement whose cause says what Slurm said.
//! The jobs' folders are the state a killed driver picks up on `--resume` ([`Farm::recover_jobs`]):
//! a reply already written is collected, a job still queued or running is waited for, a
//! job gone without a reply is submitted again. The farm is the driver's Slurm
//! [`Executor`]; [`Farm::each`] runs jobs outside a search (a front end's tasks).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{exit, Error};
use crate::evaluate::outcome::{Measurement, Source, Status, Stop};
use crate::problem::space::Config;
use crate::problem::Problem;
use crate::process;
use crate::run::executor::{Ended, Executor};
use crate::run::log::Record;
use crate::run::slurm::job::{self, Answer, JobDir, Reply, Request, Task, JOBS};
use crate::run::slurm::queue::{self, Step, Submission};
use crate::run::slurm::watch::{self, Flight, Handle, Watch};
use crate::run::slurm::Settings;
use crate::run::verification::{Plan, Verification};

/// How often the job folders are looked at for replies.
const POLL: Duration = Duration::from_millis(250);

/// Jobs in flight, by key (`eval-N` sorted by N; `reference` and `verify` run alone).
pub struct Farm {
    dir: PathBuf,
    cwd: PathBuf,
    exe: PathBuf,
    settings: Settings,
    /// The prefix of this run's job names.
    tag: String,
    evals: BTreeMap<usize, Flight>,
    watch: Watch,
    /// The allocation whose steps the jobs are (`salloc`, a batch script); `None`: batch jobs.
    allocation: Option<String>,
}

impl Farm {
    /// A farm for the run in `dir` (absolute).
    pub fn new(dir: &Path, settings: Settings) -> Result<Farm, Error> {
        crate::process::take_charge(); // Ctrl-C cancels the run's jobs
        let here = |e| Error::io("cannot find moldtune's own executable or directory", e);
        Ok(Farm {
            dir: dir.to_path_buf(),
            cwd: std::env::current_dir().map_err(here)?,
            exe: std::env::current_exe().map_err(here)?,
            tag: format!(
                "mt-{}",
                &crate::rng::hex_hash(dir.as_os_str().as_encoded_bytes())[..8]
            ),
            settings,
            evals: BTreeMap::new(),
            watch: Watch::default(),
            allocation: queue::allocation(),
        })
    }

    fn name(&self, key: &str) -> String {
        format!("{}-{key}", self.tag)
    }

    /// Writes the job's request and script and submits it.
    fn launch(&self, task: Task) -> Result<Flight, Error> {
        let key = task.key();
        let job = JobDir::of(&self.dir, &key);
        let name = self.name(&key);
        let nonce = job::nonce();
        job.write_request(&Request {
            name: name.clone(),
            nonce: nonce.clone(),
            task,
        })?;
        let handle = self.submit(&job, &name, &key)?;
        Ok(Flight::new(job, name, handle, nonce))
    }

    /// Submits the job in `job` (a batch job, or a step of the allocation moldtune runs in).
    fn submit(&self, job: &JobDir, name: &str, key: &str) -> Result<Handle, Error> {
        let script = job.0.join("job.sh");
        let words = [
            self.exe.as_os_str(),
            "worker".as_ref(),
            self.dir.as_os_str(),
            key.as_ref(),
        ];
        let line: Vec<String> = words.iter().map(|w| quote(&w.to_string_lossy())).collect();
        let text = format!(
            "#!/bin/sh\n# moldtune's Slurm job `{name}`\nexec {}\n",
            line.join(" ")
        );
        crate::run::meta::write_atomic(&script, text.as_bytes())?;
        let submission = Submission {
            name,
            script: &script,
            output: &job.output_path(),
            chdir: &self.cwd,
        };
        let interrupted = |e| match process::interrupted() {
            true => {
                queue::cancel_named(name); // it may have reached the controller
                Error::Interrupted(self.dir.clone(), "run")
            }
            false => e,
        };
        if self.allocation.is_some() {
            let step = queue::start_step(&submission, &self.settings).map_err(interrupted)?;
            return Ok(Handle::Step(step));
        }
        let id = queue::submit(&submission, &self.settings).map_err(interrupted)?;
        job.write_job_id(&id)?;
        Ok(Handle::Batch(Some(id)))
    }

    /// Submits evaluation `eval_id` of `config`.
    fn start_job(
        &mut self,
        problem: &Problem,
        eval_id: usize,
        config: &Config,
        source: Source,
    ) -> Result<(), Error> {
        let cells = (problem.space.params.iter().zip(&config.0))
            .map(|(p, &x)| p.cell(x))
            .collect();
        let task = Task::Evaluate {
            eval_id,
            cells,
            source,
        };
        let mut flight = self.launch(task)?;
        flight.proposal = Some((config.clone(), source));
        self.evals.insert(eval_id, flight);
        Ok(())
    }

    /// Runs `task` as a job of its own and waits for its reply (the reference, the
    /// verification); an interrupt cancels it.
    fn alone(&mut self, task: Task) -> Result<Reply, Stop> {
        let ended = self.each(vec![task])?;
        let got = ended.into_iter().next().expect("one task, one end");
        got.map_err(Stop::Environment)
    }

    /// Runs `tasks` as jobs, `workers` at once, and waits for them all: each one's reply, or
    /// why it has none, in the tasks' order. An interrupt (or a failed submission) cancels
    /// those in flight.
    pub fn each(&mut self, tasks: Vec<Task>) -> Result<Vec<watch::Ended>, Stop> {
        let mut ended: Vec<Option<watch::Ended>> = vec![None; tasks.len()];
        let mut todo = tasks.into_iter().enumerate();
        let mut flights = BTreeMap::new();
        loop {
            while flights.len() < self.settings.workers.max(1) {
                let Some((i, task)) = todo.next() else { break };
                match self.launch(task) {
                    Ok(flight) => flights.insert(i, flight),
                    Err(e) => {
                        cancel(flights.into_values());
                        return Err(stop_of(e));
                    }
                };
            }
            if flights.is_empty() {
                return Ok(ended.into_iter().flatten().collect());
            }
            match self.watch.collect(&mut flights) {
                Ok(got) if got.is_empty() => std::thread::sleep(POLL),
                Ok(got) => got.into_iter().for_each(|(i, _, e)| ended[i] = Some(e)),
                Err(stop) => {
                    cancel(flights.into_values());
                    return Err(stop);
                }
            }
        }
    }

    /// Builds the reference on a node (unless the run directory holds its output already).
    fn reference(&mut self, problem: &Problem) -> Result<(), Error> {
        let needed = problem.check.mode != crate::problem::CheckMode::None;
        if !needed
            || self
                .dir
                .join(crate::evaluate::evaluator::REFERENCE_OUT)
                .is_file()
        {
            return Ok(());
        }
        let reply = self
            .alone(Task::Reference)
            .map_err(|s| s.into_error(&self.dir))?;
        match reply.answer {
            Answer::Reference => Ok(()),
            Answer::ReferenceFailed { message, built } => Err(Error::Reference { message, built }),
            Answer::Failed { message, code } => Err(failure(message, code)),
            other => Err(Error::Internal(format!(
                "the reference job answered {other:?}"
            ))),
        }
    }

    /// The end-of-run verification as one job: every candidate timed on the same node.
    fn verify_on_node(
        &mut self,
        plan: Plan,
        anchors: &[usize],
    ) -> Result<Option<Verification>, Stop> {
        let task = Task::Verify {
            plan,
            anchors: anchors.to_vec(),
        };
        let reply = self.alone(task)?;
        match reply.answer {
            Answer::Verified { verification } => Ok(verification),
            Answer::Failed { message, .. } => Err(Stop::Environment(message)),
            other => Err(Stop::Environment(format!(
                "the verification job answered {other:?}"
            ))),
        }
    }

    /// Waits until at least one evaluation in flight has ended; those that have, with their
    /// configurations and measurements. Ctrl-C: [`Stop::Interrupted`].
    fn wait_any(&mut self) -> Result<Vec<Ended>, Stop> {
        loop {
            let ended = self.watch.collect(&mut self.evals)?;
            if !ended.is_empty() || self.evals.is_empty() {
                let measured = ended.into_iter().map(|(k, f, got)| measured(k, f, got));
                return Ok(measured.collect());
            }
            std::thread::sleep(POLL);
        }
    }

    /// After a kill: the evaluations whose jobs were submitted but not recorded (ids from
    /// `first` on). A reply is collected at the next wait, a job still queued or running is
    /// waited for, one gone without a reply is submitted again. Returns them in id order.
    fn recover_jobs(
        &mut self,
        problem: &Problem,
        first: usize,
    ) -> Result<Vec<(usize, Config, Source)>, Error> {
        let mut found = self.unrecorded(problem, first);
        let names: Vec<String> = found.iter().map(|u| u.name.clone()).collect();
        let listed = match self.allocation {
            Some(_) => HashMap::new(),
            None => queue::queued(&names).ok_or_else(|| {
                Error::Environment("squeue did not answer, so which of this run's jobs still run cannot be told; `--resume` again when the controller answers".into())
            })?,
        };
        // Rows are appended in id order: what lies beyond a gap (an evaluation cancelled by
        // Ctrl-C) cannot be recorded in its place, so it is cancelled and proposed anew.
        let contiguous = (found.iter().enumerate())
            .take_while(|(k, u)| u.eval_id == first + k)
            .count();
        let beyond: Vec<Flight> = (found.drain(contiguous..))
            .map(|u| {
                let handle = self.running(&u.name, &listed);
                Flight::new(
                    u.job,
                    u.name,
                    handle.unwrap_or(Handle::Batch(None)),
                    u.nonce,
                )
            })
            .collect();
        cancel(beyond.into_iter());
        let mut out = Vec::new();
        for u in found {
            let handle = match (u.job.reply_path().is_file(), self.running(&u.name, &listed)) {
                (true, _) => Handle::Batch(u.job.job_id()),
                (false, Some(h)) => h,
                (false, None) => self.submit(&u.job, &u.name, &format!("eval-{}", u.eval_id))?,
            };
            let mut flight = Flight::new(u.job, u.name, handle, u.nonce);
            flight.proposal = Some((u.config.clone(), u.source));
            self.evals.insert(u.eval_id, flight);
            out.push((u.eval_id, u.config, u.source));
        }
        Ok(out)
    }

    /// The evaluations submitted and not recorded (ids from `first` on) that `jobs/` holds,
    /// in id order; the folders of evaluations recorded before a kill, and of requests never
    /// written whole (so never submitted), are removed.
    fn unrecorded(&self, problem: &Problem, first: usize) -> Vec<Unrecorded> {
        let mut found = Vec::new();
        for (eval_id, job) in self.job_dirs() {
            let request = job.request().filter(|_| eval_id >= first);
            let Some(Request {
                name,
                nonce,
                task: Task::Evaluate { cells, source, .. },
            }) = request
            else {
                let _ = std::fs::remove_dir_all(&job.0);
                continue;
            };
            let cells: Vec<&str> = cells.iter().map(String::as_str).collect();
            if let Some(config) = problem.space.parse_cells(&cells) {
                let (job, name, nonce) = (job, name, nonce);
                found.push(Unrecorded {
                    eval_id,
                    config,
                    source,
                    job,
                    name,
                    nonce,
                });
            }
        }
        found
    }

    /// The job named `name` if it still runs: listed by squeue (`listed`), or a step whose
    /// srun is still here.
    fn running(&self, name: &str, listed: &HashMap<String, String>) -> Option<Handle> {
        match self.allocation {
            Some(_) => Step::find(name).map(Handle::Step),
            None => listed.get(name).map(|id| Handle::Batch(Some(id.clone()))),
        }
    }

    /// The `jobs/eval-N` folders, by N.
    fn job_dirs(&self) -> BTreeMap<usize, JobDir> {
        let Ok(entries) = std::fs::read_dir(self.dir.join(JOBS)) else {
            return BTreeMap::new();
        };
        (entries.flatten())
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let n = name.strip_prefix("eval-")?.parse().ok()?;
                Some((n, JobDir(e.path())))
            })
            .collect()
    }

    /// Forgets evaluation `eval_id`'s job folder once its row is recorded.
    fn forget(&self, eval_id: usize) {
        let _ = std::fs::remove_dir_all(JobDir::of(&self.dir, &format!("eval-{eval_id}")).0);
    }

    /// Cancels every job in flight and forgets them: a resumed run proposes anew.
    fn cancel_all(&mut self) {
        cancel(std::mem::take(&mut self.evals).into_values());
    }
}

/// An evaluation found submitted and not recorded when a run resumes.
struct Unrecorded {
    eval_id: usize,
    config: Config,
    source: Source,
    job: JobDir,
    name: String,
    nonce: String,
}

/// `word` quoted for sh.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// The error a job's failed answer stands for.
fn failure(message: String, code: u8) -> Error {
    match code {
        exit::ENVIRONMENT => Error::Environment(message),
        exit::USAGE => Error::usage(message, None),
        _ => Error::Internal(message),
    }
}

fn stop_of(e: Error) -> Stop {
    match e {
        Error::Interrupted(..) => Stop::Interrupted,
        e => Stop::Environment(e.to_string()),
    }
}

/// Cancels jobs and forgets them (their folders removed).
fn cancel(flights: impl Iterator<Item = Flight>) {
    let mut ids = Vec::new();
    for mut f in flights {
        match &mut f.handle {
            Handle::Batch(id) => ids.extend(id.take()),
            Handle::Step(step) => step.cancel(),
        }
        let _ = std::fs::remove_dir_all(&f.job.0);
    }
    queue::cancel(&ids);
}

/// Evaluation `eval_id`'s ended job as its measurement.
fn measured(eval_id: usize, f: Flight, got: watch::Ended) -> Ended {
    let (config, source) = f
        .proposal
        .expect("an evaluation's flight holds its proposal");
    let m = match got {
        Ok(Reply {
            answer: Answer::Measured { measurement },
            ..
        }) => *measurement,
        Ok(Reply {
            answer: Answer::Failed { message, .. },
            node,
            ..
        }) => lost(
            format!("the job failed on node {node}: {message}"),
            Some(node),
        ),
        Ok(other) => lost(
            format!("the job gave no measurement ({:?})", other.answer),
            Some(other.node),
        ),
        Err(why) => lost(why, None),
    };
    (eval_id, config, source, m)
}

fn lost(cause: String, node: Option<String>) -> Measurement {
    let mut m = Measurement::failed(Status::Lost, 0.0, 0.0, cause);
    m.node = node;
    m
}

impl Executor for Farm {
    fn prepare(&mut self, problem: &Problem, _dir: &Path) -> Result<(), Error> {
        self.reference(problem)
    }

    fn recover(
        &mut self,
        problem: &Problem,
        recorded: usize,
    ) -> Result<Vec<(usize, Config, Source)>, Error> {
        self.recover_jobs(problem, recorded)
    }

    fn capacity(&self) -> usize {
        self.settings.workers
    }

    fn in_flight(&self) -> usize {
        self.evals.len()
    }

    fn start(
        &mut self,
        problem: &Problem,
        eval_id: usize,
        config: &Config,
        source: Source,
    ) -> Result<(), Error> {
        self.start_job(problem, eval_id, config, source)
    }

    fn wait(&mut self, _problem: &Problem) -> Result<Vec<Ended>, Stop> {
        self.wait_any()
    }

    fn recorded(&mut self, eval_id: usize) {
        self.forget(eval_id)
    }

    /// One job: every candidate timed on the same node.
    fn verify(
        &mut self,
        _problem: &Problem,
        _records: &[Record],
        plan: Plan,
        anchors: &[usize],
    ) -> Result<Option<Verification>, Stop> {
        self.verify_on_node(plan, anchors)
    }

    fn cancel(&mut self) {
        self.cancel_all()
    }
}
