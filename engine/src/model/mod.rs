//! The era-neutral vocabulary: what a tool, a task and a peer are, whichever protocol era
//! carries them. The eras read and write these in their own wire shapes.

mod notice;
mod peer;
mod request;
mod task;
mod tool;

pub use notice::Notice;
pub use peer::{Implementation, LogMessage, PlainReason, ProgressParams, Role};
pub use request::Request;
pub use task::{
    Era, InputKinds, Outcome, StoredInput, TaskBrief, TaskInfo, TaskPage, TaskProgress,
    TaskRequest, TaskSnapshot,
};
pub(crate) use tool::listed_support;
pub use tool::{TaskDecision, TaskSupport, Tool, ToolDef, ToolExecution, ToolPage};
