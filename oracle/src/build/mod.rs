//! Reproducible builds of the engine from pinned commits (ARCHITECTURE.md §4 "builds").

pub mod recipe;

pub use recipe::BuildRecipe;
