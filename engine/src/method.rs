//! The request methods of MCP (both eras), as a type: what the host names when it reports
//! the requests it reads ([`Host::requests_read`](crate::Host::requests_read)).

/// A request method of MCP, in either era. A peer's other names are no `Method` (a metric
/// labelled with one stays bounded).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Method {
    /// `initialize` (2025-11-25).
    Initialize,
    /// `ping`.
    Ping,
    /// `server/discover` (2026-07-28).
    ServerDiscover,
    /// `tools/list`.
    ToolsList,
    /// `tools/call`.
    ToolsCall,
    /// `tasks/get`.
    TasksGet,
    /// `tasks/result` (2025-11-25).
    TasksResult,
    /// `tasks/list` (2025-11-25).
    TasksList,
    /// `tasks/cancel`.
    TasksCancel,
    /// `tasks/update` (2026-07-28).
    TasksUpdate,
    /// `subscriptions/listen` (2026-07-28).
    SubscriptionsListen,
    /// `resources/list`.
    ResourcesList,
    /// `resources/templates/list`.
    ResourcesTemplatesList,
    /// `resources/read`.
    ResourcesRead,
    /// `resources/subscribe`.
    ResourcesSubscribe,
    /// `resources/unsubscribe`.
    ResourcesUnsubscribe,
    /// `prompts/list`.
    PromptsList,
    /// `prompts/get`.
    PromptsGet,
    /// `completion/complete`.
    CompletionComplete,
    /// `logging/setLevel` (2025-11-25).
    LoggingSetLevel,
    /// `sampling/createMessage` (a server's request of its client).
    SamplingCreateMessage,
    /// `elicitation/create` (a server's request of its client).
    ElicitationCreate,
    /// `roots/list` (a server's request of its client).
    RootsList,
}

impl Method {
    /// Every method, in declaration order: `Method::ALL[m as usize] == m`.
    pub const ALL: [Method; 23] = [
        Method::Initialize,
        Method::Ping,
        Method::ServerDiscover,
        Method::ToolsList,
        Method::ToolsCall,
        Method::TasksGet,
        Method::TasksResult,
        Method::TasksList,
        Method::TasksCancel,
        Method::TasksUpdate,
        Method::SubscriptionsListen,
        Method::ResourcesList,
        Method::ResourcesTemplatesList,
        Method::ResourcesRead,
        Method::ResourcesSubscribe,
        Method::ResourcesUnsubscribe,
        Method::PromptsList,
        Method::PromptsGet,
        Method::CompletionComplete,
        Method::LoggingSetLevel,
        Method::SamplingCreateMessage,
        Method::ElicitationCreate,
        Method::RootsList,
    ];

    /// The method named `name`, if MCP has it.
    pub fn from_name(name: &str) -> Option<Method> {
        Some(match name {
            "initialize" => Method::Initialize,
            "ping" => Method::Ping,
            "server/discover" => Method::ServerDiscover,
            "tools/list" => Method::ToolsList,
            "tools/call" => Method::ToolsCall,
            "tasks/get" => Method::TasksGet,
            "tasks/result" => Method::TasksResult,
            "tasks/list" => Method::TasksList,
            "tasks/cancel" => Method::TasksCancel,
            "tasks/update" => Method::TasksUpdate,
            "subscriptions/listen" => Method::SubscriptionsListen,
            "resources/list" => Method::ResourcesList,
            "resources/templates/list" => Method::ResourcesTemplatesList,
            "resources/read" => Method::ResourcesRead,
            "resources/subscribe" => Method::ResourcesSubscribe,
            "resources/unsubscribe" => Method::ResourcesUnsubscribe,
            "prompts/list" => Method::PromptsList,
            "prompts/get" => Method::PromptsGet,
            "completion/complete" => Method::CompletionComplete,
            "logging/setLevel" => Method::LoggingSetLevel,
            "sampling/createMessage" => Method::SamplingCreateMessage,
            "elicitation/create" => Method::ElicitationCreate,
            "roots/list" => Method::RootsList,
            _ => return None,
        })
    }

    /// Its name on the wire, e.g. `tools/call`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Initialize => "initialize",
            Method::Ping => "ping",
            Method::ServerDiscover => "server/discover",
            Method::ToolsList => "tools/list",
            Method::ToolsCall => "tools/call",
            Method::TasksGet => "tasks/get",
            Method::TasksResult => "tasks/result",
            Method::TasksList => "tasks/list",
            Method::TasksCancel => "tasks/cancel",
            Method::TasksUpdate => "tasks/update",
            Method::SubscriptionsListen => "subscriptions/listen",
            Method::ResourcesList => "resources/list",
            Method::ResourcesTemplatesList => "resources/templates/list",
            Method::ResourcesRead => "resources/read",
            Method::ResourcesSubscribe => "resources/subscribe",
            Method::ResourcesUnsubscribe => "resources/unsubscribe",
            Method::PromptsList => "prompts/list",
            Method::PromptsGet => "prompts/get",
            Method::CompletionComplete => "completion/complete",
            Method::LoggingSetLevel => "logging/setLevel",
            Method::SamplingCreateMessage => "sampling/createMessage",
            Method::ElicitationCreate => "elicitation/create",
            Method::RootsList => "roots/list",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Method;

    #[test]
    fn every_method_reads_back_from_its_name_at_its_place() {
        for (at, method) in Method::ALL.into_iter().enumerate() {
            assert_eq!(method as usize, at);
            assert_eq!(Method::from_name(method.as_str()), Some(method));
        }
        assert_eq!(Method::from_name("tools/Call"), None);
    }
}
