use super::layout::{BoxPlace, GAP_X, HEAD_H, INDEX_H, Layout, ROW_H, cell_w, text_w};
use super::svg::{edge_path, svg};
use super::*;

fn heap_tree() -> (StateTree, &'static str) {
    let trace: Trace = serde_json::from_str(include_str!("../../../tests/fixtures/heap.json")).unwrap();
    (
        StateTree::new(trace).unwrap(),
        include_str!("../../../tests/fixtures/heap.py"),
    )
}

fn slot_named<'a>(slots: &'a [Slot], label: &str) -> &'a Slot {
    slots.iter().find(|s| s.label == label).unwrap()
}

fn target(slot: &Slot) -> usize {
    match slot.value {
        SlotValue::Ref(o) => o,
        SlotValue::Inline(ref text) => panic!("{} is written in place ({text})", slot.label),
    }
}

#[test]
fn short_forms_name_functions_with_their_parameters() {
    let code = "def average(xs):\n    pass\n\nasync def fetch(url,\n          *, retries=3):\n    pass\n";
    let cases = [
        ("<function average at 0x7f01>", "function", "function average(xs)"),
        (
            "<function fetch at 0x7f01>",
            "function",
            "function fetch(url, *, retries=3)",
        ),
        (
            "<function outer.<locals>.<lambda> at 0x7f01>",
            "function",
            "function outer.<locals>.<lambda>",
        ),
        ("<class '__main__.Node'>", "type", "class Node"),
        (
            "<bound method Node.size of <__main__.Node object at 0x1>>",
            "method",
            "method Node.size",
        ),
        ("<module 'math' (built-in)>", "module", "module math"),
        ("<Thing object at 0x7f01>", "Thing", "<Thing object"),
    ];
    for (repr, type_name, short) in cases {
        let value = Value {
            repr: repr.into(),
            type_name: type_name.into(),
            object_id: 1,
            shape: Shape::Scalar,
        };
        assert_eq!(short_form(&value, code), short, "{repr}");
    }
}

#[test]
fn frames_point_at_shared_objects_and_objects_show_their_attributes() {
    let (tree, code) = heap_tree();
    let end = HeapModel::at(&tree, Stop::End, None, None, code);
    assert_eq!(end.frames.len(), 1);
    let globals = &end.frames[0];
    assert_eq!(globals.title, "Global frame");
    let names: Vec<&str> = globals.slots.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(names, ["average", "Node", "nums", "alias", "pair", "ages", "head"]);
    // An alias is a second arrow into the same box, and the tuple's item a third.
    let nums = target(slot_named(&globals.slots, "nums"));
    assert_eq!(target(slot_named(&globals.slots, "alias")), nums);
    let pair = &end.objects[target(slot_named(&globals.slots, "pair"))];
    assert_eq!(pair.title, "tuple");
    assert_eq!(target(&pair.slots[0]), nums);
    assert_eq!(pair.slots[1].value, SlotValue::Inline("'hi'".into()));
    let list = &end.objects[nums];
    assert_eq!(list.title, "list");
    assert!(
        list.row && !pair.row,
        "plain values in a row; a reference keeps its own line"
    );
    let items: Vec<_> = list.slots.iter().map(|s| (s.label.as_str(), s.value.clone())).collect();
    assert_eq!(items[3], ("3", SlotValue::Inline("4".into())));
    assert_eq!(
        end.objects[target(slot_named(&globals.slots, "average"))].title,
        "function average(xs)"
    );
    assert_eq!(
        end.objects[target(slot_named(&globals.slots, "Node"))].title,
        "class Node"
    );
    assert_eq!(
        slot_named(&end.objects[target(slot_named(&globals.slots, "ages"))].slots, "'ada'").value,
        SlotValue::Inline("36".into())
    );
    // A linked list: each node a box, `next` an arrow to the next one.
    let head = &end.objects[target(slot_named(&globals.slots, "head"))];
    assert_eq!(head.title, "Node");
    assert_eq!(slot_named(&head.slots, "value").value, SlotValue::Inline("1".into()));
    let second = &end.objects[target(slot_named(&head.slots, "next"))];
    assert_eq!(
        slot_named(&second.slots, "next").value,
        SlotValue::Inline("None".into())
    );
    // Every object once, however many names refer to it.
    let mut ids: Vec<u64> = end.objects.iter().map(|o| o.object_id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), end.objects.len());
    assert_eq!(end.references(), 9);
}

#[test]
fn a_call_adds_a_frame_and_a_mutation_is_marked() {
    let (tree, code) = heap_tree();
    let events = &tree.trace().events;
    // The append (line 16 -> 17): the list gained a highlighted row.
    let append = events.iter().rposition(|e| e.line == 16 && e.frame == 0).unwrap();
    let after = HeapModel::at(&tree, Stop::Event(append + 1), Some(Stop::Event(append)), None, code);
    let nums = target(slot_named(&after.frames[0].slots, "nums"));
    let changed: Vec<&str> = after.objects[nums]
        .slots
        .iter()
        .filter(|s| s.changed)
        .map(|s| s.label.as_str())
        .collect();
    assert_eq!(changed, ["3"]);
    // Inside average(): two frames, `xs` an arrow into the caller's list.
    let inside = events
        .iter()
        .position(|e| e.line == 2 && e.kind == replayground_shared::EventKind::Line)
        .unwrap();
    let call = HeapModel::at(&tree, Stop::Event(inside), None, None, code);
    let titles: Vec<&str> = call.frames.iter().map(|f| f.title.as_str()).collect();
    assert_eq!(titles, ["Global frame", "average()"]);
    assert!(call.frames[1].current && !call.frames[0].current);
    assert_eq!(
        target(slot_named(&call.frames[1].slots, "xs")),
        target(slot_named(&call.frames[0].slots, "nums"))
    );
    let picked = HeapModel::at(&tree, Stop::Event(inside), None, Some(call.frames[0].activation), code);
    assert!(picked.frames[0].current && !picked.frames[1].current);
}

