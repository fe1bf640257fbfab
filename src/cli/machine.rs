//! `moldtune machine`: the machine's limits the roofline figures are measured against
//! ([`crate::evaluate::roofline`]), from the cache or measured.

use crate::error::{exit, Error};
use crate::evaluate::roofline;
use crate::host::{self, Host};
use crate::run::machine::{cpu_model, version_of};

use super::print::print_json;

/// `moldtune machine`'s arguments.
#[derive(Debug, clap::Args)]
pub struct MachineArgs {
    /// The compiler that builds the probe (a problem's runs use their own compile command's).
    #[arg(long, default_value = "clang-22")]
    cc: String,
    /// Thread counts, separated by commas [default: 1 and every CPU].
    #[arg(long, value_delimiter = ',')]
    threads: Vec<usize>,
    /// Measure again, even where the cache has the figures.
    #[arg(long)]
    remeasure: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub(super) fn machine_command(a: MachineArgs) -> Result<u8, Error> {
    let compiler = version_of(&a.cc).ok_or_else(|| {
        Error::usage(
            format!("`{} --version` printed nothing: is the compiler installed?", a.cc),
            Some("give the compiler with `--cc`, e.g. `--cc clang-22` (scripts/setup.sh installs it)"),
        )
    })?;
    if a.threads.contains(&0) {
        return Err(Error::usage(
            "`--threads` 0: a thread count is at least 1",
            None,
        ));
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut threads = a.threads.clone();
    if threads.is_empty() {
        threads = if cpus > 1 { vec![1, cpus] } else { vec![1] };
    }
    let cpu = cpu_model().unwrap_or_default();
    let measured = (threads.iter())
        .map(|&t| roofline::limits(&a.cc, (&cpu, &compiler), t, a.remeasure))
        .collect::<Result<Vec<_>, _>>()?;
    let (limits, kept): (Vec<_>, Vec<_>) = measured.into_iter().unzip();
    let host = Host::read();
    let facts: Vec<(&str, Option<u64>)> = (host::FACTS.iter())
        .map(|(name, _)| (*name, host.fact(name).ok()))
        .collect();
    if a.json {
        let facts: serde_json::Map<String, serde_json::Value> = (facts.iter())
            .map(|(n, v)| (n.to_string(), (*v).into()))
            .collect();
        let json = serde_json::json!({ "cpu": cpu, "compiler": compiler, "limits": limits, "machine": facts });
        print_json(&json);
        return Ok(exit::OK);
    }
    println!("{cpu}, {compiler}");
    for l in &limits {
        println!(
            "{} thread{}: peak {:.1} GFLOP/s ({}-double FMA vectors), triad bandwidth {:.1} GB/s",
            l.threads,
            if l.threads == 1 { "" } else { "s" },
            l.peak_gflops,
            l.vector_doubles,
            l.bandwidth_gbs
        );
    }
    println!("{}", facts_line(&facts));
    match kept.into_iter().find_map(Result::err) {
        None => match roofline::cache_file() {
            Some(f) => println!("kept in {} (`--remeasure` to measure again)", f.display()),
            None => println!("not kept"),
        },
        Some(why) => println!("not kept ({why}): the next run measures again"),
    }
    Ok(exit::OK)
}

/// The facts a problem file's expressions name as `machine.<fact>`, on one line.
fn facts_line(facts: &[(&str, Option<u64>)]) -> String {
    let shown: Vec<String> = (facts.iter())
        .map(|(name, v)| match v {
            Some(v) => format!("{name} {v}"),
            None => format!("{name} unknown"),
        })
        .collect();
    format!("machine.*: {}", shown.join(", "))
}
