//! The reference document that gives a compiled DOCX standard manuscript
//! format: 12 pt Times New Roman (or Courier New), double-spaced, 1-inch
//! margins on US Letter, every paragraph's first line indented half an inch,
//! scene breaks as a centred `#`, each chapter heading starting a new page a
//! third of the way down, the title page centred, and the running header
//! ("Surname / TITLE / page") at the top right of every page but the title
//! page, which counts as page 0.
//!
//! It is made at run time from the pandoc in use
//! (`pandoc --print-default-data-file reference.docx`) by replacing the
//! styles pandoc's DOCX writer uses and adding the page setup, so it always
//! matches that pandoc's writer: a committed file would be a binary that
//! drifts from the pandoc that reads it, and a document written from nothing
//! would miss styles the writer expects. `word/styles.xml` and
//! `word/document.xml` change, the header is added (its part, its
//! relationship and its content type); every other part is copied as it is.
//! pandoc's writer keeps the reference's section properties and headers.

use std::io::{Cursor, Read, Write};

/// Why pandoc's reference.docx could not be made the manuscript's.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    #[error("pandoc's reference.docx is not a zip archive: {0}")]
    NotAZip(#[source] zip::result::ZipError),
    #[error("cannot rewrite reference.docx: {0}")]
    Rewrite(#[source] zip::result::ZipError),
    #[error("cannot rewrite {part} of reference.docx: {error}")]
    Part {
        part: String,
        #[source]
        error: std::io::Error,
    },
    #[error(
        "pandoc's reference.docx lacks word/styles.xml, word/document.xml, its relationships or its content types"
    )]
    Incomplete,
}

/// The typeface when `[manuscript] font` is not set.
pub const DEFAULT_FONT: &str = "Times New Roman";

/// The header's part, and its relationship's id.
const HEADER_PART: &str = "word/header-manuscript.xml";
const HEADER_ID: &str = "rIdManuscriptHeader";

/// The running header's words before the page number: "Maren / THE SALT
/// ROAD / ", the author's surname (the last word of their name) and the
/// title in capitals.
pub fn running_header(title: &str, author: Option<&str>) -> String {
    let title = title.to_uppercase();
    match author.and_then(|author| author.split_whitespace().last()) {
        Some(surname) => format!("{surname} / {title} / "),
        None => format!("{title} / "),
    }
}

/// `default_reference` (pandoc's reference.docx) restyled as a manuscript in
/// `font`, with `header` (see [`running_header`]) and the page number at
/// the top right of each page.
pub fn manuscript_reference(
    default_reference: &[u8],
    font: &str,
    header: &str,
) -> Result<Vec<u8>, ReferenceError> {
    let font = xml_escape(font);
    let mut archive =
        zip::ZipArchive::new(Cursor::new(default_reference)).map_err(ReferenceError::NotAZip)?;
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let broken = ReferenceError::Rewrite;
    let mut found = (false, false);
    let (mut related, mut typed) = (false, false);
    for index in 0..archive.len() {
        let name = archive
            .by_index_raw(index)
            .map_err(broken)?
            .name()
            .map_err(broken)?
            .into_owned();
        let edit: Option<fn(&str, &str) -> String> = match name.as_str() {
            "word/styles.xml" => {
                found.0 = true;
                Some(restyle)
            }
            "word/document.xml" => {
                found.1 = true;
                Some(with_page_setup)
            }
            "word/_rels/document.xml.rels" => {
                related = true;
                Some(with_header_relationship)
            }
            "[Content_Types].xml" => {
                typed = true;
                Some(with_header_type)
            }
            HEADER_PART => continue,
            _ => None,
        };
        match edit {
            Some(edit) => {
                let mut text = String::new();
                archive
                    .by_index(index)
                    .map_err(broken)?
                    .read_to_string(&mut text)
                    .map_err(|error| ReferenceError::Part {
                        part: name.clone(),
                        error,
                    })?;
                writer.start_file(name.as_str(), options).map_err(broken)?;
                writer
                    .write_all(edit(&text, &font).as_bytes())
                    .map_err(|error| ReferenceError::Part {
                        part: name.clone(),
                        error,
                    })?;
            }
            None => writer
                .raw_copy_file(archive.by_index_raw(index).map_err(broken)?)
                .map_err(broken)?,
        }
    }
    if found != (true, true) || !related || !typed {
        return Err(ReferenceError::Incomplete);
    }
    writer.start_file(HEADER_PART, options).map_err(broken)?;
    writer
        .write_all(header_part(header, &font).as_bytes())
        .map_err(|error| ReferenceError::Part {
            part: HEADER_PART.to_owned(),
            error,
        })?;
    Ok(writer.finish().map_err(broken)?.into_inner())
}

fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// 12 pt in `font`, as a run's properties.
fn run_properties(font: &str) -> String {
    format!(
        "<w:rPr><w:rFonts w:ascii=\"{font}\" w:hAnsi=\"{font}\" w:eastAsia=\"{font}\" w:cs=\"{font}\"/>\
         <w:b w:val=\"0\"/><w:bCs w:val=\"0\"/><w:i w:val=\"0\"/><w:color w:val=\"000000\"/>\
         <w:sz w:val=\"24\"/><w:szCs w:val=\"24\"/></w:rPr>"
    )
}

/// Double spacing with no space between paragraphs.
const DOUBLE: &str = "<w:spacing w:before=\"0\" w:after=\"0\" w:line=\"480\" w:lineRule=\"auto\"/>";

/// The styles pandoc's writer uses, as a manuscript wants them.
fn styles(font: &str) -> Vec<(&'static str, String)> {
    let run = run_properties(font);
    let paragraph = |id: &str, name: &str, based_on: &str, custom: bool, p_pr: &str| {
        format!(
            "<w:style w:type=\"paragraph\"{}{} w:styleId=\"{id}\"><w:name w:val=\"{name}\"/>{}\
             <w:qFormat/><w:pPr>{p_pr}</w:pPr>{run}</w:style>",
            if id == "Normal" {
                " w:default=\"1\""
            } else {
                ""
            },
            if custom { " w:customStyle=\"1\"" } else { "" },
            if based_on.is_empty() {
                String::new()
            } else {
                format!("<w:basedOn w:val=\"{based_on}\"/>")
            },
        )
    };
    let heading = |level: u8, page_break: bool| {
        let before = if page_break { 2880 } else { 480 };
        paragraph(
            &format!("Heading{level}"),
            &format!("Heading {level}"),
            "Normal",
            false,
            &format!(
                "<w:keepNext/><w:keepLines/>{}<w:spacing w:before=\"{before}\" w:after=\"480\" \
                 w:line=\"480\" w:lineRule=\"auto\"/><w:ind w:firstLine=\"0\"/><w:jc w:val=\"center\"/>\
                 <w:outlineLvl w:val=\"{}\"/>",
                if page_break {
                    "<w:pageBreakBefore/>"
                } else {
                    ""
                },
                level - 1
            ),
        )
    };
    let indented = format!("{DOUBLE}<w:ind w:firstLine=\"720\"/>");
    let flush = format!("{DOUBLE}<w:ind w:firstLine=\"0\"/>");
    let centred = format!("<w:keepNext/>{flush}<w:jc w:val=\"center\"/>");
    vec![
        ("Normal", paragraph("Normal", "Normal", "", false, DOUBLE)),
        (
            "BodyText",
            paragraph("BodyText", "Body Text", "Normal", false, &indented),
        ),
        (
            "FirstParagraph",
            paragraph(
                "FirstParagraph",
                "First Paragraph",
                "BodyText",
                true,
                &indented,
            ),
        ),
        (
            "Compact",
            paragraph("Compact", "Compact", "BodyText", true, &flush),
        ),
        (
            "Title",
            paragraph(
                "Title",
                "Title",
                "Normal",
                false,
                "<w:keepNext/><w:spacing w:before=\"4320\" w:after=\"480\" w:line=\"480\" \
                 w:lineRule=\"auto\"/><w:ind w:firstLine=\"0\"/><w:jc w:val=\"center\"/>",
            ),
        ),
        (
            "Subtitle",
            paragraph("Subtitle", "Subtitle", "Normal", false, &centred),
        ),
        (
            "Author",
            paragraph("Author", "Author", "Normal", true, &centred),
        ),
        ("Date", paragraph("Date", "Date", "Normal", false, &centred)),
        ("Heading1", heading(1, true)),
        ("Heading2", heading(2, true)),
        ("Heading3", heading(3, false)),
        (
            "BlockText",
            paragraph(
                "BlockText",
                "Block Text",
                "BodyText",
                false,
                &format!("{DOUBLE}<w:ind w:left=\"720\" w:right=\"720\" w:firstLine=\"0\"/>"),
            ),
        ),
        (
            "SceneBreak",
            paragraph("SceneBreak", "Scene Break", "Normal", true, &centred),
        ),
    ]
}

