//! Ask and tell (`moldtune serve`, `ask`, `tell`): a program drives the search in its own
//! process, on a run directory like `run`'s.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdout, Stdio};

use serde_json::{json, Value};

use crate::common::*;

/// A space of two parameters whose values a program tells; `extra` is appended.
fn space(dir: &Path, extra: &str) -> std::path::PathBuf {
    let file = dir.join("space.yaml");
    let yaml = format!(
        "name: toy\nparams:\n  - {{name: X, type: real, low: -4, high: 4, default: 3}}\n  - {{name: K, type: categorical, choices: [a, b, c], default: a}}\n\
         metric: {{goal: minimize}}\nrecord: [{{name: cost}}]\nsearch: {{learner: rf, max_evals: 12, initial: 3}}\n{extra}"
    );
    std::fs::write(&file, yaml).unwrap();
    file
}

/// The value the "program" finds for a configuration: least at X = 1, K = b.
fn value_of(config: &Value) -> f64 {
    let x = config["X"].as_f64().unwrap();
    let k = match config["K"].as_str().unwrap() {
        "b" => 0.0,
        _ => 2.0,
    };
    (x - 1.0).powi(2) + k
}

/// A `moldtune serve` and its reply lines.
struct Server {
    child: Child,
    replies: std::io::Lines<BufReader<ChildStdout>>,
}

impl Server {
    fn start(dir: &Path, args: &[&str]) -> Server {
        let mut c = moldtune("serve").arg(dir).args(args).command();
        c.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = c.spawn().expect("moldtune serve starts");
        let out = child.stdout.take().unwrap();
        Server {
            child,
            replies: BufReader::new(out).lines(),
        }
    }

    fn send(&mut self, request: Value) -> Value {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        let line = self.replies.next().expect("a reply").unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("reply `{line}`: {e}"))
    }

    /// Closes stdin and waits: the exit code.
    fn close(mut self) -> Option<i32> {
        drop(self.child.stdin.take());
        self.child.wait().unwrap().code()
    }
}

/// Asks and tells until the search ends; the (eval, config, value) told.
fn tune(server: &mut Server) -> Vec<(u64, Value, f64)> {
    let mut told = Vec::new();
    loop {
        let offer = server.send(json!({"op": "ask"}));
        if offer.get("end").is_some() {
            assert_eq!(offer["end"], "max_evals", "{offer}");
            return told;
        }
        let eval = offer["eval"].as_u64().expect("an eval id");
        let v = value_of(&offer["config"]);
        let reply = server
            .send(json!({"op": "tell", "eval": eval, "value": v, "record": {"cost": 2.0 * v}}));
        assert_eq!(reply, json!({ "told": eval }));
        told.push((eval, offer["config"].clone(), v));
    }
}

#[test]
fn a_program_asks_and_tells_and_the_study_is_a_run_directory_like_runs() {
    let t = tempfile::tempdir().unwrap();
    let file = space(t.path(), "");
    let dir = t.path().join("study");
    let mut server = Server::start(&dir, &["--problem", file.to_str().unwrap()]);
    let told = tune(&mut server);
    let best = server.send(json!({"op": "best"}));
    assert_eq!(server.close(), Some(0));
    assert_eq!(told.len(), 12);
    assert_eq!(told[0].1, json!({"X": 3.0, "K": "a"}), "the default first");
    let least = (told.iter()).min_by(|a, b| a.2.total_cmp(&b.2)).unwrap();
    assert_eq!(best["eval"], json!(least.0));
    assert_eq!(best["value"], json!(least.2));
    let csv = Csv::read(&dir);
    assert_eq!(csv.rows.len(), 12);
    let col = |name: &str| csv.header.iter().position(|h| h == name).unwrap();
    for (row, (eval, config, v)) in csv.rows.iter().zip(&told) {
        assert_eq!(row[col("eval_id")], eval.to_string());
        assert_eq!(row[col("objective")].parse::<f64>().unwrap(), *v);
        assert_eq!(row[col("cost")].parse::<f64>().unwrap(), 2.0 * v);
        assert_eq!(
            row[col("X")].parse::<f64>().unwrap(),
            config["X"].as_f64().unwrap()
        );
    }
    let run: Value = serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["termination"], "max_evals");
    assert!(
        !dir.join("asked.jsonl").exists(),
        "nothing in flight, no journal"
    );
    let o = moldtune("best").arg(&dir).arg("--json").output();
    assert_code(&o, 0);
    let printed: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(printed["eval_id"], json!(least.0));
    assert_eq!(printed["config"], least.1, "best prints the values asked");
}

