//! One browser's live feed as SSE: a `snapshot` of every row first, then each change as its
//! event; after a resync (the server's feed started over) or when this stream fell
//! [`BACKLOG`](super::hub::BACKLOG) changes behind, a fresh `snapshot`.

use std::convert::Infallible;

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::broadcast::Receiver;

use super::hub::{News, StreamSlot};
use super::json::Message;

fn event(message: &Message) -> Event {
    Event::default().event(message.event).data(&message.data)
}

/// The SSE response: `first` (a snapshot), then `news` until the server's feed ends or the
/// browser leaves (which drops `slot`).
pub(crate) fn respond(slot: StreamSlot, first: Message, news: Receiver<News>) -> Response {
    let start = (slot, Some(first), news);
    let events = futures::stream::unfold(start, |(slot, first, mut news)| async move {
        if let Some(first) = first {
            return Some((event(&first), (slot, None, news)));
        }
        let next = match news.recv().await {
            Ok(News::Change(message)) => event(&message),
            Ok(News::Resync) | Err(RecvError::Lagged(_)) => {
                let (snapshot, fresh) = slot.hub().subscribe()?;
                news = fresh;
                event(&snapshot)
            }
            Err(RecvError::Closed) => return None,
        };
        Some((next, (slot, None, news)))
    });
    Sse::new(events.map(Ok::<_, Infallible>))
        .keep_alive(KeepAlive::default())
        .into_response()
}
