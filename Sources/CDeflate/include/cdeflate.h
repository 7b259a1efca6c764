#ifndef CDEFLATE_H
#define CDEFLATE_H

#include <zlib.h>

/// deflateInit2 is a macro, which Swift cannot call: raw deflate (no zlib
/// header, as a ZIP member holds it) at `level`.
int cdeflate_init_raw(z_stream *stream, int level);

#endif
