//! The problem file's vocabulary: the kinds of metric, the goal, how repeats reduce, what
//! the output check compares — the same words as written in the file and as validated.

use serde::Deserialize;

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricKind {
    KernelTime,
    WallTime,
    CpuTime,
    Regex,
    /// Instructions executed, counted by cachegrind ([`crate::evaluate::cachegrind`]).
    Instructions,
    /// Cycles estimated from cachegrind's instruction and cache-miss counts.
    Cycles,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, serde::Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Goal {
    #[default]
    Minimize,
    Maximize,
}

impl MetricKind {
    /// Whether the program runs under cachegrind, which counts rather than times it.
    pub fn is_simulated(self) -> bool {
        matches!(self, MetricKind::Instructions | MetricKind::Cycles)
    }
}

impl Goal {
    /// Whether objective `a` is strictly better than `b` for this goal.
    pub fn better(self, a: f64, b: f64) -> bool {
        match self {
            Goal::Minimize => a < b,
            Goal::Maximize => a > b,
        }
    }

    /// Best first: the order that sorts objectives from best to worst (total, NaN last
    /// when minimising).
    pub fn order(self, a: f64, b: f64) -> std::cmp::Ordering {
        match self {
            Goal::Minimize => a.total_cmp(&b),
            Goal::Maximize => b.total_cmp(&a),
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, serde::Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Reduce {
    Min,
    #[default]
    Median,
}

#[derive(Debug, Clone, Copy, Deserialize, serde::Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum CheckMode {
    #[default]
    Output,
    None,
}

#[derive(Debug, Clone, Copy, Deserialize, serde::Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    Stdout,
    #[default]
    Stderr,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goals_order_best_first() {
        assert!(Goal::Minimize.better(1.0, 2.0) && !Goal::Minimize.better(2.0, 2.0));
        assert!(Goal::Maximize.better(3.0, 2.0) && !Goal::Maximize.better(1.0, 2.0));
        let mut v = vec![2.0, 1.0, 3.0];
        v.sort_by(|a, b| Goal::Maximize.order(*a, *b));
        assert_eq!(v, [3.0, 2.0, 1.0]);
        v.sort_by(|a, b| Goal::Minimize.order(*a, *b));
        assert_eq!(v, [1.0, 2.0, 3.0]);
    }
}
