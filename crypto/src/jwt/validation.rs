//! Claim checks applied after a token's signature verifies: `exp`, `nbf`, `iss`, `aud`.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::Claims;
use crate::error::{Error, Result};

/// What [`JwtKey::verify`](super::JwtKey::verify) requires of a token's claims.
///
/// Defaults: `exp` required, no leeway, issuer and audience unchecked, the system clock.
#[derive(Clone, Debug)]
pub struct Validation {
    issuer: Option<String>,
    audience: Option<String>,
    leeway_secs: u64,
    require_exp: bool,
    now: Option<u64>,
}

impl Default for Validation {
    fn default() -> Self {
        Self::new()
    }
}

impl Validation {
    /// The default checks.
    pub fn new() -> Self {
        Validation {
            issuer: None,
            audience: None,
            leeway_secs: 0,
            require_exp: true,
            now: None,
        }
    }

    /// Requires `iss` to equal `issuer` (default: unchecked).
    pub fn issuer(mut self, issuer: &str) -> Self {
        self.issuer = Some(issuer.to_owned());
        self
    }

    /// Requires `aud` (a string or an array of strings) to contain `audience`
    /// (default: unchecked).
    pub fn audience(mut self, audience: &str) -> Self {
        self.audience = Some(audience.to_owned());
        self
    }

    /// Tolerates clock skew of `secs` seconds on `exp` and `nbf` (default: 0).
    pub fn leeway(mut self, secs: u64) -> Self {
        self.leeway_secs = secs;
        self
    }

    /// Whether a token without `exp` is rejected (default: true).
    pub fn require_exp(mut self, required: bool) -> Self {
        self.require_exp = required;
        self
    }

    /// Checks times against `unix_secs` instead of the system clock (default: system clock).
    pub fn at(mut self, unix_secs: u64) -> Self {
        self.now = Some(unix_secs);
        self
    }

    fn now(&self) -> u64 {
        self.now.unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        })
    }

    pub(super) fn check(&self, claims: &Claims) -> Result<()> {
        let now = self.now();
        match numeric_date(claims, "exp")? {
            Some(exp) if now >= exp.saturating_add(self.leeway_secs) => {
                return Err(Error::TokenExpired { exp, now });
            }
            None if self.require_exp => return Err(Error::TokenMissingClaim("exp")),
            _ => {}
        }
        if let Some(nbf) = numeric_date(claims, "nbf")? {
            if now.saturating_add(self.leeway_secs) < nbf {
                return Err(Error::TokenNotYetValid { nbf, now });
            }
        }
        if let Some(expected) = &self.issuer {
            let found = claims.get("iss").and_then(Value::as_str);
            if found != Some(expected.as_str()) {
                return Err(Error::TokenIssuer {
                    expected: expected.clone(),
                    found: found.map(str::to_owned),
                });
            }
        }
        if let Some(expected) = &self.audience {
            let matches = match claims.get("aud") {
                Some(Value::String(aud)) => aud == expected,
                Some(Value::Array(auds)) => auds.iter().any(|a| a.as_str() == Some(expected)),
                _ => false,
            };
            if !matches {
                return Err(Error::TokenAudience {
                    expected: expected.clone(),
                });
            }
        }
        Ok(())
    }
}

/// A NumericDate claim (RFC 7519 §2: seconds, possibly fractional), truncated to seconds.
fn numeric_date(claims: &Claims, name: &'static str) -> Result<Option<u64>> {
    match claims.get(name) {
        None => Ok(None),
        Some(value) => match (value.as_u64(), value.as_f64()) {
            (Some(secs), _) => Ok(Some(secs)),
            (None, Some(secs)) if secs >= 0.0 => Ok(Some(secs as u64)),
            _ => Err(Error::TokenMalformed(format!(
                "{name} is not a NumericDate"
            ))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(value: Value) -> Claims {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn exp_is_exclusive_and_leeway_extends_it() {
        let c = claims(json!({"exp": 100}));
        assert!(Validation::new().at(99).check(&c).is_ok());
        assert!(matches!(
            Validation::new().at(100).check(&c),
            Err(Error::TokenExpired { exp: 100, now: 100 })
        ));
        assert!(Validation::new().at(104).leeway(5).check(&c).is_ok());
    }

    #[test]
    fn exp_required_by_default() {
        let c = claims(json!({"sub": "x"}));
        assert!(matches!(
            Validation::new().check(&c),
            Err(Error::TokenMissingClaim("exp"))
        ));
        assert!(Validation::new().require_exp(false).check(&c).is_ok());
        let bad = claims(json!({"exp": "tomorrow"}));
        assert!(matches!(
            Validation::new().check(&bad),
            Err(Error::TokenMalformed(_))
        ));
    }

    #[test]
    fn nbf_rejects_early_tokens() {
        let c = claims(json!({"exp": 1000, "nbf": 500.5}));
        assert!(matches!(
            Validation::new().at(499).check(&c),
            Err(Error::TokenNotYetValid { nbf: 500, .. })
        ));
        assert!(Validation::new().at(500).check(&c).is_ok());
        assert!(Validation::new().at(498).leeway(2).check(&c).is_ok());
    }

    #[test]
    fn issuer_and_audience() {
        let c = claims(json!({"exp": 1000, "iss": "moria", "aud": ["api", "web"]}));
        let v = Validation::new().at(1);
        assert!(v.clone().issuer("moria").audience("web").check(&c).is_ok());
        assert!(matches!(
            v.clone().issuer("mordor").check(&c),
            Err(Error::TokenIssuer { .. })
        ));
        assert!(matches!(
            v.clone().audience("cli").check(&c),
            Err(Error::TokenAudience { .. })
        ));
        let single = claims(json!({"exp": 1000, "aud": "api"}));
        assert!(v.clone().audience("api").check(&single).is_ok());
        let none = claims(json!({"exp": 1000}));
        assert!(matches!(
            v.audience("api").check(&none),
            Err(Error::TokenAudience { .. })
        ));
    }
}
