//! The run directory's log: `results.csv` (the checkpoint: one row appended and flushed per
//! evaluation) and the typed records read back from it, with results.json's extras; the rule
//! for the run's best. (The lock that keeps two runs out of one directory: [`crate::run::lock`].)
//!
//! Resume replays `results.csv`; a row torn by a kill mid-write is dropped (its evaluation is
//! redone), every complete row is kept.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::evaluate::outcome::{Measurement, Source, Status};
use crate::problem::space::Config;
use crate::problem::{MetricKind, Problem};
use crate::search::Learner;

use crate::problem::record::LOG_COLUMNS;
use crate::run::meta::{RESULTS_CSV, RESULTS_JSON};

/// moldtune's own columns, after the parameter columns, `objective` and `elapsed_sec`
/// (one list: [`LOG_COLUMNS`], which the problem's `record:` names may not take).
pub const OWN_COLUMNS: &[&str] = LOG_COLUMNS.split_at(2).1;

/// One evaluation as logged.
#[derive(Debug, Clone)]
pub struct Record {
    pub eval_id: usize,
    pub config: Config,
    pub m: Measurement,
    pub elapsed_sec: f64,
    pub source: Source,
    pub config_hash: String,
    /// The learner that proposed it (model steps; every step of `--learner auto` after its
    /// initial design).
    pub learner: Option<Learner>,
}

/// The evaluation of the default configuration: the first one not lost by the environment
/// (a lost one was proposed again).
pub fn default_record(records: &[Record]) -> Option<&Record> {
    (records.iter()).find(|r| r.source == Source::Default && r.m.status != Status::Lost)
}

/// How many of `records` each learner proposed, most first: "gp 31, rf 12, random 7".
pub fn proposer_counts(records: &[Record]) -> String {
    let mut counts: Vec<(usize, Learner)> = Learner::ALL
        .into_iter()
        .map(|l| (records.iter().filter(|r| r.learner == Some(l)).count(), l))
        .filter(|c| c.0 > 0)
        .collect();
    counts.sort_by_key(|c| std::cmp::Reverse(c.0));
    let parts: Vec<String> = (counts.iter())
        .map(|(n, l)| format!("{} {n}", l.as_str()))
        .collect();
    if parts.is_empty() {
        "none yet".into()
    } else {
        parts.join(", ")
    }
}

/// The JSON form of a record (results.json).
#[derive(Debug, Serialize, Deserialize)]
pub struct JsonRecord {
    pub eval_id: usize,
    pub config: serde_json::Map<String, serde_json::Value>,
    pub config_hash: String,
    pub elapsed_sec: f64,
    pub source: Source,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learner: Option<Learner>,
    /// status, objective, samples, spread, compile_s, run_s, repeats, cause, hashes.
    #[serde(flatten)]
    pub m: Measurement,
}

/// Whether `dir` holds a results log with at least one evaluation.
pub fn has_rows(dir: &Path) -> bool {
    std::fs::read(dir.join(RESULTS_CSV))
        .is_ok_and(|b| b.iter().filter(|&&c| c == b'\n').count() >= 2)
}

pub fn header(problem: &Problem) -> Vec<String> {
    let mut h: Vec<String> = problem
        .space
        .params
        .iter()
        .map(|p| p.name.clone())
        .collect();
    h.extend(LOG_COLUMNS.iter().map(|s| s.to_string()));
    h.extend(problem.record.iter().map(|q| q.name.clone()));
    h
}

fn fmt_opt(x: Option<f64>, prec: Option<usize>) -> String {
    match (x, prec) {
        (None, _) => String::new(),
        (Some(v), Some(p)) => format!("{v:.p$}"),
        (Some(v), None) => format!("{v}"),
    }
}

