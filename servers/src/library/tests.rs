use super::*;

#[test]
fn like_patterns_match_what_was_typed_literally() {
    assert_eq!(escape_like(r"100%_a\b"), r"100\%\_a\\b");
}

#[test]
fn the_seeded_catalogue_has_science_with_and_without_copies() {
    let store = Store::open(None, &catalogue::SCHEMA, catalogue::seed).unwrap();
    let Json(found) = search(
        &store,
        SearchArgs {
            query: String::new(),
            subject: Some("science".into()),
            limit: None,
        },
    )
    .unwrap();
    assert!(found.results.iter().any(|b| b.available == 0));
    assert!(found.results.iter().filter(|b| b.available > 0).count() >= 3);
}

#[test]
fn copies_are_counted_in_words() {
    assert_eq!(copies(0), "0 copies");
    assert_eq!(copies(1), "1 copy");
    assert_eq!(copies(3), "3 copies");
}