/// Replaces the document defaults and the manuscript's styles.
fn restyle(styles_xml: &str, font: &str) -> String {
    let defaults = format!(
        "<w:docDefaults><w:rPrDefault>{}</w:rPrDefault><w:pPrDefault><w:pPr>{DOUBLE}</w:pPr>\
         </w:pPrDefault></w:docDefaults>",
        run_properties(font)
            .replace(
                "<w:b w:val=\"0\"/><w:bCs w:val=\"0\"/><w:i w:val=\"0\"/>",
                ""
            )
            .replace("<w:color w:val=\"000000\"/>", "")
    );
    let mut xml = replace_element(styles_xml, "<w:docDefaults>", "</w:docDefaults>", &defaults);
    for (id, style) in styles(font) {
        xml = replace_style(&xml, id, &style);
    }
    xml
}

/// Replaces the element from `open` to `close` (the first), or inserts
/// `new` after the root's opening tag when there is none.
fn replace_element(xml: &str, open: &str, close: &str, new: &str) -> String {
    if let Some(start) = xml.find(open)
        && let Some(length) = xml[start..].find(close)
    {
        let end = start + length + close.len();
        return format!("{}{new}{}", &xml[..start], &xml[end..]);
    }
    match xml
        .find("<w:styles")
        .and_then(|at| xml[at..].find('>').map(|end| at + end + 1))
    {
        Some(after) => format!("{}{new}{}", &xml[..after], &xml[after..]),
        None => xml.to_owned(),
    }
}

/// Replaces the style with `id`, or adds it before `</w:styles>`.
fn replace_style(xml: &str, id: &str, new: &str) -> String {
    let marker = format!("w:styleId=\"{id}\"");
    if let Some(at) = xml.find(&marker)
        && let Some(start) = xml[..at].rfind("<w:style ")
    {
        let tag_end = xml[at..].find('>').map(|end| at + end);
        let end = match tag_end {
            Some(end) if xml[..end].ends_with('/') => Some(end + 1),
            _ => xml[at..]
                .find("</w:style>")
                .map(|end| at + end + "</w:style>".len()),
        };
        if let Some(end) = end {
            return format!("{}{new}{}", &xml[..start], &xml[end..]);
        }
    }
    match xml.rfind("</w:styles>") {
        Some(at) => format!("{}{new}{}", &xml[..at], &xml[at..]),
        None => xml.to_owned(),
    }
}

/// The header: the running header's words, then the page number, flush right.
fn header_part(header: &str, font: &str) -> String {
    let run = run_properties(font);
    let field = |inner: &str| format!("<w:r>{run}{inner}</w:r>");
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n\
         <w:hdr xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\" \
         xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\">\
         <w:p><w:pPr><w:spacing w:before=\"0\" w:after=\"0\" w:line=\"240\" w:lineRule=\"auto\"/>\
         <w:ind w:firstLine=\"0\"/><w:jc w:val=\"right\"/></w:pPr>\
         <w:r>{run}<w:t xml:space=\"preserve\">{}</w:t></w:r>{}{}{}{}{}</w:p></w:hdr>",
        xml_escape(header),
        field("<w:fldChar w:fldCharType=\"begin\"/>"),
        field("<w:instrText xml:space=\"preserve\"> PAGE </w:instrText>"),
        field("<w:fldChar w:fldCharType=\"separate\"/>"),
        field("<w:t>1</w:t>"),
        field("<w:fldChar w:fldCharType=\"end\"/>"),
    )
}

/// The header's relationship, beside the document's others.
fn with_header_relationship(relationships: &str, _font: &str) -> String {
    let relationship = format!(
        "<Relationship Id=\"{HEADER_ID}\" \
         Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/header\" \
         Target=\"header-manuscript.xml\"/>"
    );
    match relationships.rfind("</Relationships>") {
        Some(at) => format!(
            "{}{relationship}{}",
            &relationships[..at],
            &relationships[at..]
        ),
        None => relationships.to_owned(),
    }
}

/// The header's content type.
fn with_header_type(types: &str, _font: &str) -> String {
    let header = format!(
        "<Override PartName=\"/{HEADER_PART}\" \
         ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.header+xml\"/>"
    );
    match types.rfind("</Types>") {
        Some(at) => format!("{}{header}{}", &types[..at], &types[at..]),
        None => types.to_owned(),
    }
}