pub fn row(problem: &Problem, r: &Record) -> Vec<String> {
    let mut row: Vec<String> = problem
        .space
        .params
        .iter()
        .zip(&r.config.0)
        .map(|(p, &x)| p.cell(x))
        .collect();
    row.push(fmt_opt(r.m.objective, None));
    row.push(format!("{:.3}", r.elapsed_sec));
    row.push(r.eval_id.to_string());
    row.push(r.m.status.to_string());
    row.push(format!("{:.3}", r.m.compile_s));
    row.push(format!("{:.4}", r.m.run_s));
    row.push(r.m.repeats.to_string());
    row.push(fmt_opt(r.m.spread, Some(4)));
    row.push(r.source.as_str().into());
    row.push(r.config_hash.clone());
    row.push(r.learner.map_or("", Learner::as_str).into());
    let recorded = |q: &crate::problem::record::Quantity| r.m.recorded.get(&q.name).copied();
    row.extend(problem.record.iter().map(|q| fmt_opt(recorded(q), None)));
    row
}

/// The append-only results log.
pub struct Log {
    writer: csv::Writer<File>,
}

impl Log {
    pub fn create(dir: &Path, problem: &Problem) -> Result<Log, Error> {
        let path = dir.join(RESULTS_CSV);
        let f = File::create(&path)
            .map_err(|e| Error::io(format!("cannot create `{}`", path.display()), e))?;
        let mut writer = csv::Writer::from_writer(f);
        writer.write_record(header(problem)).map_err(csv_err)?;
        writer
            .flush()
            .map_err(|e| Error::io("cannot write results.csv", e))?;
        Ok(Log { writer })
    }

    /// Opens an existing log for appending after [`read_records`] has repaired it (and
    /// given it the columns it was written without, see [`may_lack`]).
    pub fn append_to(dir: &Path, problem: &Problem) -> Result<Log, Error> {
        let path = dir.join(RESULTS_CSV);
        add_missing_columns(&path, &header(problem))?;
        let f = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(|e| Error::io(format!("cannot open `{}`", path.display()), e))?;
        Ok(Log {
            writer: csv::WriterBuilder::new().has_headers(false).from_writer(f),
        })
    }

    pub fn append(&mut self, problem: &Problem, r: &Record) -> Result<(), Error> {
        self.writer.write_record(row(problem, r)).map_err(csv_err)?;
        self.writer
            .flush()
            .map_err(|e| Error::io("cannot write results.csv", e))
    }
}

