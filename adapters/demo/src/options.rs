//! Command-line options shared by both binaries.

/// Which async runtime runs the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeChoice {
    /// smol (the default).
    Smol,
    /// tokio.
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

/// Parsed options: `--runtime smol|tokio`, flags, numbers, and anything after `--`.
#[derive(Debug)]
pub struct Options {
    /// The runtime.
    pub runtime: RuntimeChoice,
    /// Flags given (without their value), e.g. `--required-tool`.
    pub flags: Vec<String>,
    /// Numeric options given, e.g. (`--request-timeout-ms`, 500).
    pub numbers: Vec<(String, u64)>,
    /// Everything after `--`.
    pub rest: Vec<String>,
}

impl Options {
    /// Parses `args` (without the program name); `flags` lists the accepted flags.
    pub fn parse(args: impl IntoIterator<Item = String>, flags: &[&str]) -> Result<Self, String> {
        Self::parse_with(args, flags, &[])
    }

    /// [`Options::parse`], also accepting the options in `numbers`, each with a number.
    pub fn parse_with(
        args: impl IntoIterator<Item = String>,
        flags: &[&str],
        numbers: &[&str],
    ) -> Result<Self, String> {
        let mut args = args.into_iter();
        let mut options = Options {
            runtime: RuntimeChoice::Smol,
            flags: Vec::new(),
            numbers: Vec::new(),
            rest: Vec::new(),
        };
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--" => {
                    options.rest = args.collect();
                    break;
                }
                "--runtime" => {
                    options.runtime = match args.next().as_deref() {
                        Some("smol") => RuntimeChoice::Smol,
                        Some("tokio") => RuntimeChoice::Tokio,
                        other => {
                            return Err(format!("--runtime takes smol or tokio, not {other:?}"))
                        }
                    }
                }
                flag if flags.contains(&flag) => options.flags.push(arg),
                name if numbers.contains(&name) => {
                    let value = args.next().and_then(|v| v.parse().ok());
                    let value = value.ok_or_else(|| format!("{name} takes a number"))?;
                    options.numbers.push((arg, value));
                }
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        Ok(options)
    }

    /// Whether `flag` was given.
    pub fn has(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }

    /// The value of numeric option `name`, the last one if given more than once.
    pub fn number(&self, name: &str) -> Option<u64> {
        self.numbers
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }
}

/// Removes `--name VALUE` from `args` and returns the value.
pub fn take_value(args: &mut Vec<String>, name: &str) -> Result<Option<String>, String> {
    let Some(i) = args.iter().position(|a| a == name) else {
        return Ok(None);
    };
    let value = args
        .get(i + 1)
        .filter(|v| !v.starts_with("--"))
        .cloned()
        .ok_or(format!("{name} takes a value"))?;
    args.drain(i..i + 2);
    Ok(Some(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options, String> {
        Options::parse(args.iter().map(|s| s.to_string()), &["--required-tool"])
    }

    #[test]
    fn parses_runtime_flags_and_command() {
        let o = parse(&[
            "--runtime",
            "tokio",
            "--required-tool",
            "--",
            "python3",
            "s.py",
        ])
        .unwrap();
        assert_eq!(o.runtime, RuntimeChoice::Tokio);
        assert!(o.has("--required-tool"));
        assert_eq!(o.rest, ["python3", "s.py"]);
        assert_eq!(parse(&[]).unwrap().runtime, RuntimeChoice::Smol);
        assert!(parse(&["--runtime", "async-std"]).is_err());
        assert!(parse(&["--verbose"]).is_err());
    }

    #[test]
    fn parses_numbers_before_the_command_only() {
        let args = ["--timeout-ms", "500", "--", "server", "--timeout-ms", "7"];
        let o = Options::parse_with(args.map(String::from), &[], &["--timeout-ms"]).unwrap();
        assert_eq!(o.number("--timeout-ms"), Some(500));
        assert_eq!(o.rest, ["server", "--timeout-ms", "7"]);
        assert_eq!(o.number("--other"), None);
        let bad = Options::parse_with(
            ["--timeout-ms", "soon"].map(String::from),
            &[],
            &["--timeout-ms"],
        );
        assert_eq!(bad.unwrap_err(), "--timeout-ms takes a number");
        assert!(
            parse(&["--timeout-ms", "5"]).is_err(),
            "not accepted unless listed"
        );
    }
}
