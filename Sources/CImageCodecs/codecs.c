#include "CImageCodecs.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>
#include <png.h>

void cic_free(void *pointer) { free(pointer); }

/* ---------- JPEG ---------- */

/* libjpeg's default error_exit prints and calls exit(); ours jumps back to the
   entry point instead, which is the only recovery libjpeg offers. */
typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
} cic_jpeg_error;

static void cic_jpeg_error_exit(j_common_ptr cinfo) {
    cic_jpeg_error *err = (cic_jpeg_error *)cinfo->err;
    longjmp(err->jump, 1);
}

static void cic_jpeg_emit_message(j_common_ptr cinfo, int level) {
    /* A premature end of data is only a warning to libjpeg (it pads with grey);
       for us a half-grey cover is a broken download, so treat it as fatal. */
    if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) {
        cic_jpeg_error *err = (cic_jpeg_error *)cinfo->err;
        longjmp(err->jump, 1);
    }
    /* Other warnings (stray bytes between markers...) are common in real files
       and harmless; stay silent rather than printing to stderr. */
}

static void cic_jpeg_output_message(j_common_ptr cinfo) { (void)cinfo; }

int cic_decode_jpeg(const uint8_t *data, size_t length, uint32_t min_side,
                    uint64_t max_pixels, cic_image *out) {
    if (data == NULL || out == NULL || length == 0) return CIC_ERR_INPUT;
    memset(out, 0, sizeof(*out));

    struct jpeg_decompress_struct cinfo;
    cic_jpeg_error err;
    /* volatile: these change between setjmp and longjmp and must survive it. */
    uint8_t *volatile pixels = NULL;
    JSAMPLE *volatile row = NULL;
    volatile int status = CIC_ERR_CORRUPT;

    cinfo.err = jpeg_std_error(&err.base);
    err.base.error_exit = cic_jpeg_error_exit;
    err.base.emit_message = cic_jpeg_emit_message;
    err.base.output_message = cic_jpeg_output_message;

    if (setjmp(err.jump)) {
        jpeg_destroy_decompress(&cinfo);
        free(pixels);
        free(row);
        return status;
    }

    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, (const unsigned char *)data, (unsigned long)length);
    if (jpeg_read_header(&cinfo, TRUE) != JPEG_HEADER_OK) {
        jpeg_destroy_decompress(&cinfo);
        return CIC_ERR_CORRUPT;
    }
    if (cinfo.image_width == 0 || cinfo.image_height == 0) {
        jpeg_destroy_decompress(&cinfo);
        return CIC_ERR_CORRUPT;
    }
    /* Progressive files keep a coefficient buffer for the full image even when
       scaling, so the budget applies to the declared size. */
    if ((uint64_t)cinfo.image_width * (uint64_t)cinfo.image_height > max_pixels) {
        jpeg_destroy_decompress(&cinfo);
        return CIC_ERR_TOO_LARGE;
    }

    int cmyk = (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK);
    cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;

    cinfo.scale_num = 1;
    cinfo.scale_denom = 1;
    if (min_side > 0) {
        unsigned int denoms[] = {8, 4, 2};
        for (int i = 0; i < 3; i++) {
            unsigned int d = denoms[i];
            if ((cinfo.image_width + d - 1) / d >= min_side &&
                (cinfo.image_height + d - 1) / d >= min_side) {
                cinfo.scale_denom = d;
                break;
            }
        }
    }
    cinfo.dct_method = JDCT_ISLOW;

    jpeg_start_decompress(&cinfo);
    uint32_t width = cinfo.output_width, height = cinfo.output_height;
    int comps = cinfo.output_components;
    if ((cmyk && comps != 4) || (!cmyk && comps != 3)) {
        status = CIC_ERR_UNSUPPORTED;
        longjmp(err.jump, 1);
    }

    pixels = malloc((size_t)width * height * 3);
    row = malloc((size_t)width * (size_t)comps);
    if (pixels == NULL || row == NULL) {
        status = CIC_ERR_MEMORY;
        longjmp(err.jump, 1);
    }
    while (cinfo.output_scanline < height) {
        uint32_t y = cinfo.output_scanline;
        JSAMPROW rows[1] = {row};
        if (jpeg_read_scanlines(&cinfo, rows, 1) != 1) {
            longjmp(err.jump, 1);
        }
        uint8_t *dst = pixels + (size_t)y * width * 3;
        if (cmyk) {
            /* Adobe writes CMYK inverted; the common approximation R = C*K/255. */
            for (uint32_t x = 0; x < width; x++) {
                unsigned k = row[x * 4 + 3];
                dst[x * 3 + 0] = (uint8_t)(row[x * 4 + 0] * k / 255);
                dst[x * 3 + 1] = (uint8_t)(row[x * 4 + 1] * k / 255);
                dst[x * 3 + 2] = (uint8_t)(row[x * 4 + 2] * k / 255);
            }
        } else {
            memcpy(dst, row, (size_t)width * 3);
        }
    }
    jpeg_finish_decompress(&cinfo);
    free(row);
    jpeg_destroy_decompress(&cinfo);

    out->pixels = pixels;
    out->width = width;
    out->height = height;
    out->channels = 3;
    return CIC_OK;
}