/// US Letter with 1-inch margins, the running header on every page but the
/// first (the title page, page 0), as the body's last section properties.
fn with_page_setup(document: &str, _font: &str) -> String {
    let section = format!(
        "<w:sectPr><w:headerReference w:type=\"default\" r:id=\"{HEADER_ID}\"/>\
         <w:pgSz w:w=\"12240\" w:h=\"15840\"/><w:pgMar w:top=\"1440\" \
         w:right=\"1440\" w:bottom=\"1440\" w:left=\"1440\" w:header=\"720\" \
         w:footer=\"720\" w:gutter=\"0\"/><w:pgNumType w:start=\"0\"/><w:titlePg/></w:sectPr>"
    );
    let mut document = document.to_owned();
    // Every section's properties go (`<w:sectPr/>` or with children).
    while let Some(start) = document.find("<w:sectPr") {
        let Some(tag) = document[start..].find('>').map(|end| start + end) else {
            break;
        };
        let end = if document[..tag].ends_with('/') {
            tag + 1
        } else {
            match document[tag..].find("</w:sectPr>") {
                Some(close) => tag + close + "</w:sectPr>".len(),
                None => break,
            }
        };
        document.replace_range(start..end, "");
    }
    // The header's relationship needs its namespace on the root.
    if !document.contains("xmlns:r=")
        && let Some(at) = document.find("<w:document")
    {
        document.insert_str(
            at + "<w:document".len(),
            " xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\"",
        );
    }
    match document.rfind("</w:body>") {
        Some(at) => format!("{}{section}{}", &document[..at], &document[at..]),
        None => document,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn styles_are_replaced_in_place_and_missing_ones_added() {
        let xml = "<w:styles x=\"1\"><w:docDefaults><old/></w:docDefaults>\
                   <w:style w:type=\"paragraph\" w:styleId=\"Normal\"><w:name w:val=\"Normal\"/></w:style>\
                   <w:style w:type=\"character\" w:styleId=\"Hyperlink\"/></w:styles>";
        let restyled = restyle(xml, "Courier New");
        assert!(!restyled.contains("<old/>"));
        assert!(restyled.contains("w:ascii=\"Courier New\""));
        assert_eq!(restyled.matches("w:styleId=\"Normal\"").count(), 1);
        assert!(
            restyled.contains("w:styleId=\"Hyperlink\"/>"),
            "others are kept"
        );
        assert!(restyled.contains("<w:name w:val=\"Scene Break\"/>"));
        assert!(restyled.contains("<w:pageBreakBefore/>"));
        assert!(restyled.ends_with("</w:styles>"));
    }

    #[test]
    fn the_page_setup_goes_last_in_the_body_once() {
        let document = "<w:document><w:body><w:p/><w:sectPr /><w:sectPr><old/></w:sectPr></w:body></w:document>";
        let set = with_page_setup(document, DEFAULT_FONT);
        assert_eq!(set.matches("<w:sectPr>").count(), 1);
        assert!(set.contains("w:left=\"1440\""));
        assert!(set.ends_with("</w:sectPr></w:body></w:document>"));
        assert!(
            set.contains("<w:headerReference w:type=\"default\" r:id=\"rIdManuscriptHeader\"/>")
        );
        assert!(set.contains("<w:titlePg/>"), "no header on the title page");
        assert!(set.contains("xmlns:r="), "the relationship's namespace");
    }

    #[test]
    fn the_running_header_gives_the_surname_the_title_and_the_page() {
        assert_eq!(
            running_header("The Salt Road", Some("Ada K. Maren")),
            "Maren / THE SALT ROAD / "
        );
        assert_eq!(running_header("Salt & Stone", None), "SALT & STONE / ");
        let part = header_part("SALT & STONE / ", DEFAULT_FONT);
        assert!(part.contains(">SALT &amp; STONE / </w:t>"), "{part}");
        assert!(part.contains("> PAGE </w:instrText>"));
        assert!(part.contains("<w:jc w:val=\"right\"/>"));
        let relationships = with_header_relationship("<Relationships></Relationships>", "");
        assert!(relationships.contains("Target=\"header-manuscript.xml\""));
        let types = with_header_type("<Types></Types>", "");
        assert!(types.contains("PartName=\"/word/header-manuscript.xml\""));
    }

    #[test]
    fn an_archive_without_its_parts_is_refused() {
        assert!(manuscript_reference(b"not a zip", DEFAULT_FONT, "T / ").is_err());
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        writer
            .start_file("other.xml", zip::write::SimpleFileOptions::default())
            .unwrap();
        let bytes = writer.finish().unwrap().into_inner();
        assert!(manuscript_reference(&bytes, DEFAULT_FONT, "T / ").is_err());
    }
}
