//! The images read returns, processed as pi's `processImage` (utils/image-process.js and
//! image-resize-core.js) does with its defaults: PNG, JPEG, GIF and WebP go as they are;
//! other formats (BMP) are converted to PNG; an image over 2000×2000 pixels or whose base64
//! is 4.5 MB or more is resized (Lanczos3) to fit, then sent as the smaller of PNG and JPEG
//! (quality 80), else JPEG at falling qualities, else smaller and smaller until it fits.
//!
//! The pixels come from the `image` crate instead of pi's Photon, so a resized image's
//! bytes differ from pi's; its size, format choice rule and notes are pi's.

use std::io::Cursor;

use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader};

use super::common::base64_encode;

/// 4.5 MB of base64 (pi: headroom below Anthropic's 5 MB limit).
const MAX_BYTES: usize = 4_718_592;
const MAX_SIDE: u32 = 2000;
/// pi's `jpegQuality` default first, then the lower steps.
const JPEG_QUALITIES: [u8; 5] = [80, 85, 70, 55, 40];

/// What read sends for an image.
pub enum Processed {
    /// The base64 data, its mime type and pi's hints (conversion, dimensions).
    Image { data: String, mime: &'static str, hints: Vec<String> },
    /// pi's note when the image cannot be sent.
    Omitted(&'static str),
}

/// pi's `processImage(bytes, mime, {autoResizeImages: true})`.
pub fn process(bytes: &[u8], mime: &'static str) -> Processed {
    let (bytes, mime, converted_from) = match mime {
        "image/png" | "image/jpeg" | "image/gif" | "image/webp" => (bytes.to_vec(), mime, None),
        other => match decode(bytes).and_then(|img| encode(&img, ImageFormat::Png, 0)) {
            Some(png) => (png, "image/png", Some(other)),
            None => {
                return Processed::Omitted(
                    "[Image omitted: could not be converted to a supported inline image format.]",
                )
            }
        },
    };
    let Some(resized) = resize(&bytes, mime) else {
        return Processed::Omitted("[Image omitted: could not be resized below the inline image size limit.]");
    };
    let mut hints = Vec::new();
    if let Some(from) = converted_from.filter(|f| *f != resized.mime) {
        hints.push(format!("[Image converted from {from} to {}.]", resized.mime));
    }
    if let Some((ow, oh)) = resized.original {
        let scale = f64::from(ow) / f64::from(resized.width);
        hints.push(format!(
            "[Image: original {ow}x{oh}, displayed at {}x{}. Multiply coordinates by {scale:.2} to map to original image.]",
            resized.width, resized.height
        ));
    }
    Processed::Image { data: resized.data, mime: resized.mime, hints }
}

struct Resized {
    data: String,
    mime: &'static str,
    width: u32,
    height: u32,
    /// The original size, when the image was resized.
    original: Option<(u32, u32)>,
}

/// Decodes with the EXIF orientation applied, as pi's `applyExifOrientation`.
fn decode(bytes: &[u8]) -> Option<DynamicImage> {
    let mut decoder = ImageReader::new(Cursor::new(bytes)).with_guessed_format().ok()?.into_decoder().ok()?;
    let orientation = decoder.orientation().ok();
    let mut img = DynamicImage::from_decoder(decoder).ok()?;
    if let Some(o) = orientation {
        img.apply_orientation(o);
    }
    Some(img)
}

fn encode(img: &DynamicImage, format: ImageFormat, quality: u8) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    match format {
        ImageFormat::Jpeg => {
            let rgb = DynamicImage::ImageRgb8(img.to_rgb8());
            let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality);
            rgb.write_with_encoder(encoder).ok()?;
        }
        _ => img.write_to(&mut Cursor::new(&mut out), format).ok()?,
    }
    Some(out)
}