#[test]
fn the_same_seed_and_values_ask_the_same_configurations() {
    let t = tempfile::tempdir().unwrap();
    let file = space(t.path(), "");
    let runs: Vec<Vec<Value>> = ["a", "b"]
        .iter()
        .map(|d| {
            let mut server = Server::start(
                &t.path().join(d),
                &["--problem", file.to_str().unwrap(), "--seed", "7"],
            );
            let told = tune(&mut server);
            server.close();
            told.into_iter().map(|t| t.1).collect()
        })
        .collect();
    assert_eq!(runs[0], runs[1]);
}

#[test]
fn a_study_goes_on_through_ask_and_tell_commands_after_its_server_died() {
    let t = tempfile::tempdir().unwrap();
    let file = space(t.path(), "");
    let dir = t.path().join("study");
    let problem = ["--problem", file.to_str().unwrap(), "--parallel", "2"];
    let mut server = Server::start(&dir, &problem);
    let first = server.send(json!({"op": "ask"}));
    let second = server.send(json!({"op": "ask"}));
    // Killed with both in flight: nothing was told.
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    // A new server offers them again, before anything new.
    let mut server = Server::start(&dir, &[]);
    assert_eq!(server.send(json!({"op": "ask"})), first);
    assert_eq!(server.send(json!({"op": "ask"})), second);
    let refused = server.send(json!({"op": "ask"}));
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("at most 2 at once"),
        "{refused}"
    );
    assert_eq!(server.close(), Some(0));
    // The second is told first, by the command line: it waits for the first.
    let tell = |eval: &Value, v: f64| {
        let o = moldtune("tell")
            .arg(&dir)
            .args(["--eval", &eval.to_string(), "--value", &v.to_string()])
            .output();
        assert_code(&o, 0);
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    assert_eq!(tell(&second["eval"], 5.0), json!({"told": 1}));
    assert_eq!(Csv::read(&dir).rows.len(), 0, "eval 1 waits for eval 0");
    assert_eq!(tell(&first["eval"], 4.0), json!({"told": 0}));
    let csv = Csv::read(&dir);
    let ids: Vec<&str> = csv.rows.iter().map(|r| r[4].as_str()).collect();
    assert_eq!(ids, ["0", "1"]);
    let o = moldtune("ask").arg(&dir).output();
    assert_code(&o, 0);
    let next: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(next["eval"], 2);
    let again = moldtune("tell")
        .arg(&dir)
        .args(["--eval", "1", "--value", "3"])
        .output();
    assert_code(&again, 2);
    assert!(
        text(&again.stderr).contains("eval 1 was told already"),
        "{}",
        describe(&again)
    );
}

#[test]
fn bad_requests_are_refused_by_name_and_the_study_goes_on() {
    let t = tempfile::tempdir().unwrap();
    let file = space(t.path(), "");
    let dir = t.path().join("study");
    let mut server = Server::start(&dir, &["--problem", file.to_str().unwrap()]);
    let refusals = [
        (json!({"op": "dance"}), "unknown variant `dance`"),
        (
            json!({"op": "tell", "eval": 0, "value": 1.0}),
            "eval 0 was never asked",
        ),
    ];
    for (request, says) in refusals {
        let r = server.send(request);
        assert!(r["error"].as_str().unwrap().contains(says), "{r}");
    }
    let offer = server.send(json!({"op": "ask"}));
    let eval = offer["eval"].clone();
    let refusals = [
        (
            json!({"op": "tell", "eval": eval}),
            "an `ok` outcome needs its value",
        ),
        (
            json!({"op": "tell", "eval": eval, "value": 1.0, "record": {"spent": 3}}),
            "`spent` is not a quantity",
        ),
        (
            json!({"op": "tell", "eval": eval, "value": 1.0, "status": "fine"}),
            "`fine` is not a status",
        ),
        (
            json!({"op": "report", "eval": 9, "step": 1, "value": 1.0}),
            "eval 9 was never asked",
        ),
    ];
    for (request, says) in refusals {
        let r = server.send(request);
        assert!(r["error"].as_str().unwrap().contains(says), "{r}");
    }
    let stdin = server.child.stdin.as_mut().unwrap();
    writeln!(stdin, "{{not json").unwrap();
    let r: Value = serde_json::from_str(&server.replies.next().unwrap().unwrap()).unwrap();
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .contains("cannot read the request"),
        "{r}"
    );
    let failed = json!({"op": "tell", "eval": eval, "status": "failed", "cause": "diverged"});
    assert_eq!(server.send(failed), json!({"told": 0}));
    assert_eq!(server.close(), Some(0));
    let csv = Csv::read(&dir);
    assert_eq!(
        csv.rows[0][csv.header.iter().position(|h| h == "status").unwrap()],
        "run_error"
    );
}

