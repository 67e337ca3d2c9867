//! Task status and the one transition table that decides every status change.

use serde::{Deserialize, Serialize};

/// The status of a task (both protocol eras use these five values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The request is being processed.
    Working,
    /// The receiver needs input from the requestor.
    InputRequired,
    /// Finished successfully (terminal).
    Completed,
    /// Finished unsuccessfully (terminal).
    Failed,
    /// Cancelled before completion (terminal).
    Cancelled,
}

impl TaskStatus {
    /// `completed`, `failed` and `cancelled` never change again.
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// The transition table: working ⇄ input_required, either → a terminal status.
    pub const fn can_become(self, next: TaskStatus) -> bool {
        use TaskStatus::*;
        matches!(
            (self, next),
            (Working, InputRequired | Completed | Failed | Cancelled)
                | (InputRequired, Working | Completed | Failed | Cancelled)
        )
    }

    /// The wire name, e.g. `input_required`.
    pub const fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

impl std::fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::TaskStatus::{self, *};

    const ALL: [TaskStatus; 5] = [Working, InputRequired, Completed, Failed, Cancelled];

    #[test]
    fn table_matches_the_spec() {
        let allowed: Vec<_> = ALL
            .iter()
            .flat_map(|&a| ALL.iter().map(move |&b| (a, b)))
            .filter(|&(a, b)| a.can_become(b))
            .collect();
        assert_eq!(
            allowed,
            [
                (Working, InputRequired),
                (Working, Completed),
                (Working, Failed),
                (Working, Cancelled),
                (InputRequired, Working),
                (InputRequired, Completed),
                (InputRequired, Failed),
                (InputRequired, Cancelled),
            ]
        );
    }

    #[test]
    fn terminal_states_absorb_everything() {
        for s in ALL.into_iter().filter(|s| s.is_terminal()) {
            assert!(ALL.iter().all(|&n| !s.can_become(n)), "{s}");
        }
    }

    #[test]
    fn wire_names() {
        for s in ALL {
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.as_str())
            );
        }
    }
}
