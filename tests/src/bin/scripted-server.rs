//! `scripted-server SCENARIO [--log FILE]`: a stdio MCP server without the taskwire engine
//! that plays one scripted scenario against a client; see `taskwire_tests::scripted`.

fn main() -> std::process::ExitCode {
    taskwire_tests::scripted::main(std::env::args_os())
}
