//! A chart as a PNG image, rasterised from its SVG with resvg (text in the
//! system's sans-serif fonts, where it has any; the marks need none), for a chart to
//! paste into a document or send to someone without a browser.

use resvg::{tiny_skia, usvg};

/// Why a chart could not be made a PNG.
#[derive(Debug, thiserror::Error)]
pub enum PngError {
    #[error("the chart's SVG cannot be read: {0}")]
    Svg(#[source] usvg::Error),
    #[error("the chart cannot be drawn {0} times its size")]
    Scale(f32),
    #[error("a {width}×{height} image is too large")]
    TooLarge { width: u32, height: u32 },
    #[error("the image cannot be encoded as PNG: {0}")]
    Encode(String),
}

/// Rasterises `svg` at its own size (`scale` times it), as PNG bytes.
pub fn rasterise(svg: &str, scale: f32) -> Result<Vec<u8>, PngError> {
    let mut options = usvg::Options::default();
    let fonts = options.fontdb_mut();
    fonts.load_system_fonts();
    // The charts ask for `sans-serif`, which fontdb takes to be Arial: the
    // first sans face this system has stands for it instead.
    let families: Vec<String> = fonts
        .faces()
        .flat_map(|face| face.families.iter().map(|(name, _)| name.clone()))
        .collect();
    let sans = [
        "DejaVu Sans",
        "Liberation Sans",
        "Arial",
        "Helvetica",
        "Noto Sans",
    ]
    .into_iter()
    .find(|wanted| families.iter().any(|family| family == wanted))
    .map(str::to_owned)
    .or_else(|| families.first().cloned());
    if let Some(sans) = sans {
        fonts.set_sans_serif_family(sans);
    }
    let tree = usvg::Tree::from_str(svg, &options).map_err(PngError::Svg)?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .ok_or(PngError::Scale(scale))?;
    let mut pixmap =
        tiny_skia::Pixmap::new(size.width(), size.height()).ok_or(PngError::TooLarge {
            width: size.width(),
            height: size.height(),
        })?;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|error| PngError::Encode(error.to_string()))
}

/// The colour of the pixel at `x`, `y` of a PNG image, as `#rrggbb`.
pub fn pixel(png: &[u8], x: u32, y: u32) -> Option<String> {
    let pixmap = tiny_skia::Pixmap::decode_png(png).ok()?;
    let colour = pixmap.pixel(x, y)?.demultiply();
    Some(format!(
        "#{:02x}{:02x}{:02x}",
        colour.red(),
        colour.green(),
        colour.blue()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rectangle_is_rasterised_where_the_svg_draws_it() {
        let svg = r##"<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="#ffffff"/><rect x="20" y="0" width="20" height="20" fill="#3f6fa8"/></svg>"##;
        let png = rasterise(svg, 1.0).unwrap();
        assert!(png.starts_with(b"\x89PNG"));
        assert_eq!(pixel(&png, 5, 10).as_deref(), Some("#ffffff"));
        assert_eq!(pixel(&png, 30, 10).as_deref(), Some("#3f6fa8"));
        let twice = rasterise(svg, 2.0).unwrap();
        assert_eq!(pixel(&twice, 70, 30).as_deref(), Some("#3f6fa8"));
        assert!(rasterise("not svg", 1.0).is_err());
    }
}
