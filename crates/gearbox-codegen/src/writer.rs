//! An indenting line writer for generated source.

/// Collects source lines with two-space indentation.
#[derive(Debug, Default)]
pub(crate) struct Writer {
    out: String,
    depth: usize,
}

impl Writer {
    /// One line at the current depth (an empty `text` gives an empty line).
    pub(crate) fn line(&mut self, text: impl AsRef<str>) {
        let text = text.as_ref();
        if text.is_empty() {
            self.out.push('\n');
            return;
        }
        // Preprocessor lines stay in column 0.
        if !text.starts_with('#') {
            for _ in 0..self.depth {
                self.out.push_str("  ");
            }
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// A line that may be empty (a compiler hint a dialect lacks): written
    /// only when it is not.
    pub(crate) fn hint(&mut self, text: impl AsRef<str>) {
        if !text.as_ref().is_empty() {
            self.line(text);
        }
    }

    /// Several lines, each at the current depth.
    pub(crate) fn lines(&mut self, text: &str) {
        for l in text.lines() {
            self.line(l);
        }
    }

    /// `head {` and one level deeper.
    pub(crate) fn open(&mut self, head: impl AsRef<str>) {
        let head = head.as_ref();
        if head.is_empty() {
            self.line("{");
        } else {
            self.line(format!("{head} {{"));
        }
        self.depth += 1;
    }

    /// One level deeper, writing nothing (after a head that ends in `{`).
    pub(crate) fn indent(&mut self) {
        self.depth += 1;
    }

    /// One level shallower and `}`.
    pub(crate) fn close(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        self.line("}");
    }

    /// The text written so far.
    pub(crate) fn finish(self) -> String {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writer_indents_and_keeps_pragmas_left() {
        let mut w = Writer::default();
        w.open("void f()");
        w.line("#pragma unroll");
        w.line("x();");
        w.close();
        assert_eq!(w.finish(), "void f() {\n#pragma unroll\n  x();\n}\n");
    }
}
