//! Names the API had before, kept as deprecated aliases: code written
//! against them still compiles and means the same thing.
#![allow(deprecated)]

#[test]
fn cx_is_the_old_name_of_step_cx() {
    fn step(_: Option<&mut lona_runtime::StepCx<'_>>) -> &'static str {
        "step"
    }
    // A function written for the old name takes the new type, and back.
    let old: fn(Option<&mut lona_runtime::Cx<'_>>) -> &'static str = step;
    assert_eq!(old(None), "step");
    assert_eq!(
        std::any::type_name::<lona_runtime::Cx<'static>>(),
        std::any::type_name::<lona_runtime::StepCx<'static>>()
    );
}
