//! [`Kept`]: values made once per key and kept, up to a number of keys
//! after which the map starts over (what it holds is cheap to make again).
//! The device keeps uniform buffers by contents with it, the backend small
//! uploads: both are never written after they are made, so one value can
//! serve every use of its key.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

/// Values by key, at most `most` of them.
pub struct Kept<K, V> {
    map: Mutex<HashMap<K, V>>,
    most: usize,
}

impl<K: Hash + Eq, V: Clone> Kept<K, V> {
    /// An empty map that keeps at most `most` values.
    pub fn new(most: usize) -> Self {
        Kept {
            map: Mutex::default(),
            most,
        }
    }

    /// The value of `key`, made by `make` on first sight.
    pub fn get_or_make<E>(&self, key: K, make: impl FnOnce() -> Result<V, E>) -> Result<V, E> {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = map.get(&key) {
            return Ok(v.clone());
        }
        if map.len() >= self.most {
            map.clear();
        }
        let v = make()?;
        map.insert(key, v.clone());
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_made_once_and_the_map_starts_over_when_full() {
        let kept = Kept::new(2);
        let mut made = 0;
        let mut get = |k: u8| {
            kept.get_or_make(k, || {
                made += 1;
                Ok::<_, ()>(u32::from(k) * 10)
            })
            .unwrap()
        };
        assert_eq!((get(1), get(1), get(2)), (10, 10, 20));
        assert_eq!(get(3), 30);
        assert_eq!(get(1), 10);
        assert_eq!(made, 4);
    }
}
