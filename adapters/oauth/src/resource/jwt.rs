//! An access token as a JWT (RFC 9068): signed by one of the issuer's public keys, issued by
//! it, for this resource, within its lifetime.

use std::sync::Arc;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{decode, decode_header, Algorithm, AlgorithmFamily, Validation};
use serde_json::Value;

use super::caller::{scopes, Caller};
use super::jwks::KeySet;
use super::{Denial, ResourceConfig};

/// The caller `token` speaks for, or why it speaks for none.
pub(crate) async fn verify(
    token: &str,
    keys: &Arc<KeySet>,
    config: &ResourceConfig,
) -> Result<Caller, Denial> {
    let header = decode_header(token).map_err(|e| match e.kind() {
        ErrorKind::Json(_) if header_alg(token).is_some() => Denial::Invalid(format!(
            "it is signed with {:?}: only the issuer's public keys are accepted",
            header_alg(token).unwrap_or_default()
        )),
        _ => Denial::Invalid(format!("it is no JWT ({e})")),
    })?;
    let algorithm = header.alg;
    if algorithm.family() == AlgorithmFamily::Hmac {
        return Err(Denial::Invalid(format!(
            "it is signed with {algorithm:?}: only the issuer's public keys are accepted"
        )));
    }
    let candidates = keys.candidates(header.kid.as_deref(), algorithm).await;
    if candidates.is_empty() {
        return Err(Denial::Invalid(format!(
            "it is signed with a key the issuer does not publish (kid {:?}, {algorithm:?})",
            header.kid.unwrap_or_default()
        )));
    }
    let validation = validation(algorithm, config);
    let mut failure = None;
    for key in &candidates {
        match decode::<Value>(token, &key.decoding, &validation) {
            Ok(data) => return Ok(caller(&data.claims, config)),
            Err(e) => failure = failure.or(Some(e)),
        }
    }
    let failure = failure.expect("at least one key was tried");
    Err(Denial::Invalid(explain(failure.kind(), config)))
}

/// What a token must be: signed with `algorithm`, `iss` the issuer, `aud` this resource,
/// `exp` in the future and `nbf` (if any) in the past, within the clock skew; `sub` present.
fn validation(algorithm: Algorithm, config: &ResourceConfig) -> Validation {
    let mut validation = Validation::new(algorithm);
    validation.leeway = config.clock_skew.as_secs();
    validation.validate_nbf = true;
    validation.set_issuer(&[&config.issuer]);
    validation.set_audience(&[&config.resource]);
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    validation
}

fn caller(claims: &Value, config: &ResourceConfig) -> Caller {
    let text = |name: &str| claims[name].as_str().map(str::to_owned);
    Caller {
        issuer: config.issuer.clone(),
        subject: text("sub").unwrap_or_default(),
        client_id: text("client_id").or_else(|| text("azp")),
        scopes: scopes(claims.get("scope").or_else(|| claims.get("scp"))),
    }
}

/// Why a token failed, in words.
fn explain(kind: &ErrorKind, config: &ResourceConfig) -> String {
    match kind {
        ErrorKind::ExpiredSignature => "it has expired".into(),
        ErrorKind::ImmatureSignature => "it is not valid yet (nbf)".into(),
        ErrorKind::InvalidIssuer => format!("it was not issued by {}", config.issuer),
        ErrorKind::InvalidAudience => format!(
            "it is not for this resource (its aud does not name {})",
            config.resource
        ),
        ErrorKind::InvalidSignature => "its signature does not verify".into(),
        ErrorKind::MissingRequiredClaim(claim) => format!("it has no {claim:?} claim"),
        ErrorKind::InvalidClaimFormat(claim) => format!("its {claim:?} claim is malformed"),
        other => format!("it cannot be verified ({other:?})"),
    }
}

/// The `alg` a JWT's header names, when its header is JSON at all (to say which algorithm
/// was refused, e.g. `none`).
fn header_alg(token: &str) -> Option<String> {
    use base64::Engine as _;
    let segment = token.split('.').next()?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(segment.trim_end_matches('='))
        .ok()?;
    let header: Value = serde_json::from_slice(&bytes).ok()?;
    header["alg"].as_str().map(str::to_owned)
}
