//! Where the questions of the server behind go (`elicitation/create`,
//! `sampling/createMessage`): to the front call whose task behind they name (the
//! related-task `_meta`, which the driver gives in both eras), or, naming none, to the latest
//! front call whose call behind runs without a task.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_channel::Sender;
use futures::channel::oneshot;
use serde_json::Value;
use taskwire_driver::engine::era::v2025_11_25::RELATED_TASK;
use taskwire_driver::RpcError;

/// A question of the server behind, for a front call to put to its client.
pub(crate) struct Question {
    pub method: String,
    /// Its params, without the related-task `_meta` (it named a task behind).
    pub params: Value,
    pub answer: oneshot::Sender<Result<Value, RpcError>>,
}

/// The front calls waiting for questions. Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct Routes(Arc<Mutex<Table>>);

#[derive(Default)]
struct Table {
    /// By the id of the task behind.
    tasks: HashMap<String, Sender<Question>>,
    /// Calls running without a task behind, oldest first, by a number of their own.
    plain: Vec<(u64, Sender<Question>)>,
    next: u64,
}

/// Which route a [`Route`] holds.
enum Key {
    Task(String),
    Plain(u64),
}

/// A front call's route; removed when dropped.
pub(crate) struct Route {
    routes: Routes,
    key: Key,
}

impl Drop for Route {
    fn drop(&mut self) {
        let mut table = self.routes.0.lock().unwrap();
        match &self.key {
            Key::Task(task) => {
                table.tasks.remove(task);
            }
            Key::Plain(n) => table.plain.retain(|(m, _)| m != n),
        }
    }
}

impl Routes {
    /// Questions about `task` (behind) go to `to`.
    pub fn task(&self, task: &str, to: Sender<Question>) -> Route {
        self.0.lock().unwrap().tasks.insert(task.to_owned(), to);
        Route {
            routes: self.clone(),
            key: Key::Task(task.to_owned()),
        }
    }

    /// Questions about no task go to `to` while it is the latest such route.
    pub fn plain(&self, to: Sender<Question>) -> Route {
        let mut table = self.0.lock().unwrap();
        table.next += 1;
        let n = table.next;
        table.plain.push((n, to));
        Route {
            routes: self.clone(),
            key: Key::Plain(n),
        }
    }

    /// Puts a question of the server behind to the front call it belongs to; its answer.
    pub async fn ask(&self, method: &str, mut params: Value) -> Result<Value, RpcError> {
        let task = take_related_task(&mut params);
        let to = {
            let table = self.0.lock().unwrap();
            match &task {
                Some(task) => table.tasks.get(task).cloned(),
                None => table.plain.last().map(|(_, to)| to.clone()),
            }
        };
        let no_call = || {
            let about = task
                .as_deref()
                .map_or("no task".to_owned(), |t| format!("task {t}"));
            RpcError::internal(format!(
                "The proxy has no call of its client waiting on {about}: {method} cannot be asked"
            ))
        };
        let to = to.ok_or_else(no_call)?;
        let (answer, answered) = oneshot::channel();
        let question = Question {
            method: method.to_owned(),
            params,
            answer,
        };
        to.send(question).await.map_err(|_| no_call())?;
        answered.await.map_err(|_| {
            RpcError::internal(format!(
                "The proxy's client call ended before {method} was answered"
            ))
        })?
    }
}

/// Removes the related-task `_meta` entry from `params`; the task it named.
fn take_related_task(params: &mut Value) -> Option<String> {
    let meta = params.get_mut("_meta")?.as_object_mut()?;
    let related = meta.remove(RELATED_TASK)?;
    if meta.is_empty() {
        params.as_object_mut()?.remove("_meta");
    }
    related["taskId"].as_str().map(str::to_owned)
}