/// Rewrites a log whose header is a strict beginning of `full` (written before its last
/// columns existed, see [`may_lack`]) with them, empty in every row.
fn add_missing_columns(path: &Path, full: &[String]) -> Result<(), Error> {
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_path(path)
        .map_err(csv_err)?;
    let rows: Vec<csv::StringRecord> = rd.records().collect::<Result<_, _>>().map_err(csv_err)?;
    let Some(head) = rows.first() else {
        return Ok(());
    };
    let have = head.len();
    if have >= full.len() || !head.iter().zip(full).all(|(a, b)| a == b) {
        return Ok(());
    }
    let tmp = path.with_extension("csv.tmp");
    let mut w = csv::Writer::from_path(&tmp).map_err(csv_err)?;
    for (k, row) in rows.iter().enumerate() {
        let mut row = row.clone();
        for name in &full[have..] {
            row.push_field(if k == 0 { name } else { "" });
        }
        w.write_record(&row).map_err(csv_err)?;
    }
    w.flush()
        .map_err(|e| Error::io("cannot write results.csv", e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io("cannot write results.csv", e))
}

/// Whether a log may lack `missing`, the last columns of the problem's header: `learner`
/// (logs written before it existed, with no recorded quantity after it) and the progress
/// columns (a problem given `progress:` after the run).
fn may_lack(missing: &[String]) -> bool {
    use crate::problem::progress::{STEP, VALUE};
    let last = OWN_COLUMNS[OWN_COLUMNS.len() - 1];
    (missing.iter().enumerate()).all(|(k, c)| c == STEP || c == VALUE || (k == 0 && c == last))
}

fn csv_err(e: csv::Error) -> Error {
    match e.into_kind() {
        csv::ErrorKind::Io(io) => Error::io("cannot write results.csv", io),
        other => Error::Internal(format!("results.csv: {other:?}")),
    }
}

/// Reads the log of `dir`, dropping a torn last row (and truncating the file to match).
pub fn read_records(dir: &Path, problem: &Problem) -> Result<Vec<Record>, Error> {
    records_of(dir, problem, true)
}

/// Reads the log of `dir` while its run may be appending to it (a Slurm job of that run):
/// a last row without its newline is left out, the file untouched.
pub fn read_records_live(dir: &Path, problem: &Problem) -> Result<Vec<Record>, Error> {
    records_of(dir, problem, false)
}

fn records_of(dir: &Path, problem: &Problem, repair: bool) -> Result<Vec<Record>, Error> {
    let t = read_table(dir, repair)?;
    let full = header(problem);
    let older = full.starts_with(&t.header) && may_lack(&full[t.header.len()..]);
    if t.header != full && !older {
        return Err(t.bad(format!("unexpected header `{}`", t.header.join(","))));
    }
    let extra = json_extras(dir);
    let mut out = Vec::new();
    for (k, rec) in t.complete_rows().enumerate() {
        let cells: Vec<&str> = rec?.iter().collect();
        let row = |e: String| t.bad(format!("row {}: {e}", k + 2));
        let r = parse_row(problem, &cells, &extra).map_err(row)?;
        check_row(problem, &r, k).map_err(row)?;
        out.push(r);
    }
    Ok(out)
}

/// results.csv as moldtune wrote it, before its cells are read as a problem's values: the
/// header and the complete rows, each as long as the header.
pub struct Table {
    pub path: PathBuf,
    pub header: Vec<String>,
    pub rows: Vec<csv::StringRecord>,
}

impl Table {
    /// An error of the file, with the hint to restore it.
    pub fn bad(&self, message: String) -> Error {
        Error::ConfigFile {
            file: self.path.clone(),
            message,
            hint: Some(
                "results.csv must hold the rows moldtune wrote for this problem: restore it, or start a new run with another `--out`"
                    .into(),
            ),
        }
    }

    /// The rows, each refused unless it has a cell for every column.
    pub fn complete_rows(&self) -> impl Iterator<Item = Result<&csv::StringRecord, Error>> {
        (self.rows.iter().enumerate()).map(|(k, r)| match r.len() == self.header.len() {
            true => Ok(r),
            false => Err(self.bad(format!(
                "row {}: {} cells for {} columns",
                k + 2,
                r.len(),
                self.header.len()
            ))),
        })
    }

    /// The position of column `name`.
    pub fn column(&self, name: &str) -> Result<usize, Error> {
        (self.header.iter().position(|h| h == name))
            .ok_or_else(|| self.bad(format!("no `{name}` column (an empty or foreign file)")))
    }
}

/// The one reader of a run's results.csv: a torn last row (a kill mid-write) is left out,
/// and cut from the file too when `repair`; any other row that does not parse is an error
/// (one without a cell for every column, when read: [`Table::complete_rows`]).
pub(in crate::run) fn read_table(dir: &Path, repair: bool) -> Result<Table, Error> {
    let mut t = Table {
        path: dir.join(RESULTS_CSV),
        header: vec![],
        rows: vec![],
    };
    if t.path.is_dir() {
        return Err(t.bad("it is a directory".into()));
    }
    let bytes = read_repaired(&t.path, repair)?;
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(bytes.as_slice());
    let header = rd.headers().map_err(|e| t.bad(e.to_string()))?;
    t.header = header.iter().map(str::to_string).collect();
    for (k, rec) in rd.records().enumerate() {
        let rec = rec.map_err(|e| t.bad(format!("row {}: {e}", k + 2)))?;
        t.rows.push(rec);
    }
    Ok(t)
}

/// The log's bytes; a last row without its newline (torn by a kill mid-write) is cut off,
/// in the file too when `repair`, so that appending continues on a clean line.
fn read_repaired(path: &Path, repair: bool) -> Result<Vec<u8>, Error> {
    let mut bytes = std::fs::read(path)
        .map_err(|e| Error::io(format!("cannot read `{}`", path.display()), e))?;
    if !bytes.ends_with(b"\n") {
        let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        bytes.truncate(keep);
        if !repair {
            return Ok(bytes);
        }
        let f = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| Error::io("cannot repair results.csv", e))?;
        f.set_len(keep as u64)
            .map_err(|e| Error::io("cannot repair results.csv", e))?;
    }
    Ok(bytes)
}

