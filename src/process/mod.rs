//! The process layer, below the stages: every child moldtune starts — a variant's compile,
//! check and timed runs, its own helper commands — runs through [`execute`] (a process group
//! of its own, a timeout, killed with its grandchildren), is reached by the interrupt protocol
//! and the stale-group note ([`groups`]), and, when it is a build running ahead, held stopped
//! while a variant is timed ([`pause`]). [`helper`] runs moldtune's own commands and reads
//! what they print.

mod child;
mod groups;
pub mod helper;
mod pause;

pub use child::{
    cancellable, execute, execute_watched, signal_name, Cancellable, Command, Exit, Finished,
};
pub use groups::{interrupted, reap_stale_group, take_charge, track_children_in};
pub use pause::{pause, Paused};
