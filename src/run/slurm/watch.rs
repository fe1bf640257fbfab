//! Watching the jobs in flight: which have ended, and how. A job has ended when its reply is
//! there (written by this submission: the nonce matches), or when it left without one — a
//! batch job squeue no longer lists, a step whose `srun` ended. One that left cleanly
//! (Slurm says COMPLETED, srun exited 0) wrote its reply, which a shared file system may show
//! the driver only later: it is waited for up to [`REPLY_GRACE`] before the evaluation is
//! counted lost. One that left otherwise is lost at once, with what Slurm said.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::evaluate::outcome::{Source, Stop};
use crate::problem::space::Config;
use crate::process;
use crate::run::slurm::job::{JobDir, Reply};
use crate::run::slurm::queue::{self, Step};

/// How long the reply of a job that ended cleanly may take to appear (NFS caches file
/// attributes for up to a minute).
pub const REPLY_GRACE: Duration = Duration::from_secs(90);
/// How often squeue is asked which jobs are still there (the controller is shared).
const SQUEUE_EVERY: Duration = Duration::from_secs(2);

/// How the driver follows a job.
#[derive(Debug)]
pub enum Handle {
    /// A batch job, by its Slurm id (seen in squeue).
    Batch(Option<String>),
    /// A step of the allocation moldtune runs in, by its srun.
    Step(Step),
}

/// A job submitted and not yet collected.
#[derive(Debug)]
pub struct Flight {
    pub job: JobDir,
    pub name: String,
    pub handle: Handle,
    /// The request's nonce, which its reply must echo.
    pub nonce: String,
    /// The evaluation's configuration and why it was proposed (reference and verify: none).
    pub proposal: Option<(Config, Source)>,
    left: Option<Left>,
}

/// A job seen to have left without a reply (yet).
#[derive(Debug)]
struct Left {
    at: Instant,
    /// It ended cleanly: its reply should appear.
    clean: bool,
    why: String,
}

/// What became of a job: its reply, or why there is none.
pub type Ended = Result<Reply, String>;

impl Flight {
    pub fn new(job: JobDir, name: String, handle: Handle, nonce: String) -> Flight {
        Flight {
            job,
            name,
            handle,
            nonce,
            proposal: None,
            left: None,
        }
    }

    /// The reply this submission wrote, once it is there.
    fn reply(&self) -> Option<Reply> {
        if !self.job.reply_path().is_file() {
            return None;
        }
        self.job.reply().filter(|r| r.nonce == self.nonce)
    }

    /// Whether its end is known: a reply, or it left and no reply is to be waited for.
    fn over(&self) -> bool {
        let given_up = |l: &Left| !l.clean || l.at.elapsed() >= REPLY_GRACE;
        self.left.as_ref().is_some_and(given_up) || self.reply().is_some()
    }

    /// Its reply, or why there is none.
    fn outcome(&self) -> Ended {
        self.reply().ok_or_else(|| match &self.left {
            Some(Left { clean: true, why, .. }) => format!(
                "{why}, but its reply did not appear within {} s: the run directory must be on a file system the nodes share",
                REPLY_GRACE.as_secs()
            ),
            Some(Left { why, .. }) => why.clone(),
            None => "it ended without a reply".into(),
        })
    }

    /// `why`, and the last lines the job printed.
    fn with_output(&self, why: String) -> String {
        match self.job.output_tail().trim() {
            "" => why,
            t => format!("{why}; its output ended: {t}"),
        }
    }
}

/// When squeue was last asked.
#[derive(Default)]
pub struct Watch {
    asked_squeue: Option<Instant>,
}

impl Watch {
    /// Takes the flights whose end is known out of `flights`. Ctrl-C: [`Stop::Interrupted`].
    pub fn collect(
        &mut self,
        flights: &mut BTreeMap<usize, Flight>,
    ) -> Result<Vec<(usize, Flight, Ended)>, Stop> {
        if process::interrupted() {
            return Err(Stop::Interrupted);
        }
        notice_steps(flights);
        let due = (self.asked_squeue).is_none_or(|t| t.elapsed() >= SQUEUE_EVERY);
        let unseen = |f: &Flight| matches!(f.handle, Handle::Batch(_)) && f.left.is_none();
        if due && flights.values().any(unseen) {
            self.asked_squeue = Some(Instant::now());
            notice_gone(flights);
        }
        let over: Vec<usize> = (flights.iter())
            .filter(|(_, f)| f.over())
            .map(|(&k, _)| k)
            .collect();
        let mut ended = Vec::new();
        for k in over {
            if let Some(f) = flights.remove(&k) {
                let got = f.outcome();
                ended.push((k, f, got));
            }
        }
        Ok(ended)
    }
}

