//! A plain front call whose work runs as a task behind has no task of its own to show the
//! task's status on: the task's status messages and progress reach it as progress reports
//! instead (`notifications/progress`, which the front's engine sends only when the call
//! gave a `progressToken`).
//!
//! Progress must grow with each report, and a status message carries no number: each new
//! status message counts as one more step, both done and in the total (a task that reports
//! no progress shows 1, 2, 3… with its messages; one that reports 2 of 4, then a new message,
//! shows 3 of 5). A status message already sent (as the last report's message) is not sent
//! again, nor a progress report behind that would not make the front's grow.

use taskwire_driver::Progress;

/// What a plain front call was told of the task behind.
#[derive(Debug, Default)]
pub(crate) struct AsProgress {
    /// Status messages reported, each one step.
    steps: f64,
    /// The task's own progress behind, and its total, as last reported there.
    behind: f64,
    total: Option<f64>,
    /// The progress last reported in front.
    sent: Option<f64>,
    /// The message last reported in front.
    message: Option<String>,
}

impl AsProgress {
    /// The report for the task's status message `message` behind, if it is a new one.
    pub fn status(&mut self, message: Option<&str>) -> Option<Progress> {
        let message = message.filter(|m| self.message.as_deref() != Some(*m))?;
        self.steps += 1.0;
        self.report(Some(message.to_owned()))
    }

    /// The report for progress the task reported behind, if it grew there.
    pub fn progress(&mut self, behind: Progress) -> Option<Progress> {
        let progress = behind.progress + self.steps;
        if self.sent.is_some_and(|sent| progress <= sent) {
            return None;
        }
        self.behind = behind.progress;
        self.total = behind.total;
        self.report(behind.message)
    }

    fn report(&mut self, message: Option<String>) -> Option<Progress> {
        let progress = self.behind + self.steps;
        if self.sent.is_some_and(|sent| progress <= sent) {
            return None;
        }
        self.sent = Some(progress);
        if message.is_some() {
            self.message.clone_from(&message);
        }
        Some(Progress {
            progress,
            total: self.total.map(|total| total + self.steps),
            message,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(progress: f64, total: Option<f64>, message: Option<&str>) -> Progress {
        Progress {
            progress,
            total,
            message: message.map(str::to_owned),
        }
    }

    #[test]
    fn status_messages_alone_count_up_without_a_total_each_new_one_once() {
        let mut front = AsProgress::default();
        assert_eq!(front.status(None), None, "no message");
        let first = front.status(Some("step 1"));
        assert_eq!(first, Some(progress(1.0, None, Some("step 1"))));
        assert_eq!(front.status(Some("step 1")), None, "not new");
        let second = front.status(Some("step 2"));
        assert_eq!(second, Some(progress(2.0, None, Some("step 2"))));
    }

    #[test]
    fn progress_behind_keeps_its_numbers_and_a_message_between_counts_one_step_more() {
        let mut front = AsProgress::default();
        let start = front.progress(progress(0.0, Some(4.0), None));
        assert_eq!(start, Some(progress(0.0, Some(4.0), None)), "0 is a report");
        let two = front.progress(progress(2.0, Some(4.0), Some("two")));
        assert_eq!(two, Some(progress(2.0, Some(4.0), Some("two"))));
        assert_eq!(front.status(Some("two")), None, "the same message");
        let between = front.status(Some("checking"));
        assert_eq!(between, Some(progress(3.0, Some(5.0), Some("checking"))));
        assert_eq!(
            front.progress(progress(2.0, Some(4.0), None)),
            None,
            "not grown behind"
        );
        let done = front.progress(progress(4.0, Some(4.0), None));
        assert_eq!(done, Some(progress(5.0, Some(5.0), None)));
    }

    #[test]
    fn messages_before_the_first_progress_shift_it_and_its_total() {
        let mut front = AsProgress::default();
        front.status(Some("starting"));
        front.status(Some("loading"));
        let first = front.progress(progress(1.0, Some(10.0), None));
        assert_eq!(first, Some(progress(3.0, Some(12.0), None)));
    }
}
