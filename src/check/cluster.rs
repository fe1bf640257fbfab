//! `moldtune check --update --executor slurm`: each baseline recorded by one Slurm job, its
//! interleaved rounds all on one node (a ratio is only as good as the machine it was timed
//! on), `--workers` baselines at once. The jobs' folders are made in the current directory,
//! which the nodes must see (as a run directory must be), and removed at the end; the
//! baselines are judged and written here, as a local recording writes them. A job that
//! fails or is lost leaves its baseline as it was, and the others are still written.

use std::path::{Path, PathBuf};

use crate::check::baseline::{self, Baseline, Loaded};
use crate::check::measure::{judged_and_saved, recorded};
use crate::check::session::{progress, require_tools, Builds, Options};
use crate::error::Error;
use crate::run::slurm::farm::Farm;
use crate::run::slurm::job::{this_node, Answer, Task};
use crate::run::slurm::{queue, Settings};

/// What a recording job is given: the baseline file and how to record it.
#[derive(serde::Serialize, serde::Deserialize)]
struct Input {
    file: PathBuf,
    options: Options,
}

/// Records every baseline in `todo` on the cluster and writes each one that came back.
pub fn record_all(
    todo: Vec<Loaded>,
    opts: &Options,
    settings: Settings,
) -> Result<Vec<PathBuf>, Error> {
    queue::available()?;
    queue::check(&settings)?;
    let here = Path::new(".");
    let jobs = tempfile::Builder::new()
        .prefix(".moldtune-check-")
        .tempdir_in(here)
        .map_err(|e| Error::io("cannot create the jobs' folder in the current directory", e))?;
    let dir = std::path::absolute(jobs.path())
        .map_err(|e| Error::io("cannot find the current directory", e))?;
    let workers = settings.workers;
    let mut farm = Farm::new(&dir, settings)?;
    let tasks = (todo.iter().enumerate())
        .map(|(i, l)| task(i, l, opts))
        .collect::<Result<Vec<_>, _>>()?;
    progress(
        opts,
        format!(
            "recording {} baselines as Slurm jobs, {workers} at once",
            todo.len()
        ),
    );
    let ended = (farm.each(tasks))
        .map_err(|s| s.into_cancelled("the baselines being recorded were left as they were"))?;
    let mut written = Vec::new();
    let mut failed = Vec::new();
    for (l, got) in todo.into_iter().zip(ended) {
        match got
            .map_err(|why| format!("its job was lost: {why}"))
            .and_then(answer)
        {
            Ok(b) => written.push(judged_and_saved(l.file, &b, opts)?),
            Err(why) => failed.push(format!("`{}`: {why}", l.file.display())),
        }
    }
    match failed.is_empty() {
        true => Ok(written),
        false => Err(Error::Environment(format!(
            "{} of the baselines were not recorded (left as they were; {} written):\n  {}",
            failed.len(),
            written.len(),
            failed.join("\n  ")
        ))),
    }
}

fn task(i: usize, l: &Loaded, opts: &Options) -> Result<Task, Error> {
    let file = std::path::absolute(&l.file)
        .map_err(|e| Error::io("cannot find the current directory", e))?;
    let input = Input {
        file,
        options: opts.clone(),
    };
    Ok(Task::FrontEnd {
        key: format!("record-{i}"),
        input: serde_json::to_value(input).map_err(|e| Error::Internal(e.to_string()))?,
    })
}

/// The recorded baseline a job's reply holds, or why it holds none.
fn answer(reply: crate::run::slurm::job::Reply) -> Result<Baseline, String> {
    match reply.answer {
        Answer::FrontEnd { output } => serde_json::from_value(output)
            .map_err(|e| format!("its reply from node {} does not parse: {e}", reply.node)),
        Answer::Failed { message, .. } => {
            Err(format!("it failed on node {}: {message}", reply.node))
        }
        other => Err(format!("its job answered {other:?}")),
    }
}

/// A recording job's work on its node: the baseline loaded, recorded, given back (the
/// submitter writes it).
pub fn on_node(input: &serde_json::Value) -> Result<serde_json::Value, Error> {
    let Input { file, options } = serde_json::from_value(input.clone())
        .map_err(|e| Error::Internal(format!("a recording job's input does not parse: {e}")))?;
    let l = baseline::load(&file)?;
    require_tools([&l.problem], &options)?;
    let scratch = Builds::new()?;
    let mut b = recorded(&l, &options, &scratch.dir(0), None)?;
    b.recorded.node = Some(this_node());
    serde_json::to_value(&b).map_err(|e| Error::Internal(e.to_string()))
}
