//! [`BasicAuth`]: HTTP Basic (RFC 7617) against a list of users whose passwords are given
//! plain (kept only as a SHA-256 digest) or as a hash (`sha256:HEX` or
//! `pbkdf2-sha256:ITERATIONS:SALT_HEX:HASH_HEX`, see [`BasicAuth::hash_password`]), with a
//! per-user rights hook (which methods a user may use, say): 401 with the challenge when the
//! credentials are missing or wrong, 403 when the user may not do this. PBKDF2 runs on the
//! offload pool, once per credentials: a verified `user:password` digest is remembered. Wrong
//! credentials are logged (`warn`) with the user name they claimed, never the password.

use std::collections::HashSet;
use std::sync::Mutex;

use moria_crypto::encoding::{from_base64, from_hex, hex};
use moria_crypto::{constant_time_eq, hash, pbkdf2, random_bytes};

use crate::app::{HttpError, Layer, Next};
use crate::error::Error;
use crate::handler::HandlerResult;
use crate::method::Method;
use crate::request::Request;
use crate::response::Response;

/// PBKDF2 rounds of [`BasicAuth::hash_password`].
pub const DEFAULT_PBKDF2_ITERATIONS: u32 = 100_000;
/// Verified credentials remembered (beyond this the memory is cleared).
const MAX_VERIFIED: usize = 1024;

enum Secret {
    Sha256(Vec<u8>),
    Pbkdf2 {
        iterations: u32,
        salt: Vec<u8>,
        hash: Vec<u8>,
    },
}

struct User {
    name: String,
    secret: Secret,
}

