//! Deserializing validated text newtypes so that a rejected value's error
//! carries the position of the value itself (serde's `try_from` attribute
//! reports it at the enclosing mapping instead).

use std::fmt;
use std::marker::PhantomData;

use serde::Deserializer;
use serde::de::{Error, Visitor};

/// Deserializes a string and converts it with `T::try_from`, failing at the string's position.
pub(crate) fn deserialize_checked<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<String, Error = String>,
{
    deserialize_parsed(deserializer, |text| T::try_from(text.to_owned()))
}

/// Deserializes a string and converts it with `parse`, failing at the string's position.
pub(crate) fn deserialize_parsed<'de, D, T, P>(deserializer: D, parse: P) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    P: FnOnce(&str) -> Result<T, String>,
{
    /// Visits one string and converts it.
    struct Parsed<T, P>(P, PhantomData<T>);

    impl<T, P: FnOnce(&str) -> Result<T, String>> Visitor<'_> for Parsed<T, P> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a string")
        }

        fn visit_str<E: Error>(self, text: &str) -> Result<T, E> {
            (self.0)(text).map_err(E::custom)
        }
    }

    deserializer.deserialize_str(Parsed(parse, PhantomData))
}

/// Implements `Deserialize` for a `TryFrom<String, Error = String>` newtype via [`deserialize_checked`].
macro_rules! deserialize_via_try_from {
    ($($type:ty),+) => {$(
        impl<'de> serde::Deserialize<'de> for $type {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                crate::governance::text::deserialize_checked(deserializer)
            }
        }
    )+};
}

pub(crate) use deserialize_via_try_from;
