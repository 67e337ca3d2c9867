//! What `/proc` says about a server process: resident memory, CPU time, context switches.

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

/// Resident memory (`VmRSS` of `/proc/PID/status`), in KiB.
pub fn rss_kib(pid: u32) -> Result<u64, String> {
    let status = read(&format!("/proc/{pid}/status"))?;
    field(&status, "VmRSS:").ok_or_else(|| format!("no VmRSS in /proc/{pid}/status"))
}

/// CPU time and context switches of a process, all its threads together.
#[derive(Clone, Copy, Debug)]
pub struct CpuUse {
    /// User plus system time (`utime + stime` of `/proc/PID/stat`).
    pub cpu: Duration,
    /// Voluntary plus involuntary context switches, summed over `/proc/PID/task/*/status`
    /// (threads that already exited are not counted).
    pub context_switches: u64,
}

impl CpuUse {
    /// What was used between `earlier` and `self`.
    pub fn since(self, earlier: CpuUse) -> CpuUse {
        CpuUse {
            cpu: self.cpu.saturating_sub(earlier.cpu),
            context_switches: self
                .context_switches
                .saturating_sub(earlier.context_switches),
        }
    }
}

/// The process's CPU use so far.
pub fn cpu_use(pid: u32) -> Result<CpuUse, String> {
    let stat = read(&format!("/proc/{pid}/stat"))?;
    // Field 2 (the command) is parenthesised and may hold spaces; fields 14 and 15 follow it.
    let after_command = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .ok_or_else(|| format!("unexpected /proc/{pid}/stat: {stat}"))?;
    let fields: Vec<&str> = after_command.split_whitespace().collect();
    let ticks = |index: usize| -> Result<u64, String> {
        fields
            .get(index)
            .and_then(|f| f.parse().ok())
            .ok_or_else(|| format!("unexpected /proc/{pid}/stat: {stat}"))
    };
    // After the command come fields 3, 4, …: utime (14) is at index 11, stime (15) at 12.
    let total_ticks = ticks(11)? + ticks(12)?;
    let per_second = clock_ticks_per_second()?;
    let cpu = Duration::from_nanos(total_ticks * 1_000_000_000 / per_second);

    let tasks = format!("/proc/{pid}/task");
    let entries = std::fs::read_dir(&tasks).map_err(|e| format!("cannot read {tasks}: {e}"))?;
    let mut context_switches = 0;
    for entry in entries.flatten() {
        // A thread may exit between the listing and the read; it is simply not counted.
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        context_switches += field(&status, "voluntary_ctxt_switches:").unwrap_or(0)
            + field(&status, "nonvoluntary_ctxt_switches:").unwrap_or(0);
    }
    Ok(CpuUse {
        cpu,
        context_switches,
    })
}

/// The kernel's clock tick (`getconf CLK_TCK`, 100 on Linux), the unit of `utime`/`stime`.
fn clock_ticks_per_second() -> Result<u64, String> {
    static TICKS: OnceLock<Result<u64, String>> = OnceLock::new();
    TICKS
        .get_or_init(|| {
            let out = std::process::Command::new("getconf")
                .arg("CLK_TCK")
                .output()
                .map_err(|e| format!("cannot run getconf CLK_TCK: {e}"))?;
            String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse()
                .ok()
                .filter(|&ticks| ticks > 0)
                .ok_or_else(|| "getconf CLK_TCK printed no clock tick".to_owned())
        })
        .clone()
}

/// The number after `name` on its line of a `/proc/.../status` file.
fn field(status: &str, name: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

fn read(path: &str) -> Result<String, String> {
    if !Path::new("/proc/self").exists() {
        return Err("the benchmark reads /proc, which this system does not have".to_owned());
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process() {
        let pid = std::process::id();
        assert!(rss_kib(pid).unwrap() > 0);
        let before = cpu_use(pid).unwrap();
        let spin = std::time::Instant::now();
        while spin.elapsed() < Duration::from_millis(50) {
            std::hint::black_box(spin.elapsed());
        }
        std::thread::sleep(Duration::from_millis(5));
        let used = cpu_use(pid).unwrap().since(before);
        assert!(used.cpu >= Duration::from_millis(10), "{used:?}");
        assert!(used.context_switches >= 1, "{used:?}");
    }
}
