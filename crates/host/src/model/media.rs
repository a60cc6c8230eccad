//! Images and audio from tool results, checked against what a provider takes.
//!
//! A tool result keeps its images and audio beside its text ([`Media`]). Before they go to
//! a provider, each is checked against what that provider documents: the formats it decodes
//! (recognised from the bytes, not from the declared type, because a provider refuses the
//! whole request when the two disagree), its limit per image, and a budget for all the media
//! of one request, spent on the newest first (the whole conversation is sent each time, so
//! old screenshots must not crowd out the one just taken). What passes goes as the
//! provider's image or audio block; what does not becomes a note beside the result's text
//! naming its type, its size and why, so the model knows something was there and the
//! request is never refused for it.

use base64::Engine;

use crate::conversation::{Conversation, Media, MediaKind};

/// A format a provider decodes, recognised from the first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Png,
    Jpeg,
    Gif,
    Webp,
    Wav,
    Mp3,
}

impl Format {
    /// The MIME type the provider is told.
    pub(crate) fn mime_type(self) -> &'static str {
        match self {
            Format::Png => "image/png",
            Format::Jpeg => "image/jpeg",
            Format::Gif => "image/gif",
            Format::Webp => "image/webp",
            Format::Wav => "audio/wav",
            Format::Mp3 => "audio/mpeg",
        }
    }

    /// The name OpenAI's `input_audio.format` takes.
    pub(crate) fn audio_format(self) -> &'static str {
        match self {
            Format::Mp3 => "mp3",
            _ => "wav",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Format::Png => "PNG",
            Format::Jpeg => "JPEG",
            Format::Gif => "GIF",
            Format::Webp => "WebP",
            Format::Wav => "WAV",
            Format::Mp3 => "MP3",
        }
    }

    /// The format of `bytes` (the start of the data is enough).
    fn sniff(bytes: &[u8]) -> Option<Format> {
        match bytes {
            [0x89, b'P', b'N', b'G', ..] => Some(Format::Png),
            [0xFF, 0xD8, 0xFF, ..] => Some(Format::Jpeg),
            [b'G', b'I', b'F', b'8', ..] => Some(Format::Gif),
            [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => Some(Format::Webp),
            [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'A', b'V', b'E', ..] => Some(Format::Wav),
            [b'I', b'D', b'3', ..] | [0xFF, 0xFB | 0xF3 | 0xF2, ..] => Some(Format::Mp3),
            _ => None,
        }
    }
}

/// What one provider takes.
#[derive(Debug)]
pub(crate) struct Limits {
    /// The provider, as named in notes.
    pub provider: &'static str,
    /// The image formats it decodes.
    pub images: &'static [Format],
    /// The longest image it takes, in characters of base64.
    pub max_image: usize,
    /// The audio formats it decodes (none: it takes no audio).
    pub audio: &'static [Format],
    /// The longest sound it takes, in characters of base64.
    pub max_audio: usize,
    /// How many characters of base64 all the media of one request may hold together.
    pub budget: usize,
}

/// What becomes of one image or sound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fit {
    /// It is sent, as this format.
    Send(Format),
    /// It is left out; the note says what it was and why.
    Note(String),
}

const MIB: usize = 1024 * 1024;

/// `n` characters of base64, readably.
fn size(n: usize) -> String {
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else {
        format!("{n} bytes")
    }
}

fn list(formats: &[Format]) -> String {
    let names: Vec<&str> = formats.iter().map(|f| f.name()).collect();
    match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Checks one image or sound against `limits`, spending `budget` if it is sent.
pub(crate) fn check(
    kind: MediaKind,
    mime_type: &str,
    data: &str,
    limits: &Limits,
    budget: &mut usize,
) -> Fit {
    let (what, whats, formats, max) = match kind {
        MediaKind::Image => ("image", "images", limits.images, limits.max_image),
        MediaKind::Audio => ("audio", "audio", limits.audio, limits.max_audio),
    };
    let note = |why: String| {
        Fit::Note(format!(
            "[the {mime_type} {what} above ({} bytes of base64) was not sent to the model: {why}]",
            data.len()
        ))
    };
    if formats.is_empty() {
        return note(format!("{} takes no {whats}", limits.provider));
    }
    if data.len() > max {
        return note(format!(
            "{} takes {whats} of at most {} of base64",
            limits.provider,
            size(max)
        ));
    }
    if data.len() > *budget {
        return note(format!(
            "the media of one request to {} are kept under {} of base64, and newer ones used it up",
            limits.provider,
            size(limits.budget)
        ));
    }
    // The provider would refuse the whole request for data that is not base64.
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data) else {
        return note("its data is not valid base64".to_owned());
    };
    match Format::sniff(&bytes) {
        Some(format) if formats.contains(&format) => {
            *budget -= data.len();
            Fit::Send(format)
        }
        _ => note(format!(
            "{} takes {whats} as {} only",
            limits.provider,
            list(formats)
        )),
    }
}

