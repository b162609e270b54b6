//! One `<record>` as the XML state machine leaves it: reusable buffers of
//! leaves and frames, read by `reader.rs` and turned into records by
//! `record.rs` (neither needs the other).

use crate::model::Frame;

/// The leaves of one `<record>`, as (path below `record`, text) pairs, and
/// its frames. `leaves[..len]` are this record's; the rest are spare buffers.
#[derive(Default)]
pub(super) struct RawRecord {
    pub(super) leaves: Vec<(String, String)>,
    pub(super) len: usize,
    pub(super) frames: Vec<RawFrame>,
    pub(super) frames_len: usize,
}

/// One `<frame>`'s fields, kept as reusable buffers: a record's stack is
/// turned into [`Frame`]s only when the caller asks (most records repeat a
/// site whose stack is already known).
#[derive(Default)]
pub(super) struct RawFrame {
    pub(super) device: bool,
    /// func, module, path, line, pc.
    pub(super) fields: [String; 5],
    pub(super) present: u8,
}

impl RawFrame {
    pub(super) fn field(&self, i: usize) -> Option<String> {
        (self.present & (1 << i) != 0).then(|| self.fields[i].clone())
    }

    pub(super) fn to_frame(&self) -> Frame {
        Frame {
            func: self.field(0),
            module: self.field(1),
            file: self.field(2),
            line: self.field(3).and_then(|l| l.parse().ok()),
            pc: self.field(4),
        }
    }
}

impl RawRecord {
    pub(super) fn clear(&mut self) {
        self.len = 0;
        self.frames_len = 0;
    }

    pub(super) fn leaves(&self) -> &[(String, String)] {
        &self.leaves[..self.len]
    }

    pub(super) fn frames(&self) -> &[RawFrame] {
        &self.frames[..self.frames_len]
    }

    /// The host stack as [`Frame`]s, innermost first.
    pub(super) fn host_frames(&self) -> Vec<Frame> {
        self.frames()
            .iter()
            .filter(|f| !f.device)
            .map(RawFrame::to_frame)
            .collect()
    }

    /// The device stack as [`Frame`]s, innermost first.
    pub(super) fn device_frames(&self) -> Vec<Frame> {
        self.frames()
            .iter()
            .filter(|f| f.device)
            .map(RawFrame::to_frame)
            .collect()
    }
}