/// `resizeImageInProcess` with pi's default options.
fn resize(bytes: &[u8], mime: &'static str) -> Option<Resized> {
    let img = decode(bytes)?;
    let (w, h) = (img.width(), img.height());
    let base64_size = bytes.len().div_ceil(3) * 4;
    if w <= MAX_SIDE && h <= MAX_SIDE && base64_size < MAX_BYTES {
        return Some(Resized { data: base64_encode(bytes), mime, width: w, height: h, original: None });
    }
    // JS Math.round on the scaled side.
    let round = |x: f64| (x + 0.5).floor() as u32;
    let (mut tw, mut th) = (w, h);
    if tw > MAX_SIDE {
        th = round(f64::from(th) * f64::from(MAX_SIDE) / f64::from(tw));
        tw = MAX_SIDE;
    }
    if th > MAX_SIDE {
        tw = round(f64::from(tw) * f64::from(MAX_SIDE) / f64::from(th));
        th = MAX_SIDE;
    }
    let (mut cw, mut ch) = (tw.max(1), th.max(1));
    loop {
        let small = img.resize_exact(cw, ch, image::imageops::FilterType::Lanczos3);
        let png = encode(&small, ImageFormat::Png, 0).map(|b| (base64_encode(&b), "image/png"));
        let jpegs: Vec<(String, &'static str)> = JPEG_QUALITIES
            .iter()
            .filter_map(|&q| encode(&small, ImageFormat::Jpeg, q).map(|b| (base64_encode(&b), "image/jpeg")))
            .collect();
        // The smaller of PNG and JPEG at the first quality; lower JPEG qualities only if
        // neither fits.
        let mut order: Vec<&(String, &'static str)> = Vec::new();
        match (&png, jpegs.first()) {
            (Some(p), Some(j)) if j.0.len() < p.0.len() => order.extend([j, p]),
            (Some(p), j) => order.extend(std::iter::once(p).chain(j)),
            (None, j) => order.extend(j),
        }
        order.extend(jpegs.iter().skip(1));
        if let Some((data, mime)) = order.into_iter().find(|(d, _)| d.len() < MAX_BYTES) {
            return Some(Resized { data: data.clone(), mime, width: cw, height: ch, original: Some((w, h)) });
        }
        if cw == 1 && ch == 1 {
            return None;
        }
        let next = |x: u32| if x == 1 { 1 } else { ((f64::from(x) * 0.75).floor() as u32).max(1) };
        let (nw, nh) = (next(cw), next(ch));
        if (nw, nh) == (cw, ch) {
            return None;
        }
        (cw, ch) = (nw, nh);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(w: u32, h: u32) -> Vec<u8> {
        let img = DynamicImage::ImageRgb8(image::RgbImage::from_fn(w, h, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, ((x * y) % 256) as u8])
        }));
        encode(&img, ImageFormat::Png, 0).unwrap()
    }

    #[test]
    fn small_images_go_as_they_are() {
        let bytes = png(40, 30);
        let Processed::Image { data, mime, hints } = process(&bytes, "image/png") else { panic!("omitted") };
        assert_eq!((data, mime, hints.len()), (base64_encode(&bytes), "image/png", 0));
    }

    #[test]
    fn large_images_are_resized_with_pis_note() {
        let bytes = png(3000, 1500);
        let Processed::Image { mime, hints, .. } = process(&bytes, "image/png") else { panic!("omitted") };
        assert!(mime == "image/png" || mime == "image/jpeg");
        assert_eq!(
            hints,
            ["[Image: original 3000x1500, displayed at 2000x1000. Multiply coordinates by 1.50 to map to original image.]"]
        );
    }

    #[test]
    fn bmp_is_converted_to_png() {
        let img = DynamicImage::ImageRgb8(image::RgbImage::new(8, 8));
        let bmp = encode(&img, ImageFormat::Bmp, 0).unwrap();
        let Processed::Image { mime, hints, .. } = process(&bmp, "image/bmp") else { panic!("omitted") };
        assert_eq!(mime, "image/png");
        assert_eq!(hints, ["[Image converted from image/bmp to image/png.]"]);
    }

    #[test]
    fn undecodable_images_are_omitted_as_pi_says() {
        let Processed::Omitted(why) = process(b"BM not really a bitmap", "image/bmp") else { panic!("sent") };
        assert_eq!(why, "[Image omitted: could not be converted to a supported inline image format.]");
        let Processed::Omitted(why) = process(b"\x89PNG\r\n\x1a\n broken", "image/png") else { panic!("sent") };
        assert_eq!(why, "[Image omitted: could not be resized below the inline image size limit.]");
    }
}
