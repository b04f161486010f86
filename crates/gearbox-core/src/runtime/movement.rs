//! Where data movement (`slice`, `concat`, `take`) runs: with its inputs. A copy
//! computes nothing, so no calibration threshold or precision rule applies;
//! what matters is the bytes it would move across the bus.
//!
//! A backend takes the work when at least one input is resident on it and
//! uploading its other inputs moves no more bytes than the host path would
//! download (its resident inputs that have no host copy). So a slice of a
//! resident array stays resident, a concat of resident parts stays resident,
//! a concat of resident parts and a small host part uploads the host part,
//! and work whose inputs are all on the host stays on the host. A take is
//! placed by its array alone ([`crate::ops::library::LibraryCall::placed_by`]): its positions
//! go where the array is.

use crate::graph::Array;
use crate::runtime::dispatch::{fmt_count, DataPath};

/// The verdict for one backend.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Placement {
    /// Whether the work runs on this backend.
    pub follows: bool,
    /// The path it takes there: resident when nothing is uploaded.
    pub path: DataPath,
    /// Why, with the bytes involved (shown by `explain`).
    pub detail: String,
}

fn bytes(a: &Array) -> usize {
    a.numel().saturating_mul(a.dtype().size_bytes())
}

/// Where data movement reading `inputs` should run, as seen from `backend`.
pub(crate) fn place(inputs: &[Array], backend: &str) -> Placement {
    let here = |a: &Array| a.resident().is_some_and(|r| r.backend.name() == backend);
    let uploads: usize = inputs.iter().filter(|a| !here(a)).map(bytes).sum();
    let downloads: usize = inputs
        .iter()
        .filter(|a| here(a) && a.host_value().is_none())
        .map(bytes)
        .sum();
    let path = if uploads == 0 {
        DataPath::Resident
    } else {
        DataPath::Cold
    };
    let (follows, detail) = if !inputs.iter().any(here) {
        (
            false,
            format!("data movement runs where its inputs are; none is resident on {backend}"),
        )
    } else if uploads == 0 {
        (
            true,
            format!("data movement follows its inputs (resident on {backend})"),
        )
    } else if uploads <= downloads {
        (
            true,
            format!(
                "data movement follows its inputs: uploads {} bytes of host inputs rather than downloading {}",
                fmt_count(uploads as f64),
                fmt_count(downloads as f64)
            ),
        )
    } else {
        (
            false,
            format!(
                "data movement stays on the host: uploading {} bytes to {backend} costs more than downloading {}",
                fmt_count(uploads as f64),
                fmt_count(downloads as f64)
            ),
        )
    };
    Placement {
        follows,
        path,
        detail,
    }
}
