//! A deterministic stand-in for compile + run, selected by the hidden `--mock` flag, so the
//! search, statistics, resume and CLI can be tested fast.

use std::path::Path;
use std::time::Duration;

use crate::error::Error;
use crate::evaluate::evaluator::Evaluator;
use crate::evaluate::interleave::{Remeasured, Rounds};
use crate::evaluate::outcome::Evaluated;
use crate::evaluate::outcome::{Measurement, Status, Stop};
use crate::problem::space::Config;
use crate::problem::Problem;
use crate::process;

/// A deterministic stand-in for compile + run: a smooth function of the encoded configuration
/// with a few build failures, optionally slowed by `MOLDTUNE_MOCK_DELAY_MS` per evaluation;
/// re-measurements carry a deterministic uniform noise of relative width
/// `MOLDTUNE_MOCK_NOISE` (default 0.04: ±2%), a noisy machine for tests. Every value is
/// lowered by `MOLDTUNE_MOCK_SHIFT` (default 0), so objectives of any sign can be tested.
pub struct MockEvaluator {
    delay: Duration,
    noise: f64,
    shift: f64,
}

impl MockEvaluator {
    pub fn new() -> MockEvaluator {
        let ms = std::env::var("MOLDTUNE_MOCK_DELAY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let noise = std::env::var("MOLDTUNE_MOCK_NOISE")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|&x: &f64| (0.0..2.0).contains(&x))
            .unwrap_or(0.04);
        let shift = std::env::var("MOLDTUNE_MOCK_SHIFT")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|x: &f64| x.is_finite())
            .unwrap_or(0.0);
        MockEvaluator {
            delay: Duration::from_millis(ms),
            noise,
            shift,
        }
    }

    /// The mock's objective: 0.1 + Σ (x_i − c_i)² over encoded features with per-name
    /// centres (an evaluation's value is this less the shift).
    pub fn objective(problem: &Problem, config: &Config) -> f64 {
        let x = problem.space.encode(config);
        let mut f = 0.1;
        for (p, xi) in problem.space.params.iter().zip(x) {
            let c = (crate::rng::fnv1a(p.name.as_bytes()) % 1000) as f64 / 1000.0;
            f += (xi - c).powi(2);
        }
        f
    }
}

impl Default for MockEvaluator {
    fn default() -> Self {
        Self::new()
    }
}

impl Evaluator for MockEvaluator {
    fn prepare(&mut self, _problem: &Problem, _run_dir: &Path) -> Result<(), Error> {
        Ok(())
    }

    /// The mock objective with a deterministic "noise" per configuration and round.
    fn remeasure(
        &mut self,
        problem: &Problem,
        configs: &[Config],
        rounds: &mut dyn Rounds,
    ) -> Result<Vec<Remeasured>, Stop> {
        let noisy = |c: &Config, round: usize| {
            let h = crate::rng::fnv1a(problem.space.hash(c).as_bytes());
            let u = crate::rng::Rng::for_step(h, 11, round as u64).f64();
            (Self::objective(problem, c) - self.shift) * (1.0 + self.noise * (u - 0.5))
        };
        let mut out: Vec<Remeasured> = configs.iter().map(|_| Ok(Vec::new())).collect();
        let mut round = 0;
        while !rounds.enough(round, &out) {
            for (c, samples) in configs.iter().zip(out.iter_mut().flatten()) {
                if !rounds.settled(samples) {
                    samples.push(noisy(c, round));
                }
            }
            round += 1;
        }
        Ok(out)
    }

    fn evaluate(
        &mut self,
        problem: &Problem,
        config: &Config,
        _eval_id: usize,
        _ahead: crate::evaluate::ahead::Ahead,
    ) -> Evaluated {
        let until = std::time::Instant::now() + self.delay;
        while std::time::Instant::now() < until {
            if process::interrupted() {
                return Evaluated::Stopped(Stop::Interrupted);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let h = crate::rng::fnv1a(problem.space.hash(config).as_bytes());
        if h % 13 == 0 && *config != problem.default_config() {
            return Evaluated::Done(Measurement::failed(
                Status::BuildError,
                0.01,
                0.0,
                "mock: this configuration does not compile".into(),
            ));
        }
        let y = Self::objective(problem, config) - self.shift;
        Evaluated::Done(Measurement {
            spread: Some(0.0),
            ..Measurement::ok(y, 0.01, problem.repeats)
        })
    }
}
