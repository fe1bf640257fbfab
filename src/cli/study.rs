//! `serve`, `ask` and `tell`: a program drives the search ([`crate::run::driver::study`]).
//! `serve` answers JSON requests, one a line on stdin, one reply a line on stdout; `ask`
//! and `tell` are one request each, for a shell script or a job scheduler's jobs.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::json;

use crate::error::{exit, Error};
use crate::run::driver::study::{with_study, Study, Told};
use crate::run::settings::RunOptions;
use crate::search::Learner;

/// Where a study is and how it searches (recorded in run.json by the request that starts it).
#[derive(Debug, clap::Args)]
pub struct OpenArgs {
    /// The study's run directory (made by the first request, with `--problem`).
    dir: PathBuf,
    /// The space file (YAML): parameters, the metric's goal, `record:`, `progress:`,
    /// `search:`; needed to start the study.
    #[arg(long)]
    problem: Option<PathBuf>,
    /// Search strategy [default: the space file's `search.learner`, else auto]. These flags
    /// start a study; later requests keep what run.json records unless given again.
    #[arg(long, value_enum)]
    learner: Option<Learner>,
    /// Seed of every random choice [default: the space file's `search.seed`, else 0].
    #[arg(long)]
    seed: Option<u64>,
    /// Evaluations to spend [default: the space file's `search.max_evals`, else 100].
    #[arg(long)]
    max_evals: Option<usize>,
    /// Random initial configurations after the default one [default: the space file's
    /// `search.initial`, else 10].
    #[arg(long)]
    initial: Option<usize>,
    /// Evaluations asked and not yet told at once [default: 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    parallel: Option<u16>,
}

impl OpenArgs {
    fn run_options(self, args: Vec<String>) -> RunOptions {
        let mut o = RunOptions {
            problem: self.problem,
            learner: self.learner,
            initial: self.initial,
            parallel: self.parallel,
            ..RunOptions::default()
        };
        o.shared.out = Some(self.dir);
        o.shared.seed = self.seed;
        o.shared.max_evals = self.max_evals;
        o.shared.quiet = true;
        o.shared.command_line = args;
        o
    }
}

/// `moldtune serve`'s arguments.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    open: OpenArgs,
}

/// `moldtune ask`'s arguments.
#[derive(Debug, clap::Args)]
pub struct AskArgs {
    #[command(flatten)]
    open: OpenArgs,
    /// Configurations to ask for (each a line), at most `--parallel` in flight.
    #[arg(long, default_value_t = 1)]
    count: usize,
}

/// `moldtune tell`'s arguments.
#[derive(Debug, clap::Args)]
pub struct TellArgs {
    /// The study's run directory.
    dir: PathBuf,
    /// The evaluation (the `eval` its ask printed).
    #[arg(long)]
    eval: usize,
    /// Its value (the metric); with `--step`, a value it reached at that step.
    #[arg(long, allow_negative_numbers = true)]
    value: Option<f64>,
    /// Report a value reached at this step while it runs: prints whether to stop it there.
    #[arg(long, allow_negative_numbers = true)]
    step: Option<f64>,
    /// ok, pruned, failed, run_timeout, wrong_output or lost [default: ok].
    #[arg(long)]
    status: Option<String>,
    /// A quantity of the problem's `record:`, NAME=VALUE (repeatable).
    #[arg(long = "record", value_name = "NAME=VALUE")]
    record: Vec<String>,
    /// Why it failed (kept in results.csv's `cause`).
    #[arg(long)]
    cause: Option<String>,
}

/// One request to `moldtune serve`.
#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
enum Request {
    Ask,
    Report { eval: usize, step: f64, value: f64 },
    Tell(Told),
    Best,
}

/// `moldtune serve`: requests until stdin ends.
pub(super) fn serve_command(a: ServeArgs, args: Vec<String>) -> Result<u8, Error> {
    with_study(a.open.run_options(args), true, |study| {
        let stdin = std::io::stdin();
        for line in stdin.lock().lines() {
            let line = line.map_err(|e| Error::io("cannot read the requests on stdin", e))?;
            if line.trim().is_empty() {
                continue;
            }
            let reply = match serde_json::from_str::<Request>(&line) {
                Ok(request) => answer(study, request),
                Err(e) => Err(unreadable(&line, &e)),
            };
            reply_line(reply)?;
        }
        Ok(exit::OK)
    })
}

