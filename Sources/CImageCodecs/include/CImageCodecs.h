#ifndef CIMAGECODECS_H
#define CIMAGECODECS_H

#include <stddef.h>
#include <stdint.h>

/// Why a codec call failed. Every entry point returns one of these instead of
/// aborting, printing or exiting, whatever bytes it is given.
typedef enum {
    CIC_OK = 0,
    /// NULL pointers, zero length or zero dimensions.
    CIC_ERR_INPUT = 1,
    /// The bytes are not a decodable image of the requested format, or are truncated.
    CIC_ERR_CORRUPT = 2,
    /// The declared dimensions exceed the caller's pixel budget.
    CIC_ERR_TOO_LARGE = 3,
    /// malloc failed.
    CIC_ERR_MEMORY = 4,
    /// A valid image in a variant the decoder does not handle.
    CIC_ERR_UNSUPPORTED = 5
} cic_status;

/// An 8-bit, tightly packed, row-major image. `pixels` is owned by the caller
/// after a successful call and must be released with `cic_free`.
typedef struct {
    uint8_t *pixels;
    uint32_t width;
    uint32_t height;
    /// 3 for RGB, 4 for RGBA (straight, not premultiplied, alpha).
    uint32_t channels;
} cic_image;

/// Decodes a JPEG to RGB. `min_side` lets libjpeg's DCT scaling shrink the image
/// by 1/2, 1/4 or 1/8 while both sides stay >= min_side (0 = full size).
/// Images whose declared width*height exceeds `max_pixels` are refused before
/// any pixel memory is allocated. A truncated stream is an error, not grey fill.
int cic_decode_jpeg(const uint8_t *data, size_t length, uint32_t min_side,
                    uint64_t max_pixels, cic_image *out);

/// Decodes a PNG (any bit depth / colour type) to straight RGBA.
int cic_decode_png(const uint8_t *data, size_t length, uint64_t max_pixels,
                   cic_image *out);

/// Encodes packed RGB to a PNG in memory. `*out` must be released with `cic_free`.
int cic_encode_png_rgb(const uint8_t *rgb, uint32_t width, uint32_t height,
                       uint8_t **out, size_t *out_length);

/// Encodes packed RGB to a baseline JPEG in memory (quality 1...100).
/// `*out` must be released with `cic_free`.
int cic_encode_jpeg_rgb(const uint8_t *rgb, uint32_t width, uint32_t height,
                        int quality, uint8_t **out, size_t *out_length);

void cic_free(void *pointer);

#endif
