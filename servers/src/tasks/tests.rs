use super::*;

#[test]
fn the_seed_leaves_sixteen_tasks_six_of_them_completed() {
    let store = Store::open(None, &SCHEMA, seed).unwrap();
    let all = store
        .with(|db| {
            query_tasks(
                db,
                "SELECT id, title, notes, due, created, completed FROM tasks",
            )
        })
        .unwrap();
    assert_eq!(all.len(), 16);
    assert_eq!(all.iter().filter(|t| t.completed.is_some()).count(), 6);
    assert_eq!(all.last().map(|t| t.id), Some(16));
}

#[test]
fn task_numbers_complete_by_prefix() {
    let store = Store::open(None, &SCHEMA, seed).unwrap();
    assert_eq!(task_ids(&store, "16"), ["16"]);
    assert_eq!(task_ids(&store, "2"), ["2"]);
    assert!(task_ids(&store, "x").is_empty());
}
