//! The edit actions that turn a report's code into a runnable reproduction, one file
//! each (RepGen's rule-based generator; the actions its authors found reproduce most
//! deep-learning bugs, EMSE 2024, arXiv 2401.03069). Each takes the script and says
//! what it changed, or leaves it and says nothing: an [`EditAction`]. The generators
//! ([`crate::generate`]) and refinement ([`crate::refine`]) choose which run, in order.

mod append_observer;
mod code;
mod comment_out_unparsable;
mod complete_imports;
mod dedent;
mod define_undefined;
mod detach_project_imports;
mod drive_context;
mod drop_invented_imports;
mod fix_seeds;
mod hoist_main_blocks;
mod migrate_deprecated;
mod migrate_keras1;
mod repair_indentation;
mod run_on_cpu;
mod show_warnings;
mod shrink_loops;
mod stand_ins;
mod stated_data;
mod strip_notebook;
mod synthesize_data;
mod synthesize_datasets;
mod synthesize_images;
mod synthetic_frame;
mod uncatch_reported;
mod write_missing_files;

pub(crate) use append_observer::OBSERVER_MARK;
pub(crate) use append_observer::append_observer;
pub(crate) use code::{
    add_imports, bound_before_use, defines, defines_at_module_level, first_use_statement, inferred_shape, re,
    strip_strings, value_reads, word,
};
pub(crate) use comment_out_unparsable::comment_out_unparsable;
pub(crate) use complete_imports::complete_imports;
pub(crate) use dedent::dedent;
pub(crate) use define_undefined::define_undefined;
pub(crate) use detach_project_imports::detach_project_imports;
pub(crate) use drive_context::drive_context;
pub(crate) use drop_invented_imports::drop_imports_of;
pub(crate) use fix_seeds::fix_seeds;
pub(crate) use hoist_main_blocks::hoist_main_blocks;
pub(crate) use migrate_deprecated::migrate_deprecated;
pub(crate) use migrate_keras1::migrate_keras1;
pub(crate) use repair_indentation::{fill_empty_blocks, repair_indentation};
pub(crate) use run_on_cpu::run_on_cpu;
pub(crate) use show_warnings::show_warnings;
pub(crate) use shrink_loops::shrink_loops;
pub(crate) use strip_notebook::strip_notebook;
pub(crate) use synthesize_data::synthesize_data;
pub(crate) use synthesize_datasets::synthesize_datasets;
pub(crate) use synthesize_images::synthesize_images;
pub(crate) use uncatch_reported::uncatch_reported;
pub(crate) use write_missing_files::{missing_array_file, write_missing_file};

/// One edit action: changes the code and says what it did, or leaves it and says nothing.
pub(crate) type EditAction<'a> = dyn Fn(&mut String) -> Option<String> + 'a;
