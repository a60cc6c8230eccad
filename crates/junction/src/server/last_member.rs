//! Encoding a result with one more member written after its own: how a 2026-07-28 result
//! gets the `_meta` that carries the server's identity.
//!
//! The result is encoded through a serializer that passes everything to serde_json's, and
//! writes the extra member before the object closes. The alternatives cost more: a struct
//! that flattens the result beside the member goes through serde's flattening path (about
//! 750 instructions per call more than this), and splicing the member into the encoded text
//! needs [`RawValue::from_string`], which parses the whole text again to check it (about
//! 2,800 more).

use serde::ser::{self, Impossible, Serialize, SerializeMap, SerializeStruct, Serializer};
use serde_json::value::RawValue;

/// Encodes `value`, an object (a struct or a map), followed by the member `key: member`.
/// `value` must not have a member named `key` itself.
pub(super) fn encode<T: Serialize + ?Sized>(
    value: &T,
    key: &'static str,
    member: &RawValue,
) -> Result<Box<RawValue>, serde_json::Error> {
    struct Adding<'a, T: ?Sized> {
        value: &'a T,
        key: &'static str,
        member: &'a RawValue,
    }
    impl<T: Serialize + ?Sized> Serialize for Adding<'_, T> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            self.value.serialize(Last {
                inner: serializer,
                key: self.key,
                member: self.member,
            })
        }
    }
    serde_json::value::to_raw_value(&Adding { value, key, member })
}

/// Passes an object through to `inner`, and writes `key: member` last.
struct Last<'a, S> {
    inner: S,
    key: &'static str,
    member: &'a RawValue,
}

/// An open object of `inner`, which ends with `key: member`.
struct Open<'a, M> {
    inner: M,
    key: &'static str,
    member: &'a RawValue,
}

impl<M: SerializeMap> SerializeMap for Open<'_, M> {
    type Ok = M::Ok;
    type Error = M::Error;

    fn serialize_key<K: Serialize + ?Sized>(&mut self, key: &K) -> Result<(), M::Error> {
        self.inner.serialize_key(key)
    }

    fn serialize_value<V: Serialize + ?Sized>(&mut self, value: &V) -> Result<(), M::Error> {
        self.inner.serialize_value(value)
    }

    fn serialize_entry<K: Serialize + ?Sized, V: Serialize + ?Sized>(
        &mut self,
        key: &K,
        value: &V,
    ) -> Result<(), M::Error> {
        self.inner.serialize_entry(key, value)
    }

    fn end(mut self) -> Result<M::Ok, M::Error> {
        self.inner.serialize_entry(self.key, self.member)?;
        self.inner.end()
    }
}

impl<M: SerializeStruct> SerializeStruct for Open<'_, M> {
    type Ok = M::Ok;
    type Error = M::Error;

    fn serialize_field<V: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &V,
    ) -> Result<(), M::Error> {
        self.inner.serialize_field(key, value)
    }

    fn skip_field(&mut self, key: &'static str) -> Result<(), M::Error> {
        self.inner.skip_field(key)
    }

    fn end(mut self) -> Result<M::Ok, M::Error> {
        self.inner.serialize_field(self.key, self.member)?;
        self.inner.end()
    }
}

/// What [`Last`] refuses: a value that is not an object has no member to add.
fn not_an_object<E: ser::Error>() -> E {
    E::custom("a result must be a JSON object")
}

/// Refuses each kind of value that is not an object.
macro_rules! refuse {
    ($($method:ident($($arg:ty),*)),* $(,)?) => {
        $(fn $method(self, $(_: $arg),*) -> Result<S::Ok, S::Error> {
            Err(not_an_object())
        })*
    };
}

impl<'a, S: Serializer> Serializer for Last<'a, S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Impossible<S::Ok, S::Error>;
    type SerializeTuple = Impossible<S::Ok, S::Error>;
    type SerializeTupleStruct = Impossible<S::Ok, S::Error>;
    type SerializeTupleVariant = Impossible<S::Ok, S::Error>;
    type SerializeMap = Open<'a, S::SerializeMap>;
    type SerializeStruct = Open<'a, S::SerializeStruct>;
    type SerializeStructVariant = Impossible<S::Ok, S::Error>;

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        Ok(Open {
            inner: self.inner.serialize_map(len.map(|n| n + 1))?,
            key: self.key,
            member: self.member,
        })
    }

    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        Ok(Open {
            inner: self.inner.serialize_struct(name, len + 1)?,
            key: self.key,
            member: self.member,
        })
    }

    // A wrapper around an object is that object.
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        value.serialize(self)
    }

    refuse!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
    );

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<S::Ok, S::Error> {
        Err(not_an_object())
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        Err(not_an_object())
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, S::Error> {
        Err(not_an_object())
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, S::Error> {
        Err(not_an_object())
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        Err(not_an_object())
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        Err(not_an_object())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Serialize;

    use super::*;

    #[derive(Serialize)]
    struct Plain {
        a: u8,
        #[serde(skip_serializing_if = "Option::is_none")]
        b: Option<u8>,
    }

    #[derive(Serialize)]
    struct Flattened {
        a: u8,
        #[serde(flatten)]
        extra: BTreeMap<String, u8>,
    }

    #[derive(Serialize)]
    #[serde(untagged)]
    enum Either {
        Plain(Plain),
    }

    fn member() -> Box<RawValue> {
        RawValue::from_string(r#"{"k":[1,"x"]}"#.to_owned()).unwrap()
    }

    #[test]
    fn the_member_is_written_last_in_structs_maps_and_what_wraps_them() {
        let m = member();
        let text = |r: Result<Box<RawValue>, serde_json::Error>| r.unwrap().get().to_owned();
        let plain = Plain { a: 1, b: None };
        assert_eq!(
            text(encode(&plain, "_m", &m)),
            r#"{"a":1,"_m":{"k":[1,"x"]}}"#
        );
        let flattened = Flattened {
            a: 1,
            extra: [("z".to_owned(), 2)].into_iter().collect(),
        };
        assert_eq!(
            text(encode(&flattened, "_m", &m)),
            r#"{"a":1,"z":2,"_m":{"k":[1,"x"]}}"#
        );
        let empty: BTreeMap<String, u8> = BTreeMap::new();
        assert_eq!(text(encode(&empty, "_m", &m)), r#"{"_m":{"k":[1,"x"]}}"#);
        let wrapped = Either::Plain(Plain { a: 3, b: Some(4) });
        assert_eq!(
            text(encode(&Some(&wrapped), "_m", &m)),
            r#"{"a":3,"b":4,"_m":{"k":[1,"x"]}}"#
        );
    }

    #[test]
    fn a_value_that_is_not_an_object_is_refused() {
        let m = member();
        for refused in [
            encode(&1, "_m", &m),
            encode("text", "_m", &m),
            encode(&[1, 2], "_m", &m),
            encode(&(), "_m", &m),
            encode(&None::<Plain>, "_m", &m),
        ] {
            let e = refused.expect_err("not an object");
            assert!(e.to_string().contains("must be a JSON object"), "{e}");
        }
    }
}