#[test]
fn a_deep_stack_keeps_the_module_and_the_innermost_frames() {
    let trace: Trace = serde_json::from_str(include_str!("../../../tests/fixtures/deep.json")).unwrap();
    let tree = StateTree::new(trace).unwrap();
    // `down(0)` about to return: the module and 46 calls of down() on the stack.
    let bottom = tree.trace().events.iter().position(|e| e.line == 3).unwrap();
    let model = HeapModel::at(
        &tree,
        Stop::Event(bottom),
        None,
        None,
        include_str!("../../../tests/fixtures/deep.py"),
    );
    let titles: Vec<&str> = model.frames.iter().map(|f| f.title.as_str()).collect();
    assert_eq!(titles.len(), MAX_FRAMES + 1);
    assert_eq!(titles[..3], ["Global frame", "… 7 more frames …", "down()"]);
    assert!(model.frames[1].slots.is_empty() && !model.frames[1].current);
    assert_eq!(
        model.frames.last().unwrap().slots[0].value,
        SlotValue::Inline("0".into())
    );
    assert!(model.frames.last().unwrap().current);
}

#[test]
fn the_layout_puts_objects_right_of_what_refers_to_them_without_overlaps() {
    let (tree, code) = heap_tree();
    let model = HeapModel::at(&tree, Stop::End, None, None, code);
    let layout = Layout::of(&model);
    assert_eq!(layout.edges.len(), model.references());
    let frame = layout.frames[0];
    for edge in layout.edges.iter().filter(|e| !e.back) {
        assert!(edge.to.0 > edge.from.0, "{edge:?}");
    }
    // The tuple and the list it holds share a column: that arrow loops round into the
    // list's right side; the frame's arrows all go right.
    let globals = &model.frames[0];
    let (nums, pair) = (
        target(slot_named(&globals.slots, "nums")),
        target(slot_named(&globals.slots, "pair")),
    );
    let list = layout.objects[nums];
    let into_list = layout.edges.iter().filter(|e| e.back).collect::<Vec<_>>();
    assert_eq!(into_list.len(), 1);
    assert_eq!(into_list[0].to, (list.x + list.w, list.y + HEAD_H / 2));
    assert_eq!(into_list[0].from.1, layout.objects[pair].row_mid(0));
    let places: Vec<BoxPlace> = layout.frames.iter().chain(&layout.objects).copied().collect();
    for (i, a) in places.iter().enumerate() {
        assert!(a.x + a.w <= layout.width && a.y + a.h <= layout.height);
        for b in &places[i + 1..] {
            let apart = a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
            assert!(apart, "{a:?} overlaps {b:?}");
        }
    }
    // Objects the frame refers to directly share the first object column; the
    // second node hangs one column further right.
    let head = target(slot_named(&globals.slots, "head"));
    let second = target(slot_named(&model.objects[head].slots, "next"));
    assert_eq!(layout.objects[head].x, frame.w + GAP_X);
    assert!(layout.objects[second].x > layout.objects[head].x);
    // A short list of plain values is one row of cells under their indexes.
    let cells: i32 = model.objects[nums].slots.iter().map(cell_w).sum();
    assert_eq!((list.w, list.h), (cells.max(text_w("list")), HEAD_H + INDEX_H + ROW_H));
    // The first box sits level with the row that refers to it.
    let first = target(&globals.slots[0]);
    assert_eq!(layout.objects[first].y + HEAD_H / 2, frame.row_mid(0));
}

#[test]
fn a_cycle_is_a_back_arrow() {
    let model = HeapModel {
        frames: vec![FrameBox {
            title: "Global frame".into(),
            activation: 0,
            slots: vec![Slot {
                label: "xs".into(),
                value: SlotValue::Ref(0),
                changed: false,
            }],
            current: true,
        }],
        objects: vec![ObjectBox {
            object_id: 7,
            title: "list".into(),
            slots: vec![Slot {
                label: "0".into(),
                value: SlotValue::Ref(0),
                changed: false,
            }],
            more: false,
            row: false,
        }],
    };
    let layout = Layout::of(&model);
    assert_eq!(layout.edges.len(), 2);
    assert!(!layout.edges[0].back && layout.edges[1].back);
    let list = layout.objects[0];
    assert_eq!(layout.edges[1].to, (list.x + list.w, list.y + HEAD_H / 2));
    assert!(edge_path(&layout.edges[1]).starts_with('M'));
}

#[test]
fn the_svg_escapes_text_and_marks_changes() {
    let model = HeapModel {
        frames: vec![FrameBox {
            title: "Global frame".into(),
            activation: 0,
            slots: vec![Slot {
                label: "s".into(),
                value: SlotValue::Inline("'<b>'".into()),
                changed: true,
            }],
            current: true,
        }],
        objects: Vec::new(),
    };
    let svg = svg(&model, &Layout::of(&model));
    assert!(svg.starts_with(r#"<svg class="heap" data-testid="heap""#), "{svg}");
    assert!(
        svg.contains(r#"aria-label="1 frames, 0 objects, 0 references""#),
        "{svg}"
    );
    assert!(
        svg.contains(r#"<g class="frame current" data-activation="0">"#),
        "{svg}"
    );
    assert!(svg.contains(r#"class="cell changed""#), "{svg}");
    assert!(svg.contains(">'&lt;b&gt;'</text>"), "{svg}");
    assert!(svg.ends_with("</svg>"));
}