int cic_encode_jpeg_rgb(const uint8_t *rgb, uint32_t width, uint32_t height,
                        int quality, uint8_t **out, size_t *out_length) {
    if (rgb == NULL || out == NULL || out_length == NULL || width == 0 || height == 0)
        return CIC_ERR_INPUT;
    *out = NULL;
    *out_length = 0;

    struct jpeg_compress_struct cinfo;
    cic_jpeg_error err;
    unsigned char *volatile buffer = NULL;
    unsigned long size = 0;

    cinfo.err = jpeg_std_error(&err.base);
    err.base.error_exit = cic_jpeg_error_exit;
    err.base.output_message = cic_jpeg_output_message;
    if (setjmp(err.jump)) {
        jpeg_destroy_compress(&cinfo);
        free(buffer);
        return CIC_ERR_CORRUPT;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, (unsigned char **)&buffer, &size);
    cinfo.image_width = width;
    cinfo.image_height = height;
    cinfo.input_components = 3;
    cinfo.in_color_space = JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality < 1 ? 1 : (quality > 100 ? 100 : quality), TRUE);
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < height) {
        JSAMPROW rows[1] = {(JSAMPROW)(rgb + (size_t)cinfo.next_scanline * width * 3)};
        jpeg_write_scanlines(&cinfo, rows, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    *out = buffer;
    *out_length = size;
    return CIC_OK;
}

/* ---------- PNG ---------- */

/* The simplified png_image API does its own setjmp internally and reports
   failure by return value, so no jump buffers are needed here. */

int cic_decode_png(const uint8_t *data, size_t length, uint64_t max_pixels,
                   cic_image *out) {
    if (data == NULL || out == NULL || length == 0) return CIC_ERR_INPUT;
    memset(out, 0, sizeof(*out));

    png_image image;
    memset(&image, 0, sizeof(image));
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&image, data, length)) {
        png_image_free(&image);
        return CIC_ERR_CORRUPT;
    }
    if (image.width == 0 || image.height == 0) {
        png_image_free(&image);
        return CIC_ERR_CORRUPT;
    }
    if ((uint64_t)image.width * (uint64_t)image.height > max_pixels) {
        png_image_free(&image);
        return CIC_ERR_TOO_LARGE;
    }
    image.format = PNG_FORMAT_RGBA;
    size_t stride = (size_t)PNG_IMAGE_ROW_STRIDE(image);
    size_t size = (size_t)PNG_IMAGE_BUFFER_SIZE(image, stride);
    uint8_t *pixels = malloc(size);
    if (pixels == NULL) {
        png_image_free(&image);
        return CIC_ERR_MEMORY;
    }
    if (!png_image_finish_read(&image, NULL, pixels, (png_int_32)stride, NULL)) {
        free(pixels);
        png_image_free(&image);
        return CIC_ERR_CORRUPT;
    }
    out->pixels = pixels;
    out->width = image.width;
    out->height = image.height;
    out->channels = 4;
    png_image_free(&image);
    return CIC_OK;
}

int cic_encode_png_rgb(const uint8_t *rgb, uint32_t width, uint32_t height,
                       uint8_t **out, size_t *out_length) {
    if (rgb == NULL || out == NULL || out_length == NULL || width == 0 || height == 0)
        return CIC_ERR_INPUT;
    *out = NULL;
    *out_length = 0;

    png_image image;
    memset(&image, 0, sizeof(image));
    image.version = PNG_IMAGE_VERSION;
    image.width = width;
    image.height = height;
    image.format = PNG_FORMAT_RGB;

    /* One pass into a buffer of the largest size the image can take
       (libpng's own bound). The documented two-pass use (measure, then
       write) compresses everything twice: half the time of a share card. */
    png_alloc_size_t size = PNG_IMAGE_PNG_SIZE_MAX(image);
    uint8_t *buffer = malloc(size);
    if (buffer == NULL) return CIC_ERR_MEMORY;
    if (!png_image_write_to_memory(&image, buffer, &size, 0, rgb, 0, NULL)) {
        free(buffer);
        png_image_free(&image);
        return CIC_ERR_CORRUPT;
    }
    /* The caller copies the bytes out and frees the buffer at once, so
       what the bound over-reserved is not worth a realloc. */
    *out = buffer;
    *out_length = size;
    return CIC_OK;
}
