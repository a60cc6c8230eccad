//! The library's tables and the sample catalogue a new database starts with.

use crate::date::Date;
use crate::store::{DbError, Schema, Sql};

/// The tables: the catalogue with the copies on the shelf, and the reader's loans and holds.
pub(super) const SCHEMA: Schema = Schema {
    server: super::NAME,
    sqlite: TABLES,
    // Integers are BIGINT to read back as SQLite's do.
    postgres: "
CREATE TABLE books (
    isbn TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    author TEXT NOT NULL,
    subject TEXT NOT NULL,
    year BIGINT NOT NULL,
    available BIGINT NOT NULL CHECK (available >= 0)
);
CREATE TABLE loans (
    isbn TEXT PRIMARY KEY REFERENCES books(isbn),
    due TEXT NOT NULL,
    renewals BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE holds (
    isbn TEXT PRIMARY KEY REFERENCES books(isbn),
    placed TEXT NOT NULL
);
",
};

const TABLES: &str = "
CREATE TABLE books (
    isbn TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    author TEXT NOT NULL,
    subject TEXT NOT NULL,
    year INTEGER NOT NULL,
    available INTEGER NOT NULL CHECK (available >= 0)
);
CREATE TABLE loans (
    isbn TEXT PRIMARY KEY REFERENCES books(isbn),
    due TEXT NOT NULL,
    renewals INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE holds (
    isbn TEXT PRIMARY KEY REFERENCES books(isbn),
    placed TEXT NOT NULL
);
";

/// The sample catalogue: ISBN, title, author, subject, year, copies on the shelf.
pub(super) const BOOKS: &[(&str, &str, &str, &str, i64, i64)] = &[
    (
        "9780000000011",
        "A Brief History of Light",
        "Ada Lindqvist",
        "science",
        2019,
        3,
    ),
    (
        "9780000000028",
        "The Living Cell",
        "Tomas Okafor",
        "science",
        2021,
        2,
    ),
    (
        "9780000000035",
        "Stars Over the Desert",
        "Mira Haddad",
        "science",
        2017,
        1,
    ),
    (
        "9780000000042",
        "Maps of Small Rivers",
        "Jonah Pike",
        "science",
        2022,
        0,
    ),
    (
        "9780000000059",
        "Why the Sea Is Salty",
        "Ines Marchetti",
        "science",
        2015,
        2,
    ),
    (
        "9780000000066",
        "Salt and Stone",
        "Rafael Ortiz",
        "history",
        2012,
        1,
    ),
    (
        "9780000000073",
        "The Bridge Builders",
        "Helen Ashworth",
        "history",
        2018,
        2,
    ),
    (
        "9780000000080",
        "The Long Winter Garden",
        "Yuki Tanabe",
        "fiction",
        2020,
        0,
    ),
    (
        "9780000000097",
        "A Lantern in the Fog",
        "Owen Reyes",
        "fiction",
        2016,
        4,
    ),
    (
        "9780000000103",
        "Bread, Slowly",
        "Marta Kowalska",
        "cooking",
        2023,
        1,
    ),
];

/// The reader's loans at the start: ISBN, days until due, renewals used.
pub(super) const LOANS: &[(&str, i64, i64)] = &[
    ("9780000000080", 5, 0), // The Long Winter Garden
    ("9780000000066", 2, 2), // Salt and Stone, renewed as often as allowed
];

/// Fills a new database with the sample catalogue and loans.
pub(super) fn seed(db: &mut dyn Sql) -> Result<(), DbError> {
    for (isbn, title, author, subject, year, available) in BOOKS {
        db.execute(
            "INSERT INTO books (isbn, title, author, subject, year, available) VALUES ($1, $2, $3, $4, $5, $6)",
            &[(*isbn).into(), (*title).into(), (*author).into(), (*subject).into(), (*year).into(), (*available).into()],
        )?;
    }
    let today = Date::today();
    for (isbn, days, renewals) in LOANS {
        db.execute(
            "INSERT INTO loans (isbn, due, renewals) VALUES ($1, $2, $3)",
            &[
                (*isbn).into(),
                today.plus_days(*days).to_string().into(),
                (*renewals).into(),
            ],
        )?;
    }
    Ok(())
}
