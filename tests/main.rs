//! moldtune's integration tests, one binary (each test binary links the whole crate: one
//! link instead of nineteen). One module per area; `common` holds what they share (the
//! command builders, the fake compiler, the clang guard).
//!
//! They run as threads of one process: a test must not change the process's state
//! (environment, working directory, signal handlers). In particular none calls
//! `moldtune::evaluate::make_evaluator` or `moldtune::process::take_charge` in-process: that
//! makes the process a subreaper whose orphan sweep would kill the other tests' children.
//! Commands run the `moldtune` binary instead.

#[macro_use]
mod common;

mod application;
mod check;
mod check_e2e;
mod cli;
mod decision_rule;
mod e2e;
mod faults;
mod fuzz;
mod importance;
mod learners;
mod mctree;
mod mctree_check;
mod mctree_oracle;
mod polybench;
mod report;
mod roofline;
mod sampling;
mod show;
mod slurm;
mod study;
mod verify;
