//! Lona terms and per-process heaps (under construction).