#[test]
fn a_reported_value_below_the_median_of_completed_ones_is_pruned() {
    let t = tempfile::tempdir().unwrap();
    let file = space(t.path(), "progress: {startup: 2, warmup: 1}\n");
    let dir = t.path().join("study");
    let mut server = Server::start(&dir, &["--problem", file.to_str().unwrap()]);
    // Two complete curves: 10, 5, then 1 at the end (minimised).
    for _ in 0..2 {
        let eval = server.send(json!({"op": "ask"}))["eval"].clone();
        for (step, v) in [(1, 10.0), (2, 5.0)] {
            let r = server.send(json!({"op": "report", "eval": eval, "step": step, "value": v}));
            assert_eq!(r, json!({"prune": false}), "no median before two completed");
        }
        server.send(json!({"op": "tell", "eval": eval, "value": 1.0}));
    }
    let eval = server.send(json!({"op": "ask"}))["eval"].clone();
    let warm = server.send(json!({"op": "report", "eval": eval, "step": 1, "value": 50.0}));
    assert_eq!(warm["prune"], false, "step 1 is in the warm-up: {warm}");
    let r = server.send(json!({"op": "report", "eval": eval, "step": 2, "value": 7.0}));
    assert_eq!(r["prune"], true, "{r}");
    assert!(
        r["why"].as_str().unwrap().contains("pruned at step 2"),
        "{r}"
    );
    server.send(json!({"op": "tell", "eval": eval, "status": "pruned"}));
    assert_eq!(server.close(), Some(0));
    let csv = Csv::read(&dir);
    let col = |name: &str| csv.header.iter().position(|h| h == name).unwrap();
    let last = &csv.rows[2];
    assert_eq!(last[col("status")], "pruned");
    assert_eq!(
        (
            last[col("progress_step")].as_str(),
            last[col("progress_value")].as_str()
        ),
        ("2", "7")
    );
}

#[test]
fn a_space_without_mold_or_run_is_told_and_run_refuses_it() {
    let t = tempfile::tempdir().unwrap();
    let file = space(t.path(), "");
    let o = moldtune("run")
        .arg(&file)
        .mock()
        .out(t.path().join("r"))
        .output();
    assert_code(&o, 2);
    assert!(
        text(&o.stderr).contains("has neither `mold:` nor `run:`"),
        "{}",
        describe(&o)
    );
    let half = t.path().join("half.yaml");
    let text_of = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&half, format!("{text_of}run: \"./x\"\n")).unwrap();
    let o = moldtune("ask")
        .arg(t.path().join("s"))
        .arg("--problem")
        .arg(&half)
        .output();
    assert_code(&o, 2);
    assert!(
        text(&o.stderr).contains("half.yaml:8:6: the problem has a `run:` but no `mold:`"),
        "{}",
        describe(&o)
    );
    let none = moldtune("ask").arg(t.path().join("nothing")).output();
    assert_code(&none, 2);
    assert!(
        text(&none.stderr).contains("holds no study"),
        "{}",
        describe(&none)
    );
}

/// A space the study exhausts ends it: the ask says so, and run.json too (it stayed
/// `running`).
#[test]
fn a_study_that_exhausts_its_space_says_so_in_run_json() {
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("small.yaml");
    let yaml =
        "name: small\nparams:\n  - {name: K, type: categorical, choices: [a, b, c], default: a}\n\
                metric: {goal: minimize}\nsearch: {learner: random, max_evals: 10, initial: 1}\n";
    std::fs::write(&file, yaml).unwrap();
    let dir = t.path().join("study");
    let mut server = Server::start(&dir, &["--problem", file.to_str().unwrap()]);
    for _ in 0..3 {
        let eval = server.send(json!({"op": "ask"}))["eval"].clone();
        server.send(json!({"op": "tell", "eval": eval, "value": 1.0}));
    }
    assert_eq!(
        server.send(json!({"op": "ask"})),
        json!({"end": "space_exhausted"})
    );
    assert_eq!(server.close(), Some(0));
    let run: Value = serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["termination"], "space_exhausted");
}

/// A study's asks in flight are its `--parallel`, whatever executor the space file names for
/// runs (the program evaluates); run.json records that count.
#[test]
fn a_study_takes_its_parallel_asks_even_when_the_file_names_slurm() {
    let t = tempfile::tempdir().unwrap();
    let file = space(t.path(), "");
    let text = std::fs::read_to_string(&file).unwrap();
    let text = text.replace("initial: 3}", "initial: 3, executor: slurm}");
    std::fs::write(&file, text).unwrap();
    let dir = t.path().join("study");
    let problem = ["--problem", file.to_str().unwrap(), "--parallel", "3"];
    let mut server = Server::start(&dir, &problem);
    for _ in 0..3 {
        let offer = server.send(json!({"op": "ask"}));
        assert!(offer["eval"].is_u64(), "{offer}");
    }
    let refused = server.send(json!({"op": "ask"}));
    let why = refused["error"].as_str().unwrap_or_default();
    assert!(why.contains("at most 3 at once"), "{refused}");
    let run = read_json(&dir.join("run.json"));
    assert_eq!(run["parallel"], 3, "{run}");
    assert_eq!(server.close(), Some(0));
}
