//! [`BearerAuth`]: a Bearer JWT (RFC 6750) verified with moria-crypto — one [`JwtKey`] or a
//! [`Jwks`] chosen by `kid` — against a [`Validation`] (`exp`/`nbf`/`iss`/`aud`) and an
//! optional check of the claims (a role, say). The verified [`Claims`] are left in the
//! request's extensions and `sub` becomes the request's user. 401 with a `Bearer` challenge
//! otherwise.

use moria_crypto::jwt::{Claims, Jwks, JwtKey, Validation};

use crate::app::{HttpError, Layer, Next};
use crate::handler::HandlerResult;
use crate::request::Request;
use crate::response::Response;

/// An application check of verified claims: `Err(reason)` refuses the request (403).
type ClaimsCheck = Box<dyn Fn(&Claims) -> Result<(), String> + Send + Sync>;

enum Keys {
    One(JwtKey),
    Set(Jwks),
}

/// Bearer JWT authentication.
pub struct BearerAuth {
    keys: Keys,
    validation: Validation,
    check: Option<ClaimsCheck>,
}

impl BearerAuth {
    /// Accepts tokens signed by `key` whose claims pass `validation`.
    pub fn new(key: JwtKey, validation: Validation) -> BearerAuth {
        BearerAuth {
            keys: Keys::One(key),
            validation,
            check: None,
        }
    }

    /// Accepts tokens signed by the key of `jwks` their `kid` names.
    pub fn with_jwks(jwks: Jwks, validation: Validation) -> BearerAuth {
        BearerAuth {
            keys: Keys::Set(jwks),
            validation,
            check: None,
        }
    }

    /// Adds an application check of the verified claims (403 when it refuses).
    pub fn claims(
        mut self,
        f: impl Fn(&Claims) -> Result<(), String> + Send + Sync + 'static,
    ) -> BearerAuth {
        self.check = Some(Box::new(f));
        self
    }

    fn verify(&self, authorization: Option<&str>) -> Result<Claims, String> {
        let header = authorization.ok_or("a Bearer token is required")?;
        let (scheme, token) = header
            .trim()
            .split_once(' ')
            .ok_or("malformed Authorization")?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(format!("scheme {scheme:?} not accepted"));
        }
        let verified = match &self.keys {
            Keys::One(k) => k.verify(token.trim(), &self.validation),
            Keys::Set(s) => s.verify(token.trim(), &self.validation),
        };
        verified.map_err(|e| e.to_string())
    }
}

impl Layer for BearerAuth {
    fn handle(&self, req: &mut Request<'_>, res: &mut Response, next: Next<'_>) -> HandlerResult {
        let claims = match self.verify(req.header_str("authorization")) {
            Ok(c) => c,
            Err(why) => {
                let challenge = "Bearer realm=\"moria\", error=\"invalid_token\"";
                return Err(HttpError::unauthorized(why, challenge).into());
            }
        };
        if let Some(check) = &self.check {
            check(&claims).map_err(HttpError::forbidden)?;
        }
        if let Some(sub) = claims.get("sub").and_then(|s| s.as_str()) {
            req.set_user(sub);
        }
        req.extensions_mut().insert(claims);
        next.run(req, res);
        Ok(())
    }
}
