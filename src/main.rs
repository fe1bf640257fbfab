use std::process::ExitCode;

fn main() -> ExitCode {
    // A closed pipe (`moldtune best DIR | head -1`) ends moldtune quietly, as it ends any
    // other command-line tool, instead of a panic in println!.
    // SAFETY: restoring the default disposition of one signal before anything runs.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    ExitCode::from(moldtune::run(std::env::args().collect()))
}
