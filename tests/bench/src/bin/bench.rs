//! `bench [--quick | --smoke] [--rounds N] [--servers LIST] [--workloads LIST]`: the end-to-end
//! stdio benchmark of taskwire beside the official SDKs and the do-nothing limit, in
//! alternating rounds, every reply checked. `bench --help` lists the options; the machinery is
//! in [`taskwire_bench`].
//!
//! `smol-postgres` (in the default `--servers all`) needs a PostgreSQL server in
//! `TASKWIRE_POSTGRES_URL`; without one the run fails before starting, saying what to do.
//!
//! ```sh
//! bash tests/peers/setup.sh
//! export TASKWIRE_POSTGRES_URL=$(bash tests/postgres.sh start | tail -n 1)
//! cargo build --release -p taskwire-bench --bin bench && target/release/bench --quick
//! ```

use std::process::ExitCode;

use taskwire_bench::cli;
use taskwire_bench::servers::Programs;
use taskwire_bench::{report, rounds};

fn main() -> ExitCode {
    let options = cli::parse(std::env::args().skip(1)).unwrap_or_else(|e| e.exit());
    let programs = match Programs::locate(&options.servers, options.prebuilt.clone()) {
        Ok(programs) => programs,
        Err(e) => {
            eprintln!("bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rounds::run(&options, &programs) {
        Ok(results) => {
            print!("{}", report::render(&options, &results));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench: stopped: {e}");
            ExitCode::FAILURE
        }
    }
}
