//! Which evaluation owns which pending nodes, so that a graph shared between
//! threads is computed once and every thread sees the result.
//!
//! An [`crate::Array`] is `Send + Sync`; several threads may ask for values
//! of the same pending graph at once. Each evaluation first *claims* every
//! pending node it will compute, atomically under one lock: it claims only
//! when none of them is claimed by another evaluation, and otherwise waits
//! (holding no claims) until some evaluation releases its own, then looks
//! at the graph again. Because a thread that holds claims never waits for
//! another, there is no cycle of waiting and so no deadlock; because a
//! claimed node is computed only by its owner, no node is computed twice and
//! no plan sees a node finished under it.
//!
//! This module owns the claim table and its lock; it plans and runs nothing.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::ThreadId;

use crate::error::{Error, Result};
use crate::graph::Array;

/// Claimed node ids and the thread whose evaluation owns each.
static TABLE: Mutex<Option<HashMap<usize, ThreadId>>> = Mutex::new(None);
/// Signalled whenever claims are released.
static RELEASED: Condvar = Condvar::new();

type Table = MutexGuard<'static, Option<HashMap<usize, ThreadId>>>;

fn lock() -> Table {
    TABLE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The pending nodes one evaluation owns until it drops this (also when it
/// unwinds from a panic, so a failed evaluation never strands its nodes).
#[derive(Debug)]
pub struct Claim {
    ids: Vec<usize>,
}

impl Drop for Claim {
    fn drop(&mut self) {
        if self.ids.is_empty() {
            return;
        }
        let mut table = lock();
        if let Some(t) = table.as_mut() {
            for id in &self.ids {
                t.remove(id);
            }
        }
        drop(table);
        RELEASED.notify_all();
    }
}

/// Collects the pending work behind some roots with `collect` and claims it.
///
/// `collect` runs under the claim lock and returns the pending nodes (inputs
/// before users). When none of them is claimed elsewhere they are claimed
/// for this thread and returned with the claim; when some are, this waits
/// for a release and collects again, since the other evaluation may have
/// computed part of the graph meanwhile. An empty result means nothing is
/// left to do.
///
/// A node claimed by this same thread means an evaluation that re-enters
/// itself (an op whose CPU code evaluates part of the graph being computed);
/// waiting would never end, so that is an error instead.
pub fn claim_pending(collect: impl Fn() -> Vec<Array>) -> Result<(Vec<Array>, Claim)> {
    let me = std::thread::current().id();
    let mut table = lock();
    loop {
        let pending = collect();
        let claims = table.get_or_insert_with(HashMap::new);
        let mut waits = false;
        for a in &pending {
            match claims.get(&a.node_id()) {
                Some(owner) if *owner == me => return Err(reentrant(a)),
                Some(_) => waits = true,
                None => {}
            }
        }
        if !waits {
            let ids: Vec<usize> = pending.iter().map(Array::node_id).collect();
            for &id in &ids {
                claims.insert(id, me);
            }
            return Ok((pending, Claim { ids }));
        }
        table = RELEASED.wait(table).unwrap_or_else(|e| e.into_inner());
    }
}

fn reentrant(a: &Array) -> Error {
    Error::InvalidArgument {
        op: "eval",
        name: "graph",
        value: format!("{} {} array", a.shape(), a.dtype()),
        why: format!(
            "the evaluation of `{}` needs its own result: an operation's CPU code \
             evaluated part of the graph it belongs to",
            a.op().map_or("leaf", |o| o.name())
        ),
    }
}
