//! A JSON document transcribed to MessagePack and back (spec/70.4): key order kept, and strings of at
//! least 64 uppercase hex digits of even length (electionguard's numbers) written as `bin`.

use rmpv::Value;

/// Shortest hex string written as bytes (a 32-byte hash); shorter ones stay strings.
pub const MIN_HEX_CHARS: usize = 64;
/// Nesting limit when reading (no ElectionGuard document is deeper than about 8).
pub const MAX_DEPTH: usize = 64;

fn is_eg_hex(s: &str) -> bool {
    s.len() >= MIN_HEX_CHARS
        && s.len().is_multiple_of(2)
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b))
}

fn numbers_to_bytes(v: &mut Value) {
    match v {
        Value::String(s) => {
            if let Some(text) = s.as_str() {
                if is_eg_hex(text) {
                    if let Ok(bytes) = hex::decode(text) {
                        *v = Value::Binary(bytes);
                    }
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(numbers_to_bytes),
        Value::Map(pairs) => pairs.iter_mut().for_each(|(_, x)| numbers_to_bytes(x)),
        _ => {}
    }
}

/// The MessagePack transcription of a JSON text.
pub fn json_to_msgpack(json: &str) -> Result<Value, String> {
    let mut value: Value = serde_json::from_str(json).map_err(|e| format!("not JSON: {e}"))?;
    numbers_to_bytes(&mut value);
    Ok(value)
}

fn bytes_to_numbers(v: &mut Value, depth: usize) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("nested deeper than {MAX_DEPTH}"));
    }
    match v {
        Value::Binary(bytes) => {
            if bytes.len() * 2 < MIN_HEX_CHARS {
                return Err(format!(
                    "a number of {} bytes (numbers are written as bytes from {} on)",
                    bytes.len(),
                    MIN_HEX_CHARS / 2
                ));
            }
            *v = Value::String(hex::encode_upper(&bytes).into());
        }
        Value::String(s) => {
            if s.as_str().is_none() {
                return Err("a string that is not UTF-8".into());
            }
        }
        Value::Array(items) => {
            for x in items {
                bytes_to_numbers(x, depth + 1)?;
            }
        }
        Value::Map(pairs) => {
            for (k, x) in pairs {
                if !matches!(k, Value::String(s) if s.as_str().is_some()) {
                    return Err("an object key that is not a string".into());
                }
                bytes_to_numbers(x, depth + 1)?;
            }
        }
        Value::Ext(..) => return Err("a MessagePack extension type".into()),
        Value::F32(_) => return Err("a 32-bit float (JSON numbers are written as 64-bit)".into()),
        Value::Nil | Value::Boolean(_) | Value::Integer(_) | Value::F64(_) => {}
    }
    Ok(())
}

/// The JSON text (compact, key order kept) of a transcribed document.
pub fn msgpack_to_json(mut value: Value) -> Result<String, String> {
    bytes_to_numbers(&mut value, 0)?;
    serde_json::to_string(&value).map_err(|e| format!("cannot be written as JSON: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip(json: &str) -> String {
        msgpack_to_json(json_to_msgpack(json).unwrap_or(Value::Nil)).unwrap_or_default()
    }

    #[test]
    fn numbers_become_bytes_and_come_back() {
        let big = "0A".repeat(512);
        let text = format!(
            r#"{{"z":1,"a":{{"pad":"{big}","id":"ABCDEF","neg":-3,"f":1.5,"n":null,"t":true}},"l":["{big}","x"]}}"#
        );
        let v = json_to_msgpack(&text).unwrap_or(Value::Nil);
        let Value::Map(pairs) = &v else {
            unreachable!("an object")
        };
        assert_eq!(pairs[0].0.as_str(), Some("z")); // key order kept
        let Value::Map(inner) = &pairs[1].1 else {
            unreachable!("an object")
        };
        assert!(matches!(&inner[0].1, Value::Binary(b) if b.len() == 512));
        assert!(matches!(&inner[1].1, Value::String(_))); // short hex stays text
        assert_eq!(round_trip(&text), text);
    }

    #[test]
    fn lowercase_odd_or_short_hex_stays_text() {
        for s in [
            "ab".repeat(40),
            format!("{}A", "B".repeat(70)),
            "C".repeat(62),
        ] {
            let text = format!("[\"{s}\"]");
            let v = json_to_msgpack(&text).unwrap_or(Value::Nil);
            assert!(matches!(&v, Value::Array(a) if matches!(a[0], Value::String(_))));
            assert_eq!(round_trip(&text), text);
        }
    }

    #[test]
    fn refuses_what_no_writer_produces() {
        for bad in [
            Value::Binary(vec![1; 31]),
            Value::Ext(1, vec![0]),
            Value::F32(1.0),
            Value::Map(vec![(Value::from(1), Value::Nil)]),
        ] {
            assert!(msgpack_to_json(Value::Array(vec![bad])).is_err());
        }
        let mut deep = Value::Nil;
        for _ in 0..(MAX_DEPTH + 2) {
            deep = Value::Array(vec![deep]);
        }
        assert!(msgpack_to_json(deep).is_err());
        assert!(json_to_msgpack("{not json").is_err());
    }

    proptest! {
        #[test]
        fn any_string_round_trips(s in "[0-9A-Fa-f\"\\\\ é]{0,140}") {
            let text = serde_json::to_string(&vec![s]).unwrap_or_default();
            prop_assert_eq!(round_trip(&text), text);
        }

        #[test]
        fn hex_numbers_round_trip(bytes in proptest::collection::vec(any::<u8>(), 32..600)) {
            let text = format!("{{\"x\":\"{}\"}}", hex::encode_upper(&bytes));
            prop_assert_eq!(round_trip(&text), text);
        }
    }
}
