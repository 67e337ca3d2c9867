//! Opening and closing sessions, shutting the host down, and a client session's handshake.

use super::Host;
use crate::config::ClientEra;
use crate::error::UsageError;
use crate::ids::{Owner, SessionId};
use crate::jsonrpc::RequestId;
use crate::model::{Era, Role};
use crate::state::Phase;
use crate::time::Millis;

impl Host {
    /// Opens a session for `owner`: a server session waits for the peer's first request;
    /// a client session starts its handshake with [`Host::initialize`].
    pub fn open(
        &mut self,
        now: Millis,
        role: Role,
        owner: impl Into<Owner>,
    ) -> Result<SessionId, UsageError> {
        self.enter(now)?;
        Ok(self.state.open_session(role, &owner.into()))
    }

    /// Closes a session: its pending requests fail, its plain calls stop, and it is
    /// forgotten. Its tasks live on (another session of the same owner can pick them up).
    /// Closing a closed or unknown session does nothing (nor, since every session is then
    /// closed, does closing one after [`Host::shutdown`]).
    pub fn close(&mut self, now: Millis, session: SessionId) {
        if self.enter(now).is_ok() {
            self.state.close_session(session);
        }
    }

    /// Closes every session and stops all work
    /// ([`StopReason::Closed`](crate::StopReason::Closed)): for a process that ends (stdio at
    /// end of input). This is final: afterwards nothing is scheduled, and opening a session,
    /// input and commands are [`UsageError::ShutDown`]. A second call does nothing.
    pub fn shutdown(&mut self, now: Millis) {
        if self.enter(now).is_ok() {
            self.state.shutdown();
        }
    }

    /// Client: opens a client session in the era [`Config::client_era`](crate::Config)
    /// chooses: by default the newest, `server/discover` (2026-07-28), with an older era
    /// (`initialize`, 2025-11-25) taking over for a server that does not speak it.
    /// [`Event::Initialized`](crate::Event::Initialized) (whose `protocol_version` names the
    /// era) or [`Event::InitializeFailed`](crate::Event::InitializeFailed) follows.
    pub fn initialize(&mut self, now: Millis, session: SessionId) -> Result<RequestId, UsageError> {
        let s = self
            .state
            .session(session)
            .ok_or(UsageError::UnknownSession(session))?;
        if s.role != Role::Client {
            return Err(UsageError::WrongRole {
                needs: Role::Client,
            });
        }
        if s.phase != Phase::New {
            return Err(UsageError::AlreadyInitialized(session));
        }
        self.enter(now)?;
        let (era, fallback) = match self.state.config.client_era {
            ClientEra::Auto => (Era::ALL[0], true),
            ClientEra::Only(era) => (era, false),
        };
        let st = &mut self.state;
        st.protocol(era)
            .open(st, session, fallback)
            .ok_or(UsageError::UnknownSession(session))
    }
}
