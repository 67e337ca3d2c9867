//! `tasks/get`, `tasks/cancel` and `tasks/update` in this era.

use serde::Deserialize;
use serde_json::json;
use serde_json::value::RawValue;

use super::encode;
use super::meta::{tasks_required, RequestMeta};
use crate::era::v2025_11_25::TaskIdRef;
use crate::event::StopReason;
use crate::host::commands::error_outcome;
use crate::host::tasks::Record;
use crate::host::Host;
use crate::ids::SessionId;
use crate::jsonrpc::{self, Reject, RequestId, RpcError};
use crate::status::TaskStatus;
use crate::task::Era;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdateParams {
    task_id: String,
    input_responses: serde_json::Map<String, serde_json::Value>,
}

impl Host {
    /// `tasks/get`: the whole `DetailedTask`, outcome inline. A poll that comes too soon
    /// raises the task's `pollIntervalMs` ([`TaskTable::pace_poll`]) and is answered.
    ///
    /// [`TaskTable::pace_poll`]: crate::host::tasks::TaskTable::pace_poll
    pub(super) fn modern_tasks_get(
        &mut self,
        session: SessionId,
        id: &RequestId,
        params: Option<&RawValue>,
        meta: &RequestMeta,
    ) -> Result<(), Reject> {
        let task = self
            .modern_task(session, params, meta, "retrieve")?
            .id
            .clone();
        self.tasks.pace_poll(&task, self.now);
        let record = self.tasks.get(&task).expect("just found");
        let asks = self.asks_of(&task);
        let line = encode::get_task_result(id, record, asks, &self.info_json);
        self.reply(session, id, Some(&task), line);
        Ok(())
    }

    /// `tasks/cancel`: an ack, the same for a task already finished.
    pub(super) fn modern_tasks_cancel(
        &mut self,
        session: SessionId,
        id: &RequestId,
        params: Option<&RawValue>,
        meta: &RequestMeta,
    ) -> Result<(), Reject> {
        let record = self.modern_task(session, params, meta, "cancel")?;
        let task = record.id.clone();
        let running = !record.status.is_terminal();
        if running {
            let error =
                RpcError::invalid_params("Task was cancelled").with_data(json!({ "taskId": task }));
            self.settle_task(
                &task,
                TaskStatus::Cancelled,
                Some("Cancelled at the client's request".into()),
                error_outcome(&error),
            );
        }
        let line = encode::ack(id, &self.info_json);
        self.reply(session, id, Some(&task), line);
        if running {
            self.after_settle(&task, Some(StopReason::Cancelled));
        }
        Ok(())
    }

    /// `tasks/update`: answers the task's outstanding input requests, then acks (keys not
    /// outstanding are ignored; a working or finished task just gets the ack).
    pub(super) fn modern_tasks_update(
        &mut self,
        session: SessionId,
        id: &RequestId,
        params: Option<&RawValue>,
        meta: &RequestMeta,
    ) -> Result<(), Reject> {
        if !meta.declares_tasks() {
            return Err(tasks_required());
        }
        let p: UpdateParams = jsonrpc::params(params)?;
        let owner = self.session(session).map_or(u32::MAX, |s| s.owner);
        let task = self
            .tasks
            .get_owned(&p.task_id, owner)
            .map(|r| r.id.clone())
            .ok_or_else(|| self.tasks.missing(&p.task_id, owner, "update"))?;
        // Applied before the ack, so the next tasks/get already shows it.
        self.answer_asks(&task, p.input_responses)?;
        let line = encode::ack(id, &self.info_json);
        self.reply(session, id, Some(&task), line);
        Ok(())
    }

    /// The task a request names, if its owner may see it. Without the extension declared
    /// only a task created in the 2025-11-25 era is served (-32021 for anything else,
    /// unknown ids included, so the gate leaks nothing).
    fn modern_task(
        &self,
        session: SessionId,
        params: Option<&RawValue>,
        meta: &RequestMeta,
        action: &str,
    ) -> Result<&Record, Reject> {
        let p = TaskIdRef::read(params);
        let owner = self.session(session).map_or(u32::MAX, |s| s.owner);
        if !meta.declares_tasks() {
            let record = p.ok().and_then(|p| self.tasks.get_owned(&p.task_id, owner));
            return match record {
                Some(record) if record.era == Era::V2025_11_25 => Ok(record),
                _ => Err(tasks_required()),
            };
        }
        let p = p?;
        self.tasks
            .get_owned(&p.task_id, owner)
            .ok_or_else(|| self.tasks.missing(&p.task_id, owner, action).into())
    }
}
