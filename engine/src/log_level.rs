//! The severities of log messages (`notifications/message`), as MCP names the syslog levels.

use serde::{Deserialize, Serialize};

/// How severe a log message is, least severe first: a message is sent when its level is at
/// least the minimum the requestor asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// A warning condition.
    Warning,
    /// An error condition.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken at once.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// The level's name on the wire (`"debug"` … `"emergency"`).
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LogLevel;

    #[test]
    fn levels_order_by_severity_and_read_as_their_wire_names() {
        assert!(LogLevel::Debug < LogLevel::Info && LogLevel::Alert < LogLevel::Emergency);
        let read: LogLevel = serde_json::from_str("\"warning\"").unwrap();
        assert_eq!(read, LogLevel::Warning);
        assert_eq!(
            serde_json::to_string(&LogLevel::Notice).unwrap(),
            "\"notice\""
        );
        assert_eq!(LogLevel::Critical.as_str(), "critical");
        assert!(serde_json::from_str::<LogLevel>("\"loud\"").is_err());
    }
}
