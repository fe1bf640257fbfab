//! `--executor slurm` against real Slurm daemons (scripts/slurm_local.sh: one controller,
//! nodes n1 and n2 on this machine) and real clang-22 builds. Run when
//! `MOLDTUNE_SLURM_TESTS=1` (scripts/test.sh sets it once the daemons are up); otherwise each
//! test says why it is skipped. The tests share the two nodes, so they take turns.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::common::{assert_code, describe, have_clang, moldtune, read_json, Csv, Moldtune};

static NODES: Mutex<()> = Mutex::new(());

/// Whether the Slurm tests run here (else says why not, on stderr itself: the test
/// harness's capture would hide a passing test's `eprintln!`).
fn slurm_here() -> bool {
    if std::env::var("MOLDTUNE_SLURM_TESTS").as_deref() != Ok("1") {
        use std::io::Write;
        let why = "SKIPPED: MOLDTUNE_SLURM_TESTS is not 1 (scripts/test.sh sets it after scripts/slurm_local.sh started the daemons)\n";
        let _ = std::io::stderr().write_all(why.as_bytes());
        return false;
    }
    assert!(
        have_clang(),
        "the Slurm tests build with clang-22: bash scripts/setup.sh"
    );
    true
}

/// The test's turn on the two nodes, its directory and run directory; `None` when the Slurm
/// tests do not run here.
fn turn() -> Option<(
    std::sync::MutexGuard<'static, ()>,
    tempfile::TempDir,
    PathBuf,
)> {
    if !slurm_here() {
        return None;
    }
    let nodes = NODES.lock().unwrap_or_else(|e| e.into_inner());
    wait_nodes_idle();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    Some((nodes, tmp, out))
}

