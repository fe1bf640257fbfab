//! The job's side: `moldtune worker DIR KEY`, started by Slurm on a compute node. It reads
//! the request in `DIR/jobs/KEY/`, loads the run's problem as the run itself does (run.json
//! names it and its overrides), prepares the same evaluator a local run uses — the
//! reference output, and the run's log so far replayed into it (adaptive timeouts, the
//! incumbent, twins of earlier builds) — does the one task and writes the reply. A front
//! end's task outside a run (`check --update`'s recording) goes to the handler the command
//! line hands down ([`FrontEnds`]) instead. An interrupted worker (scancel, the time limit) writes none: the
//! driver asks Slurm why.

use std::path::Path;

use crate::error::{exit, Error};
use crate::evaluate::make_evaluator;
use crate::evaluate::outcome::{Measurement, Status, Stop};
use crate::evaluate::{Evaluated, Evaluator};
use crate::problem::Problem;
use crate::process;
use crate::run::front_ends::FrontEnds;
use crate::run::log;
use crate::run::machine::now_rfc3339;
use crate::run::meta::RunMeta;
use crate::run::slurm::job::{this_node, Answer, JobDir, Reply, Task};
use crate::run::verify;

/// Does job `key` of the run in `run_dir`; the exit code (130 when interrupted).
pub fn work(run_dir: &Path, key: &str, fronts: &FrontEnds) -> Result<u8, Error> {
    let jd = JobDir::of(run_dir, key);
    let request = jd.request().ok_or_else(|| {
        Error::usage(
            format!(
                "`{}` holds no readable request",
                jd.request_path().display()
            ),
            Some("`moldtune worker` is started by `moldtune run` or `moldtune mctree` with `--executor slurm`, not by hand"),
        )
    })?;
    process::track_children_in(&jd.0);
    let started_at = now_rfc3339();
    let answer = match request.task {
        Task::FrontEnd { input, .. } => front_end(&input, fronts),
        task => {
            let meta = crate::run::dir::read_meta(run_dir)?;
            match crate::run::dir::problem_as_run(run_dir, &meta, fronts) {
                Ok(problem) => answer(&problem, run_dir, &meta, task),
                Err(e) => Some(failed(e)),
            }
        }
    };
    let Some(answer) = answer else {
        return Ok(exit::INTERRUPTED);
    };
    jd.write_reply(&Reply {
        nonce: request.nonce,
        answer,
        node: this_node(),
        started_at,
        ended_at: now_rfc3339(),
    })?;
    Ok(exit::OK)
}

/// A front end's task done by its handler; `None` when the worker was interrupted.
fn front_end(input: &serde_json::Value, fronts: &FrontEnds) -> Option<Answer> {
    let Some(handler) = fronts.task else {
        let why = "this moldtune has no handler for a front end's task".to_string();
        return Some(failed(Error::Internal(why)));
    };
    match handler(input) {
        Ok(output) => Some(Answer::FrontEnd { output }),
        Err(Error::Interrupted(..)) => None,
        Err(e) => Some(failed(e)),
    }
}

fn failed(e: Error) -> Answer {
    match e {
        Error::Reference { message, built } => Answer::ReferenceFailed { message, built },
        e => Answer::Failed {
            message: e.to_string(),
            code: e.code(),
        },
    }
}

/// The task's answer; `None` when the worker was interrupted.
fn answer(problem: &Problem, run_dir: &Path, meta: &RunMeta, task: Task) -> Option<Answer> {
    match task {
        Task::Reference => match make_evaluator(meta.mock, false, 0).prepare(problem, run_dir) {
            Ok(()) => Some(Answer::Reference),
            Err(Error::Interrupted(..)) => None,
            Err(e) => Some(failed(e)),
        },
        Task::Evaluate { eval_id, cells, .. } => {
            let cells: Vec<&str> = cells.iter().map(String::as_str).collect();
            let Some(config) = problem.space.parse_cells(&cells) else {
                let why = format!(
                    "the request's values `{}` are not in the space",
                    cells.join(",")
                );
                return Some(failed(Error::Internal(why)));
            };
            let mut e = match evaluator(problem, run_dir, meta) {
                Ok(e) => e,
                Err(e) => return Some(failed(e)),
            };
            match e.evaluate(
                problem,
                &config,
                eval_id,
                crate::evaluate::ahead::Ahead::default(),
            ) {
                Evaluated::Done(m) if signalled(&m) => None,
                Evaluated::Done(mut m) => {
                    m.node = Some(this_node());
                    Some(Answer::Measured {
                        measurement: Box::new(m),
                    })
                }
                Evaluated::Stopped(stop) => stopped(stop),
            }
        }
        // Done by `work` before any run is read: a front end's task has no run.
        Task::FrontEnd { .. } => Some(failed(Error::Internal(
            "a front end's task reached the run's worker".into(),
        ))),
        Task::Verify { plan, anchors } => {
            let records = match log::read_records_live(run_dir, problem) {
                Ok(r) => r,
                Err(e) => return Some(failed(e)),
            };
            let mut e = match evaluator(problem, run_dir, meta) {
                Ok(e) => e,
                Err(e) => return Some(failed(e)),
            };
            match verify::verify(problem, &records, e.as_mut(), plan, &anchors) {
                Ok(verification) => Some(Answer::Verified { verification }),
                Err(stop) => stopped(stop),
            }
        }
    }
}

/// Whether the job was signalled (scancel, the time limit, its node going down): Slurm
/// signals every process of the job, so the compiler or the program may die of it a moment
/// before moldtune hears of it — a failure then is the job's end, not the variant's.
fn signalled(m: &Measurement) -> bool {
    if m.status != Status::Ok && !process::interrupted() {
        std::thread::sleep(SIGNAL_LAG);
    }
    process::interrupted()
}

/// How long a failed evaluation waits for a signal that may be on its way.
const SIGNAL_LAG: std::time::Duration = std::time::Duration::from_millis(300);

fn stopped(stop: Stop) -> Option<Answer> {
    match stop {
        Stop::Interrupted => None,
        Stop::Environment(message) => Some(Answer::Failed {
            message,
            code: exit::ENVIRONMENT,
        }),
    }
}

/// The run's evaluator on this node: the reference output read, the log replayed into it.
fn evaluator(
    problem: &Problem,
    run_dir: &Path,
    meta: &RunMeta,
) -> Result<Box<dyn Evaluator>, Error> {
    let mut e = make_evaluator(meta.mock, false, 0);
    e.prepare(problem, run_dir)?;
    for r in log::read_records_live(run_dir, problem)? {
        e.remember(&r.m, r.eval_id);
    }
    Ok(e)
}
