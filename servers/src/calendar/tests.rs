use super::*;

#[test]
fn times_must_be_hh_mm_on_a_24_hour_clock() {
    for good in ["00:00", "09:30", "23:59"] {
        assert_eq!(parse_time(good).as_deref(), Ok(good));
    }
    for bad in ["9:30", "24:00", "12:60", "noon", "12:3a", "1é:00", "+1:30"] {
        assert_eq!(
            parse_time(bad),
            Err(format!(
                "Time '{bad}' is not in HH:MM form (24-hour). Try again, for example 09:30."
            ))
        );
    }
}

#[test]
fn events_are_described_with_their_times_and_place() {
    let mut event = Event {
        id: 1,
        title: "Dentist".into(),
        date: "2026-11-03".into(),
        start: Some("09:30".into()),
        end: None,
        location: None,
    };
    assert_eq!(describe(&event), "Dentist on 2026-11-03 at 09:30.");
    event.end = Some("10:00".into());
    event.location = Some("Harbour Street".into());
    assert_eq!(
        describe(&event),
        "Dentist on 2026-11-03 from 09:30 to 10:00, at Harbour Street."
    );
    event.start = None;
    event.end = None;
    event.location = None;
    assert_eq!(describe(&event), "Dentist on 2026-11-03 (all day).");
}
