//! A recorded official server played back to our client engine: each request our client sends
//! is answered with what the real server answered to the same request in the recording, and the
//! server's other messages (status notifications, its own requests) arrive in recorded order.

use serde_json::Value;

use super::wire::Log;
use taskwire_harness::conformance::Side;
use taskwire_harness::Probe;

/// Playback state over a recorded conversation whose server is the peer.
#[derive(Debug)]
pub struct ServerReplay {
    log: Log,
    /// Index of the next recorded line not yet played.
    cursor: usize,
    /// An answer held back because the server asked us something first: (our request's id,
    /// index of the recorded answer). [`ServerReplay::resume`] goes on once we have replied.
    held: Option<(Value, usize)>,
}

impl ServerReplay {
    /// Playback of `log` from its start.
    pub fn new(log: Log) -> ServerReplay {
        ServerReplay {
            log,
            cursor: 0,
            held: None,
        }
    }

    /// The recording.
    pub fn log(&self) -> &Log {
        &self.log
    }

    /// Whether the recorded client ever sent a request with `method`.
    pub fn knows(&self, method: &str) -> bool {
        self.log.last_request(Side::Client, method).is_some()
    }

    /// Answers our request `request` (a message our client sent) as the recorded server
    /// answered the next recorded request with the same method: the server's messages recorded
    /// since the last answer played (notifications, its own requests) are delivered first, then
    /// the answer with our id. When the recording has no further such request (we poll more
    /// often than the recorded client did), or an answer is held back, the last recorded answer
    /// to that method is replayed alone. Returns what our engine sent.
    pub fn answer(&mut self, d: &mut Probe, request: &Value) -> Vec<Value> {
        let method = request["method"].as_str().unwrap_or_default();
        let lines = &self.log.lines;
        let next = (self.cursor..lines.len()).find(|&i| {
            lines[i].from == Side::Client
                && lines[i].msg["method"] == method
                && lines[i].msg.get("id").is_some()
        });
        let next = next.filter(|_| self.held.is_none());
        let Some(at) = next else {
            let last = self
                .log
                .last_request(Side::Client, method)
                .unwrap_or_else(|| panic!("{}: no {method} recorded", self.log.path.display()));
            let (_, answer) = self.log.answer_at(last).expect("a recorded answer");
            let mut answer = answer.clone();
            answer["id"] = request["id"].clone();
            return d.feed_json(answer);
        };
        let (answer_at, _) = self
            .log
            .answer_at(at)
            .unwrap_or_else(|| panic!("{}: line {at} unanswered", self.log.path.display()));
        self.play(d, request["id"].clone(), answer_at)
    }

    /// Goes on with an answer held back by a server request, once our reply to it was sent.
    pub fn resume(&mut self, d: &mut Probe) -> Vec<Value> {
        match self.held.take() {
            Some((id, answer_at)) => self.play(d, id, answer_at),
            None => Vec::new(),
        }
    }

    /// Delivers the server's lines from the cursor through `answer_at` (that one with `id`),
    /// skipping answers to other requests; stops after a server request, holding the rest.
    fn play(&mut self, d: &mut Probe, id: Value, answer_at: usize) -> Vec<Value> {
        let mut out = Vec::new();
        while self.cursor <= answer_at {
            let i = self.cursor;
            self.cursor += 1;
            let line = &self.log.lines[i];
            if line.from != Side::Server {
                continue;
            }
            let mut msg = line.msg.clone();
            let is_request = msg.get("method").is_some() && msg.get("id").is_some();
            if i == answer_at {
                msg["id"] = id.clone();
            } else if msg.get("method").is_none() {
                continue; // the answer to another recorded request
            }
            out.extend(d.feed_json(msg));
            if is_request && i < answer_at {
                self.held = Some((id, answer_at));
                break;
            }
        }
        out
    }

    /// Delivers every server message left that is not an answer (trailing notifications).
    pub fn finish(&mut self, d: &mut Probe) -> Vec<Value> {
        let mut out = Vec::new();
        while let Some(line) = self.log.lines.get(self.cursor) {
            self.cursor += 1;
            if line.from == Side::Server && line.msg.get("method").is_some() {
                let msg = line.msg.clone();
                out.extend(d.feed_json(msg));
            }
        }
        out
    }

    /// Answers every request in `sent` that the recording knows (by method), then the requests
    /// those answers provoke, until our engine sends none. Returns everything it sent, in order.
    pub fn serve(&mut self, d: &mut Probe, sent: Vec<Value>) -> Vec<Value> {
        let mut all = Vec::new();
        let mut queue = sent;
        while !queue.is_empty() {
            let mut next = Vec::new();
            for m in &queue {
                let method = m["method"].as_str().unwrap_or_default();
                if m.get("id").is_some() && self.knows(method) {
                    next.extend(self.answer(d, m));
                }
            }
            all.append(&mut queue);
            queue = next;
        }
        all
    }
}
