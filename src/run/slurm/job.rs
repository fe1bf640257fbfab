//! A job as the run directory holds it: `jobs/<key>/` with the [`Request`] the driver wrote
//! (`request.json`), the Slurm job's id (`job_id`) and output (`slurm.out`), and the
//! [`Reply`] the worker wrote when it ended (`reply.json`). Both JSON files are written
//! atomically, so a reader sees all of one or nothing; the directory is what a killed
//! driver finds again on `--resume`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::evaluate::outcome::{Measurement, Source};
use crate::run::meta::write_atomic;
use crate::run::verification::{Plan, Verification};

/// The folder of the jobs in a run directory.
pub const JOBS: &str = "jobs";

/// What a job is asked to do.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "task", rename_all = "snake_case")]
pub enum Task {
    /// Build and run the reference; its output becomes `reference.out` in the run directory.
    Reference,
    /// Evaluate one configuration (its cells as results.csv writes them).
    Evaluate {
        eval_id: usize,
        cells: Vec<String>,
        source: Source,
    },
    /// The end-of-run verification: the default and the best re-measured interleaved, on
    /// one node.
    Verify { plan: Plan, anchors: Vec<usize> },
    /// A front end's work outside a run (`moldtune check --update`: one baseline recorded
    /// on one node), done by the front end's handler
    /// ([`crate::run::front_ends::FrontEnds::task`]).
    FrontEnd {
        key: String,
        input: serde_json::Value,
    },
}

impl Task {
    /// The job's folder name: `reference`, `eval-N`, `verify`.
    pub fn key(&self) -> String {
        match self {
            Task::Reference => "reference".into(),
            Task::Evaluate { eval_id, .. } => format!("eval-{eval_id}"),
            Task::Verify { .. } => "verify".into(),
            Task::FrontEnd { key, .. } => key.clone(),
        }
    }
}

/// `request.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    /// The Slurm job name (unique to the run directory and the task).
    pub name: String,
    /// Unique to this submission: the reply echoes it, so a reply written by an older job
    /// of the same name (cancelled, still shutting down) is never taken for this one's.
    #[serde(default)]
    pub nonce: String,
    #[serde(flatten)]
    pub task: Task,
}

/// A fresh [`Request::nonce`].
pub fn nonce() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    let nanos = now.map_or(0, |d| d.as_nanos() as u64);
    let n = COUNT.fetch_add(1, Ordering::SeqCst);
    format!("{:x}-{:x}-{n}", std::process::id(), nanos)
}

/// How the job's work ended (`reply.json`'s `answer`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum Answer {
    /// The reference was built and `reference.out` written.
    Reference,
    Measured {
        measurement: Box<Measurement>,
    },
    Verified {
        verification: Option<Verification>,
    },
    /// What a front end's handler gave back.
    FrontEnd {
        output: serde_json::Value,
    },
    /// The reference did not build (`built` false) or run as it must.
    ReferenceFailed {
        message: String,
        built: bool,
    },
    /// The work could not be done: the node's environment failed, or the job could not
    /// read what it was given (`code` is the exit code moldtune would have ended with).
    Failed {
        message: String,
        code: u8,
    },
}

/// `reply.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reply {
    /// The request's nonce.
    #[serde(default)]
    pub nonce: String,
    pub answer: Answer,
    /// The node the job ran on.
    pub node: String,
    pub started_at: String,
    pub ended_at: String,
}

/// One job's folder.
#[derive(Debug, Clone)]
pub struct JobDir(pub PathBuf);

impl JobDir {
    pub fn of(run_dir: &Path, key: &str) -> JobDir {
        JobDir(run_dir.join(JOBS).join(key))
    }

    pub fn request_path(&self) -> PathBuf {
        self.0.join("request.json")
    }
    pub fn reply_path(&self) -> PathBuf {
        self.0.join("reply.json")
    }
    pub fn output_path(&self) -> PathBuf {
        self.0.join("slurm.out")
    }
    fn job_id_path(&self) -> PathBuf {
        self.0.join("job_id")
    }

    /// Writes a new request (the folder emptied first: a job lost earlier left its files).
    pub fn write_request(&self, r: &Request) -> Result<(), Error> {
        let _ = std::fs::remove_dir_all(&self.0);
        std::fs::create_dir_all(&self.0)
            .map_err(|e| Error::io(format!("cannot create `{}`", self.0.display()), e))?;
        write_json(&self.request_path(), r)
    }

    pub fn request(&self) -> Option<Request> {
        read_json(&self.request_path())
    }

    pub fn write_reply(&self, r: &Reply) -> Result<(), Error> {
        write_json(&self.reply_path(), r)
    }

    /// The reply, once the worker has written it.
    pub fn reply(&self) -> Option<Reply> {
        read_json(&self.reply_path())
    }

    pub fn write_job_id(&self, id: &str) -> Result<(), Error> {
        write_atomic(&self.job_id_path(), id.as_bytes())
    }

    pub fn job_id(&self) -> Option<String> {
        let s = std::fs::read_to_string(self.job_id_path()).ok()?;
        Some(s.trim().to_string()).filter(|s| !s.is_empty())
    }

    /// The last lines the job printed (for a lost job's cause).
    pub fn output_tail(&self) -> String {
        crate::process::helper::tail(&self.output_path(), 5)
    }
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), Error> {
    let bytes = serde_json::to_vec_pretty(value)
        .map_err(|e| Error::Internal(format!("cannot encode `{}`: {e}", path.display())))?;
    write_atomic(path, &bytes)
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Option<T> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// The node this process runs on: Slurm's name for it, else the host name.
pub fn this_node() -> String {
    std::env::var("SLURMD_NODENAME")
        .ok()
        .filter(|n| !n.is_empty())
        .or_else(|| {
            let h = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
            Some(h.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}
