//! Notices a server sends its clients of its own accord (a resource updated, a list
//! changed, a log message about no call).

use async_channel::Sender;
use taskwire_engine::Notice;

use super::ServerCommand;
use crate::driver::Command;

/// Sends a server's notices to its clients; from
/// [`Server::notifier`](super::Server::notifier). Cheap to clone.
#[derive(Clone, Debug)]
pub struct Notifier(pub(super) Sender<Command<ServerCommand>>);

impl Notifier {
    /// Sends `notice` to every client session that can take it: those past the 2025-11-25
    /// handshake (see [`Host::notify`](taskwire_engine::Host::notify); 2026-07-28 has such
    /// notices only on listen streams), a log message to those that want its level, a
    /// resource's update to those subscribed to it. One sent before the server serves waits
    /// for it; one sent after it stopped is dropped.
    pub fn notify(&self, notice: Notice) {
        let _ = self.0.try_send(Command::App(ServerCommand::Notify(notice)));
    }
}
