//! Which scopes to ask for (MCP 2025-11-25, "Scope Selection Strategy"): the challenge's
//! `scope`, else every scope of the resource's `scopes_supported`, else none (the `scope`
//! parameter is left out); on a step-up, what was asked before and what the challenge names.

/// The scopes of a space-separated list, in order, each once.
pub(crate) fn split(list: &str) -> Vec<String> {
    let mut scopes: Vec<String> = Vec::new();
    for scope in list.split_ascii_whitespace() {
        if !scopes.iter().any(|s| s == scope) {
            scopes.push(scope.to_owned());
        }
    }
    scopes
}

/// The scopes of a first authorization: `challenged` (the challenge's), else `supported` (the
/// Protected Resource Metadata's), else none. `offline_access` is added when the authorization
/// server lists it (`server_supported`), so that a refresh token may come (SEP-2207).
pub(crate) fn select(
    challenged: &[String],
    supported: Option<&[String]>,
    server_supported: Option<&[String]>,
) -> Vec<String> {
    let mut scopes = match (challenged, supported) {
        ([], Some(supported)) => supported.to_vec(),
        ([], None) => Vec::new(),
        (challenged, _) => challenged.to_vec(),
    };
    let offline = "offline_access";
    let offered = server_supported.is_some_and(|all| all.iter().any(|s| s == offline));
    if offered && !scopes.is_empty() && !scopes.iter().any(|s| s == offline) {
        scopes.push(offline.to_owned());
    }
    scopes
}

/// A step-up's scopes: those asked for before, then the challenge's new ones.
pub(crate) fn union(before: &[String], challenged: &[String]) -> Vec<String> {
    let mut scopes = before.to_vec();
    for scope in challenged {
        if !scopes.contains(scope) {
            scopes.push(scope.clone());
        }
    }
    scopes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(text: &str) -> Vec<String> {
        split(text)
    }

    #[test]
    fn the_challenge_wins_then_scopes_supported_then_nothing() {
        let supported = list("mcp:basic mcp:read");
        assert_eq!(select(&list("mcp:x"), Some(&supported), None), ["mcp:x"]);
        assert_eq!(select(&[], Some(&supported), None), supported);
        assert!(select(&[], None, None).is_empty());
    }

    #[test]
    fn offline_access_is_asked_only_when_the_server_offers_it() {
        let offered = list("mcp:basic offline_access");
        assert_eq!(
            select(&list("mcp:basic"), None, Some(&offered)),
            ["mcp:basic", "offline_access"]
        );
        assert_eq!(
            select(&list("mcp:basic"), None, Some(&list("mcp:basic"))),
            ["mcp:basic"]
        );
        // No scope parameter stays no scope parameter.
        assert!(select(&[], None, Some(&offered)).is_empty());
    }

    #[test]
    fn a_step_up_asks_for_the_union_each_scope_once() {
        assert_eq!(
            union(&list("mcp:basic"), &list("mcp:basic mcp:write")),
            ["mcp:basic", "mcp:write"]
        );
        assert_eq!(split(" a  b a "), ["a", "b"]);
    }
}
