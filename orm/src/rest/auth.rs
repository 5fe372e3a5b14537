//! The REST auth hook: an [`Authenticator`] sees the `Authorization` header of every request.
//! [`BasicAuth`] checks HTTP Basic credentials (RFC 7617).

use crate::base64;

/// Decides whether a request may proceed, from its `Authorization` header.
pub trait Authenticator: Send + Sync + 'static {
    /// `Ok(())` to proceed; `Err(reason)` answers 401 with [`Authenticator::challenge`].
    fn check(&self, authorization: Option<&str>) -> Result<(), String>;
    /// The `WWW-Authenticate` value sent with a 401.
    fn challenge(&self) -> String;
}

/// HTTP Basic with a fixed list of users.
pub struct BasicAuth {
    realm: String,
    users: Vec<(String, String)>,
}

/// Compares without an early exit, so timing does not reveal where secrets differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, x) in a.iter().enumerate() {
        diff |= usize::from(x ^ b.get(i).copied().unwrap_or(!x));
    }
    diff == 0
}

impl BasicAuth {
    /// Accepts `user`:`password` (more with [`BasicAuth::user`]) in `realm`.
    pub fn new(realm: &str, user: &str, password: &str) -> Self {
        BasicAuth {
            realm: realm.to_owned(),
            users: vec![(user.to_owned(), password.to_owned())],
        }
    }

    /// Accepts one more user.
    pub fn user(mut self, user: &str, password: &str) -> Self {
        self.users.push((user.to_owned(), password.to_owned()));
        self
    }
}

impl Authenticator for BasicAuth {
    fn check(&self, authorization: Option<&str>) -> Result<(), String> {
        let header = authorization.ok_or("credentials required")?;
        let (scheme, token) = header
            .trim()
            .split_once(' ')
            .ok_or("malformed Authorization")?;
        if !scheme.eq_ignore_ascii_case("basic") {
            return Err(format!("scheme {scheme:?} not accepted"));
        }
        let decoded = base64::decode(token.trim()).ok_or("malformed Basic credentials")?;
        let text = String::from_utf8(decoded).map_err(|_| "credentials are not UTF-8")?;
        let (user, password) = text.split_once(':').ok_or("malformed Basic credentials")?;
        let mut ok = false;
        for (u, p) in &self.users {
            ok |= same(u.as_bytes(), user.as_bytes()) & same(p.as_bytes(), password.as_bytes());
        }
        if ok {
            Ok(())
        } else {
            Err("bad user or password".into())
        }
    }

    fn challenge(&self) -> String {
        format!(
            "Basic realm=\"{}\", charset=\"UTF-8\"",
            self.realm.replace('"', "")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basic(user_pass: &str) -> String {
        let mut out = b"Basic ".to_vec();
        base64::encode_into(user_pass.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn basic_credentials_are_checked() {
        let a = BasicAuth::new("app", "ada", "s3cret:x").user("bob", "pw");
        assert!(a.check(Some(&basic("ada:s3cret:x"))).is_ok());
        assert!(a.check(Some(&basic("bob:pw"))).is_ok());
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
    fn comparison_is_exact() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"ab"));
        assert!(!same(b"", b"a"));
        assert!(same(b"", b""));
    }
}