/// What a user may do: `(user, request) -> allowed`.
type Rights = Box<dyn Fn(&str, &Request<'_>) -> bool + Send + Sync>;

/// HTTP Basic authentication with per-user rights.
pub struct BasicAuth {
    challenge: String,
    users: Vec<User>,
    rights: Option<Rights>,
    verified: Mutex<HashSet<Vec<u8>>>,
}

/// Whether `method` only reads (GET, HEAD, OPTIONS): the usual right of a read-only user.
pub fn read_only(method: Method) -> bool {
    matches!(method, Method::Get | Method::Head | Method::Options)
}

fn sha256(data: &[u8]) -> Vec<u8> {
    // sha256 is always in the catalogue; an empty digest matches nothing.
    hash("sha256", data).map(|d| d.to_vec()).unwrap_or_default()
}

impl BasicAuth {
    /// No users yet, in `realm`.
    pub fn new(realm: &str) -> BasicAuth {
        BasicAuth {
            challenge: format!(
                "Basic realm=\"{}\", charset=\"UTF-8\"",
                realm.replace('"', "")
            ),
            users: Vec::new(),
            rights: None,
            verified: Mutex::new(HashSet::new()),
        }
    }

    /// Accepts `name` with the plain `password`.
    pub fn user(mut self, name: &str, password: &str) -> BasicAuth {
        self.users.push(User {
            name: name.to_string(),
            secret: Secret::Sha256(sha256(password.as_bytes())),
        });
        self
    }

    /// Accepts `name` with a hashed password (`sha256:HEX` or
    /// `pbkdf2-sha256:ITERATIONS:SALT_HEX:HASH_HEX`).
    pub fn user_hashed(mut self, name: &str, hashed: &str) -> Result<BasicAuth, Error> {
        let bad = Error::Config("password hash: expected sha256:HEX or pbkdf2-sha256:N:SALT:HASH");
        let parts: Vec<&str> = hashed.split(':').collect();
        let secret = match parts.as_slice() {
            ["sha256", h] => Secret::Sha256(from_hex(h).filter(|d| d.len() == 32).ok_or(bad)?),
            ["pbkdf2-sha256", n, salt, h] => Secret::Pbkdf2 {
                iterations: n.parse().ok().filter(|&n| n > 0).ok_or(bad)?,
                salt: from_hex(salt).ok_or(Error::Config("password hash: salt is not hex"))?,
                hash: from_hex(h)
                    .filter(|h| !h.is_empty())
                    .ok_or(Error::Config("password hash: hash is not hex"))?,
            },
            _ => return Err(bad),
        };
        self.users.push(User {
            name: name.to_string(),
            secret,
        });
        Ok(self)
    }

    /// Decides per user and request what is allowed (403 otherwise), e.g.
    /// `.rights(|user, req| user == "admin" || read_only(req.method()))`.
    pub fn rights(
        mut self,
        f: impl Fn(&str, &Request<'_>) -> bool + Send + Sync + 'static,
    ) -> BasicAuth {
        self.rights = Some(Box::new(f));
        self
    }

    /// `pbkdf2-sha256:ITERATIONS:SALT:HASH` of `password` with a fresh salt, for
    /// [`user_hashed`](Self::user_hashed) (and command lines that print one).
    pub fn hash_password(password: &str) -> Result<String, Error> {
        let mut salt = [0u8; 16];
        let mut out = [0u8; 32];
        let failed = |_| Error::Config("no randomness or PBKDF2");
        random_bytes(&mut salt).map_err(failed)?;
        let n = DEFAULT_PBKDF2_ITERATIONS;
        pbkdf2("pbkdf2-sha256", password.as_bytes(), &salt, n, &mut out).map_err(failed)?;
        Ok(format!("pbkdf2-sha256:{n}:{}:{}", hex(&salt), hex(&out)))
    }

    /// The user the `Authorization` value names, if the password is right.
    #[cfg(test)]
    fn check(&self, authorization: Option<&str>) -> Option<&str> {
        self.verify(authorization).ok()
    }

    /// The user the `Authorization` value names if the password is right; else the name it
    /// claimed, when it is Basic credentials at all (for the log: never the password).
    fn verify(&self, authorization: Option<&str>) -> Result<&str, Option<String>> {
        let (scheme, token) = authorization
            .and_then(|a| a.trim().split_once(' '))
            .ok_or(None)?;
        if !scheme.eq_ignore_ascii_case("basic") {
            return Err(None);
        }
        let decoded = from_base64(token.trim()).ok_or(None)?;
        let colon = decoded.iter().position(|&c| c == b':').ok_or(None)?;
        let (name, password) = (&decoded[..colon], &decoded[colon + 1..]);
        let claimed = || Some(String::from_utf8_lossy(name).into_owned());
        let Some(user) = self.users.iter().find(|u| u.name.as_bytes() == name) else {
            // Hash anyway, so the time taken does not tell which user names exist.
            let _ = constant_time_eq(&sha256(password), &[0; 32]);
            return Err(claimed());
        };
        let ok = match &user.secret {
            Secret::Sha256(d) => constant_time_eq(d, &sha256(password)),
            Secret::Pbkdf2 {
                iterations,
                salt,
                hash,
            } => self.check_pbkdf2(&decoded, password, *iterations, salt, hash),
        };
        if ok {
            Ok(user.name.as_str())
        } else {
            Err(claimed())
        }
    }

    fn check_pbkdf2(
        &self,
        user_pass: &[u8],
        password: &[u8],
        iterations: u32,
        salt: &[u8],
        expected: &[u8],
    ) -> bool {
        let key = sha256(user_pass);
        let lock = || self.verified.lock().unwrap_or_else(|p| p.into_inner());
        if lock().contains(&key) {
            return true;
        }
        let (password, salt) = (password.to_vec(), salt.to_vec());
        let mut out = vec![0u8; expected.len()];
        let derived = moria_runtime::blocking(move || {
            pbkdf2("pbkdf2-sha256", &password, &salt, iterations, &mut out).map(|()| out)
        });
        let ok = matches!(derived, Ok(Ok(d)) if constant_time_eq(&d, expected));
        if ok {
            let mut set = lock();
            if set.len() >= MAX_VERIFIED {
                set.clear();
            }
            set.insert(key);
        }
        ok
    }
}

impl Layer for BasicAuth {
    fn handle(&self, req: &mut Request<'_>, res: &mut Response, next: Next<'_>) -> HandlerResult {
        let user = match self.verify(req.header_str("authorization")) {
            Ok(user) => user,
            Err(claimed) => {
                // Wrong credentials are worth a line (who, never the password); none at all is
                // how every browser asks first.
                if let Some(name) = claimed {
                    log::warn!(
                        "{}: Basic authentication failed for user {name:?} ({} {})",
                        req.peer_addr(),
                        req.method_str(),
                        req.path()
                    );
                }
                let e = HttpError::unauthorized("valid credentials required", &self.challenge);
                return Err(e.into());
            }
        };
        if let Some(rights) = &self.rights {
            if !rights(user, req) {
                let e = HttpError::forbidden(format!("{user} may not {}", req.method_str()));
                return Err(e.into());
            }
        }
        req.set_user(user);
        next.run(req, res);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use moria_crypto::encoding::base64;

    fn basic(user_pass: &str) -> String {
        format!("Basic {}", base64(user_pass.as_bytes()))
    }

    #[test]
    fn plain_and_hashed_passwords_are_checked() {
        let sha = hex(&sha256(b"pw2"));
        let auth = BasicAuth::new("r")
            .user("ada", "s3cret:x")
            .user_hashed("bob", &format!("sha256:{sha}"))
            .unwrap()
            .user_hashed("cy", "pbkdf2-sha256:1:00ff:")
            .err();
        assert!(auth.is_some(), "an empty hash is refused");
        let hashed = BasicAuth::hash_password("pw3").unwrap();
        let auth = BasicAuth::new("r")
            .user("ada", "s3cret:x")
            .user_hashed("bob", &format!("sha256:{sha}"))
            .unwrap()
            .user_hashed("cy", &hashed)
            .unwrap();
        assert_eq!(auth.check(Some(&basic("ada:s3cret:x"))), Some("ada"));
        assert_eq!(auth.check(Some(&basic("bob:pw2"))), Some("bob"));
        assert_eq!(auth.check(Some(&basic("cy:pw3"))), Some("cy"));
        assert_eq!(auth.check(Some(&basic("cy:pw3"))), Some("cy"));
        for bad in ["ada:wrong", "cy:pw2", "eve:pw2", "adapw"] {
            assert_eq!(auth.check(Some(&basic(bad))), None, "{bad}");
        }
        assert_eq!(auth.check(Some("Bearer x")), None);
        assert_eq!(auth.check(Some("Basic !!!")), None);
        assert_eq!(auth.check(None), None);
    }
}
