//! The REST auth hook: an [`Authenticator`] sees the `Authorization` header of every request.
//! [`BasicAuth`] checks HTTP Basic credentials (RFC 7617); [`JwtAuth`] checks a Bearer token
//! (RFC 6750) with moria-crypto's JWT (HS256 or ES256, `exp`/`nbf`/`iss`/`aud`).

use moria_crypto::encoding::from_base64;
use moria_crypto::jwt::{Claims, JwtKey, Validation};
use moria_crypto::{constant_time_eq, hash};

/// Decides whether a request may proceed, from its `Authorization` header.
pub trait Authenticator: Send + Sync + 'static {
    /// `Ok(())` to proceed; `Err(reason)` answers 401 with [`Authenticator::challenge`].
    fn check(&self, authorization: Option<&str>) -> Result<(), String>;
    /// The `WWW-Authenticate` value sent with a 401.
    fn challenge(&self) -> String;
}

/// `Scheme token` → token, when the scheme matches (case-insensitively).
fn credentials<'h>(authorization: Option<&'h str>, scheme: &str) -> Result<&'h str, String> {
    let header = authorization.ok_or("credentials required")?;
    let (given, token) = header
        .trim()
        .split_once(' ')
        .ok_or("malformed Authorization")?;
    if given.eq_ignore_ascii_case(scheme) {
        Ok(token.trim())
    } else {
        Err(format!("scheme {given:?} not accepted"))
    }
}

/// HTTP Basic with a fixed list of users, kept as SHA-256 digests of `user:password`.
pub struct BasicAuth {
    realm: String,
    users: Vec<Vec<u8>>,
}

fn digest(user_pass: &[u8]) -> Vec<u8> {
    // sha256 is always in the catalogue; an empty digest simply matches nothing.
    hash("sha256", user_pass)
        .map(|d| d.to_vec())
        .unwrap_or_default()
}

impl BasicAuth {
    /// Accepts `user`:`password` (more with [`BasicAuth::user`]) in `realm`.
    pub fn new(realm: &str, user: &str, password: &str) -> Self {
        BasicAuth {
            realm: realm.replace('"', ""),
            users: Vec::new(),
        }
        .user(user, password)
    }

    /// Accepts one more user.
    pub fn user(mut self, user: &str, password: &str) -> Self {
        self.users
            .push(digest(format!("{user}:{password}").as_bytes()));
        self
    }
}

impl Authenticator for BasicAuth {
    fn check(&self, authorization: Option<&str>) -> Result<(), String> {
        let token = credentials(authorization, "basic")?;
        let decoded = from_base64(token).ok_or("malformed Basic credentials")?;
        if !decoded.contains(&b':') {
            return Err("malformed Basic credentials".into());
        }
        let given = digest(&decoded);
        // Every user is compared, so the time does not tell which one matched.
        let ok = self
            .users
            .iter()
            .fold(false, |ok, u| ok | constant_time_eq(u, &given));
        if ok && !given.is_empty() {
            Ok(())
        } else {
            Err("bad user or password".into())
        }
    }

    fn challenge(&self) -> String {
        format!("Basic realm=\"{}\", charset=\"UTF-8\"", self.realm)
    }
}

/// An application check of verified claims: `Err(reason)` refuses the request.
type ClaimsCheck = Box<dyn Fn(&Claims) -> Result<(), String> + Send + Sync>;

/// A Bearer JWT verified with one key and one set of claim checks.
pub struct JwtAuth {
    key: JwtKey,
    validation: Validation,
    check_claims: Option<ClaimsCheck>,
}

impl JwtAuth {
    /// Accepts tokens signed by `key` whose claims pass `validation`.
    pub fn new(key: JwtKey, validation: Validation) -> Self {
        JwtAuth {
            key,
            validation,
            check_claims: None,
        }
    }

    /// Adds an application check of the verified claims (e.g. a role).
    pub fn claims(
        mut self,
        f: impl Fn(&Claims) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.check_claims = Some(Box::new(f));
        self
    }
}

impl Authenticator for JwtAuth {
    fn check(&self, authorization: Option<&str>) -> Result<(), String> {
        let token = credentials(authorization, "bearer")?;
        let claims = self
            .key
            .verify(token, &self.validation)
            .map_err(|e| e.to_string())?;
        match &self.check_claims {
            Some(f) => f(&claims),
            None => Ok(()),
        }
    }

    fn challenge(&self) -> String {
        "Bearer realm=\"moria\"".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use moria_crypto::encoding::base64_into;
    use serde_json::json;

    fn basic(user_pass: &str) -> String {
        let mut out = b"Basic ".to_vec();
        base64_into(user_pass.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn basic_credentials_are_checked() {
        let a = BasicAuth::new("app", "ada", "s3cret:x").user("bob", "pw");
        assert!(a.check(Some(&basic("ada:s3cret:x"))).is_ok());
        assert!(a.check(Some(&basic("bob:pw"))).is_ok());
        assert!(a
            .check(Some(&format!("  basic  {}", &basic("bob:pw")[6..])))
            .is_ok());
        for bad in [
            None,
            Some(basic("ada:wrong")),
            Some(basic("ada:s3cret")),
            Some(basic("eve:pw")),
            Some(basic("adapw")),
            Some("Bearer abc".to_string()),
            Some("Basic !!!".to_string()),
            Some("Basic".to_string()),
        ] {
            assert!(a.check(bad.as_deref()).is_err(), "{bad:?} accepted");
        }
        assert_eq!(a.challenge(), "Basic realm=\"app\", charset=\"UTF-8\"");
    }

    #[test]
    fn bearer_tokens_are_verified() {
        let key = JwtKey::hs256(&[7u8; 32]).unwrap();
        let auth = JwtAuth::new(
            JwtKey::hs256(&[7u8; 32]).unwrap(),
            Validation::new().issuer("moria"),
        )
        .claims(|c| match c.get("role").and_then(|r| r.as_str()) {
            Some("admin") => Ok(()),
            _ => Err("admin role required".into()),
        });
        let exp = now_secs() + 600;
        let good = key
            .sign(&json!({"iss":"moria","exp":exp,"role":"admin"}))
            .unwrap();
        assert!(auth.check(Some(&format!("Bearer {good}"))).is_ok());
        let user = key
            .sign(&json!({"iss":"moria","exp":exp,"role":"user"}))
            .unwrap();
        assert_eq!(
            auth.check(Some(&format!("Bearer {user}"))).unwrap_err(),
            "admin role required"
        );
        let expired = key
            .sign(&json!({"iss":"moria","exp":1,"role":"admin"}))
            .unwrap();
        let other = JwtKey::hs256(&[8u8; 32]).unwrap();
        let forged = other
            .sign(&json!({"iss":"moria","exp":exp,"role":"admin"}))
            .unwrap();
        for bad in [expired, forged, "a.b.c".into(), good.replace('.', "")] {
            assert!(auth.check(Some(&format!("Bearer {bad}"))).is_err(), "{bad}");
        }
        assert!(auth.check(Some(&basic("a:b"))).is_err());
        assert!(auth.check(None).is_err());
    }

    fn now_secs() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    }
}