/// What results.json adds to the CSV (causes, samples, hashes), by eval_id.
fn json_extras(dir: &Path) -> HashMap<usize, JsonRecord> {
    std::fs::read(dir.join(RESULTS_JSON))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v.get("evaluations").cloned())
        .and_then(|v| serde_json::from_value::<Vec<JsonRecord>>(v).ok())
        .map(|v| v.into_iter().map(|r| (r.eval_id, r)).collect())
        .unwrap_or_default()
}

/// Row `k` is evaluation `k` (none deleted, repeated or moved) and its configuration is
/// the one its hash names (not edited by hand): a resumed search replays these rows, so
/// they must be the ones moldtune wrote.
fn check_row(problem: &Problem, r: &Record, k: usize) -> Result<(), String> {
    if r.eval_id != k {
        return Err(format!(
            "eval_id is {} where {k} was expected: a row was deleted, repeated or moved",
            r.eval_id
        ));
    }
    if r.m.status == Status::Ok {
        objective_of(problem.metric.kind, r.m.objective)?;
    }
    let hash = problem.space.hash(&r.config);
    if r.config_hash != hash {
        return Err(format!(
            "config_hash `{}` does not match the row's parameter values (`{hash}`): the row was edited",
            r.config_hash
        ));
    }
    Ok(())
}

/// The one rule for an `ok` row's objective, whichever command reads it: a finite number, and
/// not below 0 for a time or a count (only a `regex` metric may be negative).
pub fn objective_of(kind: MetricKind, y: Option<f64>) -> Result<f64, String> {
    let Some(y) = y else {
        return Err("an `ok` row has no objective (or one that is not a number)".into());
    };
    if !y.is_finite() || (y < 0.0 && kind != MetricKind::Regex) {
        return Err(format!(
            "an `ok` row's objective is {y}: a time or a count is a finite number, 0 or more"
        ));
    }
    Ok(y)
}

/// One CSV row as a record; the CSV is authoritative, results.json fills in the rest.
fn parse_row(
    problem: &Problem,
    cells: &[&str],
    extra: &HashMap<usize, JsonRecord>,
) -> Result<Record, String> {
    let np = problem.space.params.len();
    let config = (problem.space)
        .parse_cells(&cells[..np])
        .ok_or("values are not in the space")?;
    let num = |i: usize| -> Option<f64> { cells[i].parse().ok() };
    let status = Status::parse(cells[np + 3])
        .ok_or_else(|| format!("unknown status `{}`", cells[np + 3]))?;
    let eval_id: usize = cells[np + 2].parse().map_err(|_| "bad eval_id")?;
    let base = extra
        .get(&eval_id)
        .map(|j| j.m.clone())
        .unwrap_or(Measurement {
            cause: None,
            ..Measurement::failed(status, 0.0, 0.0, String::new())
        });
    // The `record:` quantities follow moldtune's own columns.
    let recorded = (problem.record.iter().enumerate())
        .filter_map(|(k, q)| {
            let cell = cells.get(np + LOG_COLUMNS.len() + k)?;
            Some((q.name.clone(), cell.parse().ok()?))
        })
        .collect();
    Ok(Record {
        eval_id,
        m: Measurement {
            status,
            objective: num(np),
            compile_s: num(np + 4).unwrap_or(0.0),
            run_s: num(np + 5).unwrap_or(0.0),
            repeats: cells[np + 6].parse().unwrap_or(0),
            spread: num(np + 7),
            recorded,
            ..base
        },
        elapsed_sec: num(np + 1).unwrap_or(0.0),
        source: Source::parse(cells[np + 8]).unwrap_or(Source::Random),
        config_hash: cells[np + 9].to_string(),
        learner: cells.get(np + 10).and_then(|s| Learner::parse(s)),
        config,
    })
}

