//! Slurm through its commands, each run as moldtune's other helpers are (its own process
//! group, under a timeout): `sbatch` submits, `squeue` lists the jobs still queued or
//! running, `scontrol show job` (else `sacct`) tells how one that left the queue ended,
//! `scancel` cancels. Inside an allocation (`salloc`, a batch script) evaluations are its
//! steps instead: each an `srun` of moldtune's, followed by its process ([`Step`]).

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use crate::error::Error;
use crate::process::{self, helper};
use crate::run::slurm::Settings;

/// How long one Slurm command may take (a busy controller answers slowly).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs a Slurm command; its stdout, or why it failed.
fn slurm(argv: &[String]) -> Result<String, String> {
    let out = helper::output(argv, COMMAND_TIMEOUT, 1 << 22);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.finished.success() {
        return Ok(stdout);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let what = match &out.finished.exit {
        process::Exit::SpawnError(e) => e.clone(),
        _ => stderr.trim().to_string(),
    };
    Err(format!("`{}` failed: {what}", argv.join(" ")))
}

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

/// Refuses to start when Slurm's commands are not here.
pub fn available() -> Result<(), Error> {
    slurm(&argv(&["sbatch", "--version"])).map(|_| ()).map_err(|why| {
        Error::usage(
            format!("`--executor slurm` needs Slurm's commands: {why}"),
            Some("run on a Slurm login node (sbatch, squeue, scancel on the PATH), or use `--executor local`"),
        )
    })
}

/// Refuses settings Slurm would refuse (a partition or account that does not exist, a time
/// limit it cannot read), before anything is written: `sbatch --test-only` with them.
pub fn check(s: &Settings) -> Result<(), Error> {
    if allocation().is_some() {
        return Ok(()); // steps run in the allocation as it is
    }
    let mut a = argv(&["sbatch", "--test-only", "--nodes=1", "--exclusive"]);
    a.extend(optional_flags(s));
    a.extend(argv(&["--wrap", "true"]));
    slurm(&a).map(|_| ()).map_err(|why| {
        Error::usage(
            format!("Slurm refuses the job settings: {why}"),
            Some("check `--partition`, `--account` and `--time` (or the problem's `slurm:` section) with `sinfo` and `sacctmgr show assoc`"),
        )
    })
}

/// `--partition=P`, `--time=T`, `--account=A` for the settings given.
fn optional_flags(s: &Settings) -> Vec<String> {
    let optional = [
        ("--partition", &s.partition),
        ("--time", &s.time),
        ("--account", &s.account),
    ];
    (optional.iter())
        .filter_map(|(flag, value)| value.as_ref().map(|v| format!("{flag}={v}")))
        .collect()
}

/// One job to submit.
pub struct Submission<'a> {
    pub name: &'a str,
    pub script: &'a Path,
    pub output: &'a Path,
    /// The working directory of the job: the driver's, so relative paths mean the same.
    pub chdir: &'a Path,
}

/// Submits a batch job: exclusive use of one node (timing needs the node to itself), never
/// requeued by Slurm (moldtune decides what a lost job means); its id.
pub fn submit(job: &Submission, s: &Settings) -> Result<String, Error> {
    let mut a = argv(&[
        "sbatch",
        "--parsable",
        "--exclusive",
        "--no-requeue",
        "--nodes=1",
        "--ntasks=1",
    ]);
    a.push(format!("--job-name={}", job.name));
    a.push(format!("--output={}", job.output.display()));
    a.push(format!("--chdir={}", job.chdir.display()));
    a.extend(optional_flags(s));
    a.push(job.script.display().to_string());
    let out = with_retries(&a, job.name)
        .map_err(|why| Error::Environment(format!("cannot submit: {why}")))?;
    // `--parsable` prints `id` or `id;cluster`.
    let id = out.trim().split(';').next().unwrap_or("").to_string();
    match id.is_empty() {
        true => Err(Error::Environment(format!(
            "sbatch printed no job id for `{}`",
            job.name
        ))),
        false => Ok(id),
    }
}

/// The allocation moldtune runs inside (`salloc`, a batch script): its job id.
pub fn allocation() -> Option<String> {
    std::env::var("SLURM_JOB_ID")
        .ok()
        .filter(|id| !id.is_empty())
}

/// A step of the allocation: the `srun` that runs it, a child of this moldtune or (after a
/// resume) one found again by its job name.
#[derive(Debug)]
pub struct Step {
    child: Option<std::process::Child>,
    pid: i32,
}

/// Starts `job` as a step of the allocation on a node of its own (`srun --exclusive
/// --nodes=1`, all the node's CPUs when Slurm says how many), in a process group of its own
/// so that a Ctrl-C meant for moldtune does not reach it before moldtune cancels it.
pub fn start_step(job: &Submission, s: &Settings) -> Result<Step, Error> {
    use std::os::unix::process::CommandExt;
    let mut c = std::process::Command::new("srun");
    c.args(["--nodes=1", "--ntasks=1", "--exclusive"]);
    if let Ok(cpus) = std::env::var("SLURM_CPUS_ON_NODE") {
        c.arg(format!("--cpus-per-task={cpus}"));
    }
    c.arg(format!("--job-name={}", job.name));
    c.arg(format!("--output={}", job.output.display()));
    c.arg(format!("--chdir={}", job.chdir.display()));
    if let Some(t) = &s.time {
        c.arg(format!("--time={t}"));
    }
    c.arg("sh").arg(job.script);
    c.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0);
    let child = c
        .spawn()
        .map_err(|e| Error::Environment(format!("cannot start `srun` for `{}`: {e}", job.name)))?;
    Ok(Step {
        pid: child.id() as i32,
        child: Some(child),
    })
}

