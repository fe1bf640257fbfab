//! The random streams of a search, one per purpose, each seeded by (run seed, stream, step):
//! drawing more in one (a classifier that vetoes, a larger pool) moves no other.

pub(super) const STREAM_INITIAL: u64 = 1;
pub(super) const STREAM_POOL: u64 = 2;
pub(super) const STREAM_FIT: u64 = 3;
pub(super) const STREAM_LHS: u64 = 4;
pub(super) const STREAM_PRIOR: u64 = 5;
pub(super) const STREAM_FEASIBLE: u64 = 6;
pub(super) const STREAM_EXPLORE: u64 = 7;
