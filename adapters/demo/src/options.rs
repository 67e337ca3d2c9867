//! Command-line options shared by the demo binaries (parsed with clap).

/// Which async runtime runs the driver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RuntimeChoice {
    /// smol.
    #[default]
    Smol,
    /// tokio (one thread, as on smol).
    Tokio,
}

impl RuntimeChoice {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            RuntimeChoice::Smol => "smol",
            RuntimeChoice::Tokio => "tokio",
        }
    }
}

/// What a demo server does among servers sharing its store, as `--role` names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RoleChoice {
    /// Takes requests and runs work.
    #[default]
    Both,
    /// Takes requests, queues each task's work for a worker.
    Front,
    /// Runs queued work, takes no requests.
    Worker,
}

impl RoleChoice {
    /// The driver's setting for it.
    pub fn role(self) -> taskwire_driver::ServerRole {
        use taskwire_driver::ServerRole;
        match self {
            RoleChoice::Both => ServerRole::Both,
            RoleChoice::Front => ServerRole::Front,
            RoleChoice::Worker => ServerRole::Worker,
        }
    }

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            RoleChoice::Both => "both",
            RoleChoice::Front => "front",
            RoleChoice::Worker => "worker",
        }
    }
}

/// Where a demo server serves (`task-server`, `conformance-server`; the WASI build always
/// serves stdio on taskwire-wasi).
#[derive(Clone, Debug, clap::Args)]
pub struct Serving {
    /// The async runtime serving stdio.
    #[arg(long, value_enum, default_value_t)]
    pub runtime: RuntimeChoice,
    /// Serves Streamable HTTP at http://ADDR/mcp instead of stdio (both eras; tokio, many
    /// threads).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
}

/// The protocol era a client opens, as `--era` names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum EraChoice {
    /// The server's best: `server/discover`, falling back to `initialize`.
    #[default]
    Auto,
    /// 2026-07-28 only.
    #[value(name = "2026-07-28")]
    V2026_07_28,
    /// 2025-11-25 only.
    #[value(name = "2025-11-25")]
    V2025_11_25,
}

impl EraChoice {
    /// The engine's setting for it.
    pub fn client_era(self) -> taskwire_driver::engine::ClientEra {
        use taskwire_driver::engine::{ClientEra, Era};
        match self {
            EraChoice::Auto => ClientEra::Auto,
            EraChoice::V2026_07_28 => ClientEra::Only(Era::V2026_07_28),
            EraChoice::V2025_11_25 => ClientEra::Only(Era::V2025_11_25),
        }
    }
}