/// Marks the steps whose srun ended.
fn notice_steps(flights: &mut BTreeMap<usize, Flight>) {
    for f in flights.values_mut().filter(|f| f.left.is_none()) {
        let Handle::Step(step) = &mut f.handle else {
            continue;
        };
        if let Some((clean, how)) = step.ended() {
            let why = format!("slurm step `{}` ended without a reply ({how})", f.name);
            let why = f.with_output(why);
            f.left = Some(Left {
                at: Instant::now(),
                clean,
                why,
            });
        }
    }
}

/// Marks the batch jobs squeue no longer lists, with what Slurm says of them (nothing when
/// squeue does not answer: it is asked again later).
fn notice_gone(flights: &mut BTreeMap<usize, Flight>) {
    let watched = |f: &Flight| matches!(f.handle, Handle::Batch(_)) && f.left.is_none();
    let names: Vec<String> = (flights.values())
        .filter(|f| watched(f))
        .map(|f| f.name.clone())
        .collect();
    let Some(listed) = queue::queued(&names) else {
        return;
    };
    for f in flights.values_mut() {
        if watched(f) && !listed.contains_key(&f.name) {
            let (clean, why) = why_gone(f);
            f.left = Some(Left {
                at: Instant::now(),
                clean,
                why,
            });
        }
    }
}

/// What Slurm says of a batch job that left the queue: whether it completed, and the cause
/// of its loss.
fn why_gone(f: &Flight) -> (bool, String) {
    let id = match &f.handle {
        Handle::Batch(Some(id)) => id.clone(),
        _ => "?".into(),
    };
    let (state, reason) = queue::ended(&id).unwrap_or_else(|| ("UNKNOWN".into(), String::new()));
    let state = state.split_whitespace().next().unwrap_or("").to_string();
    let what = match state.as_str() {
        s if s.starts_with("CANCELLED") => "was cancelled (scancel, or an administrator)".into(),
        "TIMEOUT" => "hit its Slurm time limit (`--time`)".into(),
        "NODE_FAIL" => "was lost with its node (NODE_FAIL)".into(),
        "PREEMPTED" => "was preempted".into(),
        "OUT_OF_MEMORY" => "ran out of memory".into(),
        "COMPLETED" => "completed".into(),
        "UNKNOWN" => "left the queue without a reply".into(),
        s => format!("ended {s} without a reply"),
    };
    let reason = match reason.as_str() {
        "" | "None" => String::new(),
        r => format!(", reason {r}"),
    };
    let why = f.with_output(format!("slurm job {id} (`{}`) {what}{reason}", f.name));
    (state == "COMPLETED", why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::slurm::job::Answer;

    fn flight(dir: &std::path::Path, nonce: &str) -> Flight {
        let job = JobDir(dir.to_path_buf());
        Flight::new(job, "mt-x-eval-0".into(), Handle::Batch(None), nonce.into())
    }

    fn reply(nonce: &str) -> Reply {
        Reply {
            nonce: nonce.into(),
            answer: Answer::Reference,
            node: "n1".into(),
            started_at: String::new(),
            ended_at: String::new(),
        }
    }

    #[test]
    fn a_reply_counts_only_when_it_echoes_this_submissions_nonce() {
        let tmp = tempfile::tempdir().unwrap();
        let f = flight(tmp.path(), "new");
        assert!(!f.over(), "no reply yet");
        f.job.write_reply(&reply("old")).unwrap();
        assert!(f.reply().is_none() && !f.over(), "an older job's reply");
        f.job.write_reply(&reply("new")).unwrap();
        assert!(f.over() && f.outcome().is_ok());
    }

    #[test]
    fn a_clean_end_waits_for_its_reply_an_unclean_one_is_lost_at_once() {
        let tmp = tempfile::tempdir().unwrap();
        let mut f = flight(tmp.path(), "n");
        let left = |clean, ago: Duration| Left {
            at: Instant::now() - ago,
            clean,
            why: "slurm job 7 (`x`) completed".into(),
        };
        f.left = Some(left(true, Duration::ZERO));
        assert!(!f.over(), "within the grace, the reply may still appear");
        f.left = Some(left(true, REPLY_GRACE));
        let why = f.outcome().unwrap_err();
        assert!(
            f.over() && why.contains("file system the nodes share"),
            "{why}"
        );
        f.left = Some(left(false, Duration::ZERO));
        assert!(f.over());
    }
}
