//! `coherent`: UCI engine binary.

fn main() {}