/// Waits until both nodes are idle, as the first test finds them: a node the previous test
/// took down and resumed, or whose last job is still completing, would leave a run on two
/// workers one node to work on.
fn wait_nodes_idle() {
    let t0 = Instant::now();
    loop {
        let o = Command::new("sinfo")
            .args(["--noheader", "--Node", "--format=%N %t"])
            .output()
            .unwrap();
        let states = String::from_utf8_lossy(&o.stdout).to_string();
        let idle = states.lines().filter(|l| l.ends_with(" idle")).count();
        if idle >= 2 {
            return;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the nodes are not idle after 60 s: {states}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn matmul() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/matmul/matmul.yaml")
}

/// A problem whose every run naps 0.4–1.1 s: jobs run long enough to be cancelled or to
/// lose their node. While `DIR/hold` exists its runs wait (see [`held_eval_job`]).
fn write_nap(dir: &Path) -> PathBuf {
    let yaml = r#"name: nap
mold: nap.c
params:
  - name: P0
    type: ordinal
    values: [1, 2, 3, 4, 5, 6, 7, 8]
    default: 4
  - name: Q
    type: integer
    low: 0
    high: 2
compile: "clang-22 -O1 {{ source }} -o {{ exe }}"
run: "{{ exe }}"
metric: {kind: wall_time, goal: minimize}
repeats: 2
timeouts: {compile_s: 60, run_s: 30}
check: {mode: output, stream: stdout}
search: {initial: 3}
"#;
    std::fs::write(dir.join("nap.c"), nap_mold(dir)).unwrap();
    std::fs::write(dir.join("nap.yaml"), yaml).unwrap();
    dir.join("nap.yaml")
}

/// The nap: first, while `DIR/hold` exists (60 s at most), it waits, having written
/// `DIR/held-<its Slurm job id>`.
fn nap_mold(dir: &Path) -> String {
    let hold = dir.join("hold").display().to_string();
    let held = dir.join("held-").display().to_string();
    format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
/* #Q */
int main(void) {{
  if (access("{hold}", F_OK) == 0) {{
    const char *job = getenv("SLURM_JOB_ID");
    char path[4096];
    snprintf(path, sizeof path, "{held}%s", job ? job : "none");
    FILE *f = fopen(path, "w");
    if (f) fclose(f);
    for (int i = 0; i < 3000 && access("{hold}", F_OK) == 0; i++) usleep(20000);
  }}
  usleep(300000 + 100000 * #P0);
  puts("done");
  return 0;
}}
"#
    )
}

/// `moldtune run --executor slurm --workers 2 --quiet PROBLEM --learner rf --max-evals N
/// --verify-rounds 3 --out OUT`.
fn run_args(problem: &Path, out: &Path, evals: usize) -> Moldtune {
    moldtune("run")
        .args(["--executor", "slurm", "--workers", "2"])
        .quiet()
        .arg(problem)
        // rf: a forest's proposals take milliseconds even in a debug build, the GP's that
        // `auto` starts with do not, and these tests time the cluster, not the search.
        .learner("rf")
        .max_evals(evals)
        .args(["--verify-rounds", "3"])
        .out(out)
}

/// `c` started in `cwd`, stdout and stderr piped.
fn spawn(cwd: &Path, c: Moldtune) -> Child {
    c.cwd(cwd).spawn()
}

/// `moldtune run --quiet --resume OUT` in `cwd`, run to its end.
fn resume(cwd: &Path, out: &Path) -> std::process::Output {
    let c = moldtune("run").quiet().arg("--resume").arg(out);
    spawn(cwd, c).wait_with_output().unwrap()
}

/// squeue's `id|name|state|node` lines of the jobs whose name contains `part`.
fn squeue(part: &str) -> Vec<[String; 4]> {
    let o = Command::new("squeue")
        .args(["--noheader", "--format=%i|%j|%T|%N"])
        .output()
        .unwrap();
    let mut jobs = Vec::new();
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        if let [id, name, state, node] = line.trim().splitn(4, '|').collect::<Vec<_>>()[..] {
            if name.contains(part) {
                jobs.push([id, name, state, node].map(str::to_string));
            }
        }
    }
    jobs
}

/// An evaluation job of the nap run in `dir`, caught inside its program: its squeue line and
/// the guard that lets it go on. A job merely listed as running may already have replied (the
/// listing lags); this one cannot reply before the guard is dropped.
fn held_eval_job(dir: &Path) -> ([String; 4], Release) {
    running_eval_job();
    std::fs::write(dir.join("hold"), "").unwrap();
    let release = Release(dir.join("hold"));
    let t0 = Instant::now();
    loop {
        let held = std::fs::read_dir(dir).unwrap().flatten().find_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            name.strip_prefix("held-").map(str::to_string)
        });
        if let Some(id) = held {
            let job = squeue("-eval-").into_iter().find(|j| j[0] == id);
            return (job.expect("the held job is in the queue"), release);
        }
        assert!(
            t0.elapsed() < Duration::from_secs(180),
            "no evaluation job was held"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Removes the hold file when dropped: the nap's runs go on.
struct Release(PathBuf);

impl Drop for Release {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Waits (up to 3 minutes) for a running evaluation job of any run.
fn running_eval_job() -> [String; 4] {
    let t0 = Instant::now();
    loop {
        let running = squeue("-eval-").into_iter().find(|j| j[2] == "RUNNING");
        if let Some(j) = running {
            return j;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(180),
            "no evaluation job ran"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn statuses(csv: &Csv) -> Vec<String> {
    csv.column("status")
}

/// Every row's eval_id is its index, and no configuration was measured twice.
#[track_caller]
fn assert_log_exact(csv: &Csv) {
    let ids = csv.column("eval_id");
    let want: Vec<String> = (0..csv.rows.len()).map(|i| i.to_string()).collect();
    assert_eq!(ids, want);
    // A lost evaluation's configuration may be evaluated again; nothing else twice.
    let measured: Vec<&Vec<String>> = (csv.rows.iter())
        .filter(|r| csv.get(r, "status") != "lost")
        .collect();
    let mut hashes: Vec<&str> = measured.iter().map(|r| csv.get(r, "config_hash")).collect();
    hashes.sort();
    hashes.dedup();
    assert_eq!(
        hashes.len(),
        measured.len(),
        "a configuration was evaluated twice"
    );
}

/// A run that ended with `n` evaluations: the log exact, none lost, both nodes used.
#[track_caller]
fn assert_done_on_both_nodes(o: &std::process::Output, out: &Path, n: usize) {
    let csv = Csv::read(out);
    assert_eq!(csv.rows.len(), n, "{}", describe(o));
    assert_log_exact(&csv);
    let st = statuses(&csv);
    assert!(st.iter().all(|s| s != "lost"), "{st:?}");
    let nodes = nodes_of(out);
    assert!(nodes.iter().all(|n| n == "n1" || n == "n2"), "{nodes:?}");
    let both = nodes.contains(&"n1".into()) && nodes.contains(&"n2".into());
    assert!(both, "both nodes worked: {nodes:?}");
}

/// The nodes results.json records for the evaluations that ran (not reused, any status but
/// `lost`: a wrong output ran on its node too; counting only the `ok` ones, a run whose
/// successes alternated with failures in step with the two nodes read as one node's work).
fn nodes_of(out: &Path) -> Vec<String> {
    let v = read_json(&out.join("results.json"));
    (v["evaluations"].as_array().unwrap().iter())
        .filter(|e| e["status"] != "lost" && e["reused_from"].is_null())
        .map(|e| e["node"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn twelve_matmul_evaluations_over_two_workers() {
    let Some((_nodes, tmp, out)) = turn() else {
        return;
    };
    let o = spawn(tmp.path(), run_args(&matmul(), &out, 12))
        .wait_with_output()
        .unwrap();
    assert_code(&o, 0);
    assert_done_on_both_nodes(&o, &out, 12);
    let run = read_json(&out.join("run.json"));
    assert_eq!(run["slurm"]["workers"], 2);
    assert!(
        run["verification"]["candidates"].is_array(),
        "verified on a node: {run}"
    );
    assert_no_jobs_left(&out);
}

/// A run that ended leaves no job of its own behind.
#[track_caller]
fn assert_no_jobs_left(out: &Path) {
    assert_queue_drains(&tag_of(out));
}

/// No job whose name contains `tag` stays in the queue (the last one may take a moment to
/// leave it after its reply).
#[track_caller]
fn assert_queue_drains(tag: &str) {
    let t0 = Instant::now();
    while !squeue(tag).is_empty() {
        let left = squeue(tag);
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "jobs left behind: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The prefix of a run's job names (from one of its requests).
fn tag_of(out: &Path) -> String {
    let req = read_json(&out.join("jobs/reference/request.json"));
    let name = req["name"].as_str().unwrap().to_string();
    name.trim_end_matches("-reference").to_string()
}

#[test]
fn sigkill_mid_run_then_resume_loses_and_repeats_nothing() {
    let Some((_nodes, tmp, out)) = turn() else {
        return;
    };
    let mut child = spawn(tmp.path(), run_args(&matmul(), &out, 10));
    let t0 = Instant::now();
    while Csv::try_rows(&out) < 3 {
        assert!(
            t0.elapsed() < Duration::from_secs(240),
            "the run made no progress"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = Csv::read(&out);
    let o = resume(tmp.path(), &out);
    assert_code(&o, 0);
    let after = Csv::read(&out);
    assert_eq!(after.rows.len(), 10, "{}", describe(&o));
    assert_eq!(
        after.rows[..before.rows.len()],
        before.rows[..],
        "recorded rows changed"
    );
    assert_log_exact(&after);
    assert!(
        statuses(&after).iter().all(|s| s != "lost"),
        "{:?}",
        statuses(&after)
    );
    assert_no_jobs_left(&out);
}

#[test]
fn a_cancelled_job_is_recorded_as_lost_and_the_run_goes_on() {
    let Some((_nodes, tmp, out)) = turn() else {
        return;
    };
    let child = spawn(tmp.path(), run_args(&write_nap(tmp.path()), &out, 5));
    let (job, release) = held_eval_job(tmp.path());
    let cancelled = Command::new("scancel").arg(&job[0]).status().unwrap();
    assert!(cancelled.success());
    drop(release);
    let o = child.wait_with_output().unwrap();
    assert_code(&o, 0);
    let csv = Csv::read(&out);
    assert_log_exact(&csv);
    let lost: Vec<&Vec<String>> = csv
        .rows
        .iter()
        .filter(|r| csv.get(r, "status") == "lost")
        .collect();
    assert_eq!(lost.len(), 1, "{:?}", statuses(&csv));
    let eval: usize = job[1].rsplit("eval-").next().unwrap().parse().unwrap();
    assert_eq!(csv.get(&csv.rows[eval], "status"), "lost");
    let cause = cause_of(&out, eval);
    assert!(
        cause.contains("cancelled") && cause.contains(&job[0]),
        "{cause}"
    );
    // The lost evaluation spent no budget: five measured besides it.
    assert_eq!(csv.rows.len(), 6);
}

fn cause_of(out: &Path, eval: usize) -> String {
    let v = read_json(&out.join("results.json"));
    v["evaluations"][eval]["cause"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// Puts the node back to work whatever the test did.
struct Resume(String);

impl Drop for Resume {
    fn drop(&mut self) {
        let _ = Command::new("scontrol")
            .args(["update", &format!("nodename={}", self.0), "state=resume"])
            .status();
    }
}

#[test]
fn a_node_that_goes_down_loses_its_job_not_the_run() {
    let Some((_nodes, tmp, out)) = turn() else {
        return;
    };
    let child = spawn(tmp.path(), run_args(&write_nap(tmp.path()), &out, 5));
    let (job, release) = held_eval_job(tmp.path());
    let node = job[3].clone();
    let _resume = Resume(node.clone());
    let down = Command::new("scontrol")
        .args([
            "update",
            &format!("nodename={node}"),
            "state=down",
            "reason=moldtune-test",
        ])
        .status()
        .unwrap();
    assert!(down.success());
    drop(release);
    let o = child.wait_with_output().unwrap();
    assert_code(&o, 0);
    let csv = Csv::read(&out);
    assert_log_exact(&csv);
    let eval: usize = job[1].rsplit("eval-").next().unwrap().parse().unwrap();
    assert_eq!(
        csv.get(&csv.rows[eval], "status"),
        "lost",
        "{:?}",
        statuses(&csv)
    );
    let cause = cause_of(&out, eval);
    assert!(cause.contains(&job[0]), "{cause}");
    let measured = statuses(&csv).iter().filter(|s| *s != "lost").count();
    assert_eq!(
        measured,
        5,
        "the other node did the rest: {:?}",
        statuses(&csv)
    );
    let v = read_json(&out.join("results.json"));
    let later: Vec<&serde_json::Value> = (v["evaluations"].as_array().unwrap().iter())
        .filter(|e| e["eval_id"].as_u64().unwrap() as usize > eval)
        .map(|e| &e["node"])
        .collect();
    assert!(
        later.iter().all(|n| *n != node.as_str()),
        "{node} was down: {later:?}"
    );
}

#[test]
fn inside_an_allocation_evaluations_are_its_steps() {
    let Some((_nodes, tmp, out)) = turn() else {
        return;
    };
    // Evaluations of a second or more: two in flight need both nodes.
    let run = run_args(&write_nap(tmp.path()), &out, 6).command();
    let o = Command::new("salloc")
        .arg("--nodes=2")
        .arg(run.get_program())
        .args(run.get_args())
        .current_dir(tmp.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert_done_on_both_nodes(&o, &out, 6);
    let run = read_json(&out.join("run.json"));
    assert!(run["slurm"]["allocation"].is_string(), "{run}");
}

#[test]
fn a_cluster_that_loses_every_job_stops_the_run_and_resume_completes_it() {
    let Some((_nodes, tmp, out)) = turn() else {
        return;
    };
    let problem = write_nap(tmp.path());
    let child = spawn(tmp.path(), run_args(&problem, &out, 8));
    let t0 = Instant::now();
    while Csv::try_rows(&out) < 2 {
        assert!(
            t0.elapsed() < Duration::from_secs(180),
            "the run made no progress"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The nodes lose the problem file (a file system that is not shared after all).
    let away = tmp.path().join("nap.yaml.away");
    std::fs::rename(&problem, &away).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_code(&o, 5);
    assert!(
        crate::common::text(&o.stderr).contains("were all lost"),
        "{}",
        describe(&o)
    );
    let st = statuses(&Csv::read(&out));
    assert!(
        st.ends_with(&["lost", "lost", "lost", "lost"].map(String::from)),
        "{st:?}"
    );
    assert_no_jobs_left(&out);
    std::fs::rename(&away, &problem).unwrap();
    let o = resume(tmp.path(), &out);
    assert_code(&o, 0);
    let csv = Csv::read(&out);
    assert_log_exact(&csv);
    assert_eq!(statuses(&csv).iter().filter(|s| *s != "lost").count(), 8);
}

#[test]
fn ctrl_c_cancels_the_runs_jobs() {
    let Some((_nodes, tmp, out)) = turn() else {
        return;
    };
    let child = spawn(tmp.path(), run_args(&write_nap(tmp.path()), &out, 8));
    running_eval_job();
    // SAFETY: a signal to our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let o = child.wait_with_output().unwrap();
    assert_code(&o, 130);
    // Cancelled jobs may still be COMPLETING a moment; none may be pending or running.
    let left = squeue(&tag_of(&out));
    assert!(
        left.iter().all(|j| j[2] == "COMPLETING"),
        "jobs left behind: {left:?}"
    );
    assert_eq!(
        read_json(&out.join("run.json"))["termination"],
        "interrupted"
    );
}

#[test]
fn settings_slurm_refuses_are_refused_before_anything_runs() {
    let Some((_nodes, tmp, out)) = turn() else {
        return;
    };
    let run = run_args(&write_nap(tmp.path()), &out, 2).args(["--partition", "no-such-partition"]);
    let o = spawn(tmp.path(), run).wait_with_output().unwrap();
    assert_code(&o, 2);
    let err = crate::common::text(&o.stderr);
    assert!(
        err.contains("Slurm refuses the job settings") && err.contains("no-such-partition"),
        "{err}"
    );
    assert!(!out.join("run.json").exists());
}

/// `moldtune mctree --executor slurm`: the same loop, faults and resume as `run` — an mctree
/// search of 8 valid evaluations over two workers, killed mid-run and resumed, loses and
/// repeats nothing, and its verification runs on a node.
#[test]
fn mctree_over_two_workers_killed_and_resumed_loses_and_repeats_nothing() {
    let Some((_nodes, tmp, out)) = turn() else {
        return;
    };
    let gemm = Path::new(env!("CARGO_MANIFEST_DIR")).join("polybench/gemm/gemm.c");
    let mctree = moldtune("mctree")
        .arg(&gemm)
        .args(["--executor", "slurm", "--workers", "2"])
        .quiet()
        .max_evals(8)
        .args(["--repeats", "1", "--verify-rounds", "3"])
        .out(&out)
        .args(["--", "-DMINI_DATASET"]);
    let mut child = spawn(tmp.path(), mctree);
    let t0 = Instant::now();
    while Csv::try_rows(&out) < 3 {
        assert!(
            t0.elapsed() < Duration::from_secs(240),
            "the mctree run made no progress"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = Csv::read(&out);
    let again = moldtune("mctree").quiet().arg("--resume").arg(&out);
    let o = spawn(tmp.path(), again).wait_with_output().unwrap();
    assert_code(&o, 0);
    let after = Csv::read(&out);
    assert_eq!(
        after.rows[..before.rows.len()],
        before.rows[..],
        "recorded rows changed"
    );
    assert_log_exact(&after);
    let v = read_json(&out.join("results.json"));
    let valid = (v["evaluations"].as_array().unwrap().iter())
        .filter(|e| e["status"] == "ok" && e["reused_from"].is_null())
        .count();
    assert_eq!(valid, 8, "{}", describe(&o));
    assert!(statuses(&after).iter().all(|s| s != "lost"));
    let nodes = nodes_of(&out);
    assert!(
        nodes.contains(&"n1".into()) && nodes.contains(&"n2".into()),
        "{nodes:?}"
    );
    let run = read_json(&out.join("run.json"));
    assert_eq!(run["slurm"]["workers"], 2, "{run}");
    assert!(run["verification"]["candidates"].is_array(), "{run}");
    assert_no_jobs_left(&out);
}

/// `moldtune check --update --executor slurm`: each baseline recorded by a job on a node
/// (`--workers 2`: two at once, on both nodes) and written here; one whose job fails (its
/// compiler is missing on the node) is left as it was, the others are still written, and
/// the exit code says something was not recorded. Nothing is left in the queue or the
/// current directory.
#[test]
fn check_update_records_baselines_as_jobs_and_a_failed_one_is_left_as_it_was() {
    let Some((_nodes, tmp, _)) = turn() else {
        return;
    };
    let dir = tmp.path();
    let e2e = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/matmul");
    for f in ["matmul.yaml", "matmul.mold.c", "matmul.baseline.json"] {
        std::fs::copy(e2e.join(f), dir.join(f)).unwrap();
    }
    let text = std::fs::read_to_string(dir.join("matmul.baseline.json")).unwrap();
    std::fs::write(dir.join("again.json"), &text).unwrap();
    let yaml = std::fs::read_to_string(dir.join("matmul.yaml")).unwrap();
    std::fs::write(
        dir.join("bad.yaml"),
        yaml.replace("clang-22 ", "clang-nope "),
    )
    .unwrap();
    let bad = text.replace("\"matmul.yaml\"", "\"bad.yaml\"");
    std::fs::write(dir.join("bad.json"), &bad).unwrap();
    let check = moldtune("check")
        .args(["--update", "matmul.baseline.json", "again.json", "bad.json"])
        .rounds(5)
        .args(["--executor", "slurm", "--workers", "2"])
        .quiet();
    let o = spawn(dir, check).wait_with_output().unwrap();
    assert_code(&o, 5);
    let err = crate::common::text(&o.stderr);
    assert!(
        err.contains("bad.json") && err.contains("clang-nope"),
        "{}",
        describe(&o)
    );
    assert_eq!(std::fs::read_to_string(dir.join("bad.json")).unwrap(), bad);
    let mut nodes = Vec::new();
    for f in ["matmul.baseline.json", "again.json"] {
        let b = read_json(&dir.join(f));
        assert!(b["recorded"]["rounds"].as_u64().unwrap() >= 5, "{f}: {b}");
        assert_ne!(
            b["recorded"]["at"],
            read_json(&e2e.join("matmul.baseline.json"))["recorded"]["at"]
        );
        nodes.push(b["recorded"]["node"].as_str().unwrap().to_string());
    }
    nodes.sort();
    assert_eq!(nodes, ["n1", "n2"], "two at once, one on each node");
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        !left
            .iter()
            .any(|n| n.to_string_lossy().starts_with(".moldtune-check-")),
        "the jobs' folder is removed: {left:?}"
    );
    assert_queue_drains("-record-");
}