/// What becomes of each image and sound of a conversation: for each message (by index),
/// one [`Fit`] per item of its `media`, the newest served first from the budget.
pub(crate) fn plan(conversation: &Conversation, limits: &Limits) -> Vec<Vec<Fit>> {
    let mut budget = limits.budget;
    let mut fits: Vec<Vec<Fit>> = vec![Vec::new(); conversation.messages().len()];
    for (index, message) in conversation.messages().iter().enumerate().rev() {
        let mut these: Vec<Fit> = message
            .media()
            .iter()
            .rev()
            .map(|m| check(m.kind, &m.mime_type, &m.data, limits, &mut budget))
            .collect();
        these.reverse();
        fits[index] = these;
    }
    fits
}

/// A result's text followed by the notes of what was left out.
pub(crate) fn with_notes(text: &str, media: &[Media], fits: &[Fit]) -> String {
    let notes: Vec<&str> = media
        .iter()
        .zip(fits)
        .filter_map(|(_, fit)| match fit {
            Fit::Note(note) => Some(note.as_str()),
            Fit::Send(_) => None,
        })
        .collect();
    if notes.is_empty() {
        return text.to_owned();
    }
    if text.is_empty() {
        return notes.join("\n");
    }
    format!("{text}\n{}", notes.join("\n"))
}

/// The media that are sent, with their format.
pub(crate) fn sent<'a>(
    media: &'a [Media],
    fits: &'a [Fit],
) -> impl Iterator<Item = (&'a Media, Format)> + 'a {
    media.iter().zip(fits).filter_map(|(m, fit)| match fit {
        Fit::Send(format) => Some((m, *format)),
        Fit::Note(_) => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Message;

    const PNG: &str =
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

    const LIMITS: Limits = Limits {
        provider: "p",
        images: &[Format::Png, Format::Jpeg],
        max_image: 200,
        audio: &[],
        max_audio: 0,
        budget: 300,
    };

    fn image(data: &str) -> Media {
        Media {
            kind: MediaKind::Image,
            mime_type: "image/png".into(),
            data: data.into(),
        }
    }

    #[test]
    fn formats_are_recognised_from_the_bytes_not_the_declared_type() {
        let mut budget = 1000;
        assert_eq!(
            check(MediaKind::Image, "image/jpeg", PNG, &LIMITS, &mut budget),
            Fit::Send(Format::Png)
        );
        assert_eq!(budget, 1000 - PNG.len());
        let Fit::Note(note) = check(
            MediaKind::Image,
            "image/png",
            "SUkqAAgAAAA=",
            &LIMITS,
            &mut budget,
        ) else {
            panic!("a TIFF is not sent");
        };
        assert_eq!(note, "[the image/png image above (12 bytes of base64) was not sent to the model: p takes images as PNG and JPEG only]");
        let Fit::Note(note) = check(
            MediaKind::Image,
            "image/png",
            "not base64!",
            &LIMITS,
            &mut budget,
        ) else {
            panic!("garbage is not sent");
        };
        assert!(note.contains("not valid base64"), "{note}");
        let Fit::Note(note) = check(MediaKind::Audio, "audio/wav", WAV, &LIMITS, &mut budget)
        else {
            panic!("p takes no audio");
        };
        assert!(
            note.contains("audio/wav audio") && note.contains("p takes no audio"),
            "{note}"
        );
    }

    #[test]
    fn images_over_the_limit_or_the_budget_are_left_out_newest_served_first() {
        let mut budget = 1000;
        let big = format!("{PNG}{}", "A".repeat(200));
        let Fit::Note(note) = check(MediaKind::Image, "image/png", &big, &LIMITS, &mut budget)
        else {
            panic!("too big");
        };
        assert_eq!(note, "[the image/png image above (296 bytes of base64) was not sent to the model: p takes images of at most 200 bytes of base64]");
        assert_eq!(budget, 1000, "nothing spent on what is not sent");

        let mut c = Conversation::new();
        for id in ["old", "mid", "new"] {
            c.push(Message::ToolResult {
                call_id: id.into(),
                name: "t".into(),
                text: String::new(),
                is_error: false,
                media: vec![image(PNG)],
            });
        }
        let fits = plan(&c, &LIMITS);
        // The budget holds three images of 96 characters: 300 / 96 = 3.
        assert!(fits.iter().all(|f| f == &[Fit::Send(Format::Png)]));
        c.push(Message::ToolResult {
            call_id: "newest".into(),
            name: "t".into(),
            text: "x".into(),
            is_error: false,
            media: vec![image(PNG)],
        });
        let fits = plan(&c, &LIMITS);
        assert!(
            matches!(fits[0].as_slice(), [Fit::Note(n)] if n.contains("newer ones used it up"))
        );
        assert!(fits[1..].iter().all(|f| f == &[Fit::Send(Format::Png)]));
        let Message::ToolResult { media, .. } = &c.messages()[0] else {
            unreachable!()
        };
        assert!(with_notes("text", media, &fits[0]).starts_with("text\n[the image/png image above"));
        assert_eq!(sent(media, &fits[0]).count(), 0);
    }
}
