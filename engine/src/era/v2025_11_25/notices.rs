//! A server's notices in this era: each a notification on the session once its handshake is
//! done, a log message only when the session wants its level, a resource's update only when
//! the session subscribed to it.

use super::{logging, resources};
use crate::era::kept::State;
use crate::event::MessageKind;
use crate::ids::SessionId;
use crate::jsonrpc;
use crate::model::Notice;

/// Sends `notice` on `session` (past its handshake).
pub(in crate::era) fn send(st: &mut State, session: SessionId, notice: &Notice) {
    let wanted = match notice {
        Notice::Log(message) => logging::wants(st, session, message.level),
        Notice::ResourceUpdated { uri } => resources::subscribed(st, session, uri),
        _ => true,
    };
    if !wanted {
        return;
    }
    let line = jsonrpc::notification_line(notice.method(), notice.params());
    let kind = MessageKind::Notification {
        method: notice.method(),
        task: None,
        stream: None,
    };
    st.send(session, kind, None, line);
}
