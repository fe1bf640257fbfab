use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(moldtune::run(std::env::args().collect()))
}