pub fn json_record(problem: &Problem, r: &Record) -> JsonRecord {
    JsonRecord {
        eval_id: r.eval_id,
        config: problem.space.json(&r.config),
        config_hash: r.config_hash.clone(),
        elapsed_sec: r.elapsed_sec,
        source: r.source,
        learner: r.learner,
        m: r.m.clone(),
    }
}

/// Reads the log of a run directory the user named: one that is not a run directory is a
/// usage error.
pub(in crate::run) fn read_run_records(
    dir: &Path,
    problem: &Problem,
) -> Result<Vec<Record>, Error> {
    if !dir.join(RESULTS_CSV).is_file() {
        return Err(Error::usage(
            format!(
                "`{}` is not a moldtune run directory (it holds no {RESULTS_CSV})",
                dir.display()
            ),
            Some("give a directory a `moldtune run` wrote"),
        ));
    }
    read_records(dir, problem)
}

/// Best successful record for the goal (the earliest of equals).
pub fn best(records: &[Record], goal: crate::problem::Goal) -> Option<&Record> {
    claimed(records, goal, None, succeeded)
}

/// The run's best, by the one rule every reader of a run uses (`best`, `report`, `measure`
/// and `show --from`, `baseline`): the winner the verification chose when there is one and it
/// succeeded, else the search's best — the earliest of equals (a later tie is not a new
/// best). `ok` gives a row's eval id and objective when it succeeded.
pub fn claimed<T>(
    rows: &[T],
    goal: crate::problem::Goal,
    winner: Option<usize>,
    ok: impl Fn(&T) -> Option<(usize, f64)>,
) -> Option<&T> {
    let oks = || rows.iter().filter_map(|r| ok(r).map(|k| (r, k)));
    let verified = winner.and_then(|w| oks().find(|(_, (id, _))| *id == w));
    let searched = || oks().min_by(|a, b| goal.order(a.1 .1, b.1 .1));
    verified.or_else(searched).map(|(r, _)| r)
}

/// A record's eval id and objective, when it succeeded (for [`claimed`]).
pub fn succeeded(r: &Record) -> Option<(usize, f64)> {
    (r.m.status == Status::Ok).then_some((r.eval_id, r.m.objective?))
}

#[cfg(test)]
mod tests {
    use super::claimed;
    use crate::problem::Goal;

    /// The verified winner is the claim when it succeeded; otherwise the search's best, the
    /// earliest of equals, for either goal.
    #[test]
    fn the_claim_is_the_verified_winner_else_the_earliest_best() {
        // (eval id, objective when it succeeded)
        let rows = [
            (0, Some(3.0)),
            (1, Some(1.0)),
            (2, None),
            (3, Some(1.0)),
            (4, Some(2.0)),
        ];
        let ok = |r: &(usize, Option<f64>)| Some((r.0, r.1?));
        let id = |winner, goal| claimed(&rows, goal, winner, ok).map(|r| r.0);
        assert_eq!(id(None, Goal::Minimize), Some(1), "the earliest of equals");
        assert_eq!(id(None, Goal::Maximize), Some(0));
        assert_eq!(id(Some(4), Goal::Minimize), Some(4), "the verified winner");
        assert_eq!(
            id(Some(2), Goal::Minimize),
            Some(1),
            "a failed winner is no claim"
        );
        assert_eq!(
            id(Some(9), Goal::Minimize),
            Some(1),
            "nor one not in the log"
        );
        assert_eq!(claimed(&rows[2..3], Goal::Minimize, None, ok), None);
    }
}
