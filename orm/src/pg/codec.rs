//! The frontend half of the wire codec: Parse/Describe and Bind/Execute/Sync encoding, the
//! protocol's size limits, and the affected-row count of a CommandComplete tag.

use bytes::BytesMut;
use postgres_protocol::message::frontend;
use postgres_types::ToSql;

use super::error::{Error, Result};
use super::row::Statement;

/// Most parameters one statement can have (the protocol counts them in 16 bits).
pub const MAX_PARAMS: u32 = 65_535;
/// Longest statement text the server accepts (its 1 GiB message limit).
pub const MAX_STATEMENT_LEN: usize = (1 << 30) - 1024;

/// A parameter list: values that convert to the statement's parameter types.
pub type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// Appends Parse + Describe for `sql` as statement `name` (no Sync).
pub(crate) fn encode_prepare(buf: &mut BytesMut, name: &str, sql: &str) -> Result<()> {
    check_size(sql)?;
    frontend::parse(name, sql, std::iter::empty(), buf)?;
    frontend::describe(b'S', name, buf)?;
    Ok(())
}

/// Appends Bind + Execute + Sync for `stmt` with `params`; nothing is appended on error.
pub(crate) fn encode_execute(
    buf: &mut BytesMut,
    stmt: &Statement,
    params: Params<'_>,
) -> Result<()> {
    if params.len() != stmt.params.len() {
        return Err(Error::Conversion(format!(
            "the statement has {} parameters but {} values were given",
            stmt.params.len(),
            params.len()
        )));
    }
    let mark = buf.len();
    let bound = frontend::bind(
        "",
        &stmt.name,
        Some(1),
        params.iter().zip(stmt.params.iter()),
        |(p, ty), buf| match p.to_sql_checked(ty, buf)? {
            postgres_types::IsNull::Yes => Ok(postgres_protocol::IsNull::Yes),
            postgres_types::IsNull::No => Ok(postgres_protocol::IsNull::No),
        },
        Some(1),
        buf,
    );
    if let Err(e) = bound {
        buf.truncate(mark);
        return Err(match e {
            frontend::BindError::Conversion(e) => Error::Conversion(e.to_string()),
            frontend::BindError::Serialization(e) => Error::Conversion(e.to_string()),
        });
    }
    frontend::execute("", 0, buf)?;
    frontend::sync(buf);
    Ok(())
}

/// Refuses statements the protocol cannot carry: more than [`MAX_PARAMS`] parameters, or
/// text over [`MAX_STATEMENT_LEN`].
pub(crate) fn check_size(sql: &str) -> Result<()> {
    if sql.len() > MAX_STATEMENT_LEN {
        return Err(Error::Conversion(format!(
            "statement of {} bytes exceeds the protocol's {MAX_STATEMENT_LEN}",
            sql.len()
        )));
    }
    let b = sql.as_bytes();
    let mut i = 0;
    while let Some(k) = memchr::memchr(b'$', &b[i..]) {
        i += k + 1;
        let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits > 5
            || (digits == 5
                && std::str::from_utf8(&b[i..i + 5])
                    .ok()
                    .and_then(|d| d.parse::<u32>().ok())
                    .is_some_and(|n| n > MAX_PARAMS))
        {
            return Err(Error::Conversion(format!(
                "statement uses more than the protocol's {MAX_PARAMS} parameters"
            )));
        }
        i += digits;
    }
    Ok(())
}

/// The row count at the end of a CommandComplete tag (`INSERT 0 3` → 3; 0 when it has none).
pub(crate) fn rows_affected(b: &postgres_protocol::message::backend::CommandCompleteBody) -> u64 {
    b.tag()
        .ok()
        .and_then(|t| t.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}