/// A request that is not one: the reply names it.
fn unreadable(line: &str, e: &serde_json::Error) -> Error {
    let shown: String = line.chars().take(200).collect();
    Error::usage(
        format!("cannot read the request `{shown}`: {e}"),
        Some(
            r#"one JSON object a line: {"op": "ask"}, {"op": "report", "eval": 3, "step": 2, "value": 0.9}, {"op": "tell", "eval": 3, "value": 0.95}, {"op": "best"}"#,
        ),
    )
}

fn answer(study: &mut Study, request: Request) -> Result<serde_json::Value, Error> {
    match request {
        Request::Ask => study.ask().map(value),
        Request::Report {
            eval,
            step,
            value: v,
        } => study.report(eval, step, v).map(value),
        Request::Tell(t) => study.tell(t).map(|eval| json!({ "told": eval })),
        Request::Best => Ok(best(study)),
    }
}

/// A reply as JSON.
fn value<T: serde::Serialize>(t: T) -> serde_json::Value {
    serde_json::to_value(t).unwrap_or(serde_json::Value::Null)
}

/// The best evaluation so far, as `best` replies.
fn best(study: &Study) -> serde_json::Value {
    match study.best() {
        Some((eval, value, config)) => json!({"eval": eval, "value": value, "config": config}),
        None => json!({ "best": null }),
    }
}

/// Writes a reply: the value, or a refusal (`{"error": …, "hint": …}`) that leaves the
/// study open; any other error ends the server.
fn reply_line(reply: Result<serde_json::Value, Error>) -> Result<(), Error> {
    let value = match reply {
        Ok(v) => v,
        Err(Error::Usage { message, hint }) => json!({"error": message, "hint": hint}),
        Err(e) => return Err(e),
    };
    let mut out = std::io::stdout().lock();
    let written = writeln!(out, "{value}").and_then(|_| out.flush());
    written.map_err(|e| Error::io("cannot write the reply on stdout", e))
}

/// `moldtune ask`.
pub(super) fn ask_command(a: AskArgs, args: Vec<String>) -> Result<u8, Error> {
    let count = a.count;
    let offers = with_study(a.open.run_options(args), false, |study| {
        (0..count)
            .map(|_| study.ask())
            .collect::<Result<Vec<_>, _>>()
    })?;
    for o in offers {
        println!("{}", serde_json::to_string(&o).unwrap_or_default());
    }
    Ok(exit::OK)
}

/// `moldtune tell`: an outcome, or with `--step` a value reached on the way.
pub(super) fn tell_command(a: TellArgs, args: Vec<String>) -> Result<u8, Error> {
    let record = a
        .record
        .iter()
        .map(|r| record_pair(r))
        .collect::<Result<_, _>>()?;
    let open = OpenArgs {
        dir: a.dir,
        problem: None,
        learner: None,
        seed: None,
        max_evals: None,
        initial: None,
        parallel: None,
    };
    let told = Told {
        eval: a.eval,
        value: a.value,
        status: a.status,
        record,
        cause: a.cause,
    };
    let step = a.step;
    let reply = with_study(open.run_options(args), false, |study| match step {
        Some(step) => {
            let value = told
                .value
                .ok_or_else(|| Error::usage("`--step` reports a value: give `--value`", None))?;
            study.report(told.eval, step, value).map(self::value)
        }
        None => study.tell(told).map(|eval| json!({ "told": eval })),
    })?;
    println!("{reply}");
    Ok(exit::OK)
}

/// `--record NAME=VALUE`.
fn record_pair(s: &str) -> Result<(String, f64), Error> {
    let parsed = s
        .split_once('=')
        .and_then(|(k, v)| Some((k.to_string(), v.trim().parse().ok()?)));
    parsed.ok_or_else(|| {
        Error::usage(
            format!("`--record {s}` is not NAME=NUMBER"),
            Some("e.g. `--record train_s=1.25`"),
        )
    })
}
