//! Conversions between `SystemTime` and ASN.1 times.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use openssl::asn1::{Asn1Time, Asn1TimeRef};

use crate::error::{Error, Result};

/// `t` as an ASN.1 time (whole seconds).
pub(crate) fn asn1(t: SystemTime) -> Result<Asn1Time> {
    let secs = match t.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()),
        Err(before) => i64::try_from(before.duration().as_secs()).map(|s| -s),
    }
    .map_err(|_| Error::InvalidInput {
        what: "time",
        reason: "out of range".into(),
    })?;
    Ok(Asn1Time::from_unix(secs)?)
}

/// An ASN.1 time as a `SystemTime`.
pub(crate) fn system(t: &Asn1TimeRef) -> Result<SystemTime> {
    let diff = Asn1Time::from_unix(0)?.diff(t)?;
    let secs = i64::from(diff.days) * 86_400 + i64::from(diff.secs);
    let magnitude = Duration::from_secs(secs.unsigned_abs());
    Ok(if secs >= 0 {
        UNIX_EPOCH + magnitude
    } else {
        UNIX_EPOCH - magnitude
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_whole_seconds() {
        for secs in [0u64, 1_700_000_000, 4_000_000_000] {
            let t = UNIX_EPOCH + Duration::from_secs(secs);
            assert_eq!(system(&asn1(t).unwrap()).unwrap(), t);
        }
    }
}