impl Step {
    /// The `srun` of the step named `name` still running on this machine (a killed
    /// moldtune's), found by its command line.
    pub fn find(name: &str) -> Option<Step> {
        let needle = format!("--job-name={name}");
        let procs = std::fs::read_dir("/proc").ok()?;
        procs.flatten().find_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let words: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
            let srun = words.first()?.ends_with(b"srun");
            let named = words.contains(&needle.as_bytes());
            (srun && named).then_some(Step { child: None, pid })
        })
    }

    /// `None` while the srun runs; once it has ended, whether cleanly (exit 0) and how.
    pub fn ended(&mut self) -> Option<(bool, String)> {
        match &mut self.child {
            Some(c) => match c.try_wait() {
                Ok(None) => None,
                Ok(Some(status)) => Some((status.success(), format!("srun {status}"))),
                Err(e) => Some((false, format!("srun could not be waited for: {e}"))),
            },
            // Not ours (a killed moldtune's): gone, or a zombie nobody reaps.
            None => {
                let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid));
                let state = stat.ok().and_then(|s| {
                    let after = s.rsplit_once(')')?.1.trim_start().chars().next();
                    after
                });
                matches!(state, None | Some('Z')).then(|| (false, "srun ended".to_string()))
            }
        }
    }

    /// Cancels the step: srun passes SIGTERM on to it and ends.
    pub fn cancel(&mut self) {
        // SAFETY: plain syscall on the srun's pid (ESRCH when it is gone is fine).
        unsafe {
            libc::kill(self.pid, libc::SIGTERM);
        }
        if let Some(c) = &mut self.child {
            let _ = c.wait();
        }
    }
}

/// Submission attempts before sbatch's refusal stops the run (a busy controller times out).
const SUBMIT_ATTEMPTS: u32 = 3;

/// Runs sbatch's `argv` for the job `name` until it succeeds, at most [`SUBMIT_ATTEMPTS`]
/// times, waiting 2 s, then 4 s between attempts (not after an interrupt); before a retry,
/// a job of that name the controller may have taken before it timed out is cancelled.
fn with_retries(argv: &[String], name: &str) -> Result<String, String> {
    let mut attempt = 1;
    loop {
        match slurm(argv) {
            Err(_) if attempt < SUBMIT_ATTEMPTS && !process::interrupted() => {
                cancel_named(name);
                std::thread::sleep(Duration::from_secs(1 << attempt));
                attempt += 1;
            }
            done => return done,
        }
    }
}

/// The ids of the jobs named `names` that squeue still lists, by name; `None` when squeue
/// did not answer (a busy controller: ask again later).
pub fn queued(names: &[String]) -> Option<HashMap<String, String>> {
    if names.is_empty() {
        return Some(HashMap::new());
    }
    let a = vec![
        "squeue".to_string(),
        "--noheader".into(),
        "--format=%i|%j".into(),
        format!("--name={}", names.join(",")),
    ];
    let out = slurm(&a).ok()?;
    Some(parse_squeue(&out))
}

fn parse_squeue(out: &str) -> HashMap<String, String> {
    (out.lines())
        .filter_map(|line| line.trim().split_once('|'))
        .map(|(id, name)| (name.to_string(), id.to_string()))
        .collect()
}

/// How a job that left the queue ended: its state and Slurm's reason, from `scontrol`
/// while the controller remembers it, else from `sacct` (when accounting is on).
pub fn ended(id: &str) -> Option<(String, String)> {
    let shown = slurm(&argv(&["scontrol", "--oneliner", "show", "job", id]));
    if let Some(found) = shown.ok().and_then(|s| parse_scontrol(&s)) {
        return Some(found);
    }
    let acct = slurm(&argv(&[
        "sacct",
        "--noheader",
        "--parsable2",
        "--allocations",
        "--format=State",
        "--jobs",
        id,
    ]))
    .ok()?;
    let state = acct.lines().next()?.split_whitespace().next()?.to_string();
    Some((state, String::new()))
}

fn parse_scontrol(out: &str) -> Option<(String, String)> {
    let field = |key: &str| {
        out.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .map(str::to_string)
    };
    Some((field("JobState=")?, field("Reason=").unwrap_or_default()))
}

/// Cancels the jobs `ids` (those already gone are no error). Run directly, not as a
/// tracked child: it is what an interrupted moldtune does last, when children are refused.
pub fn cancel(ids: &[String]) {
    if !ids.is_empty() {
        scancel(ids);
    }
}

/// Cancels the job named `name` (a submission cut short by Ctrl-C may have reached the
/// controller before sbatch printed its id).
pub fn cancel_named(name: &str) {
    scancel(&[format!("--name={name}")]);
}

fn scancel(args: &[String]) {
    let _ = std::process::Command::new("scancel")
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squeue_lines_are_read_by_name() {
        let jobs = parse_squeue("12|mt-ab-eval-3\n13|mt-ab-eval-4\n");
        assert_eq!(jobs["mt-ab-eval-3"], "12");
        assert_eq!(jobs["mt-ab-eval-4"], "13");
        assert_eq!(jobs.len(), 2);
    }

    #[test]
    fn scontrol_gives_state_and_reason() {
        let line = "JobId=7 JobName=mt-x-eval-0 UserId=root(0) JobState=CANCELLED Reason=None Dependency=(null) NodeList=n2";
        assert_eq!(
            parse_scontrol(line),
            Some(("CANCELLED".to_string(), "None".to_string()))
        );
        assert_eq!(
            parse_scontrol("slurm_load_jobs error: Invalid job id specified"),
            None
        );
    }
}
