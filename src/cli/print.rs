//! What the subcommands print for scripts (`--json`).

pub(super) fn print_json(v: &impl serde::Serialize) {
    println!("{}", serde_json::to_string_pretty(v).expect("serializable"));
}
