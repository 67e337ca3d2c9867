//! Where the questions of the server behind go (`elicitation/create`,
//! `sampling/createMessage`): to the front call whose task behind they name (the
//! related-task `_meta`, which the driver gives in both eras), or, naming none, to the latest
//! front call whose call behind runs without a task.
//!
//! The server behind may ask about its task as soon as it has answered the call that made it,
//! before the front call has read that answer and taken the task's route; a question naming a
//! task no route knows waits while any front call is still starting its task behind, and is
//! refused once none is.

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
    /// Front calls whose task behind is being made.
    starting: usize,
    /// Questions naming a task no route knows yet, with that task.
    parked: Vec<(String, Question)>,
}

impl Table {
    /// Delivers the parked questions whose task has a route now; refuses all of them once no
    /// call is starting a task.
    fn settle(&mut self) {
        for (task, question) in std::mem::take(&mut self.parked) {
            if let Some(to) = self.tasks.get(&task) {
                // An unbounded channel; a closed one drops the question, which answers it.
                let _ = to.try_send(question);
            } else if self.starting == 0 {
                let _ = question
                    .answer
                    .send(Err(no_call(&question.method, Some(&task))));
            } else {
                self.parked.push((task, question));
            }
        }
    }
}

/// A front call starting its task behind; questions about unknown tasks wait while one is.
pub(crate) struct Starting(Routes);

impl Drop for Starting {
    fn drop(&mut self) {
        let mut table = self.0 .0.lock().unwrap();
        table.starting -= 1;
        table.settle();
    }
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
        let mut table = self.0.lock().unwrap();
        table.tasks.insert(task.to_owned(), to);
        table.settle();
        Route {
            routes: self.clone(),
            key: Key::Task(task.to_owned()),
        }
    }

    /// Marks a front call as starting its task behind until the guard is dropped (after it
    /// took the task's route, if a task was made).
    pub fn starting(&self) -> Starting {
        self.0.lock().unwrap().starting += 1;
        Starting(self.clone())
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

    /// Whether a front call runs without a task behind (questions naming none go to it).
    pub fn has_plain(&self) -> bool {
        !self.0.lock().unwrap().plain.is_empty()
    }

    /// Puts a question of the server behind to the front call it belongs to; its answer.
    pub async fn ask(&self, method: &str, mut params: Value) -> Result<Value, RpcError> {
        let task = take_related_task(&mut params);
        let (answer, answered) = oneshot::channel();
        let question = Question {
            method: method.to_owned(),
            params,
            answer,
        };
        if let Some((to, question)) = self.route(task, question)? {
            // A closed channel drops the question, which answers it.
            let _ = to.send(question).await;
        }
        answered.await.unwrap_or_else(|_| {
            Err(RpcError::internal(format!(
                "The proxy's client call ended before {method} was answered"
            )))
        })
    }

    /// The front call to put `question` to now, or none when it is parked until its task
    /// has a route.
    fn route(
        &self,
        task: Option<String>,
        question: Question,
    ) -> Result<Option<(Sender<Question>, Question)>, RpcError> {
        let mut table = self.0.lock().unwrap();
        let to = match &task {
            Some(task) => table.tasks.get(task).cloned(),
            None => table.plain.last().map(|(_, to)| to.clone()),
        };
        match (to, task) {
            (Some(to), _) => Ok(Some((to, question))),
            (None, Some(task)) if table.starting > 0 => {
                table.parked.push((task, question));
                Ok(None)
            }
            (None, task) => Err(no_call(&question.method, task.as_deref())),
        }
    }
}

/// The error for a question no front call can take.
fn no_call(method: &str, task: Option<&str>) -> RpcError {
    let about = task.map_or("no task".to_owned(), |t| format!("task {t}"));
    RpcError::internal(format!(
        "The proxy has no call of its client waiting on {about}: {method} cannot be asked"
    ))
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

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use futures::FutureExt;
    use serde_json::json;

    fn about(task: &str) -> Value {
        json!({"message": "Ship it?", "_meta": {RELATED_TASK: {"taskId": task}}})
    }

    #[test]
    fn a_question_arriving_before_its_tasks_route_waits_for_it() {
        let routes = Routes::default();
        let starting = routes.starting();
        let mut asked = Box::pin(routes.ask("elicitation/create", about("t1")));
        assert!(
            asked.as_mut().now_or_never().is_none(),
            "parked, not refused"
        );

        let (to, questions) = async_channel::unbounded();
        let _route = routes.task("t1", to);
        drop(starting);
        let question = questions.try_recv().expect("delivered once routed");
        assert_eq!(question.params, json!({"message": "Ship it?"}));
        question
            .answer
            .send(Ok(json!({"action": "accept"})))
            .unwrap();
        assert_eq!(block_on(asked).unwrap(), json!({"action": "accept"}));
    }

    #[test]
    fn a_question_about_a_task_no_call_made_is_refused_once_none_is_starting() {
        let routes = Routes::default();
        let starting = routes.starting();
        let asked = routes.ask("sampling/createMessage", about("t2"));
        let mut asked = Box::pin(asked);
        assert!(asked.as_mut().now_or_never().is_none());
        drop(starting);
        let error = block_on(asked).unwrap_err();
        assert!(error
            .message
            .contains("no call of its client waiting on task t2"));

        let error = block_on(routes.ask("elicitation/create", about("t3"))).unwrap_err();
        assert!(error.message.contains("waiting on task t3"), "{error:?}");
    }
}
