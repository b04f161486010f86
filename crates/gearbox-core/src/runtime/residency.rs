//! Values held on a backend's device: [`Resident`] (the backend and its
//! buffer), the graph's device copy seen with its backend again
//! ([`Array::resident`]), and the residency table ([`residency_table`]).

use std::fmt;
use std::sync::Arc;

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::error::Result;
use crate::graph::{Array, DeviceCopy, Spec};
use crate::runtime::backend::{Backend, DeviceArc};
use crate::shape::Shape;

/// A value held on a backend's device.
#[derive(Clone)]
pub struct Resident {
    /// The backend that owns the buffer.
    pub backend: Arc<dyn Backend>,
    /// The buffer.
    pub buffer: DeviceArc,
}

impl fmt::Debug for Resident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Resident({}, {:?})", self.backend.name(), self.buffer)
    }
}

impl DeviceCopy for Resident {
    fn holder(&self) -> &'static str {
        self.backend.name()
    }

    fn size_bytes(&self) -> usize {
        self.buffer.size_bytes()
    }

    fn to_host(&self, spec: &Spec) -> Result<HostBuffer> {
        crate::runtime::execute::download(self, spec)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Array {
    /// The device copy of the values with its backend, if there is one.
    pub fn resident(&self) -> Option<Resident> {
        self.device_copy()
            .and_then(|c| c.as_any().downcast_ref::<Resident>().cloned())
    }

    /// Records a device copy of the values (the result of device work, or
    /// an upload), or drops it (`None`).
    pub(crate) fn set_resident(&self, r: Option<Resident>) {
        self.set_device_copy(r.map(|r| Arc::new(r) as Arc<dyn DeviceCopy>));
    }
}

/// One live array value held on a device, and who owns it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ResidentEntry {
    /// The backend holding it.
    pub backend: String,
    /// The array that owns the buffer ([`Array::node_id`]).
    pub node: usize,
    /// The operation that made the array ("input" for an array built from
    /// host values).
    pub op: &'static str,
    /// The array's shape.
    pub shape: Shape,
    /// Its dtype.
    pub dtype: DType,
    /// Device bytes.
    pub bytes: usize,
    /// Whether a host copy exists too.
    pub host_copy: bool,
}

/// The residency table: every live array value held on a device now.
pub fn residency_table() -> Vec<ResidentEntry> {
    crate::graph::device_copies()
        .into_iter()
        .map(|c| ResidentEntry {
            backend: c.copy.holder().to_string(),
            node: c.node,
            op: c.op,
            shape: c.spec.shape,
            dtype: c.spec.dtype,
            bytes: c.copy.size_bytes(),
            host_copy: c.host_copy,
        })
        .collect()
}
